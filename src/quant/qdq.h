#pragma once
/// \file qdq.h
/// INT8 static quantization in the QDQ format (ONNX "QuantizeLinear"/"DequantizeLinear" 13):
/// which nodes to quantize, and the graph rewrite.
///
/// Placement follows TensorRT's explicit-quantization recommendation (NVIDIA TensorRT Developer
/// Guide, "Q/DQ Layer-Placement Recommendations"): the inputs of weighted ops are quantized,
/// their outputs stay float. For each quantized Conv / MatMul / Gemm:
///   x ─ QuantizeLinear(x_scale, x_zero_point) ─ DequantizeLinear ─┐
///   W_int8 ─ DequantizeLinear(W_scale[C], axis) ──────────────────┴─ Conv/MatMul/Gemm ─ y (float)
/// Activations: per-tensor asymmetric uint8 (or symmetric int8) from calibration. Weights:
/// symmetric int8 (zero point 0), per output channel (axis 0 of Conv and of Gemm's transposed
/// B, axis 1 of MatMul's and untransposed Gemm's B) or per tensor. The bias stays float. A
/// tensor read by several quantized nodes gets one Q/DQ pair.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "ir/graph.h"
#include "quant/observer.h"

namespace edgemm::quant {

/// Choices of the int8 rewrite.
struct Int8Options {
  std::set<std::string> op_types = {"Conv", "MatMul", "Gemm"};  ///< ops to quantize
  bool per_channel = true;  ///< per-output-channel weight scales (else one per tensor)
  /// Weights in [−64, 64] (7 bits) instead of [−127, 127]: x86 CPUs without AVX-512 VNNI
  /// multiply uint8 × int8 pairs with vpmaddubsw, whose int16 sums saturate beyond 7-bit weights
  /// (oneDNN "Nuances of int8 Computations"; ONNX Runtime's reduce_range). Measured here with
  /// oneDNN 2.6 on AVX2: 8-bit weights give errors up to 120 on a 3×3 Conv, 7-bit ones 4e-5.
  bool reduce_range = true;
  /// Quantize depthwise convolutions too. Off here by default: on AVX2 oneDNN 2.6's int8
  /// depthwise Conv is about 2× slower than its float one (128 channels 80×80: 1.9 ms vs 1.0 ms);
  /// `edgemm quantize` turns it on for CPUs with AVX-512 VNNI, where uint8 values between int8
  /// convolutions (passes::chain_int8) make it gain.
  bool quantize_depthwise = false;
  bool symmetric_activations = false;   ///< int8 activations with zero point 0 instead of uint8
  std::set<std::string> exclude_nodes;  ///< node names kept in float
};

/// A node the rewrite quantizes.
struct QuantTarget {
  size_t index = 0;  ///< in graph.nodes when planned
  std::string node;  ///< Node::describe()
  std::string name;  ///< node name (may be empty)
  std::string op_type;
  std::string activation;   ///< the computed input that gets a Q/DQ pair (Conv X, MatMul/Gemm A)
  std::string weight;       ///< the constant float32 input that is stored as int8
  int64_t weight_axis = 0;  ///< output-channel axis of the weight
};

/// A node of a quantizable op type left in float, and why.
struct SkippedNode {
  std::string node;  ///< Node::describe()
  std::string op_type;
  std::string reason;
};

/// What plan_int8 decided.
struct QuantPlan {
  std::vector<QuantTarget> targets;
  std::vector<SkippedNode> skipped;
  /// Activation tensors to calibrate (each once, in graph order).
  std::vector<std::string> activations() const;
};

/// Chooses the nodes of `graph` to quantize: nodes of options.op_types whose weight input is a
/// float32 initializer (Conv W of rank 3–5; MatMul B or Gemm B of rank 2) and whose activation
/// input is computed; not excluded; not depthwise unless asked. Every other node of those op
/// types is listed in `skipped` with the reason.
QuantPlan plan_int8(const ir::Graph& graph, const Int8Options& options);

/// Quantized copy of a float32 weight: symmetric int8 with `qmax` (127, or 64 for reduce_range),
/// per slice along `axis` (axis < 0: one scale for the whole tensor).
struct QuantizedWeight {
  Tensor values;  ///< int8, the weight's shape
  Tensor scales;  ///< float32 [C] per channel, or a scalar
};
/// Errors: kInvalidArgument for a non-float32 weight or an axis outside its rank.
Expected<QuantizedWeight> quantize_weight(const Tensor& weight, int64_t axis, int qmax);

/// Rewrites `model` to QDQ for `plan` (from plan_int8 on this model's graph, unchanged since),
/// with the calibrated range of every plan.activations() value in `ranges`. The model's
/// ai.onnx opset must be >= 13 (per-axis DequantizeLinear). Unused float weights are dropped.
/// Errors: kInvalidArgument for a missing range or an opset below 13.
Status insert_qdq(ir::Model& model, const QuantPlan& plan, const std::map<std::string, Range>& ranges,
                  const Int8Options& options);

}  // namespace edgemm::quant
