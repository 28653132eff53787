#pragma once
/// \file runtimes.h
/// The runtimes a benchmark compares: edgemm itself, ONNX Runtime 1.30 in a long-lived node
/// process (tools/reference/ort_server.js), and OpenCV DNN in this process. Each hosts one
/// loaded model with fixed inputs and times runs of it.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgemm/tools/bench.h"
#include "edgemm/tools/bench_inputs.h"

namespace edgemm {
class Inferencer;
}

namespace edgemm::bench {

/// The backend edgemm's own runtime runs on (InferencerConfig backend, device, precision,
/// plugin_path; docs/backends.md). Peers ignore it.
struct EdgemmBackend {
  std::string backend = "native";  ///< "native", "opencv" (when linked) or "plugin"
  std::string device = "cpu";      ///< one of the backend's devices
  std::string precision = "fp32";  ///< one of the backend's precisions
  std::string plugin_path;         ///< for backend "plugin"
};

/// What every runtime of one comparison is given.
struct RuntimeSetup {
  std::string model_path;                     ///< .onnx file
  NamedTensors inputs;                        ///< the very tensors every runtime runs on
  std::map<std::string, Shape> fixed_shapes;  ///< pinned at load where a runtime supports it (edgemm)
  int threads = 1;                            ///< intra-op threads, ≥ 1
  std::string reference_dir;                  ///< folder with ort_server.js and its node_modules
  double timeout_s = 600;                     ///< longest wait for one load or one block (ORT host)
  EdgemmBackend edgemm_backend;               ///< the edgemm runtime's backend
};

/// One runtime under test. Usage: load() once, then run() any number of times.
/// Not thread-safe; one benchmark drives it.
class BenchRuntime {
 public:
  virtual ~BenchRuntime() = default;
  /// Short name used in reports: "edgemm", "onnxruntime", "opencv".
  virtual std::string name() const = 0;
  /// Version of the runtime (known after construction or, for a child process, after load()).
  virtual std::string version() const = 0;
  /// Settings the runtime was configured with (threads, optimization level, ...), for reports.
  virtual nlohmann::json settings() const = 0;
  /// Starts whatever hosts the runtime (a child process for ONNX Runtime; nothing in process),
  /// so that the host's own memory can be read before the model loads. Errors: kIo when the
  /// host cannot be started.
  virtual Status prepare() { return Status::ok(); }
  /// Loads and prepares the model (after prepare()); returns the load time in milliseconds as the host measured
  /// it. Errors: whatever the runtime reports, as a Status whose message is the runtime's own.
  virtual Expected<double> load() = 0;
  /// Runs the model `iters` times back to back on the setup's inputs; returns each run's wall
  /// time in milliseconds, measured by the host around the runtime's run call.
  virtual Expected<std::vector<double>> run(int iters) = 0;
  /// Process whose memory is this runtime's: 0 for this process, else a child's pid.
  virtual pid_t host_pid() const { return 0; }
};

/// Milliseconds from `start` to now on the steady clock: how every runtime times its runs.
double ms_since(std::chrono::steady_clock::time_point start);

/// Creates runtime `name` ("edgemm", "onnxruntime" (alias "ort") or "opencv") for `setup`,
/// without loading anything. Errors: kInvalidArgument for an unknown name.
Expected<std::unique_ptr<BenchRuntime>> make_runtime(const std::string& name, const RuntimeSetup& setup);

/// Creates edgemm's own runtime (Inferencer with setup.fixed_shapes pinned, setup.threads, on
/// setup.edgemm_backend). Its settings() name the backend, device and precision and, once
/// loaded, the placement counts {"nodes", "on_backend", "fallback_nodes"} and the model's memory
/// {"weight_bytes", "packed_weight_bytes", "arena_bytes"} (Inferencer::memory_report(); the
/// report takes settings again after the warm-up runs, when the arena is planned).
std::unique_ptr<BenchRuntime> make_edgemm_runtime(const RuntimeSetup& setup);
/// {"nodes", "on_backend", "fallback_nodes"}: how many of the loaded model's nodes run on its
/// backend (Inferencer::placement(), Inferencer::backend()) and how many fell back to native.
nlohmann::json placement_counts(const Inferencer& inferencer);
/// Creates the ONNX Runtime peer: `node <reference_dir>/ort_server.js` speaking JSON lines;
/// session options graphOptimizationLevel "all", intraOpNumThreads = threads,
/// interOpNumThreads 1, executionMode "sequential", CPU execution provider.
std::unique_ptr<BenchRuntime> make_ort_runtime(const RuntimeSetup& setup);
/// Creates the OpenCV DNN peer (cv::dnn::readNetFromONNX, DNN_BACKEND_OPENCV on the CPU,
/// cv::setNumThreads(threads)); float32 inputs only.
std::unique_ptr<BenchRuntime> make_opencv_runtime(const RuntimeSetup& setup);

}  // namespace edgemm::bench
