/// \file matmul_int8.cc
/// com.edgemm Int8MatMul (see matmul_int8.h): oneDNN 2.6's u8s8 matmul on A quantized to
/// uint8 rows [rows, K], B prepacked once per layout; on Arm with dot product the SDOT product of
/// int8_gemm_neon.h on the same rows; and the reference path on dequantized values.

#include "kernels/cpu/matmul_int8.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cpu/int8_common.h"
#include "kernels/cpu/int8_gemm_neon.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/quant_common.h"

namespace edgemm::kernels {
namespace {

using dnnl::memory;

/// One row count prepared for oneDNN.
struct Int8MatMulPlan {
  bool reference = true;  // oneDNN has no fast kernel for it: the reference path runs
  dnnl::primitive primitive;
  memory::desc src_md, dst_md, bias_md, scratchpad_md;
  memory packed_weights;
};

struct Int8MatMulParams {
  int8::QdqScales q;  // x_scale, x_zero_point, w_scales [N]
  Tensor weights;     // int8 [K, N]
  Tensor bias;        // float32 [N] or undefined
};

class Int8MatMulKernel final : public Kernel {
 public:
  Int8MatMulKernel(Int8MatMulParams p, bool use_onednn)
      : p_(std::move(p)), use_onednn_(use_onednn), packed_(p_.weights) {
    const int64_t n = p_.weights.dim(1);
    output_scales_.resize(static_cast<size_t>(n));
    scaled_bias_.assign(static_cast<size_t>(n), 0.0f);
    for (int64_t c = 0; c < n; ++c) {
      output_scales_[c] = p_.q.x_scale * p_.q.w_scales[c];
      if (p_.bias.defined()) scaled_bias_[c] = p_.bias.data<float>()[c] / output_scales_[c];
    }
  }

  const char* name() const override {
#if defined(__aarch64__)
    if (neon_) return "u8s8_matmul__neon_dot";
#endif
    return use_onednn_ ? "u8s8_matmul__onednn" : "u8s8_matmul__reference";
  }

  int64_t packed_bytes() const override {
#if defined(__aarch64__)
    if (neon_) return neon_->packed_bytes() + packed_.packed_bytes();
#endif
    return packed_.packed_bytes();
  }

#if defined(__aarch64__)
  /// Takes the SDOT path (int8_gemm_neon.h) instead of oneDNN's.
  void use_neon() {
    const int64_t k = p_.weights.dim(0), n = p_.weights.dim(1);
    neon_ =
        std::make_unique<int8_neon::Int8Gemm>(p_.weights.data<int8_t>(), k, n, n, 1, p_.q.w_scales.data(), p_.q.x_scale,
                                              p_.q.x_zero_point, p_.bias.defined() ? p_.bias.data<float>() : nullptr);
  }
#endif

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* a = ctx.input(0);
    if (a == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input A is missing");
    const int64_t k = p_.weights.dim(0), n = p_.weights.dim(1);
    if (a->dtype() != DataType::kFloat32 || a->rank() < 1 || a->shape().back() != k) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + node.inputs[0] + "' must be float32 [..., " + std::to_string(k) + "], got " +
                                dtype_name(a->dtype()) + " " + shape_to_string(a->shape()));
    }
    Shape y_shape(a->shape().begin(), a->shape().end() - 1);
    y_shape.push_back(n);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, y_shape));
    const int64_t rows = k == 0 ? 0 : a->element_count() / k;
    if (y->element_count() == 0) return Status::ok();
#if defined(__aarch64__)
    if (neon_ && rows > 0 && k > 0) {
      const int64_t count = a->element_count();
      auto* src = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, static_cast<size_t>(count)));
      int8::quantize_u8(a->data<float>(), count, p_.q.x_scale, p_.q.x_zero_point, src, ctx.threads());
      neon_->gemm(src, k, rows, y->data<float>(), n, ctx.threads());
      return Status::ok();
    }
#endif
    if (use_onednn_ && rows > 0 && k > 0) {
      std::shared_ptr<const Int8MatMulPlan> plan = plan_for(node, rows);
      if (!plan->reference) return run_onednn(ctx, *plan, *a, rows, y);
    }
    run_reference(*a, rows, y);
    return Status::ok();
  }

  /// The cached plan for `rows` rows of A, created on first use.
  std::shared_ptr<const Int8MatMulPlan> plan_for(const ir::Node& node, int64_t rows) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(rows);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    auto made = std::make_shared<Int8MatMulPlan>(create_plan(node, rows));
    plans_[rows] = made;
    return made;
  }

 private:
  static constexpr size_t kMaxPlans = 64;

  // Called with mutex_ held.
  Int8MatMulPlan create_plan(const ir::Node& node, int64_t rows) const {
    Int8MatMulPlan p;
    const int64_t k = p_.weights.dim(0), n = p_.weights.dim(1);
    try {
      p.src_md = memory::desc({rows, k}, memory::data_type::u8, memory::format_tag::ab);
      p.dst_md = memory::desc({rows, n}, memory::data_type::f32, memory::format_tag::ab);
      const memory::desc user_weights({k, n}, memory::data_type::s8, memory::format_tag::ab);
      const memory::desc weights_any({k, n}, memory::data_type::s8, memory::format_tag::any);
      if (p_.bias.defined()) p.bias_md = memory::desc({1, n}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
      attr.set_output_scales(1 << 1, output_scales_);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {p_.q.x_zero_point});
      dnnl::matmul::desc desc(p.src_md, weights_any, p.bias_md, p.dst_md);
      dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine(), true);
      if (!pd || onednn::impl_name(pd).find("ref") != std::string::npos) return p;
      p.primitive = dnnl::matmul(pd);
      p.scratchpad_md = pd.scratchpad_desc();
      p.packed_weights = packed_.get(node, pd.weights_desc(), user_weights);
      if (!p.packed_weights) return p;
      p.reference = false;
    } catch (const dnnl::error&) {
      p.reference = true;
    }
    return p;
  }

  Status run_onednn(KernelContext& ctx, const Int8MatMulPlan& p, const Tensor& a, int64_t rows, Tensor* y) const {
    const ir::Node& node = ctx.node();
    const int threads = ctx.threads();
    const int64_t count = a.element_count();
    auto* src = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, static_cast<size_t>(count)));
    int8::quantize_u8(a.data<float>(), count, p_.q.x_scale, p_.q.x_zero_point, src, threads);
    onednn::set_threads(threads);
    try {
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, onednn::wrap(p.src_md, src)},
                                              {DNNL_ARG_WEIGHTS, p.packed_weights},
                                              {DNNL_ARG_DST, onednn::wrap(p.dst_md, y->raw_data())}};
      if (p_.bias.defined()) args[DNNL_ARG_BIAS] = onednn::wrap(p.bias_md, scaled_bias_.data());
      return onednn::execute(node, p.primitive, std::move(args), p.scratchpad_md);
    } catch (const dnnl::error& e) {
      return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN error: ") + e.what());
    }
  }

  // The QDQ graph's arithmetic in float: dequantize(quantize(A)) times the dequantized B, plus bias.
  void run_reference(const Tensor& a, int64_t rows, Tensor* y) const {
    const int64_t k = p_.weights.dim(0), n = p_.weights.dim(1);
    std::vector<float> w(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k * n; ++i) w[i] = static_cast<float>(p_.weights.data<int8_t>()[i]) * p_.q.w_scales[i % n];
    const quant::QRange u8{0, 255};
    std::vector<float> row(static_cast<size_t>(k));
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        const int32_t q = quant::quantize_value(a.data<float>()[r * k + j] / p_.q.x_scale, p_.q.x_zero_point, u8);
        row[j] = static_cast<float>(q - p_.q.x_zero_point) * p_.q.x_scale;
      }
      for (int64_t c = 0; c < n; ++c) {
        float acc = p_.bias.defined() ? p_.bias.data<float>()[c] : 0.0f;
        for (int64_t j = 0; j < k; ++j) acc += row[j] * w[j * n + c];
        out[r * n + c] = acc;
      }
    }
  }

  Int8MatMulParams p_;
  bool use_onednn_;
#if defined(__aarch64__)
  std::unique_ptr<int8_neon::Int8Gemm> neon_;  // the SDOT path, where it runs
#endif
  std::vector<float> output_scales_;  // x_scale · w_scales[n]
  std::vector<float> scaled_bias_;    // bias[n] / output_scales_[n]: oneDNN 2.6 adds the bias before scaling
  mutable onednn::PackedWeights packed_;
  mutable std::mutex mutex_;
  mutable std::map<int64_t, std::shared_ptr<const Int8MatMulPlan>> plans_;  // by row count
};

Expected<Int8MatMulParams> read_params(const KernelInfo& info) {
  const ir::Node& node = info.node;
  Int8MatMulParams p;
  const Tensor* w = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  if (w == nullptr || w->dtype() != DataType::kInt8 || w->rank() != 2) {
    return ir::node_error(node, StatusCode::kInvalidModel, "input B must be a constant 2-D int8 tensor [K, N]");
  }
  p.weights = *w;
  const int64_t n = w->dim(1);
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    const Tensor* b = info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
    if (b == nullptr || b->dtype() != DataType::kFloat32 || b->shape() != Shape{n}) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "input bias must be a constant float32 tensor [" + std::to_string(n) + "]");
    }
    p.bias = *b;
  }
  EDGEMM_ASSIGN_OR_RETURN(p.q, int8::read_qdq_scales(node, n));
  return p;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_int8_matmul(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(Int8MatMulParams p, read_params(info));
#if defined(__aarch64__)
  if (onednn::enabled() && int8_neon::enabled() && p.weights.dim(0) <= int8_neon::kMaxDepth &&
      int8::output_scales_finite(p.q)) {
    auto kernel = std::make_unique<Int8MatMulKernel>(std::move(p), false);
    kernel->use_neon();
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
#endif
  int8_neon::warn_without_dot_product_once();
  const bool exact = int8::fits_pair_sums(p.weights);
  if (!exact) int8::warn_reference_path(info.node);
  if (onednn::enabled() && exact && int8::scales_representable(p.q, p.bias)) {
    // oneDNN's choice depends on the CPU, not on the row count: probe one (so the kernel's name
    // in profiles says which path runs).
    auto kernel = std::make_unique<Int8MatMulKernel>(p, true);
    if (!kernel->plan_for(info.node, 64)->reference) return std::unique_ptr<Kernel>(std::move(kernel));
  }
  return std::unique_ptr<Kernel>(std::make_unique<Int8MatMulKernel>(std::move(p), false));
}

}  // namespace edgemm::kernels
