#pragma once
/// \file elementwise_steps.h
/// The elementwise epilogue that fused ops carry: a list of steps applied in order to each
/// float32 value v a producer computes. com.edgemm FusedConv applies them to the convolution's
/// output (oneDNN post-ops or the reference loop); com.edgemm ElementwiseChain applies them to
/// its first input. Steps are stored on the node as four parallel attributes:
///   steps    (strings) kind names below
///   alphas   (floats)  first parameter (0 when unused)
///   betas    (floats)  second parameter (0 when unused)
///   operands (ints)    for binary steps, the index of the node input holding the other
///                      operand (numpy-broadcast to the value's shape); -1 for unary steps
/// Unary kinds (ONNX operator semantics, Operators.md): "relu", "clip" (alpha = min, beta = max),
/// "linear" (alpha·v + beta), "hardsigmoid" (max(0, min(1, alpha·v + beta))), "hardswish"
/// (v·max(0, min(1, v/6 + 1/2)), HardSwish-14), "sigmoid", "swish" (v·sigmoid(alpha·v)),
/// "gelu" (0.5·v·(1 + erf(v/√2))), "gelu_tanh" (0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))), Gelu-20
/// with approximate = "tanh"), "tanh", "exp", "sqrt", "abs", "neg".
/// Binary kinds: "add" (v + o), "sub" (v - o), "rsub" (o - v), "mul" (v·o), "div" (v / o),
/// "rdiv" (o / v), "max", "min", "pow" (v^o).
/// NaN and infinities follow the ONNX ops as ONNX Runtime computes them: a NaN v passes every
/// unary kind (Relu, Clip and HardSigmoid included), max and min give NaN when either side is
/// NaN, sigmoid(±Inf) = 1 / 0, hardswish(-Inf) = NaN (-Inf·0), as the unfused graph gives.

#include <string>
#include <vector>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::ir {

/// Kinds of elementwise steps (see the file comment for their formulas).
enum class StepKind {
  kRelu,
  kClip,
  kLinear,
  kHardSigmoid,
  kHardSwish,
  kSigmoid,
  kSwish,
  kGelu,
  kGeluTanh,
  kTanh,
  kExp,
  kSqrt,
  kAbs,
  kNeg,
  kAdd,
  kSub,
  kRSub,
  kMul,
  kDiv,
  kRDiv,
  kMax,
  kMin,
  kPow
};

/// One step: kind, parameters, and for binary kinds the node input index of the other operand.
struct Step {
  StepKind kind = StepKind::kRelu;
  float alpha = 0;
  float beta = 0;
  int operand = -1;
  bool binary() const { return kind >= StepKind::kAdd; }
};

/// The name used in the `steps` attribute ("relu", "add", ...).
const char* step_name(StepKind kind);

/// Reads the step attributes of `node`. Errors: kInvalidModel naming the node for unknown
/// kinds, lists of different lengths, a binary step without a valid operand index, or a unary
/// step with one.
Expected<std::vector<Step>> read_steps(const Node& node);

/// Writes `steps` as the node's step attributes (replacing any there).
void write_steps(Node& node, const std::vector<Step>& steps);

/// Applies a unary step to one value (the reference semantics).
float apply_unary(const Step& step, float v);

/// Applies a binary step to the value v and the other operand o (the reference semantics).
float apply_binary(const Step& step, float v, float o);

/// "hardswish, linear(0.5, 0.1), add(input 3)" for logs and `edgemm inspect --optimized`.
std::string describe_steps(const std::vector<Step>& steps);

}  // namespace edgemm::ir
