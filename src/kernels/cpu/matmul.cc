/// \file matmul.cc
/// MatMul and Gemm of the default ONNX domain.
///
/// - MatMul (Operators.md "MatMul" 1/9/13): numpy.matmul semantics: the last two axes are the
///   matrices, leading (batch) axes broadcast (numpy rules); a 1-D first operand is [1, K] and a
///   1-D second operand is [K, 1], with the added axis removed from the result.
/// - Gemm (Operators.md "Gemm" 1/6/7/9/11/13): Y = alpha * A' * B' + beta * C, A' = transA ? A^T :
/// A
///   ([M, K]), B' = transB ? B^T : B ([K, N]); C (optional from 11) broadcasts
///   unidirectionally to [M, N].
/// - com.edgemm FusedMatMul (version 1, written by passes::fuse_matmul_add): inputs A (float32,
///   rank >= 1), B (float32 [K, N]) and bias (float32 [N]); Y = MatMul(A, B) + bias, the bias
///   added to every row of N values, then an optional epilogue of unary steps (attributes as in
///   src/ir/elementwise_steps.h, written by passes::fuse_epilogues) as oneDNN eltwise post-ops,
///   or in the ElementwiseChain loop where oneDNN has none.
/// - com.edgemm Int8Conv's sibling Int8MatMul (QDQ MatMul, passes::fuse_qdq) lives in
///   matmul_int8.cc and is registered here.
///
/// Paths: float32 MatMul and FusedMatMul with a constant 2-D B and at most kPanelMaxRows rows of
/// A run on the panel kernel of matmul_panels.h where the CPU has AVX-512F (B packed once; it
/// overlaps reading the weights with the arithmetic); the first run with more rows makes oneDNN's
/// layout from the panels and drops them, so that a kernel keeps one packed copy of B; the kernels of bf16_matmul_kernels() run
/// every row count on bfloat16 panels where the CPU has AVX512_BF16. On aarch64 without SVE
/// (oneDNN 2.6 has only its reference GEMM there) a constant 2-D B runs on XNNPACK's fully
/// connected operator (matmul_xnnpack.h; B and bias packed once), a computed or batched B on
/// neon_matmul (matmul_neon.h; B read in place).
/// Otherwise float32 runs on
/// oneDNN's matmul primitive, or, for a constant 2-D B, on oneDNN's 1×1 convolution over A's rows (its AVX2 jit_1x1
/// kernel keeps B packed, where AVX2 matmul's gemm:jit repacks B on every call: ~1.2× faster on a ViT-B/32 encoder). A
/// constant B (weights) is reordered once into the layout oneDNN picks (format_tag::any) when the kernel is created,
/// for a nominal M; primitives per input shape are created on first use and cached under a mutex. MatMul with a 2-D (or
/// batch-1) B folds A's batch axes into M so weights are shared by all rows. Gemm puts beta * C into oneDNN's bias when
/// alpha is 1 and C is a row vector, otherwise writes C into Y and accumulates with a sum post-op (alpha through an
/// eltwise_linear post-op). On aarch64 without SVE, Gemm with a constant B and A not transposed runs XNNPACK's fully
/// connected operator (alpha · B' packed, beta · C its bias when constant along N, else added after). float64 and the integer types run the reference loops (double / 64-bit accumulators).

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise_chain.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/matmul_int8.h"
#include "kernels/cpu/matmul_neon.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/matmul_reference.h"
#include "kernels/cpu/matmul_xnnpack.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {
namespace {

using dnnl::memory;

std::string input_name(const ir::Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : std::string("?");
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

bool matmul_dtype(DataType dt) {
  return dt == DataType::kFloat32 || dt == DataType::kFloat64 || dt == DataType::kInt32 || dt == DataType::kInt64 ||
         dt == DataType::kUInt32 || dt == DataType::kUInt64;
}

template <typename T>
struct AccOf {
  using type = double;
};
template <>
struct AccOf<int32_t> {
  using type = int64_t;
};
template <>
struct AccOf<int64_t> {
  using type = int64_t;
};
template <>
struct AccOf<uint32_t> {
  using type = uint64_t;
};
template <>
struct AccOf<uint64_t> {
  using type = uint64_t;
};

// Calls fn(T{}) with the C++ type of a MatMul/Gemm dtype.
template <typename Fn>
void dispatch(DataType dt, Fn&& fn) {
  switch (dt) {
    case DataType::kFloat32:
      fn(float{});
      break;
    case DataType::kFloat64:
      fn(double{});
      break;
    case DataType::kInt32:
      fn(int32_t{});
      break;
    case DataType::kInt64:
      fn(int64_t{});
      break;
    case DataType::kUInt32:
      fn(uint32_t{});
      break;
    case DataType::kUInt64:
      fn(uint64_t{});
      break;
    default:
      break;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// MatMul shapes and the reference loops (matmul_reference.h; also used by MatMulInteger and
// QLinearMatMul in quant_matmul.cc)

Expected<MatMulShape> matmul_shape(const ir::Node& node, const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        "input '" + input_name(node, a_in.empty() ? 0 : 1) + "' is a scalar; MatMul needs at least 1-D operands");
  }
  MatMulShape s;
  s.a = a_in.size() == 1 ? Shape{1, a_in[0]} : a_in;
  s.b = b_in.size() == 1 ? Shape{b_in[0], 1} : b_in;
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input '" + input_name(node, 0) + "' " + shape_to_string(a_in) + " and input '" +
                              input_name(node, 1) + "' " + shape_to_string(b_in) +
                              " have mismatched inner dimensions " + std::to_string(s.k) + " and " +
                              std::to_string(s.b[s.b.size() - 2]));
  }
  const Shape a_batch(s.a.begin(), s.a.end() - 2), b_batch(s.b.begin(), s.b.end() - 2);
  EDGEMM_ASSIGN_OR_RETURN(s.batch, broadcast_shapes(node, a_batch, b_batch));
  s.out = s.batch;
  if (a_in.size() > 1) s.out.push_back(s.m);
  if (b_in.size() > 1) s.out.push_back(s.n);
  s.b_is_matrix = product(b_batch, 0, b_batch.size()) == 1;
  return s;
}

template <typename T>
void matmul_reference(const MatMulShape& s, const T* a, const T* b, T* y, int threads) {
  using Acc = typename AccOf<T>::type;
  const Shape a_batch(s.a.begin(), s.a.end() - 2), b_batch(s.b.begin(), s.b.end() - 2);
  const std::vector<int64_t> sa = broadcast_strides(a_batch, s.batch);
  const std::vector<int64_t> sb = broadcast_strides(b_batch, s.batch);
  const int64_t batches = product(s.batch, 0, s.batch.size());
  const int64_t m = s.m, k = s.k, n = s.n;
  parallel_for(threads, batches * m, k * n, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(n));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t bi = row / m, i = row % m;
      int64_t rem = bi, a_off = 0, b_off = 0;
      for (int64_t d = static_cast<int64_t>(s.batch.size()) - 1; d >= 0; --d) {
        const int64_t idx = rem % s.batch[d];
        rem /= s.batch[d];
        a_off += idx * sa[d];
        b_off += idx * sb[d];
      }
      const T* arow = a + a_off * m * k + i * k;
      const T* bm = b + b_off * k * n;
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t kk = 0; kk < k; ++kk) {
        const Acc av = static_cast<Acc>(arow[kk]);
        const T* brow = bm + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<Acc>(brow[j]);
      }
      T* yrow = y + row * n;
      for (int64_t j = 0; j < n; ++j) yrow[j] = static_cast<T>(acc[j]);
    }
  });
}

template void matmul_reference<int32_t>(const MatMulShape&, const int32_t*, const int32_t*, int32_t*, int);

namespace {

// ---------------------------------------------------------------------------------------------
// oneDNN matmul plans (shared by MatMul and Gemm)

struct MatMulPlan {
  bool reference = true;
  dnnl::primitive primitive;
  memory::desc src_md, weights_md, user_weights_md, dst_md, bias_md, scratchpad_md;
  memory packed_weights;            // constant B in weights_md; empty when B is not constant
  bool bias_from_c = false;         // Gemm: beta * C passed as bias
  bool sum_c = false;               // Gemm: C written into Y first, then a sum post-op
  bool steps_in_primitive = false;  // FusedMatMul: the epilogue runs as post-ops
};

// Common part of a kernel with a oneDNN plan cache and constant weights.
class OnednnMatMulBase : public Kernel {
 public:
  OnednnMatMulBase(onednn::PackedWeights weights, bool use_onednn, const char* name)
      : weights_(std::move(weights)), use_onednn_(use_onednn), name_(name) {}
  const char* name() const override { return name_; }
  void set_name(const char* name) { name_ = name; }
  /// Drops the kernel's reference to the weights tensor when a packed copy can stand for it.
  void release_weights_tensor() { weights_.release_tensor(); }
  int64_t packed_bytes() const override { return weights_.packed_bytes(); }

 protected:
  static constexpr size_t kMaxPlans = 64;

  // Cached plan for `key`, made by `make` (called with the mutex held) on first use.
  template <typename Make>
  std::shared_ptr<const MatMulPlan> cached(const std::string& key, Make&& make) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    auto plan = std::make_shared<MatMulPlan>();
    try {
      make(*plan);
    } catch (const dnnl::error&) {
      plan->reference = true;
    }
    plans_[key] = plan;
    return plan;
  }

  // Creates the primitive for src/weights/dst descriptors (weights `any` when B is constant).
  void build(const ir::Node& node, MatMulPlan& p, const memory::desc& src, const memory::desc& user_weights,
             const memory::desc& dst, const memory::desc& bias, const dnnl::primitive_attr& attr) const {
    p.reference = true;
    p.src_md = src;
    p.dst_md = dst;
    p.user_weights_md = user_weights;
    const memory::desc weights =
        weights_.defined() ? memory::desc(user_weights.dims(), memory::data_type::f32, memory::format_tag::any)
                           : user_weights;
    dnnl::matmul::desc d(src, weights, bias, dst);
    dnnl::matmul::primitive_desc pd(d, attr, onednn::engine(), true);
    if (!pd) return;
    p.primitive = dnnl::matmul(pd);
    p.weights_md = pd.weights_desc();
    p.bias_md = bias;
    p.scratchpad_md = pd.scratchpad_desc();
    if (weights_.defined()) {
      p.packed_weights = weights_.get(node, p.weights_md, user_weights);
      if (!p.packed_weights) return;
    }
    p.reference = false;
  }

  // Creates a 1×1 convolution computing [rows, k] × constant B [k, n] (+ bias [n]): A as an NHWC
  // image {1, k, 1, rows}, Y as {1, n, 1, rows}, B as hwio weights {n, k, 1, 1} (the same bytes).
  // oneDNN 2.6's matmul on AVX2 is gemm:jit, which repacks B on every call; its AVX2 1×1
  // convolution keeps B in a blocked layout made once. Used only when oneDNN picks jit_1x1.
  void build_conv1x1(const ir::Node& node, MatMulPlan& p, int64_t rows, int64_t k, int64_t n, bool bias,
                     const dnnl::primitive_attr& attr) const {
    p.reference = true;
    p.src_md = memory::desc({1, k, 1, rows}, memory::data_type::f32, memory::format_tag::nhwc);
    p.dst_md = memory::desc({1, n, 1, rows}, memory::data_type::f32, memory::format_tag::nhwc);
    p.user_weights_md = memory::desc({n, k, 1, 1}, memory::data_type::f32, memory::format_tag::hwio);
    const memory::desc weights_any({n, k, 1, 1}, memory::data_type::f32, memory::format_tag::any);
    p.bias_md = bias ? memory::desc({n}, memory::data_type::f32, memory::format_tag::a) : memory::desc();
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p.src_md,
                                      weights_any, p.bias_md, p.dst_md, {1, 1}, {0, 0}, {0, 0});
    dnnl::convolution_forward::primitive_desc pd(d, attr, onednn::engine(), true);
    if (!pd || onednn::impl_name(pd).find("jit_1x1") == std::string::npos) return;
    p.primitive = dnnl::convolution_forward(pd);
    p.weights_md = pd.weights_desc();
    p.scratchpad_md = pd.scratchpad_desc();
    p.packed_weights = weights_.get(node, p.weights_md, p.user_weights_md);
    p.reference = !p.packed_weights;
  }

  Status execute(const ir::Node& node, const MatMulPlan& p, const void* a, const void* b, const void* bias, void* y,
                 int threads) const {
    onednn::set_threads(threads);
    try {
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, onednn::wrap(p.src_md, a)},
          {DNNL_ARG_WEIGHTS, p.packed_weights ? p.packed_weights : onednn::wrap(p.weights_md, b)},
          {DNNL_ARG_DST, onednn::wrap(p.dst_md, y)}};
      if (bias != nullptr) args[DNNL_ARG_BIAS] = onednn::wrap(p.bias_md, bias);
      return onednn::execute(node, p.primitive, std::move(args), p.scratchpad_md);
    } catch (const dnnl::error& e) {
      return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN error: ") + e.what());
    }
  }

  mutable onednn::PackedWeights weights_;
  bool use_onednn_;
  const char* name_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const MatMulPlan>> plans_;
};

memory::desc f32_desc(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

// ---------------------------------------------------------------------------------------------
// MatMul

/// MatMul, or with `fused_bias` com.edgemm FusedMatMul: MatMul(A, B) + bias[N] on every row,
/// the bias in oneDNN's matmul primitive, then the unary `steps`.
class MatMulKernel final : public OnednnMatMulBase {
 public:
  MatMulKernel(onednn::PackedWeights weights, bool use_onednn, const char* name, bool fused_bias,
               std::vector<ir::Step> steps, std::shared_ptr<const PackedPanels> panels)
      : OnednnMatMulBase(std::move(weights), use_onednn, name),
        fused_bias_(fused_bias),
        steps_(std::move(steps)),
        panels_(std::move(panels)) {}

#if defined(__aarch64__)
  void set_xnnpack(std::unique_ptr<const XnnpackFullyConnected> xnnpack, bool bias_packed) {
    xnnpack_ = std::move(xnnpack);
    xnnpack_bias_packed_ = bias_packed;
  }
#endif

  int64_t packed_bytes() const override {
    const std::shared_ptr<const PackedPanels> panels = current_panels();
    int64_t bytes = OnednnMatMulBase::packed_bytes() + (panels != nullptr ? panels->bytes() : 0);
#if defined(__aarch64__)
    if (xnnpack_ != nullptr) bytes += xnnpack_->packed_bytes();
#endif
    return bytes;
  }

  /// A constant B lives in the kernel's panels, XNNPACK operator or oneDNN layouts only, unless
  /// oneDNN runs on the tensor's own bytes.
  bool reads_constant_input(int i) const override {
    if (i != 1) return true;
#if defined(__aarch64__)
    if (xnnpack_ != nullptr) return false;
#endif
    return current_panels() == nullptr && !(weights_.defined() && !weights_.holds_tensor());
  }

  std::shared_ptr<const MatMulPlan> plan(const ir::Node& node, const MatMulShape& s) const {
    return cached(onednn::shape_key(s.a, s.b), [&](MatMulPlan& p) {
      if (s.b_is_matrix) {
        const int64_t rows = product(s.batch, 0, s.batch.size()) * s.m;
        const memory::desc dst = f32_desc({rows, s.n}, {s.n, 1});
        dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
        if (!steps_.empty()) {
          const EpiloguePostOps post = make_post_ops(steps_, {}, Shape{rows, s.n}, dst);
          if (post.supported) attr.set_post_ops(post.ops);
          p.steps_in_primitive = post.supported;
        }
        if (weights_.defined()) {
          build_conv1x1(node, p, rows, s.k, s.n, fused_bias_, attr);
          if (!p.reference) return;
        }
        build(node, p, f32_desc({rows, s.k}, {s.k, 1}), f32_desc({s.k, s.n}, {s.n, 1}), dst,
              fused_bias_ ? f32_desc({1, s.n}, {s.n, 1}) : memory::desc(), attr);
        return;
      }
      // Batched: same rank for all three, broadcast batch axes have extent 1.
      const size_t nb = s.batch.size();
      Shape a = s.a, b = s.b, y = s.batch;
      a.insert(a.begin(), nb + 2 - a.size(), 1);
      b.insert(b.begin(), nb + 2 - b.size(), 1);
      y.push_back(s.m);
      y.push_back(s.n);
      if (nb + 2 > DNNL_MAX_NDIMS) return;
      build(node, p, onednn::plain_f32_desc(a), onednn::plain_f32_desc(b), onednn::plain_f32_desc(y), memory::desc(),
            onednn::user_scratchpad_attr());
    });
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs A and B are both required");
    }
    const DataType dt = a->dtype();
    if (!matmul_dtype(dt)) return unsupported_dtype(node, 0, dt);
    if (b->dtype() != dt) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + input_name(node, 1) + "' has dtype " + dtype_name(b->dtype()) + " but input '" +
                                input_name(node, 0) + "' has dtype " + dtype_name(dt));
    }
    EDGEMM_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(node, a->shape(), b->shape()));
    const float* bias = nullptr;
    if (fused_bias_) {
      EDGEMM_ASSIGN_OR_RETURN(bias, fused_bias(ctx, *b, s.n));
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, s.out));
    if (y->element_count() == 0) return Status::ok();
    const int64_t rows = y->element_count() / s.n;
    // bfloat16 panels run every row count: a row's result must not depend on its batch.
    const std::shared_ptr<const PackedPanels> panels = current_panels();
    if (panels != nullptr && s.b_is_matrix && (rows <= kPanelMaxRows || panels->format() == PanelFormat::kBfloat16)) {
      matmul_panels(*panels, a->data<float>(), s.k, rows, bias, y->data<float>(), ctx.threads());
      finish_steps(*y, ctx.threads());
      return Status::ok();
    }
#if defined(__aarch64__)
    if (dt == DataType::kFloat32 && use_onednn_ && s.k > 0 && xnnpack::enabled()) {
      const bool packed = xnnpack_ != nullptr && s.b_is_matrix;  // constant B: the kernel's operator
      if (packed) {
        EDGEMM_RETURN_IF_ERROR(xnnpack_->run(node, a->data<float>(), rows, y->data<float>(), ctx.threads()));
      } else {
        neon_matmul(s, a->data<float>(), b->data<float>(), y->data<float>(), ctx.threads());
      }
      if (bias != nullptr && !(packed && xnnpack_bias_packed_)) add_rows(y->data<float>(), bias, rows, s.n);
      finish_steps(*y, ctx.threads());
      return Status::ok();
    }
#endif
    if (dt == DataType::kFloat32 && use_onednn_ && s.k > 0) {
      std::shared_ptr<const MatMulPlan> p = plan(node, s);
      if (!p->reference) {
        // One packed copy: oneDNN's layout, made from the panels, serves every row count from now on.
        if (panels != nullptr && p->packed_weights) drop_panels();
        EDGEMM_RETURN_IF_ERROR(execute(node, *p, a->raw_data(), b->raw_data(), bias, y->raw_data(), ctx.threads()));
        if (!p->steps_in_primitive) finish_steps(*y, ctx.threads());
        return Status::ok();
      }
    }
    Tensor b_values = *b;
    if (b->raw_data() == nullptr) {  // a constant B that only the kernel's layouts hold
      EDGEMM_ASSIGN_OR_RETURN(b_values, weights_.materialize(node));
    }
    dispatch(dt, [&](auto zero) {
      using T = decltype(zero);
      matmul_reference<T>(s, a->data<T>(), b_values.data<T>(), y->data<T>(), ctx.threads());
    });
    if (bias != nullptr) add_rows(y->data<float>(), bias, y->element_count() / s.n, s.n);
    finish_steps(*y, ctx.threads());
    return Status::ok();
  }

  // Runs the unary epilogue in place with the ElementwiseChain loop (float32 only: FusedMatMul).
  void finish_steps(Tensor& y, int threads) const {
    if (!steps_.empty()) run_elementwise_chain(steps_, {&y}, y.shape(), y.data<float>(), threads);
  }

 private:
  /// FusedMatMul's checks: float32 A, 2-D B, bias float32 [N]. Returns the bias values.
  static Expected<const float*> fused_bias(KernelContext& ctx, const Tensor& b, int64_t n) {
    const ir::Node& node = ctx.node();
    const Tensor* bias = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (ctx.input(0)->dtype() != DataType::kFloat32) return unsupported_dtype(node, 0, ctx.input(0)->dtype());
    if (b.rank() != 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + input_name(node, 1) + "' has shape " + shape_to_string(b.shape()) +
                                "; FusedMatMul needs a 2-D B");
    }
    if (bias == nullptr || bias->dtype() != DataType::kFloat32 || bias->shape() != Shape{n}) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input '" + input_name(node, 2) + "' must be a float32 bias of shape [" + std::to_string(n) + "]");
    }
    return bias->data<float>();
  }

  static void add_rows(float* y, const float* bias, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) y[r * n + j] += bias[j];
    }
  }

  std::shared_ptr<const PackedPanels> current_panels() const {
    std::lock_guard<std::mutex> lock(panels_mutex_);
    return panels_;
  }
  void drop_panels() const {
    std::lock_guard<std::mutex> lock(panels_mutex_);
    panels_.reset();  // runs still on them hold their own reference
  }

  bool fused_bias_;
  std::vector<ir::Step> steps_;  // FusedMatMul epilogue (unary steps only)
  mutable std::mutex panels_mutex_;
  mutable std::shared_ptr<const PackedPanels> panels_;  // constant B for matmul_panels(), or null
#if defined(__aarch64__)
  std::unique_ptr<const XnnpackFullyConnected> xnnpack_;  // constant B on XNNPACK, or null
  bool xnnpack_bias_packed_ = false;                      // the constant bias is inside the operator
#endif
};

/// MatMul (fused_bias false) or FusedMatMul (true) with B prepacked when it is constant; into
/// bfloat16 panels when `format` asks for them and the CPU has AVX512_BF16, else float32; a
/// constant B in half precision on XNNPACK at `fp16` where xnnpack::fp16_enabled().
Expected<std::unique_ptr<Kernel>> make_matmul_kernel(const KernelInfo& info, bool fused_bias, PanelFormat format,
                                                     [[maybe_unused]] bool fp16 = false) {
  std::vector<ir::Step> steps;
  if (fused_bias) {
    EDGEMM_ASSIGN_OR_RETURN(steps, ir::read_steps(info.node));
    for (const ir::Step& step : steps) {
      if (step.binary()) {
        return ir::node_error(
            info.node, StatusCode::kInvalidModel,
            std::string("FusedMatMul takes unary epilogue steps only, got '") + ir::step_name(step.kind) + "'");
      }
    }
  }
  const Tensor* b = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  const bool onednn = onednn::enabled() && (b == nullptr || b->dtype() == DataType::kFloat32);
  const bool pack = onednn && b != nullptr && b->rank() >= 2 && b->element_count() == b->dim(-1) * b->dim(-2) &&
                    b->element_count() > 0;
  if (!matmul_panels_available(format)) format = PanelFormat::kFloat32;
  if (pack && matmul_panels_available(format)) {
    auto panels = std::make_shared<const PackedPanels>(b->data<float>(), b->dim(-2), b->dim(-1), format);
    const bool bf16 = format == PanelFormat::kBfloat16;
    const char* name = fused_bias ? (bf16 ? "bf16_fused_matmul__avx512_panels" : "f32_fused_matmul__avx512_panels")
                                  : (bf16 ? "bf16_matmul__avx512_panels" : "f32_matmul__avx512_panels");
    // oneDNN (rows past kPanelMaxRows) makes its first layout from the panels, which are dropped
    // once it exists (PackedWeights then reads B back from that layout).
    const PackedPanels* packed = panels.get();
    onednn::PackedWeights weights(DataType::kFloat32, b->shape(),
                                  [packed](void* out) { packed->unpack(static_cast<float*>(out)); });
    return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(std::move(weights), onednn, name, fused_bias,
                                                                  std::move(steps), std::move(panels)));
  }
#if defined(__aarch64__)
  if (pack && xnnpack::enabled()) {
    const int64_t k = b->dim(-2), n = b->dim(-1);
    const Tensor* bias = fused_bias && info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
    const bool bias_packed = bias != nullptr && bias->dtype() == DataType::kFloat32 && bias->shape() == Shape{n};
    const bool half = fp16 && xnnpack::fp16_enabled() && xnnpack::half_keeps(b->data<float>(), n, k, 1, n) &&
                      (!bias_packed || xnnpack::half_keeps(bias->data<float>(), 1, n, 0, 1));
    auto fc = std::make_unique<const XnnpackFullyConnected>(b->data<float>(), k, n,
                                                            bias_packed ? bias->data<float>() : nullptr, half);
    if (fc->ok()) {
      const char* name = half ? (fused_bias ? "f16_fused_matmul__xnnpack" : "f16_matmul__xnnpack")
                              : (fused_bias ? "f32_fused_matmul__xnnpack" : "f32_matmul__xnnpack");
      auto kernel =
          std::make_unique<MatMulKernel>(onednn::PackedWeights(), onednn, name, fused_bias, std::move(steps), nullptr);
      kernel->set_xnnpack(std::move(fc), bias_packed);
      return std::unique_ptr<Kernel>(std::move(kernel));
    }
  }
#endif
  const char* name = fused_bias ? (onednn ? "f32_fused_matmul__onednn" : "fused_matmul__reference")
                                : (onednn ? "f32_matmul__onednn" : "matmul__reference");
#if defined(__aarch64__)
  if (onednn && xnnpack::enabled()) {  // B computed at run time or batched: neon_matmul()
    return std::unique_ptr<Kernel>(std::make_unique<MatMulKernel>(
        onednn::PackedWeights(), onednn, fused_bias ? "f32_fused_matmul__neon" : "f32_matmul__neon", fused_bias,
        std::move(steps), nullptr));
  }
#endif
  auto kernel = std::make_unique<MatMulKernel>(pack ? onednn::PackedWeights(*b) : onednn::PackedWeights(), onednn, name,
                                               fused_bias, std::move(steps), nullptr);
  if (pack) {
    // Prepack B for a nominal M; other M reuse the layout when oneDNN picks the same one.
    MatMulShape s;
    s.k = b->dim(-2);
    s.n = b->dim(-1);
    s.m = 64;
    s.a = {s.m, s.k};
    s.b = b->shape();
    s.b_is_matrix = true;
    s.out = {s.m, s.n};
    if (kernel->plan(info.node, s)->reference) {
      kernel->set_name(fused_bias ? "fused_matmul__reference" : "matmul__reference");
    } else {
      kernel->release_weights_tensor();  // other layouts are reordered from the packed one
    }
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

Expected<std::unique_ptr<Kernel>> make_matmul(const KernelInfo& info) {
  return make_matmul_kernel(info, false, PanelFormat::kFloat32);
}

Expected<std::unique_ptr<Kernel>> make_fused_matmul(const KernelInfo& info) {
  return make_matmul_kernel(info, true, PanelFormat::kFloat32);
}

// ---------------------------------------------------------------------------------------------
// Gemm

struct GemmAttrs {
  float alpha = 1, beta = 1;
  bool trans_a = false, trans_b = false;
};

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
  bool has_c = false;
  int64_t c_stride_m = 0, c_stride_n = 0;  // element strides of C broadcast to [M, N]
  bool c_is_row = false;                   // C varies along N only (or is a scalar)
};

Expected<GemmShape> gemm_shape(const ir::Node& node, const GemmAttrs& at, const Shape& a, const Shape& b,
                               const Shape* c) {
  for (int i = 0; i < 2; ++i) {
    const Shape& s = i == 0 ? a : b;
    if (s.size() != 2) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input '" + input_name(node, i) + "' has shape " + shape_to_string(s) + "; Gemm needs 2-D A and B");
    }
  }
  GemmShape g;
  g.m = at.trans_a ? a[1] : a[0];
  g.k = at.trans_a ? a[0] : a[1];
  const int64_t kb = at.trans_b ? b[1] : b[0];
  g.n = at.trans_b ? b[0] : b[1];
  if (kb != g.k) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        "input '" + input_name(node, 0) + "' " + shape_to_string(a) + (at.trans_a ? " (transposed)" : "") +
            " and input '" + input_name(node, 1) + "' " + shape_to_string(b) + (at.trans_b ? " (transposed)" : "") +
            " have mismatched inner dimensions " + std::to_string(g.k) + " and " + std::to_string(kb));
  }
  if (c != nullptr) {
    g.has_c = true;
    const Shape& cs = *c;
    const int64_t cm = cs.size() == 2 ? cs[0] : 1;
    const int64_t cn = cs.empty() ? 1 : cs.back();
    if (cs.size() > 2 || (cm != 1 && cm != g.m) || (cn != 1 && cn != g.n)) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + input_name(node, 2) + "' has shape " + shape_to_string(cs) +
                                ", which does not broadcast to [" + std::to_string(g.m) + "," + std::to_string(g.n) +
                                "]");
    }
    g.c_stride_m = cm == 1 ? 0 : cn;
    g.c_stride_n = cn == 1 ? 0 : 1;
    g.c_is_row = cm == 1;
  }
  return g;
}

template <typename T>
void gemm_reference(const GemmAttrs& at, const GemmShape& g, const T* a, const T* b, const T* c, T* y, int threads) {
  using Acc = typename AccOf<T>::type;
  const int64_t m = g.m, k = g.k, n = g.n;
  const Acc alpha = static_cast<Acc>(at.alpha), beta = static_cast<Acc>(at.beta);
  parallel_for(threads, m, k * n, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(n));
    for (int64_t i = begin; i < end; ++i) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t kk = 0; kk < k; ++kk) {
        const Acc av = static_cast<Acc>(at.trans_a ? a[kk * m + i] : a[i * k + kk]);
        if (at.trans_b) {
          for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<Acc>(b[j * k + kk]);
        } else {
          const T* brow = b + kk * n;
          for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<Acc>(brow[j]);
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        Acc v = alpha * acc[j];
        if (c != nullptr) v += beta * static_cast<Acc>(c[i * g.c_stride_m + j * g.c_stride_n]);
        y[i * n + j] = static_cast<T>(v);
      }
    }
  });
}

class GemmKernel final : public OnednnMatMulBase {
 public:
  GemmKernel(GemmAttrs attrs, Tensor weights, bool use_onednn, const char* name)
      : OnednnMatMulBase(onednn::PackedWeights(std::move(weights)), use_onednn, name), at_(attrs) {}

  std::shared_ptr<const MatMulPlan> plan(const ir::Node& node, const GemmShape& g, const Shape& c_shape) const {
    const std::string key = onednn::shape_key(Shape{g.m, g.k, g.n, g.has_c ? 1 : 0}, c_shape);
    return cached(key, [&](MatMulPlan& p) {
      const int64_t m = g.m, k = g.k, n = g.n;
      const memory::desc src = at_.trans_a ? f32_desc({m, k}, {1, m}) : f32_desc({m, k}, {k, 1});
      const memory::desc wei = at_.trans_b ? f32_desc({k, n}, {1, k}) : f32_desc({k, n}, {n, 1});
      const memory::desc dst = f32_desc({m, n}, {n, 1});
      dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
      const bool use_c = g.has_c && at_.beta != 0.0f;
      memory::desc bias;
      if (use_c && at_.alpha == 1.0f && g.c_is_row) {
        bias = f32_desc({1, n}, {n, 1});
        p.bias_from_c = true;
      } else {
        dnnl::post_ops ops;
        if (at_.alpha != 1.0f) {
          ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, at_.alpha, 0.0f);
        }
        if (use_c) {
          ops.append_sum(at_.beta);
          p.sum_c = true;
        }
        attr.set_post_ops(ops);
      }
      build(node, p, src, wei, dst, bias, attr);
    });
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (a == nullptr || b == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs A and B are both required");
    }
    const DataType dt = a->dtype();
    if (!matmul_dtype(dt)) return unsupported_dtype(node, 0, dt);
    for (int i = 1; i < 3; ++i) {
      const Tensor* t = i == 1 ? b : c;
      if (t != nullptr && t->dtype() != dt) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input '" + input_name(node, i) + "' has dtype " + dtype_name(t->dtype()) +
                                  " but input '" + input_name(node, 0) + "' has dtype " + dtype_name(dt));
      }
    }
    const Shape c_shape = c != nullptr ? c->shape() : Shape{};
    EDGEMM_ASSIGN_OR_RETURN(GemmShape g, gemm_shape(node, at_, a->shape(), b->shape(), c ? &c_shape : nullptr));
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, Shape{g.m, g.n}));
    if (y->element_count() == 0) return Status::ok();
#if defined(__aarch64__)
    if (xnnpack_ != nullptr) return run_xnnpack(node, g, *a, c, y, ctx.threads());
#endif
    if (dt == DataType::kFloat32 && use_onednn_ && g.k > 0) {
      std::shared_ptr<const MatMulPlan> p = plan(node, g, c_shape);
      if (!p->reference) return run_onednn(node, *p, g, *a, *b, c, y, ctx.threads());
    }
    dispatch(dt, [&](auto zero) {
      using T = decltype(zero);
      gemm_reference<T>(at_, g, a->data<T>(), b->data<T>(), c ? c->data<T>() : nullptr, y->data<T>(), ctx.threads());
    });
    return Status::ok();
  }

#if defined(__aarch64__)
  /// Runs A (not transposed) through `fc`, an operator made from alpha · B' (and beta · C when
  /// `bias_packed`); otherwise beta · C is added after.
  void set_xnnpack(std::unique_ptr<const XnnpackFullyConnected> fc, bool bias_packed) {
    xnnpack_ = std::move(fc);
    xnnpack_bias_packed_ = bias_packed;
  }

  int64_t packed_bytes() const override {
    return OnednnMatMulBase::packed_bytes() + (xnnpack_ != nullptr ? xnnpack_->packed_bytes() : 0);
  }
#endif

 private:
#if defined(__aarch64__)
  Status run_xnnpack(const ir::Node& node, const GemmShape& g, const Tensor& a, const Tensor* c, Tensor* y,
                     int threads) const {
    EDGEMM_RETURN_IF_ERROR(xnnpack_->run(node, a.data<float>(), g.m, y->data<float>(), threads));
    if (c != nullptr && at_.beta != 0.0f && !xnnpack_bias_packed_) {
      const float* cv = c->data<float>();
      float* yv = y->data<float>();
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) yv[i * g.n + j] += at_.beta * cv[i * g.c_stride_m + j * g.c_stride_n];
      }
    }
    return Status::ok();
  }

  std::unique_ptr<const XnnpackFullyConnected> xnnpack_;  // constant B on XNNPACK, or null
  bool xnnpack_bias_packed_ = false;                      // beta · C is inside the operator
#endif

  Status run_onednn(const ir::Node& node, const MatMulPlan& p, const GemmShape& g, const Tensor& a, const Tensor& b,
                    const Tensor* c, Tensor* y, int threads) const {
    const float* bias = nullptr;
    if (p.bias_from_c) {
      // beta * C as a [1, N] row (C is [N], [1, N], [1] or a scalar).
      const float* cv = c->data<float>();
      if (at_.beta == 1.0f && g.c_stride_n == 1) {
        bias = cv;
      } else {
        float* row;
        try {
          row =
              static_cast<float*>(onednn::thread_buffer(onednn::Slot::kBias, sizeof(float) * static_cast<size_t>(g.n)));
        } catch (const std::bad_alloc&) {
          return ir::node_error(node, StatusCode::kOutOfMemory, "could not allocate the bias row");
        }
        for (int64_t j = 0; j < g.n; ++j) row[j] = at_.beta * cv[j * g.c_stride_n];
        bias = row;
      }
    } else if (p.sum_c) {
      const float* cv = c->data<float>();
      float* yv = y->data<float>();
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) yv[i * g.n + j] = cv[i * g.c_stride_m + j * g.c_stride_n];
      }
    }
    return execute(node, p, a.raw_data(), b.raw_data(), bias, y->raw_data(), threads);
  }

  GemmAttrs at_;
};

#if defined(__aarch64__)
/// Gemm with a constant 2-D B and A not transposed on XNNPACK's fully connected operator
/// (`f32_gemm__xnnpack`): B' scaled by alpha is packed, with beta · C as its bias when C is a
/// constant that varies along N only; or null when XNNPACK refuses the operator.
Expected<std::unique_ptr<Kernel>> make_xnnpack_gemm(const GemmAttrs& at, const Tensor& b, const Tensor* c) {
  const int64_t k = at.trans_b ? b.dim(1) : b.dim(0), n = at.trans_b ? b.dim(0) : b.dim(1);
  std::vector<float> weights(static_cast<size_t>(k * n));  // alpha · B' as [K, N]
  const float* bv = b.data<float>();
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) weights[kk * n + j] = at.alpha * (at.trans_b ? bv[j * k + kk] : bv[kk * n + j]);
  }
  std::vector<float> bias;
  if (c != nullptr && c->dtype() == DataType::kFloat32 && at.beta != 0.0f) {
    const Shape& cs = c->shape();
    const int64_t cn = cs.empty() ? 1 : cs.back();
    if (cs.size() <= 2 && (cs.size() < 2 || cs[0] == 1) && (cn == 1 || cn == n)) {
      bias.resize(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) bias[j] = at.beta * c->data<float>()[cn == 1 ? 0 : j];
    }
  }
  auto fc = std::make_unique<const XnnpackFullyConnected>(weights.data(), k, n, bias.empty() ? nullptr : bias.data(),
                                                          false);
  if (!fc->ok()) return std::unique_ptr<Kernel>();
  auto kernel = std::make_unique<GemmKernel>(at, Tensor(), true, "f32_gemm__xnnpack");
  kernel->set_xnnpack(std::move(fc), !bias.empty());
  return std::unique_ptr<Kernel>(std::move(kernel));
}
#endif

Expected<std::unique_ptr<Kernel>> make_gemm(const KernelInfo& info) {
  GemmAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(at.alpha, info.node.attr_float("alpha", 1.0f));
  EDGEMM_ASSIGN_OR_RETURN(at.beta, info.node.attr_float("beta", 1.0f));
  EDGEMM_ASSIGN_OR_RETURN(int64_t ta, info.node.attr_int("transA", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t tb, info.node.attr_int("transB", 0));
  at.trans_a = ta != 0;
  at.trans_b = tb != 0;
  const Tensor* b = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  const bool onednn = onednn::enabled() && (b == nullptr || b->dtype() == DataType::kFloat32);
  const bool pack = onednn && b != nullptr && b->rank() == 2 && b->element_count() > 0;
#if defined(__aarch64__)
  if (pack && xnnpack::enabled() && !at.trans_a) {
    const Tensor* c = info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
    EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, make_xnnpack_gemm(at, *b, c));
    if (kernel != nullptr) return kernel;
  }
#endif
  auto kernel =
      std::make_unique<GemmKernel>(at, pack ? *b : Tensor(), onednn, onednn ? "f32_gemm__onednn" : "gemm__reference");
  if (pack) {
    GemmShape g;
    g.m = 64;
    g.k = at.trans_b ? b->dim(1) : b->dim(0);
    g.n = at.trans_b ? b->dim(0) : b->dim(1);
    if (kernel->plan(info.node, g, Shape{})->reference) kernel->set_name("gemm__reference");
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void register_matmul_kernels(KernelRegistry& registry) {
  for (int since : {1, 9, 13}) registry.add("", "MatMul", since, make_matmul);
  // Gemm 1/6 (attribute `broadcast`) accept the same C shapes as 7+ or fewer.
  for (int since : {1, 6, 7, 9, 11, 13}) registry.add("", "Gemm", since, make_gemm);
  registry.add("com.edgemm", "FusedMatMul", 1, make_fused_matmul);
  registry.add("com.edgemm", "Int8MatMul", 1, make_int8_matmul);
}

void register_fp16_matmul_kernels(KernelRegistry& registry) {
  const auto factory = [](bool fused_bias) -> KernelFactory {
    return [fused_bias](const KernelInfo& info) {
      return make_matmul_kernel(info, fused_bias, PanelFormat::kFloat32, true);
    };
  };
  for (int since : {1, 9, 13}) registry.add("", "MatMul", since, factory(false));
  registry.add("com.edgemm", "FusedMatMul", 1, factory(true));
}

std::unique_ptr<KernelRegistry> bf16_matmul_kernels() {
  auto registry = std::make_unique<KernelRegistry>();
  const auto factory = [](bool fused_bias) -> KernelFactory {
    return
        [fused_bias](const KernelInfo& info) { return make_matmul_kernel(info, fused_bias, PanelFormat::kBfloat16); };
  };
  for (int since : {1, 9, 13}) registry->add("", "MatMul", since, factory(false));
  registry->add("com.edgemm", "FusedMatMul", 1, factory(true));
  return registry;
}

}  // namespace edgemm::kernels
