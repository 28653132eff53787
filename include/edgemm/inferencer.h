#pragma once
/// \file inferencer.h
/// `Inferencer`: load an ONNX model once, query its inputs and outputs, and run it on named
/// tensors. The one interface every backend and pipeline goes through.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/profile.h"
#include "edgemm/runtime_options.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/value_info.h"

namespace edgemm {

/// Options for creating an Inferencer: the model file, how it runs (RuntimeOptions: threads,
/// optimize, backend, plugin_path, device, precision) and what is fixed at load.
struct InferencerConfig : RuntimeOptions {
  std::string model_path;  ///< .onnx file; external data is read relative to its folder
  /// The contents of an .onnx file (owned copy), loaded instead of reading model_path when not
  /// empty; model_path then only names the model in messages (may be empty). A model with
  /// external data cannot load from bytes (kInvalidModel naming the tensor).
  std::string model_bytes;
  /// Optional fixed input shapes (name → shape). Symbolic axes are pinned to these values at
  /// load so that shape-dependent subgraphs (Shape → Gather → Concat ...) fold to constants.
  /// create() fails with kInvalidArgument for a name that is not an input, another rank, an
  /// extent below 1 or one that contradicts a declared extent.
  std::map<std::string, Shape> fixed_input_shapes;
  /// When set, every run() and run_profiled() overwrites this file with its per-node Chrome
  /// trace JSON (Trace Event Format; see NodeProfile for the fields).
  std::string profile_path;
};

/// Memory of a loaded model, in bytes: its weights as the graph holds them, the copies the
/// kernels made in layouts of their own, and the arena of the latest planned run.
struct MemoryReport {
  int64_t planned_peak_bytes = 0;  ///< arena size chosen by the buffer-reuse planner (latest run shape)
  int64_t unplanned_bytes = 0;     ///< sum of all intermediates if none were reused (latest run shape)
  /// Initializers and folded constants of the graph after the passes that kernels read as
  /// stored; those that only packed kernels read are freed at load and not counted here.
  int64_t weight_bytes = 0;
  /// Weights the kernels hold packed or reordered for their own loops (matmul panels, oneDNN
  /// layouts, XNNPACK operators), besides `weight_bytes`; oneDNN makes a layout per input shape
  /// on first use, so this can grow after the first run of a new shape.
  int64_t packed_weight_bytes = 0;
};

/// A loaded, compiled model.
/// Thread safety: after create(), all const methods and run() may be called from any number
/// of threads at once; each run() uses its own buffers.
class Inferencer {
 public:
  virtual ~Inferencer() = default;

  /// Loads, checks, optimizes and compiles the model.
  /// Errors: kIo (unreadable file, missing external data), kInvalidModel (parse/checker
  /// failure, external data outside the model folder, malformed graph), kUnsupported (an op
  /// or dtype without a kernel; the message names the node and op), kInvalidArgument (bad
  /// config, e.g. fixed shape for an unknown input).
  static Expected<std::unique_ptr<Inferencer>> create(const InferencerConfig& config);

  virtual const std::vector<ValueInfo>& inputs() const = 0;
  virtual const std::vector<ValueInfo>& outputs() const = 0;

  /// Runs the graph. `inputs` maps every required graph input name to a tensor of the
  /// declared dtype and a shape compatible with the declared one; `output_names` selects
  /// outputs (empty = all, in declaration order). Returned tensors own their memory.
  /// Errors: kInvalidArgument naming the input and the offending value (unknown or missing
  /// name, wrong dtype, rank or fixed extent); kInvalidArgument/kOutOfMemory from kernels
  /// (e.g. Gather index out of range, naming node, op and value).
  virtual Expected<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                            const std::vector<std::string>& output_names = {}) const = 0;

  /// run() that also times every node execution (see NodeProfile). Same arguments, errors and
  /// thread safety as run(); the profiling adds a clock read and shape bookkeeping per node.
  virtual Expected<ProfiledRun> run_profiled(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                             const std::vector<std::string>& output_names = {}) const = 0;

  /// Weights and packed weights now, and the memory plan of the most recent run shape (arena
  /// fields zero before the first run).
  virtual MemoryReport memory_report() const = 0;

  /// Backend of every node, in execution order. With backend "native" every entry says
  /// "native" and lists the graph after all passes; with another backend it lists the graph
  /// that was partitioned (after the standard-op passes, before edgemm's own fusions).
  virtual const std::vector<NodePlacement>& placement() const = 0;

  /// Name of the backend asked for in the config ("native", "opencv", or the plugin's name).
  virtual const std::string& backend() const = 0;
};

}  // namespace edgemm
