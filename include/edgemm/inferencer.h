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

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm {

/// One axis of a declared shape: a fixed extent (value >= 0), or symbolic (value -1, with the
/// ONNX dim_param in `symbol`, possibly empty when the model leaves the axis unnamed).
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool is_static() const { return value >= 0; }
};

/// Declared metadata of a graph input or output.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<Dim> shape;  ///< empty with `rank_known == false` when the model omits it
  bool rank_known = false;
};

/// "[1,3,N,640]": static dims as numbers, symbolic ones by name ("?" when unnamed), for messages.
std::string dims_to_string(const std::vector<Dim>& dims);

/// Options for creating an Inferencer.
struct InferencerConfig {
  std::string model_path;  ///< .onnx file; external data is read relative to its folder
  int threads = 0;         ///< intra-op threads, at most 1024; 0 = all hardware threads
  /// Backend that runs the graph: "native" (edgemm's CPU kernels), "opencv" (OpenCV DNN 4.6; only
  /// in programs that link the CMake object library edgemm_backend_opencv, whose static
  /// initializer registers it, as the `edgemm` CLI and the unit tests do), or "plugin" (a vendor
  /// plugin loaded from `plugin_path`, see edgemm/plugin_abi.h). Nodes the backend refuses, and
  /// partitions it fails to compile, run on native: placement() lists them with the reasons, and
  /// create() prints warnings naming them to stderr (docs/backends.md).
  std::string backend = "native";
  std::string plugin_path;     ///< shared library for backend "plugin"
  std::string device = "cpu";  ///< must be one of the backend's declared devices
  /// Must be one of the backend's declared precisions. Native: "fp32", or "bf16": MatMuls whose
  /// B is a constant matrix (weights) multiply bfloat16-rounded A and B and sum in float32 on CPUs
  /// with AVX512_BF16 (8 significant bits, 2-3 decimal digits, per factor; everything else in
  /// float32, and all of it on other CPUs), an opt-in speed mode like ONNX Runtime's arm64
  /// "bfloat16 fastmath" session option; or "fp16": on Arm CPUs with FP16 arithmetic (Armv8.2-A,
  /// e.g. Cortex-A76/A55), 2-D Convs with constant weights and MatMuls with a constant B compute
  /// in IEEE half precision (11 significant bits, sums included; XNNPACK's f16 operators),
  /// everything else in float32, and all of it on other CPUs (with a warning at create()).
  std::string precision = "fp32";
  /// Optional fixed input shapes (name → shape). Symbolic axes are pinned to these values at
  /// load so that shape-dependent subgraphs (Shape → Gather → Concat ...) fold to constants.
  std::map<std::string, Shape> fixed_input_shapes;
  bool optimize = true;  ///< run graph passes (constant folding, DCE) at load
  /// When set, every run() and run_profiled() overwrites this file with its per-node Chrome
  /// trace JSON (Trace Event Format; see NodeProfile for the fields).
  std::string profile_path;
};

/// Memory report of the latest planned run (bytes).
struct MemoryReport {
  int64_t planned_peak_bytes = 0;  ///< arena size chosen by the buffer-reuse planner
  int64_t unplanned_bytes = 0;     ///< sum of all intermediates if none were reused
  int64_t weight_bytes = 0;        ///< initializers and folded constants
};

/// Where one node of the loaded graph runs (Inferencer::placement).
struct NodePlacement {
  std::string node;     ///< ONNX node name (the graph after the standard-op passes, see docs/backends.md)
  std::string op_type;  ///< ONNX op, e.g. "Conv"
  std::string backend;  ///< backend that runs it: the requested one, or "native" for a fallback
  /// Why the requested backend refused the node (empty when it runs there), e.g. "dynamic input
  /// shape [?,3,?,?] (OpenCV DNN 4.6 needs static shapes: pin them with --shape on run, inspect and
  /// bench, or make the file static with `edgemm convert --fix-shape ... --simplify`)", or why its
  /// partition failed to compile ("its partition of 3 nodes failed to compile: ...").
  std::string reason;
  bool operator==(const NodePlacement&) const = default;
};

/// One node execution of a profiled run (Inferencer::run_profiled).
/// Times are wall-clock (steady clock) microseconds with sub-microsecond resolution.
/// `flops` follows ir::node_flops (src/ir/flops.h) on the run's actual shapes: 2 × MACs for
/// Conv, ConvTranspose, MatMul and Gemm, one FLOP per element of the first output otherwise.
/// `bytes` is the size of the node's input tensors (weights included, once per input position)
/// plus the outputs it computed: a lower bound on its memory traffic that ignores caches,
/// re-reads of weights or inputs, prepacked weight copies and kernel scratch.
struct NodeProfile {
  std::string node;                  ///< ONNX node name (may be empty in the model)
  std::string op_type;               ///< ONNX op, e.g. "Conv"
  std::string kernel;                ///< kernel that ran it, e.g. "f32_conv__onednn"
  std::vector<Shape> output_shapes;  ///< shapes of the outputs it computed, in node order
  double start_us = 0;               ///< start, since the beginning of the run
  double duration_us = 0;            ///< wall time of the node (includes its subgraphs)
  int64_t flops = 0;                 ///< 0 when the first output was not computed
  int64_t bytes = 0;                 ///< input bytes read + output bytes written
  int depth = 0;                     ///< 0 for the main graph, 1+ inside If/Loop/Scan bodies
  bool operator==(const NodeProfile&) const = default;
};

/// Outputs of a profiled run and its node executions in the order they finished (a subgraph's
/// nodes come before the If/Loop/Scan node that ran them).
struct ProfiledRun {
  std::vector<Tensor> outputs;     ///< as run() returns them
  std::vector<NodeProfile> nodes;  ///< one entry per node execution
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

  /// Memory plan of the most recent run shape (zeros before the first run).
  virtual MemoryReport memory_report() const = 0;

  /// Backend of every node, in execution order. With backend "native" every entry says
  /// "native" and lists the graph after all passes; with another backend it lists the graph
  /// that was partitioned (after the standard-op passes, before edgemm's own fusions).
  virtual const std::vector<NodePlacement>& placement() const = 0;

  /// Name of the backend asked for in the config ("native", "opencv", or the plugin's name).
  virtual const std::string& backend() const = 0;
};

}  // namespace edgemm
