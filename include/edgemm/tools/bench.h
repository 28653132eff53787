#pragma once
/// \file bench.h
/// `edgemm bench` as a library call (tool-side library edgemm::bench, docs/sdk.md): a model, or
/// the OCR pipeline over a folder of images, measured side by side with its peers in one
/// process tree. At each point (thread count, swept input size) every runtime gets the same
/// inputs, threads and iteration plan; each is loaded and warmed up alone (its peak RSS read
/// from its host process), then the timed runs alternate between runtimes in blocks, so that
/// drift on a shared machine hits all alike. docs/benchmarks.md describes the method and the
/// report (schema "edgemm.bench/1").

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "edgemm/runtime_options.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::bench {

/// What to measure and how. Give `model`, or `pipeline` with `set_dir`.
struct BenchOptions {
  std::string model;                               ///< ONNX model file; empty for a pipeline
  std::map<std::string, Shape> shapes;             ///< input name → shape, also pinned in edgemm at load
  std::map<std::string, std::string> npy_inputs;   ///< input name → .npy file (default: synthetic data)
  uint32_t seed = 1;                               ///< seed of the synthetic inputs
  std::string sweep;                               ///< "size=320,640", "height=…", "width=…", "batch=1,2"; "" none
  std::string pipeline;                            ///< "ocr", or "" for a model
  std::string set_dir;                             ///< pipeline: folder of images, one run per image
  std::string models_dir;                          ///< pipeline: PP-OCRv4 folder
  bool use_cls = true;                             ///< pipeline: run the angle classifier
  std::vector<int> threads = {1};                  ///< intra-op thread counts (each ≥ 1), one point each
  std::vector<std::string> runtimes = {"edgemm"};  ///< canonical names (canonical_runtime_name), edgemm first
  /// The backend, device, precision and plugin of edgemm's runtime; its `threads` is not used
  /// (`threads` lists the counts).
  RuntimeOptions edgemm;
  int warmup = 2;             ///< untimed runs after the cold run
  int iters = 20;             ///< timed runs per runtime and point (ignored when seconds > 0)
  double seconds = 0;         ///< when > 0: timed runs fill this many seconds per runtime and point
  int blocks = 5;             ///< alternating blocks the timed runs are split into (at most `iters`)
  std::string power_command;  ///< shell command printing watts, sampled for energy; "" tries sysfs
  std::string reference_dir;  ///< folder of the peers' node hosts (ort_server.js, guten_server.js)
  double timeout_s = 600;     ///< longest wait for a peer's load or one block, in seconds
  std::string command;        ///< the command line recorded in the report
  /// Called before each point with (index, count, description), for progress output.
  std::function<void(int, int, const std::string&)> on_point;
  /// Called after each block with (timed runs done, planned), or (block slots done, slots) in
  /// time-budget mode.
  std::function<void(int, int)> progress;
};

/// A finished benchmark: the same report in three forms, and edgemm's own outcome.
struct BenchResult {
  std::string markdown;  ///< machine, settings, peers, one table row per point and runtime
  std::string json;      ///< schema "edgemm.bench/1", indented by 2 (docs/benchmarks.md)
  std::string html;      ///< a self-contained page with charts (inline SVG, no script)
  /// Ok, or edgemm's first failure to load or run (the report shows it too; a peer's failure is
  /// only in the report).
  Status edgemm_status;
};

/// Runs the whole benchmark. The energy counter (`power_command`, else a sysfs power sensor) is
/// tried once before any model loads. Errors: kInvalidArgument naming the field for runtimes not
/// starting with "edgemm", no thread count or one below 1, warmup below 0, iters below 1 (when
/// seconds is 0), seconds negative or not finite, blocks below 1, timeout_s not above 0; for a
/// broken power command, a bad `sweep` (naming the key or value) or inputs (naming the input; see make_inputs in
/// edgemm/tools/bench_inputs.h); kIo/kInvalidModel when the model cannot be read; kOutOfMemory
/// when a point's shapes cannot fit (checked for every point before any is measured); kIo
/// for a set folder without images. A runtime that fails to load or run is reported in the
/// result instead.
Expected<BenchResult> run_benchmark(const BenchOptions& options);

/// Image files (.jpg .jpeg .png .bmp .webp .tif .tiff) directly in `dir`, in name order.
/// Errors: kIo when `dir` is not a readable folder or holds no image.
Expected<std::vector<std::string>> list_images(const std::string& dir);

/// Canonical runtime name for an alias ("ort" → "onnxruntime", "guten" → "guten-ocr"); other
/// names are returned as they are.
std::string canonical_runtime_name(const std::string& name);

}  // namespace edgemm::bench
