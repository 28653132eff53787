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
#include "edgemm/tools/quantize.h"
#include "ir/graph.h"
#include "quant/observer.h"

namespace edgemm::quant {

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
