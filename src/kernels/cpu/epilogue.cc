#include "kernels/cpu/epilogue.h"

#include <algorithm>
#include <tuple>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise_chain.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {
namespace {

using dnnl::algorithm;
using dnnl::memory;

/// The eltwise post-ops of a unary step (some steps take two) that give NaN and infinities as
/// the ONNX op does, or false. HardSwish, Swish and Gelu end with a product by x, which keeps a
/// NaN whatever a clamp inside did, and give the ONNX values at +-Inf (tests/parity/
/// nonfinite_test.sh checks them on AVX-512 and AVX2). gelu_tanh is left to the chain loop: with
/// eltwise_gelu_tanh as a post-op, oneDNN 2.6's matmul took longer than without it plus the loop
/// (docs/clip.md).
bool append_exact_unary(const ir::Step& s, dnnl::post_ops& ops) {
  constexpr float kScale = 1.f;
  switch (s.kind) {
    case ir::StepKind::kLinear:
      ops.append_eltwise(kScale, algorithm::eltwise_linear, s.alpha, s.beta);
      return true;
    case ir::StepKind::kHardSwish:
      ops.append_eltwise(kScale, algorithm::eltwise_hardswish, 0.f, 0.f);
      return true;
    case ir::StepKind::kSwish:
      ops.append_eltwise(kScale, algorithm::eltwise_swish, s.alpha, 0.f);
      return true;
    case ir::StepKind::kGelu:
      ops.append_eltwise(kScale, algorithm::eltwise_gelu_erf, 0.f, 0.f);
      return true;
    case ir::StepKind::kSqrt:
      ops.append_eltwise(kScale, algorithm::eltwise_sqrt, 0.f, 0.f);
      return true;
    case ir::StepKind::kAbs:
      ops.append_eltwise(kScale, algorithm::eltwise_abs, 0.f, 0.f);
      return true;
    case ir::StepKind::kNeg:
      ops.append_eltwise(kScale, algorithm::eltwise_linear, -1.f, 0.f);
      return true;
    default:
      return false;
  }
}

/// The eltwise post-ops of a unary step that are exact on finite values but may lose a NaN, or
/// false. oneDNN 2.6's x64 injector (jit_uni_eltwise_injector.cpp) clamps with vmaxps/vminps and
/// the bound as second operand, which returns the bound for a NaN: Relu (relu_zero_ns), Clip and
/// HardSigmoid's clip give 0 / min / 0 where ONNX Runtime gives NaN (Conv → Relu gave 0, seen).
/// Exp, Sigmoid and Tanh rest on an exp that clamps its argument in that form in the injector's
/// source; they kept NaN in the convolutions tried here, but nothing documents it.
bool append_finite_unary(const ir::Step& s, dnnl::post_ops& ops) {
  constexpr float kScale = 1.f;
  switch (s.kind) {
    case ir::StepKind::kRelu:
      ops.append_eltwise(kScale, algorithm::eltwise_relu, 0.f, 0.f);
      return true;
    case ir::StepKind::kClip:
      ops.append_eltwise(kScale, algorithm::eltwise_clip, s.alpha, s.beta);
      return true;
    case ir::StepKind::kHardSigmoid:
      ops.append_eltwise(kScale, algorithm::eltwise_linear, s.alpha, s.beta);
      ops.append_eltwise(kScale, algorithm::eltwise_clip, 0.f, 1.f);
      return true;
    case ir::StepKind::kSigmoid:
      ops.append_eltwise(kScale, algorithm::eltwise_logistic, 0.f, 0.f);
      return true;
    case ir::StepKind::kTanh:
      ops.append_eltwise(kScale, algorithm::eltwise_tanh, 0.f, 0.f);
      return true;
    case ir::StepKind::kExp:
      ops.append_eltwise(kScale, algorithm::eltwise_exp, 0.f, 0.f);
      return true;
    default:
      return false;
  }
}

/// True when `kind` maps every finite value to a finite value (bounded, or at most |v|).
bool keeps_finite(ir::StepKind kind) {
  switch (kind) {
    case ir::StepKind::kRelu:
    case ir::StepKind::kClip:
    case ir::StepKind::kHardSigmoid:
    case ir::StepKind::kHardSwish:
    case ir::StepKind::kSigmoid:
    case ir::StepKind::kSwish:
    case ir::StepKind::kGelu:
    case ir::StepKind::kGeluTanh:
    case ir::StepKind::kTanh:
    case ir::StepKind::kAbs:
    case ir::StepKind::kNeg:
      return true;
    default:
      return false;
  }
}

/// The oneDNN binary algorithm of a binary step (rsub is neg + add), or false when the loops run it.
bool binary_algorithm(ir::StepKind kind, algorithm& alg, bool& negate_first) {
  negate_first = false;
  switch (kind) {
    case ir::StepKind::kAdd:
      alg = algorithm::binary_add;
      return true;
    case ir::StepKind::kSub:
      alg = algorithm::binary_sub;
      return true;
    case ir::StepKind::kRSub:
      alg = algorithm::binary_add;
      negate_first = true;
      return true;
    case ir::StepKind::kMul:
      alg = algorithm::binary_mul;
      return true;
    case ir::StepKind::kDiv:
      alg = algorithm::binary_div;
      return true;
    default:  // max and min: oneDNN's binary_max/min (vmaxps/vminps) drop a NaN as Relu does
      return false;
  }
}

/// Descriptor of a scalar or per-channel operand as oneDNN's binary post-op reads it.
memory::desc broadcast_md(OperandBroadcast b, const Shape& output) {
  memory::dims dims(output.size(), 1);
  if (b == OperandBroadcast::kPerChannel) dims[1] = output[1];
  return memory::desc(dims, memory::data_type::f32, onednn::plain_tag(static_cast<int64_t>(output.size())));
}

/// Consecutive linear steps composed into one: a2·(a1·v + b1) + b2 = (a2·a1)·v + (a2·b1 + b2),
/// which saves a pass and keeps PP-OCR's conv → hardswish → affine epilogues within the rule of
/// repeats_with_other_parameters().
std::vector<ir::Step> merge_linear_steps(const std::vector<ir::Step>& steps) {
  std::vector<ir::Step> merged;
  for (const ir::Step& s : steps) {
    if (s.kind == ir::StepKind::kLinear && !merged.empty() && merged.back().kind == ir::StepKind::kLinear) {
      ir::Step& prev = merged.back();
      prev.beta = s.alpha * prev.beta + s.beta;
      prev.alpha = s.alpha * prev.alpha;
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

/// True when some eltwise algorithm appears twice in `ops` with different alpha/beta. oneDNN
/// 2.6's x64 jit convolutions (jit:avx2, jit_dw:avx2) then apply the first one's parameters
/// to both (seen: Conv → Relu → ·3 → Relu → +0.5 giving 18 instead of 6.5; conv → linear →
/// linear off by 5-16), so such chains run their epilogue in our loops instead.
bool repeats_with_other_parameters(const dnnl::post_ops& ops) {
  std::vector<std::tuple<algorithm, float, float>> seen;
  for (int i = 0; i < ops.len(); ++i) {
    if (ops.kind(i) != dnnl::primitive::kind::eltwise) continue;
    float scale = 0, alpha = 0, beta = 0;
    algorithm alg;
    ops.get_params_eltwise(i, scale, alg, alpha, beta);
    for (const auto& [a, al, be] : seen) {
      if (a == alg && (al != alpha || be != beta)) return true;
    }
    seen.emplace_back(alg, alpha, beta);
  }
  return false;
}

}  // namespace

OperandBroadcast classify_operand(const Shape& operand, const Shape& output) {
  if (operand == output) return OperandBroadcast::kFull;
  int64_t count = 1;
  for (int64_t d : operand) count *= d;
  if (count == 1 && operand.size() <= output.size()) return OperandBroadcast::kScalar;
  if (operand.size() > output.size() || output.size() < 2) return OperandBroadcast::kOther;
  const size_t offset = output.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) {
    const size_t axis = offset + i;
    if (operand[i] != 1 && !(axis == 1 && operand[i] == output[1])) return OperandBroadcast::kOther;
  }
  return OperandBroadcast::kPerChannel;
}

EpiloguePostOps make_post_ops(const std::vector<ir::Step>& steps, const std::vector<const Shape*>& operand_shapes,
                              const Shape& output, const dnnl::memory::desc& dst_md, bool finite_input) {
  EpiloguePostOps result;
  bool finite = finite_input;  // every value entering the current step is finite
  auto add_binary = [&](algorithm alg, int input, OperandBroadcast b) {
    const memory::desc md = b == OperandBroadcast::kFull ? dst_md : broadcast_md(b, output);
    result.binaries.push_back({result.ops.len(), input, b, md});
    result.ops.append_binary(alg, md);
  };
  for (const ir::Step& s : merge_linear_steps(steps)) {
    if (!s.binary()) {
      const bool taken = append_exact_unary(s, result.ops) || (finite && append_finite_unary(s, result.ops));
      if (!taken) result.supported = false;
      finite = finite && keeps_finite(s.kind);
      continue;
    }
    finite = false;  // the operand may hold NaN or infinities
    algorithm alg;
    bool negate_first = false;
    const Shape* shape = s.operand < static_cast<int>(operand_shapes.size()) ? operand_shapes[s.operand] : nullptr;
    const OperandBroadcast b = shape != nullptr ? classify_operand(*shape, output) : OperandBroadcast::kOther;
    if (!binary_algorithm(s.kind, alg, negate_first) || b == OperandBroadcast::kOther) {
      result.supported = false;
      continue;
    }
    if (negate_first) result.ops.append_eltwise(1.f, algorithm::eltwise_linear, -1.f, 0.f);
    add_binary(alg, s.operand, b);
  }
  if (repeats_with_other_parameters(result.ops)) result.supported = false;
  return result;
}

std::vector<std::optional<Shape>> epilogue_operand_shapes(const std::vector<ir::Step>& steps, const KernelContext& ctx,
                                                          ActivationLayout layout) {
  std::vector<std::optional<Shape>> shapes(static_cast<size_t>(ctx.input_count()));
  for (const ir::Step& s : steps) {
    const Tensor* t = s.binary() ? ctx.input(s.operand) : nullptr;
    if (t == nullptr) continue;
    const bool stored = layout != ActivationLayout::kNchw && is_physical(t->shape(), layout);
    shapes[s.operand] = stored ? logical_of(t->shape(), layout) : t->shape();
  }
  return shapes;
}

Status apply_epilogue(const std::vector<ir::Step>& steps, KernelContext& ctx, Tensor& y, const Tensor* bias,
                      ActivationLayout layout, int threads) {
  const ir::Node& node = ctx.node();
  // Chain inputs: 0 is y itself, i >= 1 the node's input i when a step reads it (else y, as a
  // placeholder that broadcasts trivially), then the bias viewed as [M, 1, ...].
  std::vector<const Tensor*> inputs(static_cast<size_t>(std::max(ctx.input_count(), 1)), &y);
  std::vector<ir::Step> all;
  Tensor bias_view;
  if (bias != nullptr) {
    // [M, 1, ...] against [N, M, spatial...]; a blocked [N, M/8, H, W, 8] output takes
    // [M/8, 1, 1, 8], an NHWC [N, H, W, M] one [1, 1, M].
    Shape shape(y.shape().size() - 1, 1);
    if (layout == ActivationLayout::kNhwc) {
      shape.back() = y.shape().back();
    } else {
      shape[0] = y.shape()[1];
      if (layout == ActivationLayout::kNChw8c) shape.back() = y.shape()[4];
    }
    bias_view = Tensor::borrow(DataType::kFloat32, shape, const_cast<void*>(bias->raw_data()));
    all.push_back({ir::StepKind::kAdd, 0.f, 0.f, static_cast<int>(inputs.size())});
    inputs.push_back(&bias_view);
  }
  for (const ir::Step& s : steps) {
    all.push_back(s);
    if (!s.binary()) continue;
    const Tensor* o = ctx.input(s.operand);
    if (o == nullptr || o->dtype() != DataType::kFloat32) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "epilogue operand (input " + std::to_string(s.operand) + ") must be a float32 tensor");
    }
    EDGEMM_ASSIGN_OR_RETURN(Shape joint, broadcast_shapes(node, y.shape(), o->shape()));
    if (joint != y.shape()) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "epilogue operand '" + node.inputs[s.operand] + "' of shape " +
                                shape_to_string(o->shape()) + " does not broadcast to the output shape " +
                                shape_to_string(y.shape()));
    }
    inputs[s.operand] = o;
  }
  if (!all.empty()) run_elementwise_chain(all, inputs, y.shape(), y.data<float>(), threads);
  return Status::ok();
}

}  // namespace edgemm::kernels
