/// \file conv.cc
/// Conv and ConvTranspose of the default ONNX domain (Operators.md "Conv" 1/11,
/// "ConvTranspose" 1/11): groups (incl. depthwise), strides, dilations, explicit pads,
/// auto_pad NOTSET / SAME_UPPER / SAME_LOWER / VALID, 1-D/2-D/3-D, optional bias; for
/// ConvTranspose also output_padding and output_shape. Shape rules and the plain loops are in
/// conv_reference.cc.
///
/// Paths: float32 runs on oneDNN (convolution_forward / deconvolution_forward, forward
/// inference). Constant weights are reordered once into the layout oneDNN picks
/// (format_tag::any) when the kernel is created, using a nominal input shape; primitives for
/// each actual input shape are created on first use and cached (mutex-protected, keyed by the
/// shapes). Activations are taken in the node's layout (NCHW, or nChw8c / NHWC with the
/// FusedConv attributes src_layout / dst_layout that the layout pass sets, kernels/cpu/layout.h)
/// and reordered at the op's edges into the layout oneDNN prefers when it differs (blocked
/// nChw8c/16c with AVX2, NHWC with AVX-512), which keeps depthwise convolutions off oneDNN's
/// slow NCHW path; see plain_layout() for the exceptions. float64 (and any shape oneDNN
/// refuses) runs the reference loops.
///
/// On aarch64 without SVE, where oneDNN 2.6 runs convolutions as `gemm:ref` (im2col and its
/// reference sgemm), a 2-D Conv with constant float32 weights runs on XNNPACK in NHWC
/// (conv_xnnpack.h, `f32_conv__xnnpack`), and so does a 2-D ConvTranspose other than the strided
/// kernel's below (`f32_conv_transpose__xnnpack`, where XnnpackConv::fits); other layouts are
/// transposed at the op's edges and the epilogue follows in loops.
///
/// A 2-D ConvTranspose whose kernel equals its strides (no pads, output_padding, dilation or
/// groups) with constant float32 weights runs edgemm's own kernel on every CPU
/// (conv_transpose_strided.h, `f32_conv_transpose_strided__edgemm`): oneDNN 2.6 runs PP-OCR
/// det's 2x2 stride-2 head at 1-12 GFLOP/s. The epilogue follows in loops.

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/conv_int8.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/conv_transpose_strided.h"
#include "kernels/cpu/conv_xnnpack.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {
namespace {

using dnnl::memory;

// Logical shapes of the node inputs that epilogue steps read (nullopt elsewhere).
using OperandShapes = std::vector<std::optional<Shape>>;

// A shape oneDNN was prepared for: primitive, layouts and the reorders at the edges.
struct ConvPlan {
  ConvGeometry geom;
  bool reference = false;  // oneDNN refused this shape: run the loops
  dnnl::primitive primitive;
  memory::desc src_md, dst_md, weights_md, bias_md, scratchpad_md;
  memory::desc user_src_md, user_dst_md, user_weights_md;
  bool reorder_src = false, reorder_dst = false, reorder_weights = false;
  dnnl::reorder src_reorder, dst_reorder, weights_reorder;
  memory::desc src_reorder_scratch, dst_reorder_scratch, weights_reorder_scratch;
  memory packed_weights;                  // constant weights in weights_md; empty when W is not constant
  bool bias_in_loops = false;             // the primitive has no bias: apply_epilogue adds it
  std::vector<ir::Step> loop_steps;       // run by apply_epilogue after oneDNN (no post-ops)
  std::vector<BinaryPostOpArg> binaries;  // epilogue operands read by binary post-ops
  dnnl::reorder operand_reorder;          // a full-shape operand into the blocked destination layout
  memory::desc operand_reorder_scratch;
};

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// The ONNX weight tensor viewed with oneDNN's logical dims ({M, C, k...} or
// {G, M/G, C/G, k...}) through strides, without copying.
memory::desc onnx_weights_desc(const ConvGeometry& g, bool transpose) {
  const int64_t ksz = product(g.kernel);
  const int64_t mg = g.out_channels / g.group, cg = g.in_channels / g.group;
  memory::dims dims, strides;
  if (g.group > 1) {
    dims = {g.group, mg, cg};
    strides = {mg * cg * ksz, transpose ? ksz : cg * ksz, transpose ? mg * ksz : ksz};
  } else {
    dims = {mg, cg};
    strides = {transpose ? ksz : cg * ksz, transpose ? mg * ksz : ksz};
  }
  int64_t s = ksz;
  for (int64_t k : g.kernel) {
    s /= k;
    dims.push_back(k);
    strides.push_back(s);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

// Activation layout policy (measured on x86 with oneDNN 2.6, 1 thread): the layout oneDNN
// picks (format_tag::any: blocked nChw8c/16c, reorders at the op's edges) is fastest for
// regular, depthwise and 3x3 convolutions; with fewer output channels than a block, plain NCHW
// is 4-5x faster for ConvTranspose (e.g. PP-OCR det's 24 -> 1 upsampling head) and for 1x1
// Conv, where the blocked output would be mostly padding. Whole-chain layout planning replaces
// this per-op choice later.
bool plain_layout(const ConvGeometry& g, bool transpose) {
  constexpr int64_t kBlock = 8;
  if (g.out_channels >= kBlock) return false;
  if (transpose) return true;
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) {
      return false;
    }
  }
  return true;
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(bool transpose, ConvAttrs attrs, std::vector<ir::Step> steps, Tensor weights, bool use_onednn,
             const char* name)
      : transpose_(transpose),
        attrs_(std::move(attrs)),
        steps_(std::move(steps)),
        weights_(std::move(weights)),
        use_onednn_(use_onednn),
        name_(name) {}

  const char* name() const override { return name_; }

  int64_t packed_bytes() const override {
    int64_t bytes = weights_.packed_bytes() + (strided_ != nullptr ? strided_->packed_bytes() : 0);
#if defined(__aarch64__)
    if (xnnpack_ != nullptr) bytes += xnnpack_->packed_bytes();
#endif
    return bytes;
  }
  void set_name(const char* name) { name_ = name; }
#if defined(__aarch64__)
  void set_xnnpack(std::unique_ptr<const XnnpackConv> xnnpack, bool bias_in_loops) {
    xnnpack_ = std::move(xnnpack);
    xnnpack_bias_in_loops_ = bias_in_loops;
  }
#endif
  void set_strided(std::unique_ptr<const ConvTransposeStrided> strided) { strided_ = std::move(strided); }
  void set_layouts(ActivationLayout src, ActivationLayout dst) {
    src_layout_ = src;
    dst_layout_ = dst;
  }

  Expected<ConvGeometry> geometry(const ir::Node& node, const Shape& x, const Shape& w, const Shape* b) const {
    return transpose_ ? conv_transpose_geometry(node, attrs_, x, w, b) : conv_geometry(node, attrs_, x, w, b);
  }

  // Returns the cached plan for these shapes, creating it on first use.
  // `operands[i]` is the shape of node input i when an epilogue step reads it (else nullptr).
  // `epilogue` false prepares the bare convolution (used to prepack weights at creation, when
  // the operands' shapes are not known yet).
  std::shared_ptr<const ConvPlan> plan(const ir::Node& node, const ConvGeometry& g, bool has_bias,
                                       const OperandShapes& operands, bool epilogue = true) const {
    Shape tail = g.kernel;
    tail.push_back(g.out_channels);
    tail.push_back(has_bias ? 1 : 0);
    std::string key = onednn::shape_key(Shape{g.batch, g.in_channels}, g.in_spatial, tail);
    for (const auto& s : operands) key += s ? shape_to_string(*s) : "-";
    if (!epilogue) key += "bare";
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();  // dynamic shapes: keep the cache bounded
    auto made = std::make_shared<ConvPlan>(create_plan(node, g, has_bias, operands, epilogue));
    plans_[key] = made;
    return made;
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (x == nullptr || w == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            x == nullptr ? "input X is missing" : "input W (weights) is missing");
    }
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    if (w->dtype() != dt || (b != nullptr && b->dtype() != dt)) {
      const int bad = w->dtype() != dt ? 1 : 2;
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + node.inputs[bad] + "' has dtype " +
                                dtype_name(bad == 1 ? w->dtype() : b->dtype()) + " but input '" + node.inputs[0] +
                                "' has dtype " + dtype_name(dt));
    }
    const Shape b_shape = b != nullptr ? b->shape() : Shape{};
    EDGEMM_RETURN_IF_ERROR(check_src_layout(node, x->shape(), src_layout_));
    if ((src_layout_ != ActivationLayout::kNchw || dst_layout_ != ActivationLayout::kNchw) &&
        dt != DataType::kFloat32) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "src_layout and dst_layout other than NCHW need float32 tensors");
    }
    const Shape x_shape = logical_of(x->shape(), src_layout_);
    EDGEMM_ASSIGN_OR_RETURN(ConvGeometry g, geometry(node, x_shape, w->shape(), b ? &b_shape : nullptr));
    EDGEMM_RETURN_IF_ERROR(check_dst_layout(node, g.output_shape(), dst_layout_));
    const Shape y_shape = g.output_shape();
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, physical_shape(y_shape, dst_layout_)));
    if (y->element_count() == 0) return Status::ok();
    const int threads = work_threads(g, y->element_count(), ctx.threads());
    if (dt == DataType::kFloat64) {
      run_reference<double>(g, *x, *w, b, y, threads);
      return Status::ok();
    }
    const bool empty_input = x->element_count() == 0 || w->element_count() == 0;
#if defined(__aarch64__)
    if (xnnpack_ && !empty_input && xnnpack_->fits(g)) {
      EDGEMM_RETURN_IF_ERROR(run_xnnpack(node, g, *x, y, threads));
      return apply_epilogue(steps_, ctx, *y, xnnpack_bias_in_loops_ ? b : nullptr, dst_layout_, threads);
    }
#endif
    const bool strided_dst = dst_layout_ == ActivationLayout::kNchw || g.out_channels % kChannelBlock == 0;
    if (strided_ && !empty_input && ConvTransposeStrided::fits(g) && strided_dst) {
      // Unary epilogues run inside the kernel, on output rows still in cache.
      static const std::vector<ir::Step> kNoSteps;
      const bool unary = std::none_of(steps_.begin(), steps_.end(), [](const ir::Step& s) { return s.binary(); });
      strided_->run(g, x->data<float>(), src_layout_, b != nullptr ? b->data<float>() : nullptr, y->data<float>(),
                    dst_layout_, unary ? steps_ : kNoSteps, threads);
      return unary ? Status::ok() : apply_epilogue(steps_, ctx, *y, nullptr, dst_layout_, threads);
    }
    if (use_onednn_ && !empty_input) {
      std::shared_ptr<const ConvPlan> p =
          plan(node, g, b != nullptr, epilogue_operand_shapes(steps_, ctx, dst_layout_));
      if (!p->reference) {
        EDGEMM_RETURN_IF_ERROR(run_onednn(ctx, *p, *x, *w, b, y, threads));
        return apply_epilogue(p->loop_steps, ctx, *y, p->bias_in_loops ? b : nullptr, dst_layout_, threads);
      }
    }
    EDGEMM_RETURN_IF_ERROR(run_reference_f32(g, *x, *w, b, y, threads));
    return apply_epilogue(steps_, ctx, *y, nullptr, dst_layout_, threads);
  }

  // The reference loops on float32, converting nChw8c or NHWC input/output through NCHW copies.
  Status run_reference_f32(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor* y,
                           int threads) const {
    Tensor plain_x = x, plain_y = *y;
    if (src_layout_ != ActivationLayout::kNchw) {
      EDGEMM_ASSIGN_OR_RETURN(plain_x, Tensor::create(DataType::kFloat32, logical_of(x.shape(), src_layout_)));
      from_layout(x.data<float>(), plain_x.data<float>(), plain_x.shape(), src_layout_, threads);
    }
    if (dst_layout_ != ActivationLayout::kNchw) {
      EDGEMM_ASSIGN_OR_RETURN(plain_y, Tensor::create(DataType::kFloat32, g.output_shape()));
    }
    run_reference<float>(g, plain_x, w, b, &plain_y, threads);
    if (dst_layout_ != ActivationLayout::kNchw) {
      to_layout(plain_y.data<float>(), y->data<float>(), plain_y.shape(), dst_layout_, threads);
    }
    return Status::ok();
  }

#if defined(__aarch64__)
  // XNNPACK convolves NHWC: X and Y in other layouts go through per-thread NHWC buffers (blocked
  // ones through NCHW first).
  Status run_xnnpack(const ir::Node& node, const ConvGeometry& g, const Tensor& x, Tensor* y, int threads) const {
    const float* src = x.data<float>();
    if (src_layout_ != ActivationLayout::kNhwc) {
      const Shape shape = logical_of(x.shape(), src_layout_);
      if (src_layout_ != ActivationLayout::kNchw) {
        float* plain = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kExtra, x.byte_size()));
        from_layout(src, plain, shape, src_layout_, threads);
        src = plain;
      }
      float* nhwc = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kSrc, x.byte_size()));
      to_layout(src, nhwc, shape, ActivationLayout::kNhwc, threads);
      src = nhwc;
    }
    if (dst_layout_ == ActivationLayout::kNhwc) return xnnpack_->run(node, g, src, y->data<float>(), threads);
    const Shape shape = g.output_shape();
    float* nhwc = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kDst, y->byte_size()));
    EDGEMM_RETURN_IF_ERROR(xnnpack_->run(node, g, src, nhwc, threads));
    if (dst_layout_ == ActivationLayout::kNchw) {
      from_layout(nhwc, y->data<float>(), shape, ActivationLayout::kNhwc, threads);
    } else {
      float* plain = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kExtra, y->byte_size()));
      from_layout(nhwc, plain, shape, ActivationLayout::kNhwc, threads);
      to_layout(plain, y->data<float>(), shape, dst_layout_, threads);
    }
    return Status::ok();
  }
#endif

  // One thread for convolutions too small to split: below ~2 MFLOP (PP-OCR cls's 1-2 MFLOP
  // convolutions) an OpenMP fork/join costs more than the second thread saves.
  static int work_threads(const ConvGeometry& g, int64_t outputs, int threads) {
    constexpr int64_t kMinParallelFlops = 2'000'000;
    int64_t per_output = 2 * (g.in_channels / g.group);
    for (int64_t k : g.kernel) per_output *= k;
    return outputs * per_output < kMinParallelFlops ? 1 : threads;
  }

 private:
  static constexpr size_t kMaxPlans = 64;

  template <typename T>
  void run_reference(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor* y,
                     int threads) const {
    const T* bias = b != nullptr ? b->data<T>() : nullptr;
    if (transpose_) {
      conv_transpose_reference<T>(g, x.data<T>(), w.data<T>(), bias, y->data<T>(), threads);
    } else {
      conv_reference<T>(g, x.data<T>(), w.data<T>(), bias, y->data<T>(), threads);
    }
  }

  // Strides, dilations and pads in oneDNN's terms.
  struct ConvDims {
    memory::dims strides, dilates, pad_l, pad_r;
  };
  ConvDims conv_dims(const ConvGeometry& g) const {
    ConvDims d;
    for (int64_t i = 0; i < g.spatial_rank(); ++i) {
      d.strides.push_back(g.strides[i]);
      d.dilates.push_back(g.dilations[i] - 1);  // oneDNN counts the gaps
      d.pad_l.push_back(g.pad_begin[i]);
      if (transpose_) {
        // oneDNN checks in == (out - dilated kernel + pad_l + pad_r) / stride + 1; the exact
        // pad_r (negative with output_padding) satisfies it.
        const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
        d.pad_r.push_back(g.strides[i] * (g.in_spatial[i] - 1) + eff - g.pad_begin[i] - g.out_spatial[i]);
      } else {
        d.pad_r.push_back(g.pad_end[i]);
      }
    }
    return d;
  }

  // The (de)convolution primitive descriptor, or an empty one when oneDNN has no implementation.
  dnnl::primitive_desc_base make_pd(const ConvDims& d, const memory::desc& src, const memory::desc& weights,
                                    const memory::desc& bias, const memory::desc& dst,
                                    const dnnl::primitive_attr& attr) const {
    const auto kind = dnnl::prop_kind::forward_inference;
    if (transpose_) {
      dnnl::deconvolution_forward::desc desc(kind, dnnl::algorithm::deconvolution_direct, src, weights, bias, dst,
                                             d.strides, d.dilates, d.pad_l, d.pad_r);
      return dnnl::deconvolution_forward::primitive_desc(desc, attr, onednn::engine(), true);
    }
    dnnl::convolution_forward::desc desc(kind, dnnl::algorithm::convolution_direct, src, weights, bias, dst, d.strides,
                                         d.dilates, d.pad_l, d.pad_r);
    return dnnl::convolution_forward::primitive_desc(desc, attr, onednn::engine(), true);
  }

  // Builds the oneDNN primitive for one geometry; marks the plan `reference` when oneDNN has no
  // implementation for it. Called with mutex_ held.
  ConvPlan create_plan(const ir::Node& node, const ConvGeometry& g, bool has_bias, const OperandShapes& operands,
                       bool epilogue) const {
    if (transpose_ && epilogue && (has_bias || !steps_.empty())) {
      // oneDNN 2.6 deconvolution runs post-ops, and even its bias, in slow separate passes
      // (PP-OCRv4 det head, 24 channels 160→320: 18 ms with bias, 430 ms with post-ops, 6 ms
      // without either): convolve bare and add the bias and epilogue in our loops.
      ConvPlan p = try_plan(node, g, false, operands, false);
      p.bias_in_loops = has_bias;
      p.loop_steps = steps_;
      return p;
    }
    ConvPlan p = try_plan(node, g, has_bias, operands, epilogue);
    if (p.reference && epilogue && !steps_.empty()) {
      // No post-op implementation for this epilogue here: oneDNN convolves, the loops finish.
      p = try_plan(node, g, has_bias, operands, false);
      p.loop_steps = steps_;
    }
    return p;
  }

  // create_plan() with the epilogue as post-ops (`epilogue`) or without.
  ConvPlan try_plan(const ir::Node& node, const ConvGeometry& g, bool has_bias, const OperandShapes& operands,
                    bool epilogue) const {
    ConvPlan p;
    p.geom = g;
    p.reference = true;
    try {
      const auto f32 = memory::data_type::f32;
      const auto any = memory::format_tag::any;
      Shape x_shape = {g.batch, g.in_channels};
      x_shape.insert(x_shape.end(), g.in_spatial.begin(), g.in_spatial.end());
      const Shape y_shape = g.output_shape();
      p.user_src_md = onednn::activation_desc(x_shape, src_layout_);
      p.user_dst_md = onednn::activation_desc(y_shape, dst_layout_);
      p.user_weights_md = onnx_weights_desc(g, transpose_);
      const bool plain = plain_layout(g, transpose_) && src_layout_ == ActivationLayout::kNchw &&
                         dst_layout_ == ActivationLayout::kNchw;
      const memory::desc src_any = plain ? p.user_src_md : memory::desc(onednn::to_dims(x_shape), f32, any);
      const memory::desc dst_any = plain ? p.user_dst_md : memory::desc(onednn::to_dims(y_shape), f32, any);
      const memory::desc weights_any(p.user_weights_md.dims(), f32, any);
      p.bias_md = has_bias ? memory::desc({g.out_channels}, f32, memory::format_tag::a) : memory::desc();
      const ConvDims dims = conv_dims(g);
      if (dims.pad_l.end() != std::find_if(dims.pad_l.begin(), dims.pad_l.end(), [](int64_t v) { return v < 0; })) {
        return p;  // oneDNN needs non-negative begin padding
      }
      dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
      memory::desc src_md = src_any, dst_md = dst_any;
      if (epilogue && !steps_.empty()) {
        // A full-shape operand is read in the destination's layout, which oneDNN picks with the
        // primitive: choose the layouts without post-ops first, then keep them for the real one.
        const dnnl::primitive_desc_base probe = make_pd(dims, src_any, weights_any, p.bias_md, dst_any, attr);
        if (!probe) return p;
        src_md = probe.src_desc();
        dst_md = probe.dst_desc();
        std::vector<const Shape*> shapes;
        for (const auto& o : operands) shapes.push_back(o ? &*o : nullptr);
        EpiloguePostOps post = make_post_ops(steps_, shapes, y_shape, dst_md);
        if (!post.supported) return p;
        attr.set_post_ops(post.ops);
        p.binaries = post.binaries;
      }
      const dnnl::primitive_desc_base pd = make_pd(dims, src_md, weights_any, p.bias_md, dst_md, attr);
      if (!pd) return p;
      if (transpose_) {
        p.primitive = dnnl::deconvolution_forward(dnnl::deconvolution_forward::primitive_desc(pd.get()));
      } else {
        p.primitive = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(pd.get()));
      }
      p.src_md = pd.src_desc();
      p.dst_md = pd.dst_desc();
      p.weights_md = pd.weights_desc();
      p.scratchpad_md = pd.scratchpad_desc();
      p.reorder_src = p.src_md != p.user_src_md;
      p.reorder_dst = p.dst_md != p.user_dst_md;
      p.reorder_weights = p.weights_md != p.user_weights_md;
      if (p.reorder_src) p.src_reorder = onednn::make_reorder(p.user_src_md, p.src_md, &p.src_reorder_scratch);
      if (p.reorder_dst) p.dst_reorder = onednn::make_reorder(p.dst_md, p.user_dst_md, &p.dst_reorder_scratch);
      if (weights_.defined()) {
        p.packed_weights = weights_.get(node, p.weights_md, p.user_weights_md);
        if (!p.packed_weights) return p;
      } else if (p.reorder_weights) {
        p.weights_reorder = onednn::make_reorder(p.user_weights_md, p.weights_md, &p.weights_reorder_scratch);
      }
      int full_operands = 0;
      for (const BinaryPostOpArg& arg : p.binaries) full_operands += arg.broadcast == OperandBroadcast::kFull;
      if (p.reorder_dst && full_operands > 0) {
        if (full_operands > 1) return p;  // one reorder buffer per thread: run the loops instead
        p.operand_reorder = onednn::make_reorder(p.user_dst_md, p.dst_md, &p.operand_reorder_scratch);
      }
      p.reference = false;
    } catch (const dnnl::error&) {
      p.reference = true;
    }
    return p;
  }

  // Adds the binary post-ops' operands to `args`; a full-shape operand is reordered into the
  // blocked destination layout when the destination is blocked.
  Status bind_operands(KernelContext& ctx, const ConvPlan& p, std::unordered_map<int, memory>& args) const {
    for (const BinaryPostOpArg& arg : p.binaries) {
      const Tensor* t = ctx.input(arg.input);
      if (t == nullptr) {
        return ir::node_error(ctx.node(), StatusCode::kInvalidModel,
                              "epilogue operand (input " + std::to_string(arg.input) + ") is missing");
      }
      memory operand = onednn::wrap(arg.md, t->raw_data());
      if (arg.broadcast == OperandBroadcast::kFull && p.reorder_dst) {
        memory plain = onednn::wrap(p.user_dst_md, t->raw_data());
        operand = onednn::wrap(p.dst_md, onednn::thread_buffer(onednn::Slot::kExtra, p.dst_md.get_size()));
        EDGEMM_RETURN_IF_ERROR(onednn::execute(ctx.node(), p.operand_reorder,
                                               {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, operand}},
                                               p.operand_reorder_scratch));
      }
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(arg.post_op) | DNNL_ARG_SRC_1] = operand;
    }
    return Status::ok();
  }

  Status run_onednn(KernelContext& ctx, const ConvPlan& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor* y,
                    int threads) const {
    const ir::Node& node = ctx.node();
    onednn::set_threads(threads);
    try {
      memory src = onednn::wrap(p.user_src_md, x.raw_data());
      if (p.reorder_src) {
        memory blocked = onednn::wrap(p.src_md, onednn::thread_buffer(onednn::Slot::kSrc, p.src_md.get_size()));
        EDGEMM_RETURN_IF_ERROR(onednn::execute(node, p.src_reorder, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, blocked}},
                                               p.src_reorder_scratch));
        src = blocked;
      }
      memory weights = p.packed_weights;
      if (!weights) {
        weights = onednn::wrap(p.user_weights_md, w.raw_data());
        if (p.reorder_weights) {
          memory packed =
              onednn::wrap(p.weights_md, onednn::thread_buffer(onednn::Slot::kWeights, p.weights_md.get_size()));
          EDGEMM_RETURN_IF_ERROR(onednn::execute(
              node, p.weights_reorder, {{DNNL_ARG_FROM, weights}, {DNNL_ARG_TO, packed}}, p.weights_reorder_scratch));
          weights = packed;
        }
      }
      memory user_dst = onednn::wrap(p.user_dst_md, y->raw_data());
      memory dst = p.reorder_dst
                       ? onednn::wrap(p.dst_md, onednn::thread_buffer(onednn::Slot::kDst, p.dst_md.get_size()))
                       : user_dst;
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
      if (b != nullptr && p.bias_md) args[DNNL_ARG_BIAS] = onednn::wrap(p.bias_md, b->raw_data());
      EDGEMM_RETURN_IF_ERROR(bind_operands(ctx, p, args));
      EDGEMM_RETURN_IF_ERROR(onednn::execute(node, p.primitive, std::move(args), p.scratchpad_md));
      if (p.reorder_dst) {
        EDGEMM_RETURN_IF_ERROR(onednn::execute(node, p.dst_reorder, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, user_dst}},
                                               p.dst_reorder_scratch));
      }
    } catch (const dnnl::error& e) {
      return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN error: ") + e.what());
    } catch (const std::bad_alloc&) {
      return ir::node_error(node, StatusCode::kOutOfMemory, "could not allocate the oneDNN layout buffers");
    }
    return Status::ok();
  }

  bool transpose_;
  ConvAttrs attrs_;
  std::vector<ir::Step> steps_;                            // epilogue (com.edgemm FusedConv); empty for plain Conv
  ActivationLayout src_layout_ = ActivationLayout::kNchw;  // how X is stored (attribute src_layout)
  ActivationLayout dst_layout_ = ActivationLayout::kNchw;  // how Y is stored (attribute dst_layout)
  mutable onednn::PackedWeights weights_;                  // constant W (undefined when computed at run time)
  bool use_onednn_;
  std::unique_ptr<const ConvTransposeStrided> strided_;  // set: edgemm's kernel runs instead of oneDNN
#if defined(__aarch64__)
  std::unique_ptr<const XnnpackConv> xnnpack_;  // set: XNNPACK runs instead of oneDNN
  bool xnnpack_bias_in_loops_ = false;          // B is not constant: apply_epilogue adds it
#endif
  const char* name_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const ConvPlan>> plans_;
};

// Nominal input shape used to prepack constant weights when the kernel is created: batch 1,
// the weight's channel count and a modest spatial extent that fits the dilated kernel. oneDNN's
// weight layout depends on channels and ISA, not on the spatial extent, so real shapes reuse it.
Shape nominal_input(const Shape& w, const ConvAttrs& attrs, bool transpose) {
  const size_t k = w.size() - 2;
  const int64_t side = k == 1 ? 256 : k == 2 ? 32 : 8;
  Shape x = {1, transpose ? w[0] : w[1] * attrs.group};
  for (size_t i = 0; i < k; ++i) {
    const int64_t d = attrs.dilations.size() == k ? attrs.dilations[i] : 1;
    x.push_back(std::max(side, (w[i + 2] - 1) * d + 1));
  }
  return x;
}

// Kernel name for profiles: "<dtype>_<op>__<path>", e.g. "f32_fused_conv__onednn".
const char* kernel_name(bool transpose, bool fused, bool onednn, bool f64) {
  static const char* const kNames[2][2][3] = {
      {{"f32_conv__reference", "f64_conv__reference", "f32_conv__onednn"},
       {"f32_fused_conv__reference", "f64_fused_conv__reference", "f32_fused_conv__onednn"}},
      {{"f32_conv_transpose__reference", "f64_conv_transpose__reference", "f32_conv_transpose__onednn"},
       {"f32_fused_conv_transpose__reference", "f64_fused_conv_transpose__reference",
        "f32_fused_conv_transpose__onednn"}}};
  return kNames[transpose][fused][onednn ? 2 : f64 ? 1 : 0];
}

// `fused`: com.edgemm FusedConv / FusedConvTranspose, which carry an epilogue (steps attributes).
// `fp16`: the "fp16" precision (XNNPACK's half-precision convolution where it runs).
Expected<std::unique_ptr<Kernel>> make_conv(const KernelInfo& info, bool transpose, bool fused,
                                            [[maybe_unused]] bool fp16 = false) {
  EDGEMM_ASSIGN_OR_RETURN(ConvAttrs attrs, parse_conv_attrs(info.node, transpose));
  std::vector<ir::Step> steps;
  if (fused) {
    EDGEMM_ASSIGN_OR_RETURN(steps, ir::read_steps(info.node));
  }
  auto constant = [&](size_t i) -> const Tensor* {
    return i < info.constant_inputs.size() ? info.constant_inputs[i] : nullptr;
  };
  const Tensor* w = constant(1);
  const bool f64 = w != nullptr && w->dtype() == DataType::kFloat64;
  const bool onednn = onednn::enabled() && (w == nullptr || w->dtype() == DataType::kFloat32);
  auto kernel = std::make_unique<ConvKernel>(transpose, attrs, steps, onednn && w != nullptr ? *w : Tensor(), onednn,
                                             kernel_name(transpose, fused, onednn, f64));
  ActivationLayout src_layout = ActivationLayout::kNchw, dst_layout = ActivationLayout::kNchw;
  if (fused) {
    EDGEMM_ASSIGN_OR_RETURN(src_layout, read_layout(info.node, "src_layout"));
    EDGEMM_ASSIGN_OR_RETURN(dst_layout, read_layout(info.node, "dst_layout"));
    kernel->set_layouts(src_layout, dst_layout);
  }
#if defined(__aarch64__)
  if (onednn && !transpose && w != nullptr && w->dtype() == DataType::kFloat32 && xnnpack::enabled() &&
      XnnpackConv::applies(w->shape())) {
    const Tensor* b = constant(2);
    const bool has_bias = info.node.inputs.size() > 2 && !info.node.inputs[2].empty();
    const bool bias_constant = b != nullptr && b->dtype() == DataType::kFloat32 && b->element_count() == w->shape()[0];
    const bool bias_keeps = !bias_constant || xnnpack::half_keeps(b->data<float>(), 1, w->shape()[0], 0, 1);
    const int64_t per_channel = w->element_count() / w->shape()[0];
    const bool half = fp16 && xnnpack::fp16_enabled() && bias_keeps &&
                      xnnpack::half_keeps(w->data<float>(), w->shape()[0], per_channel, per_channel, 1);
    kernel->set_xnnpack(std::make_unique<const XnnpackConv>(w->data<float>(), w->shape(),
                                                            bias_constant ? b->data<float>() : nullptr, half),
                        has_bias && !bias_constant);
    kernel->set_name(half ? (fused ? "f16_fused_conv__xnnpack" : "f16_conv__xnnpack")
                          : (fused ? "f32_fused_conv__xnnpack" : "f32_conv__xnnpack"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
#endif
  if (onednn && transpose && w != nullptr && ConvTransposeStrided::applies(attrs, *w)) {
    const Shape& ws = w->shape();
    kernel->set_strided(std::make_unique<const ConvTransposeStrided>(w->data<float>(), ws[0], ws[1], ws[2], ws[3]));
    kernel->set_name(fused ? "f32_fused_conv_transpose_strided__edgemm" : "f32_conv_transpose_strided__edgemm");
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
#if defined(__aarch64__)
  if (onednn && transpose && w != nullptr && w->dtype() == DataType::kFloat32 && xnnpack::enabled() &&
      XnnpackConv::applies(w->shape()) && w->shape()[0] % attrs.group == 0) {
    // Geometries XNNPACK's adjustment cannot express (XnnpackConv::fits) run oneDNN at run time.
    const Tensor* b = constant(2);
    const bool has_bias = info.node.inputs.size() > 2 && !info.node.inputs[2].empty();
    const int64_t out_channels = w->shape()[1] * attrs.group;
    const bool bias_constant = b != nullptr && b->dtype() == DataType::kFloat32 && b->element_count() == out_channels;
    kernel->set_xnnpack(std::make_unique<const XnnpackConv>(w->data<float>(), w->shape(),
                                                            bias_constant ? b->data<float>() : nullptr, attrs.group),
                        has_bias && !bias_constant);
    kernel->set_name(fused ? "f32_fused_conv_transpose__xnnpack" : "f32_conv_transpose__xnnpack");
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
#endif
  if (onednn && w != nullptr && w->rank() >= 3 && w->rank() <= 5) {
    // Prepack the constant weights now. Shape errors are reported at run, with real inputs.
    const Tensor* b = constant(2);
    const Shape b_shape = b != nullptr ? b->shape() : Shape{};
    const bool has_bias = info.node.inputs.size() > 2 && !info.node.inputs[2].empty();
    auto g = kernel->geometry(info.node, nominal_input(w->shape(), attrs, transpose), w->shape(),
                              b != nullptr ? &b_shape : nullptr);
    if (g.has_value() && kernel->plan(info.node, *g, has_bias, {}, false)->reference) {
      kernel->set_name(kernel_name(transpose, fused, false, false));
    }
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void register_conv_kernels(KernelRegistry& registry) {
  for (int since : {1, 11}) {
    registry.add("", "Conv", since, [](const KernelInfo& info) { return make_conv(info, false, false); });
    registry.add("", "ConvTranspose", since, [](const KernelInfo& info) { return make_conv(info, true, false); });
  }
  registry.add(ir::kEdgemmDomain, "FusedConv", 1, [](const KernelInfo& info) { return make_conv(info, false, true); });
  registry.add(ir::kEdgemmDomain, "FusedConvTranspose", 1,
               [](const KernelInfo& info) { return make_conv(info, true, true); });
  registry.add(ir::kEdgemmDomain, "Int8Conv", 1, make_int8_conv);
}

void register_fp16_conv_kernels(KernelRegistry& registry) {
  for (int since : {1, 11}) {
    registry.add("", "Conv", since, [](const KernelInfo& info) { return make_conv(info, false, false, true); });
  }
  registry.add(ir::kEdgemmDomain, "FusedConv", 1,
               [](const KernelInfo& info) { return make_conv(info, false, true, true); });
}

}  // namespace edgemm::kernels
