/// \file conv_int8.cc
/// com.edgemm Int8Conv (see conv_int8.h): oneDNN 2.6's u8s8 convolution with X quantized to
/// uint8 NHWC (the only source layout its AVX2 int8 kernels take: "jit_uni_int8" for NHWC,
/// "ref_int8" for every other layout, measured) and a float32 NHWC destination reordered into
/// the node's layout; on Arm with dot product the SDOT kernels of conv_int8_neon.h on the same
/// uint8 NHWC source; and the reference path on dequantized values.

#include "kernels/cpu/conv_int8.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/conv_int8_neon.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/int8_common.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {
namespace {

using dnnl::memory;

/// Quantizes X (NCHW [N, C, S], nChw8c [N, C/8, S, 8] or NHWC [N, S, C] as `layout` says; S =
/// spatial size) into uint8 NHWC [N, S, C].
void quantize_to_nhwc(const float* x, ActivationLayout layout, int64_t n, int64_t c, int64_t s, float scale, int32_t zp,
                      uint8_t* out, int threads) {
  if (layout == ActivationLayout::kNhwc) return int8::quantize_u8(x, n * s * c, scale, zp, out, threads);
  if (layout == ActivationLayout::kNchw) return int8::quantize_u8_nchw_to_nhwc(x, n, c, s, scale, zp, out, threads);
  constexpr int64_t kB = 8;
  const float z = static_cast<float>(zp);
  const int64_t rows = n * s;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / s, p = row % s;
    uint8_t* dst = out + row * c;
    for (int64_t cb = 0; cb < c / kB; ++cb) {
      const float* src = x + ((b * (c / kB) + cb) * s + p) * kB;
      for (int64_t j = 0; j < kB; ++j) dst[cb * kB + j] = int8::quantize_u8(src[j], scale, z);
    }
  }
}

/// NHWC-style format tag (channels last) for an activation of `rank` 3–5.
memory::format_tag channels_last(size_t rank) {
  return rank == 3 ? memory::format_tag::nwc : rank == 4 ? memory::format_tag::nhwc : memory::format_tag::ndhwc;
}

/// The ONNX int8 weight [M, C/G, k...] in oneDNN's logical dims ({M, C, k...} or {G, M/G, C/G, k...}).
memory::desc int8_weights_desc(const ConvGeometry& g) {
  memory::dims dims;
  if (g.group > 1)
    dims = {g.group, g.out_channels / g.group, g.in_channels / g.group};
  else
    dims = {g.out_channels, g.in_channels};
  dims.insert(dims.end(), g.kernel.begin(), g.kernel.end());
  return memory::desc(dims, memory::data_type::s8, onednn::plain_tag(static_cast<int64_t>(dims.size())));
}

/// `steps` followed by QuantizeLinear's scaling, v / y_scale + y_zero_point, as a linear step
/// (oneDNN then rounds half to even and saturates when it converts to uint8). make_post_ops
/// merges it with a linear step before it and refuses chains that repeat eltwise_linear with
/// other parameters, which oneDNN 2.6 computes wrongly (epilogue.cc).
std::vector<ir::Step> with_quantization(std::vector<ir::Step> steps, const int8::OutputQuantization& y) {
  steps.push_back(
      ir::Step{.kind = ir::StepKind::kLinear, .alpha = 1.0f / y.scale, .beta = static_cast<float>(y.zero_point)});
  return steps;
}

/// Whether oneDNN 2.6's AMX int8 convolutions lose to its AVX-512 VNNI ones on `g`: an AMX tile
/// multiply takes 16 rows (output pixels) by K = 64 bytes (input values per output, C/group ·
/// kernel area), and oneDNN's AMX kernels have a larger fixed cost per call. Measured on
/// PP-OCRv4's convolutions, 1 thread (`ONEDNN_VERBOSE` times), AMX vs VNNI: det 1×1 16 → 32
/// channels at 320×320 1.34 vs 0.96 ms, 48 → 48 at 160×160 0.52 vs 0.47 ms, squeeze-excitation
/// 1×1s on one pixel 0.015 vs 0.003 ms; rec 1×1 64 → 64 at 24×160 0.129 vs 0.096 ms. From 96
/// input values per output on many pixels AMX wins or ties (det 1×1 96 → 96 at 80×80 0.27 vs
/// 0.31 ms, 3×3 96 → 24 at 160×160 0.68 vs 1.95 ms; rec 1×1 128 → 128 at 12×160 0.12 vs 0.13 ms).
bool amx_wasteful(const ConvGeometry& g) {
  int64_t per_output = g.in_channels / g.group, pixels = 1;
  for (int64_t k : g.kernel) per_output *= k;
  for (int64_t d : g.out_spatial) pixels *= d;
  return per_output < 96 || pixels < 16;
}

/// oneDNN's first implementation for `desc`, or its first non-AMX, non-reference one where
/// amx_wasteful(g).
dnnl::convolution_forward::primitive_desc choose_implementation(const dnnl::convolution_forward::desc& desc,
                                                                const dnnl::primitive_attr& attr,
                                                                const ConvGeometry& g) {
  dnnl::convolution_forward::primitive_desc first(desc, attr, onednn::engine(), true);
  if (!first || !amx_wasteful(g) || onednn::impl_name(first).find("amx") == std::string::npos) return first;
  dnnl::convolution_forward::primitive_desc other(desc, attr, onednn::engine(), true);
  while (onednn::impl_name(other).find("amx") != std::string::npos) {
    if (!other.next_impl()) return first;
  }
  return onednn::impl_name(other).find("ref") == std::string::npos ? other : first;
}

/// One input shape prepared for oneDNN.
struct Int8Plan {
  bool reference = true;  // oneDNN has no fast kernel for it: the reference path runs
  dnnl::primitive primitive;
  memory::desc src_md, dst_md, user_dst_md, bias_md, scratchpad_md, dst_reorder_scratch;
  bool reorder_dst = false;  // oneDNN's destination layout is not the node's (dst_layout)
  bool dst_u8 = false;       // oneDNN writes the uint8 output itself (epilogue and y quantization as post-ops)
  dnnl::reorder dst_reorder;
  memory packed_weights;
  bool epilogue_in_primitive = false;
  std::vector<BinaryPostOpArg> binaries;
  // Set when x_zero_point is folded into the bias (a convolution without padding): B / (x_scale
  // · w_scale) − x_zero_point · Σ W per output channel, and oneDNN runs without a src zero point.
  std::vector<float> folded_bias;
};

/// Whether `g` pads nothing, so that no output reads a padded input value.
bool unpadded(const ConvGeometry& g) {
  for (int64_t i = 0; i < g.spatial_rank(); ++i) {
    if (g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
  }
  return true;
}

struct Int8ConvParams {
  ConvAttrs attrs;
  std::vector<ir::Step> steps;
  int8::QdqScales q;                                      // x_scale, x_zero_point, w_scales [M]
  Tensor weights;                                         // int8 [M, C/G, k...]
  Tensor bias;                                            // float32 [M] or undefined
  ActivationLayout src_layout = ActivationLayout::kNchw;  // attribute src_layout
  ActivationLayout dst_layout = ActivationLayout::kNchw;  // attribute dst_layout
  std::optional<int8::OutputQuantization> y;              // attributes y_scale, y_zero_point
};

class Int8ConvKernel final : public Kernel {
 public:
  Int8ConvKernel(Int8ConvParams p, bool use_onednn, bool use_neon)
      : p_(std::move(p)), use_onednn_(use_onednn), packed_(p_.weights) {
#if defined(__aarch64__)
    if (use_neon) {
      neon_ = std::make_unique<Int8ConvNeon>(p_.weights, p_.attrs.group, p_.q,
                                             p_.bias.defined() ? p_.bias.data<float>() : nullptr);
    }
#else
    (void)use_neon;
#endif
    const int64_t m = p_.weights.dim(0);
    output_scales_.resize(static_cast<size_t>(m));
    scaled_bias_.assign(static_cast<size_t>(m), 0.0f);
    weight_sums_.assign(static_cast<size_t>(m), 0);
    const int64_t per_channel = p_.weights.element_count() / std::max<int64_t>(m, 1);
    // |Σ (x − zp) · w| <= 255 · 128 per product; the zero point folded into the bias adds as much.
    const double max_sum = 2.0 * 255.0 * 128.0 * static_cast<double>(per_channel);
    for (int64_t c = 0; c < m; ++c) {
      output_scales_[c] = p_.q.x_scale * p_.q.w_scales[c];
      if (p_.bias.defined()) scaled_bias_[c] = p_.bias.data<float>()[c] / output_scales_[c];
      for (int64_t k = 0; k < per_channel; ++k) weight_sums_[c] += p_.weights.data<int8_t>()[c * per_channel + k];
      const double bound = std::fabs(static_cast<double>(output_scales_[c])) *
                           (max_sum + std::fabs(static_cast<double>(scaled_bias_[c])));
      finite_result_ = finite_result_ && std::isfinite(scaled_bias_[c]) && bound < 0.5 * FLT_MAX;
    }
  }

  const char* name() const override {
#if defined(__aarch64__)
    if (neon_) return "u8s8_conv__neon_dot";
#endif
    return use_onednn_ ? "u8s8_conv__onednn" : "u8s8_conv__reference";
  }

  int64_t packed_bytes() const override {
#if defined(__aarch64__)
    if (neon_) return neon_->packed_bytes() + packed_.packed_bytes();
#endif
    return packed_.packed_bytes();
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input X is missing");
    const bool x_u8 = x->dtype() == DataType::kUInt8 && p_.src_layout == ActivationLayout::kNhwc;
    if (x->dtype() != DataType::kFloat32 && !x_u8) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + node.inputs[0] + "' must be float32 (or uint8 with src_layout NHWC), got " +
                                dtype_name(x->dtype()));
    }
    EDGEMM_RETURN_IF_ERROR(check_src_layout(node, x->shape(), p_.src_layout));
    const Shape x_shape = logical_of(x->shape(), p_.src_layout);
    const Shape b_shape = p_.bias.defined() ? p_.bias.shape() : Shape{};
    EDGEMM_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(node, p_.attrs, x_shape, p_.weights.shape(),
                                                          p_.bias.defined() ? &b_shape : nullptr));
    EDGEMM_RETURN_IF_ERROR(check_dst_layout(node, g.output_shape(), p_.dst_layout));
    const Shape y_shape = g.output_shape();
    const DataType y_type = p_.y ? DataType::kUInt8 : DataType::kFloat32;
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, y_type, physical_shape(y_shape, p_.dst_layout)));
    if (y->element_count() == 0) return Status::ok();
#if defined(__aarch64__)
    if (neon_) return run_neon(ctx, g, *x, y);
#endif
    if (use_onednn_ && x->element_count() > 0) {
      std::shared_ptr<const Int8Plan> plan = plan_for(node, g, epilogue_operand_shapes(p_.steps, ctx, p_.dst_layout));
      if (!plan->reference) return run_onednn(ctx, *plan, g, *x, y);
    }
    return run_reference(ctx, g, *x, y);
  }

  /// The cached plan for a geometry, created on first use.
  std::shared_ptr<const Int8Plan> plan_for(const ir::Node& node, const ConvGeometry& g,
                                           const std::vector<std::optional<Shape>>& operands) const {
    std::string key = onednn::shape_key(Shape{g.batch, g.in_channels}, g.in_spatial);
    for (const auto& s : operands) key += s ? shape_to_string(*s) : "-";
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    auto made = std::make_shared<Int8Plan>(create_plan(node, g, operands));
    plans_[key] = made;
    return made;
  }

 private:
  static constexpr size_t kMaxPlans = 64;

  // Called with mutex_ held.
  Int8Plan create_plan(const ir::Node& node, const ConvGeometry& g,
                       const std::vector<std::optional<Shape>>& operands) const {
    Int8Plan p;
    try {
      Shape x_shape = {g.batch, g.in_channels};
      x_shape.insert(x_shape.end(), g.in_spatial.begin(), g.in_spatial.end());
      const Shape y_shape = g.output_shape();
      const auto tag = channels_last(x_shape.size());
      p.src_md = memory::desc(onednn::to_dims(x_shape), memory::data_type::u8, tag);
      p.dst_md = memory::desc(onednn::to_dims(y_shape), memory::data_type::f32, tag);
      p.user_dst_md = onednn::activation_desc(y_shape, p_.dst_layout);
      const memory::desc float_dst_md = p.dst_md;
      const memory::desc user_weights = int8_weights_desc(g);
      const memory::desc weights_any(user_weights.dims(), memory::data_type::s8, memory::format_tag::any);
      p.folded_bias = folded_bias(g);
      if (p_.bias.defined() || !p.folded_bias.empty()) {
        p.bias_md = memory::desc({g.out_channels}, memory::data_type::f32, memory::format_tag::a);
      }
      memory::dims strides, dilates, pad_l, pad_r;
      for (int64_t i = 0; i < g.spatial_rank(); ++i) {
        strides.push_back(g.strides[i]);
        dilates.push_back(g.dilations[i] - 1);
        pad_l.push_back(g.pad_begin[i]);
        pad_r.push_back(g.pad_end[i]);
      }
      dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
      attr.set_output_scales(1 << 1, output_scales_);
      if (p.folded_bias.empty()) attr.set_zero_points(DNNL_ARG_SRC, 0, {p_.q.x_zero_point});
      std::vector<const Shape*> shapes;
      for (const auto& o : operands) shapes.push_back(o ? &*o : nullptr);
      dnnl::post_ops ops;
      // The uint8 output: the epilogue and QuantizeLinear as post-ops, when oneDNN takes them.
      if (p_.y && p_.dst_layout == ActivationLayout::kNhwc &&
          in_primitive(with_quantization(p_.steps, *p_.y), shapes, y_shape, float_dst_md, p, ops)) {
        p.dst_md = memory::desc(onednn::to_dims(y_shape), memory::data_type::u8, tag);
        p.user_dst_md = p.dst_md;
        p.dst_u8 = true;
      } else {
        ops = dnnl::post_ops();
        p.binaries.clear();
        in_primitive(p_.steps, shapes, y_shape, float_dst_md, p, ops);
      }
      if (ops.len() > 0) attr.set_post_ops(ops);
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           p.src_md, weights_any, p.bias_md, p.dst_md, strides, dilates, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd = choose_implementation(desc, attr, g);
      if (!pd || onednn::impl_name(pd).find("ref") != std::string::npos) return p;
      p.primitive = dnnl::convolution_forward(pd);
      p.scratchpad_md = pd.scratchpad_desc();
      p.packed_weights = packed_.get(node, pd.weights_desc(), user_weights);
      if (!p.packed_weights) return p;
      p.reorder_dst = p.dst_md != p.user_dst_md;
      if (p.reorder_dst) p.dst_reorder = onednn::make_reorder(p.dst_md, p.user_dst_md, &p.dst_reorder_scratch);
      p.reference = false;
    } catch (const dnnl::error&) {
      p.reference = true;
    }
    return p;
  }

  /// The bias with x_zero_point folded in where `g` pads nothing: Σ (x − zp) · w = Σ x · w −
  /// zp · Σ w, so B / (x_scale · w_scale) − zp · Σ W per output channel; empty with padding
  /// (padded values must read as zp) or a zero point of 0. Spares oneDNN's zero-point handling:
  /// PP-OCRv4 rec's 1×1 convolutions took about 20 % longer with it (0.138 vs 0.110 ms).
  std::vector<float> folded_bias(const ConvGeometry& g) const {
    if (p_.q.x_zero_point == 0 || !unpadded(g)) return {};
    std::vector<float> b(scaled_bias_.size());
    for (size_t c = 0; c < b.size(); ++c) {
      b[c] = scaled_bias_[c] - static_cast<float>(p_.q.x_zero_point * weight_sums_[c]);
    }
    return b;
  }

  /// Fills `ops` and p.binaries with the post-ops of `steps` on the float32 NHWC destination
  /// `float_dst_md` and sets p.epilogue_in_primitive; false when oneDNN cannot take them all.
  bool in_primitive(const std::vector<ir::Step>& steps, const std::vector<const Shape*>& shapes, const Shape& y_shape,
                    const memory::desc& float_dst_md, Int8Plan& p, dnnl::post_ops& ops) const {
    p.epilogue_in_primitive = steps.empty();
    if (steps.empty()) return true;
    EpiloguePostOps post = make_post_ops(steps, shapes, y_shape, float_dst_md, finite_result_);
    // A full-shape operand is stored like the node's output: oneDNN reads it only when that
    // is oneDNN's own destination layout (NHWC).
    bool full = false;
    for (const BinaryPostOpArg& arg : post.binaries) full = full || arg.broadcast == OperandBroadcast::kFull;
    if (!post.supported || (full && p.user_dst_md != float_dst_md)) return false;
    ops = post.ops;
    p.binaries = post.binaries;
    p.epilogue_in_primitive = true;
    return true;
  }

  Status run_onednn(KernelContext& ctx, const Int8Plan& p, const ConvGeometry& g, const Tensor& x, Tensor* y) const {
    const ir::Node& node = ctx.node();
    const int threads = ctx.threads();
    int64_t spatial = 1;
    for (int64_t d : g.in_spatial) spatial *= d;
    const uint8_t* src = x.dtype() == DataType::kUInt8 ? x.data<uint8_t>() : nullptr;
    if (src == nullptr) {
      auto* q = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, p.src_md.get_size()));
      quantize_to_nhwc(x.data<float>(), p_.src_layout, g.batch, g.in_channels, spatial, p_.q.x_scale, p_.q.x_zero_point,
                       q, threads);
      src = q;
    }
    // A uint8 output that oneDNN cannot write itself is finished in float, then quantized.
    Tensor float_y = *y;
    if (p_.y && !p.dst_u8) {
      EDGEMM_ASSIGN_OR_RETURN(float_y, Tensor::create(DataType::kFloat32, y->shape()));
    }
    onednn::set_threads(threads);
    try {
      memory user_dst = onednn::wrap(p.user_dst_md, float_y.raw_data());
      memory dst = p.reorder_dst
                       ? onednn::wrap(p.dst_md, onednn::thread_buffer(onednn::Slot::kDst, p.dst_md.get_size()))
                       : user_dst;
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, onednn::wrap(p.src_md, const_cast<uint8_t*>(src))},
                                              {DNNL_ARG_WEIGHTS, p.packed_weights},
                                              {DNNL_ARG_DST, dst}};
      if (!p.folded_bias.empty()) {
        args[DNNL_ARG_BIAS] = onednn::wrap(p.bias_md, p.folded_bias.data());
      } else if (p_.bias.defined()) {
        args[DNNL_ARG_BIAS] = onednn::wrap(p.bias_md, scaled_bias_.data());
      }
      for (const BinaryPostOpArg& arg : p.binaries) {
        const Tensor* t = ctx.input(arg.input);
        if (t == nullptr) {
          return ir::node_error(node, StatusCode::kInvalidModel,
                                "epilogue operand (input " + std::to_string(arg.input) + ") is missing");
        }
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(arg.post_op) | DNNL_ARG_SRC_1] = onednn::wrap(arg.md, t->raw_data());
      }
      EDGEMM_RETURN_IF_ERROR(onednn::execute(node, p.primitive, std::move(args), p.scratchpad_md));
      if (p.reorder_dst) {
        EDGEMM_RETURN_IF_ERROR(onednn::execute(node, p.dst_reorder, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, user_dst}},
                                               p.dst_reorder_scratch));
      }
    } catch (const dnnl::error& e) {
      return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN error: ") + e.what());
    }
    if (!p.epilogue_in_primitive)
      EDGEMM_RETURN_IF_ERROR(apply_epilogue(p_.steps, ctx, float_y, nullptr, p_.dst_layout, threads));
    return finish_output(float_y, y, threads);
  }

#if defined(__aarch64__)
  /// The SDOT path: X as uint8 NHWC, the convolution into float32 NHWC (y itself when that is
  /// the node's output), moved into dst_layout, then the epilogue and the uint8 quantization.
  Status run_neon(KernelContext& ctx, const ConvGeometry& g, const Tensor& x, Tensor* y) const {
    const int threads = ctx.threads();
    const int64_t spatial = g.in_spatial[0] * g.in_spatial[1];
    const uint8_t* src = x.dtype() == DataType::kUInt8 ? x.data<uint8_t>() : nullptr;
    if (src == nullptr) {
      const auto bytes = static_cast<size_t>(g.batch * g.in_channels * spatial);
      auto* q = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, bytes));
      quantize_to_nhwc(x.data<float>(), p_.src_layout, g.batch, g.in_channels, spatial, p_.q.x_scale, p_.q.x_zero_point,
                       q, threads);
      src = q;
    }
    Tensor float_y = *y;
    if (p_.y) {
      EDGEMM_ASSIGN_OR_RETURN(float_y, Tensor::create(DataType::kFloat32, y->shape()));
    }
    const Shape y_shape = g.output_shape();
    if (p_.dst_layout == ActivationLayout::kNhwc) {
      neon_->run(g, src, float_y.data<float>(), threads);
    } else {
      EDGEMM_ASSIGN_OR_RETURN(Tensor nhwc,
                              Tensor::create(DataType::kFloat32, physical_shape(y_shape, ActivationLayout::kNhwc)));
      neon_->run(g, src, nhwc.data<float>(), threads);
      Tensor plain = float_y;
      if (p_.dst_layout != ActivationLayout::kNchw) {
        EDGEMM_ASSIGN_OR_RETURN(plain, Tensor::create(DataType::kFloat32, y_shape));
      }
      from_layout(nhwc.data<float>(), plain.data<float>(), y_shape, ActivationLayout::kNhwc, threads);
      if (p_.dst_layout != ActivationLayout::kNchw) {
        to_layout(plain.data<float>(), float_y.data<float>(), y_shape, p_.dst_layout, threads);
      }
    }
    EDGEMM_RETURN_IF_ERROR(apply_epilogue(p_.steps, ctx, float_y, nullptr, p_.dst_layout, threads));
    return finish_output(float_y, y, threads);
  }
#endif

  /// Quantizes the finished float output into the node's uint8 output, when it has one and
  /// oneDNN has not written it.
  Status finish_output(const Tensor& float_y, Tensor* y, int threads) const {
    if (!p_.y || float_y.raw_data() == y->raw_data()) return Status::ok();
    int8::quantize_u8(float_y.data<float>(), y->element_count(), p_.y->scale, p_.y->zero_point, y->data<uint8_t>(),
                      threads);
    return Status::ok();
  }

  // The QDQ graph's arithmetic in float: dequantize(quantize(X)) convolved with the dequantized
  // weights, plus bias, then the epilogue.
  Status run_reference(KernelContext& ctx, const ConvGeometry& g, const Tensor& x, Tensor* y) const {
    const int threads = ctx.threads();
    Shape x_shape = {g.batch, g.in_channels};
    x_shape.insert(x_shape.end(), g.in_spatial.begin(), g.in_spatial.end());
    EDGEMM_ASSIGN_OR_RETURN(Tensor xdq, Tensor::create(DataType::kFloat32, x_shape));
    EDGEMM_RETURN_IF_ERROR(dequantized_input(x, x_shape, xdq, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor wdq, Tensor::create(DataType::kFloat32, p_.weights.shape()));
    const int64_t per_channel = p_.weights.element_count() / p_.weights.dim(0);
    for (int64_t i = 0; i < wdq.element_count(); ++i) {
      wdq.data<float>()[i] = static_cast<float>(p_.weights.data<int8_t>()[i]) * p_.q.w_scales[i / per_channel];
    }
    Tensor float_y = *y;
    if (p_.y) {
      EDGEMM_ASSIGN_OR_RETURN(float_y, Tensor::create(DataType::kFloat32, y->shape()));
    }
    Tensor plain_y = float_y;
    if (p_.dst_layout != ActivationLayout::kNchw) {
      EDGEMM_ASSIGN_OR_RETURN(plain_y, Tensor::create(DataType::kFloat32, g.output_shape()));
    }
    conv_reference<float>(g, xdq.data<float>(), wdq.data<float>(), p_.bias.defined() ? p_.bias.data<float>() : nullptr,
                          plain_y.data<float>(), threads);
    if (p_.dst_layout != ActivationLayout::kNchw) {
      to_layout(plain_y.data<float>(), float_y.data<float>(), plain_y.shape(), p_.dst_layout, threads);
    }
    EDGEMM_RETURN_IF_ERROR(apply_epilogue(p_.steps, ctx, float_y, nullptr, p_.dst_layout, threads));
    return finish_output(float_y, y, threads);
  }

  /// dequantize(quantize(X)) as float32 NCHW `x_shape` into `out`: X is float32 in src_layout,
  /// or uint8 NHWC already quantized with x_scale and x_zero_point.
  Status dequantized_input(const Tensor& x, const Shape& x_shape, Tensor& out, int threads) const {
    const int64_t count = out.element_count();
    EDGEMM_ASSIGN_OR_RETURN(Tensor q, Tensor::create(DataType::kFloat32, x.shape()));
    float* v = q.data<float>();
    const float zp = static_cast<float>(p_.q.x_zero_point);
    for (int64_t i = 0; i < count; ++i) {
      const float u = x.dtype() == DataType::kUInt8
                          ? static_cast<float>(x.data<uint8_t>()[i])
                          : static_cast<float>(int8::quantize_u8(x.data<float>()[i], p_.q.x_scale, zp));
      v[i] = (u - zp) * p_.q.x_scale;
    }
    from_layout(v, out.data<float>(), x_shape, p_.src_layout, threads);
    return Status::ok();
  }

  Int8ConvParams p_;
  // Every convolution result (before the epilogue) is finite: int32 sums times normal scales
  // plus a finite bias, bounded below FLT_MAX. Relu, Clip and the like may then run as
  // post-ops (make_post_ops), since no NaN can reach them before an operand does.
  bool finite_result_ = true;
  bool use_onednn_;
#if defined(__aarch64__)
  std::unique_ptr<Int8ConvNeon> neon_;  // the SDOT path, where it runs
#endif
  std::vector<float> output_scales_;  // x_scale · w_scales[m]
  std::vector<float> scaled_bias_;    // B[m] / output_scales_[m]: oneDNN 2.6 adds the bias before scaling
  std::vector<int64_t> weight_sums_;  // Σ W[m] over each output channel's weights
  mutable onednn::PackedWeights packed_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const Int8Plan>> plans_;
};

Status invalid(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidModel, message);
}

Expected<Int8ConvParams> read_params(const KernelInfo& info) {
  const ir::Node& node = info.node;
  Int8ConvParams p;
  EDGEMM_ASSIGN_OR_RETURN(p.attrs, parse_conv_attrs(node, false));
  EDGEMM_ASSIGN_OR_RETURN(p.steps, ir::read_steps(node));
  const Tensor* w = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  if (w == nullptr || w->dtype() != DataType::kInt8 || w->rank() < 3 || w->rank() > 5) {
    return invalid(node, "input W must be a constant int8 tensor of rank 3-5");
  }
  p.weights = *w;
  const int64_t m = w->dim(0);
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    const Tensor* b = info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
    if (b == nullptr || b->dtype() != DataType::kFloat32 || b->shape() != Shape{m}) {
      return invalid(node, "input B must be a constant float32 tensor [" + std::to_string(m) + "]");
    }
    p.bias = *b;
  }
  EDGEMM_ASSIGN_OR_RETURN(p.q, int8::read_qdq_scales(node, m));
  EDGEMM_ASSIGN_OR_RETURN(p.src_layout, read_layout(node, "src_layout"));
  EDGEMM_ASSIGN_OR_RETURN(p.dst_layout, read_layout(node, "dst_layout"));
  EDGEMM_ASSIGN_OR_RETURN(p.y, int8::read_output_quantization(node));
  if (p.y && p.dst_layout != ActivationLayout::kNhwc) {
    return invalid(node, "a uint8 output (y_scale) needs dst_layout NHWC");
  }
  return p;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_int8_conv(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(Int8ConvParams p, read_params(info));
#if defined(__aarch64__)
  if (onednn::enabled() && int8_neon::enabled() && Int8ConvNeon::applies(p.weights) &&
      int8::output_scales_finite(p.q)) {
    return std::unique_ptr<Kernel>(std::make_unique<Int8ConvKernel>(std::move(p), false, true));
  }
#endif
  int8_neon::warn_without_dot_product_once();
  const bool exact = int8::fits_pair_sums(p.weights);
  if (!exact) int8::warn_reference_path(info.node);
  const bool onednn = onednn::enabled() && exact && int8::scales_representable(p.q, p.bias);
  return std::unique_ptr<Kernel>(std::make_unique<Int8ConvKernel>(std::move(p), onednn, false));
}

}  // namespace edgemm::kernels
