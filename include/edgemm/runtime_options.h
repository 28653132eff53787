#pragma once
/// \file runtime_options.h
/// `RuntimeOptions`: how a model runs (threads, graph optimization, backend, device, precision),
/// shared by InferencerConfig and the pipelines' options (OcrOptions, ClipOptions, VlmOptions),
/// and `NodePlacement`: where one node of a loaded graph runs.

#include <string>

namespace edgemm {

/// How the models of an Inferencer or a pipeline run. Names are validated when the model loads:
/// an unknown backend, or a device or precision the backend does not declare, is a
/// kInvalidArgument error naming the value and the accepted ones (docs/backends.md).
struct RuntimeOptions {
  int threads = 0;       ///< intra-op threads per model, at most 1024; 0 = all hardware threads
  bool optimize = true;  ///< run graph passes (constant folding, DCE, fusions) at load
  /// Backend that runs the graph: "native" (edgemm's CPU kernels), "opencv" (OpenCV DNN 4.6; only
  /// in programs that link the CMake object library edgemm_backend_opencv, whose static
  /// initializer registers it, as the `edgemm` CLI and the unit tests do), or "plugin" (a vendor
  /// plugin loaded from `plugin_path`, see edgemm/plugin_abi.h). Nodes the backend refuses, and
  /// partitions it fails to compile, run on native: Inferencer::placement() lists them with the
  /// reasons, and loading prints warnings naming them to stderr.
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
  /// everything else in float32, and all of it on other CPUs (with a warning at load).
  std::string precision = "fp32";
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

}  // namespace edgemm
