#pragma once
/// \file report.h
/// The result of `edgemm bench`: per measured point (thread count, input size), one entry per
/// runtime with its latency statistics, load and cold times, memory, energy and speed ratio.
/// Serialized as JSON with schema "edgemm.bench/1" (docs/benchmarks.md, "Report format");
/// report_from_json(to_json(r)) gives r back, and to_json of that gives the same JSON.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/machine.h"
#include "bench/stats.h"
#include "edgemm/status.h"

namespace edgemm::bench {

/// Schema name written into every report.
inline constexpr const char* kBenchSchema = "edgemm.bench/1";

/// Resident memory of a runtime's host process, in bytes (see memory.h for the sources).
struct RuntimeMemory {
  int64_t rss_before_load = 0;  ///< host RSS just before the model loaded (node's own baseline for ORT)
  int64_t peak_rss = 0;         ///< host high-water mark over load, cold run and warm-up (reset before load)
  int64_t steady_rss = 0;       ///< host RSS after warm-up
  int64_t peak_added() const { return peak_rss - rss_before_load; }
  int64_t steady_added() const { return steady_rss - rss_before_load; }
};

/// Energy of the timed runs of one runtime, from the machine's counter.
struct RuntimeEnergy {
  double joules_per_run = 0;
  double average_watts = 0;  ///< joules over the seconds the timed blocks took
};

/// One runtime at one point. When `error` is set, only name, version, settings and
/// `failed_stage` are meaningful.
struct RuntimeResult {
  std::string name;  ///< "edgemm", "onnxruntime", "opencv", "guten-ocr"
  std::string version;
  nlohmann::json settings = nlohmann::json::object();
  std::string error;                         ///< the runtime's own message when it could not load or run
  std::string failed_stage;                  ///< "start", "load" or "run" when `error` is set
  StatusCode failed_code = StatusCode::kOk;  ///< the error's category (JSON: its status_code_name)
  double load_ms = 0;                        ///< model load as the host measured it
  double cold_ms = 0;                        ///< the first run after load
  std::vector<double> times_ms;              ///< every timed run, in the order they ran
  LatencyStats latency;                      ///< summary of `times_ms`
  double runs_per_s = 0;                     ///< 1000 / mean latency
  double items_per_s = 0;                    ///< runs_per_s × batch (the point's batch)
  double gflops = 0;                         ///< achieved: point FLOPs / median latency; 0 when FLOPs are unknown
  double edgemm_speedup = 0;  ///< this runtime's median / edgemm's median (> 1: edgemm faster); 0 if no edgemm
  RuntimeMemory memory;
  std::optional<RuntimeEnergy> energy;  ///< absent when not measured
  std::string energy_error;             ///< why the meter failed during this runtime's blocks
  /// Pipelines: (stage, median ms) in the pipeline's order; empty for models.
  std::vector<std::pair<std::string, double>> stage_median_ms;
  bool ok() const { return error.empty(); }
};

/// One measured configuration.
struct BenchPoint {
  int threads = 1;
  std::string sweep_key;    ///< "size", "height", "width" or "batch" when this point is part of a sweep
  int64_t sweep_value = 0;  ///< the swept value at this point
  std::string inputs;       ///< describe_inputs(): names, shapes, dtypes (or the image set)
  int64_t batch = 1;        ///< axis 0 of the first input (images per run for pipelines)
  int64_t flops = 0;        ///< FLOPs of one run, counted on a profiled edgemm run at these shapes; 0 = unknown
  std::vector<RuntimeResult> runtimes;
};

/// How the benchmark was run.
struct BenchSettings {
  int warmup = 0;                     ///< untimed runs per runtime after the cold run
  int iters = 0;                      ///< timed runs per runtime (0 when `seconds` decides)
  double seconds = 0;                 ///< time budget per runtime and point, when > 0
  int blocks = 1;                     ///< timed runs are split into this many alternating blocks
  uint32_t seed = 1;                  ///< synthetic input seed
  std::vector<std::string> runtimes;  ///< in the order of each block's rotation, edgemm first
};

/// A whole report.
struct BenchReport {
  std::string schema = kBenchSchema;
  std::string edgemm_version;
  std::string created;  ///< UTC, ISO 8601
  std::string kind;     ///< "model" or "pipeline"
  std::string subject;  ///< model path, or "ocr on DIR"
  std::string command;  ///< the command line that produced it
  MachineInfo machine;
  double load_average_end = 0;  ///< 1-minute load average when the benchmark ended
  BenchSettings settings;
  std::string energy_source;  ///< the counter used, or "" when none
  std::string energy_note;    ///< e.g. "energy: not measured (no counter)"
  std::vector<BenchPoint> points;
};

nlohmann::json to_json(const BenchReport& report);
/// Errors: kInvalidArgument naming the missing or mistyped field, or a different schema.
Expected<BenchReport> report_from_json(const nlohmann::json& json);

/// Fills the derived fields of every runtime of `point`: latency from times_ms, runs/s,
/// items/s, GFLOP/s and the speed ratio against the point's edgemm entry.
void finish_point(BenchPoint& point);

}  // namespace edgemm::bench
