#pragma once
/// \file simplify_extra.h
/// Rewrites `edgemm convert --simplify` adds to passes::simplify: standard ONNX ops in, standard
/// ONNX ops out, the same values (within float rounding), in forms that stricter runtimes
/// accept. Each one was needed for OpenCV DNN 4.6 (cv::dnn::readNetFromONNX) to load PP-OCRv4;
/// docs/convert.md names the node and error each fixes.

#include <map>
#include <string>

#include "ir/graph.h"

namespace edgemm::convert {

/// Runs the rewrites once over the main graph and counts them in `counts`:
/// - "HardSwish → x·HardSigmoid(x)": x·Clip(x + 3, 0, 6)/6 (passes/activation_patterns.h)
///   becomes Mul(x, HardSigmoid(x; alpha 1/6, beta 1/2)) (ONNX Operators.md HardSigmoid-6:
///   max(0, min(1, alpha·x + beta))). Removes Clip-11 nodes with bounds as inputs, which OpenCV
///   4.6 refuses ("node_proto.input_size() == 1").
/// - "Clip(0, ∞) → Relu": a Clip with constant bounds 0 and none (or +FLT_MAX) is a Relu.
/// - "Clip with constant bounds → HardSigmoid/Relu form": at opset 11+, where Clip takes its
///   bounds as inputs (which OpenCV 4.6 refuses), other constant bounds become
///   lo + (hi - lo)·HardSigmoid(x; 1/(hi - lo), -lo/(hi - lo)) (the Add left out when lo is 0),
///   Relu(x - lo) + lo (no upper bound) or hi - Relu(hi - x) (no lower bound); values agree
///   within a few float32 ulps of the bounds. A node or two more than Clip for runtimes that take
///   Clip-11 as it is.
/// - "Mul/Div constant expanded": a float32 constant operand of Mul/Div with more than one
///   element that does not vary along axis 1 only (e.g. a LayerNormalization scale [C] against
///   [N, T, C]) is broadcast to the other operand's static shape (ONNX "Broadcasting in ONNX"),
///   when that is at most 65536 elements. OpenCV 4.6 maps such a Mul to its Scale layer, which
///   applies constants from axis 1 and fails ("total: start <= shape.size()").
/// - "scalar Mul/Div moved before MatMul": Div(MatMul(a, b), c) or Mul(MatMul(a, b), c), with c a
///   float32 single-element constant and a, b both computed (attention's Q·Kᵀ/√d), becomes
///   MatMul(Div(a, c), b) / MatMul(Mul(a, c), b), equal up to float rounding. OpenCV 4.6 fuses
///   such a scale into the InnerProduct layer it makes of a two-input MatMul and then computes a
///   wrong result (off by 1.3 on the transformer fixture; right with its fusion disabled).
void simplify_extra(ir::Model& model, std::map<std::string, int>& counts);

}  // namespace edgemm::convert
