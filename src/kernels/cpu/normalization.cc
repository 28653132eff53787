/// \file normalization.cc
/// Normalization ops of the default ONNX domain, inference semantics.
///
/// Follows the ONNX operator spec (Operators.md / Changelog.md):
/// - BatchNormalization (versions 1, 6, 7, 9, 14, 15): Y = (X - mean) / sqrt(var + epsilon) *
///   scale + B per channel (axis 1). Version 7's `spatial` = 0 (per-element statistics of
///   shape [C, D1, ...]) is accepted. Training (`training_mode` = 1 from version 14; before it,
///   `is_test` = 0 with the running-statistics outputs requested) is refused as Unsupported.
/// - InstanceNormalization (version 6): per (n, c) mean and population variance over the
///   spatial axes, y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c].
/// - LayerNormalization (version 17): statistics over axes [axis, rank), Y = (X - Mean) *
///   InvStdDev * Scale + B with Scale and B broadcast to X.shape[axis:]; optional outputs Mean
///   and InvStdDev = 1 / sqrt(Var + epsilon) of shape X.shape[:axis] + [1] * (rank - axis),
///   float32 (stash_type 1). Statistics are computed in float64, in one pass over each row.
///   Also registered as com.edgemm LayerNormalization version 1 (the node
///   passes::fuse_layer_norm writes, so models of any opset can use it).
/// - LpNormalization (version 1): x / ||x||_p along `axis` (p = 1 or 2); a zero norm gives 0,
///   as ONNX Runtime does.
/// - MeanVarianceNormalization (versions 9, 13): (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9)
///   over `axes` (default [0, 2, 3]), as in the spec's function body.
///
/// dtypes: float32 and float64 (parameters may be either, independently of X).

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/vector_math.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace edgemm::kernels {
namespace {

bool is_float_type(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat64; }

/// Reads a float32/float64 tensor as doubles.
Expected<std::vector<double>> read_doubles(const ir::Node& node, int index, const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.element_count()));
  if (t.dtype() == DataType::kFloat32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<float>()[i];
  } else if (t.dtype() == DataType::kFloat64) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<double>()[i];
  } else {
    return unsupported_dtype(node, index, t.dtype());
  }
  return out;
}

Expected<const Tensor*> required_input(KernelContext& ctx, int index, const char* name) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) {
    return ir::node_error(ctx.node(), StatusCode::kInvalidModel, std::string("input '") + name + "' is missing");
  }
  return t;
}

/// Sums `n` doubles produced by `f(i)` with independent accumulators (vectorizes).
template <typename F>
double sum_lanes(int64_t n, F&& f) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += f(i + j);
  }
  for (; i < n; ++i) acc[0] += f(i);
  double s = 0;
  for (double a : acc) s += a;
  return s;
}

/// Mean and population variance of n contiguous values (two passes).
template <typename T>
void mean_var(const T* x, int64_t n, double& mean, double& var) {
  mean = n > 0 ? sum_lanes(n, [&](int64_t i) { return static_cast<double>(x[i]); }) / n : 0.0;
  const double m = mean;
  var = n > 0 ? sum_lanes(n,
                          [&](int64_t i) {
                            const double d = static_cast<double>(x[i]) - m;
                            return d * d;
                          }) /
                    n
              : 0.0;
}

// ---------------------------------------------------------------------------------------------
// BatchNormalization (inference).

template <typename T>
void affine_channels(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, const std::vector<double>& a,
                     const std::vector<double>& b, bool per_element, int threads) {
  parallel_for(threads, batch * channels, spatial, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % channels;
      const T* src = x + nc * spatial;
      T* dst = y + nc * spatial;
      if (per_element) {
        const double* ac = a.data() + c * spatial;
        const double* bc = b.data() + c * spatial;
        for (int64_t i = 0; i < spatial; ++i) dst[i] = static_cast<T>(src[i] * ac[i] + bc[i]);
      } else {
        const T ac = static_cast<T>(a[c]), bc = static_cast<T>(b[c]);
        for (int64_t i = 0; i < spatial; ++i) dst[i] = src[i] * ac + bc;
      }
    }
  });
}

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(float epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    const Tensor* in[5];
    for (int i = 0; i < 5; ++i) {
      EDGEMM_ASSIGN_OR_RETURN(in[i], required_input(ctx, i, kNames[i]));
    }
    const Tensor& x = *in[0];
    if (!is_float_type(x.dtype())) return unsupported_dtype(node, 0, x.dtype());
    if (x.rank() < 2) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input 'X' has shape " + shape_to_string(x.shape()) + "; it needs at least 2 axes (N, C, ...)");
    }
    const int64_t batch = x.shape()[0], channels = x.shape()[1];
    const int64_t spatial = channels == 0 || batch == 0 ? 0 : x.element_count() / (batch * channels);
    std::vector<double> p[4];
    for (int i = 0; i < 4; ++i) {
      EDGEMM_ASSIGN_OR_RETURN(p[i], read_doubles(node, i + 1, *in[i + 1]));
    }
    const int64_t count = static_cast<int64_t>(p[0].size());
    const bool per_element = count != channels && count == channels * spatial;
    for (int i = 0; i < 4; ++i) {
      if (static_cast<int64_t>(p[i].size()) != (per_element ? channels * spatial : channels)) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              std::string("input '") + kNames[i + 1] + "' has shape " +
                                  shape_to_string(in[i + 1]->shape()) + " but X has " + std::to_string(channels) +
                                  " channels");
      }
    }
    std::vector<double> a(p[0].size()), b(p[0].size());
    for (size_t c = 0; c < a.size(); ++c) {
      a[c] = p[0][c] / std::sqrt(p[3][c] + static_cast<double>(epsilon_));
      b[c] = p[1][c] - p[2][c] * a[c];
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (x.dtype() == DataType::kFloat32) {
      affine_channels(x.data<float>(), y->data<float>(), batch, channels, spatial, a, b, per_element, ctx.threads());
    } else {
      affine_channels(x.data<double>(), y->data<double>(), batch, channels, spatial, a, b, per_element, ctx.threads());
    }
    return Status::ok();
  }

 private:
  float epsilon_;
};

Expected<std::unique_ptr<Kernel>> make_batch_norm(const KernelInfo& info) {
  const ir::Node& node = info.node;
  EDGEMM_ASSIGN_OR_RETURN(float epsilon, node.attr_float("epsilon", 1e-5f));
  bool training = false;
  if (info.opset >= 14) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t mode, node.attr_int("training_mode", 0));
    training = mode != 0;
  } else {
    // Before 14 the extra outputs (running mean/var, saved statistics) exist only in training.
    EDGEMM_ASSIGN_OR_RETURN(int64_t is_test, node.attr_int("is_test", 0));
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      training = training || (!node.outputs[i].empty() && is_test == 0);
    }
  }
  if (training) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          "training mode (batch statistics and running-mean outputs) is not "
                          "supported; only inference (training_mode = 0) is");
  }
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(epsilon));
}

// ---------------------------------------------------------------------------------------------
// InstanceNormalization.

template <typename T>
void instance_norm(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, const std::vector<double>& scale,
                   const std::vector<double>& bias, double epsilon, int threads) {
  parallel_for(threads, batch * channels, spatial * 3, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % channels;
      const T* src = x + nc * spatial;
      T* dst = y + nc * spatial;
      double mean, var;
      mean_var(src, spatial, mean, var);
      const double a = scale[c] / std::sqrt(var + epsilon);
      const T ta = static_cast<T>(a), tb = static_cast<T>(bias[c] - mean * a);
      for (int64_t i = 0; i < spatial; ++i) dst[i] = src[i] * ta + tb;
    }
  });
}

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(float epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "input"));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1, "scale"));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 2, "B"));
    if (!is_float_type(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
    if (x->rank() < 3) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input 'input' has shape " + shape_to_string(x->shape()) + "; it needs at least 3 axes (N, C, D1, ...)");
    }
    const int64_t batch = x->shape()[0], channels = x->shape()[1];
    int64_t spatial = 1;
    for (int64_t i = 2; i < x->rank(); ++i) spatial *= x->shape()[i];
    EDGEMM_ASSIGN_OR_RETURN(std::vector<double> scale, read_doubles(node, 1, *s));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<double> bias, read_doubles(node, 2, *b));
    if (static_cast<int64_t>(scale.size()) != channels || static_cast<int64_t>(bias.size()) != channels) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "inputs 'scale' " + shape_to_string(s->shape()) + " and 'B' " +
                                shape_to_string(b->shape()) + " must have " + std::to_string(channels) +
                                " elements (the channels of input)");
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->dtype() == DataType::kFloat32) {
      instance_norm(x->data<float>(), y->data<float>(), batch, channels, spatial, scale, bias, epsilon_, ctx.threads());
    } else {
      instance_norm(x->data<double>(), y->data<double>(), batch, channels, spatial, scale, bias, epsilon_,
                    ctx.threads());
    }
    return Status::ok();
  }

 private:
  float epsilon_;
};

Expected<std::unique_ptr<Kernel>> make_instance_norm(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(float epsilon, info.node.attr_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<InstanceNormKernel>(epsilon));
}

// ---------------------------------------------------------------------------------------------
// LayerNormalization.

/// A Scale or B parameter as a dense vector over the normalized shape: a direct pointer when
/// it already is one of X's dtype, else an expanded copy (numpy broadcasting).
template <typename T>
struct DenseParam {
  const T* data = nullptr;
  std::vector<T> storage;
};

template <typename T>
Status dense_param(const ir::Node& node, int index, const Tensor* t, const Shape& norm_shape, int64_t norm_count,
                   DenseParam<T>& out) {
  if (t == nullptr) return Status::ok();
  const char* name = index == 1 ? "Scale" : "B";
  bool fits = t->rank() <= static_cast<int64_t>(norm_shape.size());
  for (int64_t i = 1; fits && i <= t->rank(); ++i) {
    const int64_t d = t->shape()[t->rank() - i];
    fits = d == 1 || d == norm_shape[norm_shape.size() - i];
  }
  if (!fits) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          std::string("input '") + name + "' has shape " + shape_to_string(t->shape()) +
                              ", which does not broadcast to the normalized shape " + shape_to_string(norm_shape));
  }
  if (t->dtype() == (std::is_same_v<T, float> ? DataType::kFloat32 : DataType::kFloat64) &&
      t->element_count() == norm_count) {
    out.data = t->data<T>();
    return Status::ok();
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<double> values, read_doubles(node, index, *t));
  const auto strides = broadcast_strides(t->shape(), norm_shape);
  out.storage.resize(static_cast<size_t>(norm_count));
  std::vector<int64_t> idx(norm_shape.size(), 0);
  for (int64_t i = 0; i < norm_count; ++i) {
    int64_t offset = 0, rem = i;
    for (int64_t a = static_cast<int64_t>(norm_shape.size()) - 1; a >= 0; --a) {
      offset += (rem % norm_shape[a]) * strides[a];
      rem /= norm_shape[a];
    }
    out.storage[i] = static_cast<T>(values[offset]);
  }
  out.data = out.storage.data();
  return Status::ok();
}

/// Mean and population variance of n contiguous values in one pass (sum and sum of squares
/// in float64 lanes; float64 keeps E[x^2] - E[x]^2 exact enough for float32 and float64 rows
/// of moderate mean-to-spread ratio).
template <typename T>
[[gnu::always_inline]] inline void mean_var_one_pass(const T* x, int64_t n, double& mean, double& var) {
  constexpr int kLanes = 8;
  double s[kLanes] = {}, q[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double v = static_cast<double>(x[i + j]);
      s[j] += v;
      q[j] += v * v;
    }
  }
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    s[0] += v;
    q[0] += v * v;
  }
  double sum = 0, sum_sq = 0;
  for (int j = 0; j < kLanes; ++j) {
    sum += s[j];
    sum_sq += q[j];
  }
  mean = n > 0 ? sum / n : 0.0;
  var = n > 0 ? std::max(sum_sq / n - mean * mean, 0.0) : 0.0;
}

#if defined(__aarch64__)
/// mean_var_one_pass for float32 rows, in NEON float64 lanes (GCC leaves the widening loop
/// scalar on aarch64).
inline void mean_var_one_pass(const float* x, int64_t n, double& mean, double& var) {
  float64x2_t s0 = vdupq_n_f64(0.0), s1 = s0, q0 = s0, q1 = s0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    const float64x2_t lo = vcvt_f64_f32(vget_low_f32(v)), hi = vcvt_high_f64_f32(v);
    s0 = vaddq_f64(s0, lo);
    s1 = vaddq_f64(s1, hi);
    q0 = vfmaq_f64(q0, lo, lo);
    q1 = vfmaq_f64(q1, hi, hi);
  }
  double sum = vaddvq_f64(vaddq_f64(s0, s1)), sum_sq = vaddvq_f64(vaddq_f64(q0, q1));
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    sum += v;
    sum_sq += v * v;
  }
  mean = n > 0 ? sum / n : 0.0;
  var = n > 0 ? std::max(sum_sq / n - mean * mean, 0.0) : 0.0;
}
#endif

/// A row's statistics as the affine map that normalizes it, x · a + b with a = 1 / sqrt(var + epsilon)
/// and b = −mean · a; mean and a go to *mean_out and *inv_out when not null.
template <typename T>
[[gnu::always_inline]] inline void row_normalization(const T* src, int64_t n, double epsilon, float* mean_out,
                                                     float* inv_out, T& a, T& b) {
  double mean, var;
  mean_var_one_pass(src, n, mean, var);
  const double inv = 1.0 / std::sqrt(var + epsilon);
  if (mean_out) *mean_out = static_cast<float>(mean);
  if (inv_out) *inv_out = static_cast<float>(inv);
  a = static_cast<T>(inv);
  b = static_cast<T>(-mean * inv);
}

/// One row of n values: one read for the statistics, one fused (x * inv - mean * inv) * scale
/// + bias write; the statistics go to *mean_out and *inv_out when not null.
template <typename T>
[[gnu::always_inline]] inline void layer_norm_row(const T* src, T* dst, int64_t n, const T* scale, const T* bias,
                                                  double epsilon, float* mean_out, float* inv_out) {
  T a, b;
  row_normalization(src, n, epsilon, mean_out, inv_out, a, b);
  if (bias) {
    for (int64_t i = 0; i < n; ++i) dst[i] = (src[i] * a + b) * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = (src[i] * a + b) * scale[i];
  }
}

/// The float32 row, also compiled for AVX2 and AVX-512F (same values: no contraction; a
/// transformer's [50, 768] LayerNormalization 25 -> 8 us with AVX-512F on an EPYC Zen 5).
EDGEMM_AVX512_CLONES void layer_norm_row_f32(const float* src, float* dst, int64_t n, const float* scale,
                                             const float* bias, double epsilon, float* mean_out, float* inv_out) {
#if defined(__aarch64__)
  // The same map in NEON: (x · a + b) · scale + bias, products fused.
  float a, b;
  row_normalization(src, n, epsilon, mean_out, inv_out, a, b);
  const float32x4_t va = vdupq_n_f32(a), vb = vdupq_n_f32(b), zero = vdupq_n_f32(0.f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t t = vfmaq_f32(vb, vld1q_f32(src + i), va);
    vst1q_f32(dst + i, vfmaq_f32(bias ? vld1q_f32(bias + i) : zero, t, vld1q_f32(scale + i)));
  }
  for (; i < n; ++i) dst[i] = (src[i] * a + b) * scale[i] + (bias ? bias[i] : 0.f);
#else
  layer_norm_row(src, dst, n, scale, bias, epsilon, mean_out, inv_out);
#endif
}

/// Normalizes `rows` rows of n values (layer_norm_row), rows split across threads.
template <typename T>
void layer_norm(const T* x, T* y, float* mean_out, float* inv_out, int64_t rows, int64_t n, const T* scale,
                const T* bias, double epsilon, int threads) {
  parallel_for(threads, rows, n * 3, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* mean_r = mean_out ? mean_out + r : nullptr;
      float* inv_r = inv_out ? inv_out + r : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        layer_norm_row_f32(x + r * n, y + r * n, n, scale, bias, epsilon, mean_r, inv_r);
      } else {
        layer_norm_row(x + r * n, y + r * n, n, scale, bias, epsilon, mean_r, inv_r);
      }
    }
  });
}

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon) : axis_(axis), epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "X"));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1, "Scale"));
    const Tensor* bias = ctx.input(2);
    if (!is_float_type(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
    const int64_t rank = x->rank();
    if (rank == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument, "input 'X' is a scalar; it needs at least one axis");
    }
    EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_, rank));
    int64_t rows = 1, n = 1;
    Shape norm_shape, stat_shape;
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t d = x->shape()[i];
      if (i < axis) {
        rows *= d;
        stat_shape.push_back(d);
      } else {
        n *= d;
        norm_shape.push_back(d);
        stat_shape.push_back(1);
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    if (ctx.output_wanted(1)) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DataType::kFloat32, stat_shape));
      mean_out = t->data<float>();
    }
    if (ctx.output_wanted(2)) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, DataType::kFloat32, stat_shape));
      inv_out = t->data<float>();
    }
    if (x->dtype() == DataType::kFloat32)
      return run_typed<float>(ctx, *x, scale, bias, *y, norm_shape, rows, n, mean_out, inv_out);
    return run_typed<double>(ctx, *x, scale, bias, *y, norm_shape, rows, n, mean_out, inv_out);
  }

 private:
  template <typename T>
  Status run_typed(KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, Tensor& y,
                   const Shape& norm_shape, int64_t rows, int64_t n, float* mean_out, float* inv_out) const {
    DenseParam<T> s, b;
    EDGEMM_RETURN_IF_ERROR(dense_param<T>(ctx.node(), 1, scale, norm_shape, n, s));
    EDGEMM_RETURN_IF_ERROR(dense_param<T>(ctx.node(), 2, bias, norm_shape, n, b));
    layer_norm<T>(x.data<T>(), y.data<T>(), mean_out, inv_out, rows, n, s.data, b.data, epsilon_, ctx.threads());
    return Status::ok();
  }

  int64_t axis_;
  float epsilon_;
};

Expected<std::unique_ptr<Kernel>> make_layer_norm(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, info.node.attr_int("axis", -1));
  EDGEMM_ASSIGN_OR_RETURN(float epsilon, info.node.attr_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(axis, epsilon));
}

// ---------------------------------------------------------------------------------------------
// LpNormalization.

template <typename T>
void lp_norm(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int64_t p, int threads) {
  parallel_for(threads, outer * inner, n * 2, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t o = idx / inner, i = idx % inner;
      const T* src = x + o * n * inner + i;
      T* dst = y + o * n * inner + i;
      double norm = 0;
      for (int64_t r = 0; r < n; ++r) {
        const double v = static_cast<double>(src[r * inner]);
        norm += p == 1 ? std::abs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t r = 0; r < n; ++r) {
        dst[r * inner] = norm == 0 ? T(0) : static_cast<T>(src[r * inner] / norm);
      }
    }
  });
}

class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "input"));
    if (!is_float_type(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
    const int64_t rank = x->rank();
    if (rank == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'input' is a scalar; it needs at least one axis");
    }
    EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_, rank));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x->shape()[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= x->shape()[i];
    const int64_t n = x->shape()[axis];
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->dtype() == DataType::kFloat32) {
      lp_norm(x->data<float>(), y->data<float>(), outer, n, inner, p_, ctx.threads());
    } else {
      lp_norm(x->data<double>(), y->data<double>(), outer, n, inner, p_, ctx.threads());
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
  int64_t p_;
};

Expected<std::unique_ptr<Kernel>> make_lp_norm(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, info.node.attr_int("axis", -1));
  EDGEMM_ASSIGN_OR_RETURN(int64_t p, info.node.attr_int("p", 2));
  if (p != 1 && p != 2) {
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute 'p' is " + std::to_string(p) + "; only 1 and 2 are valid");
  }
  return std::unique_ptr<Kernel>(std::make_unique<LpNormKernel>(axis, p));
}

// ---------------------------------------------------------------------------------------------
// MeanVarianceNormalization.

/// For every element of a tensor of shape `dims` (in order), the index of its statistics
/// slot: the position among the kept (non-reduced) axes. Calls fn(element, slot).
template <typename F>
void for_each_slot(const Shape& dims, const std::vector<bool>& reduced, F&& fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> slot_stride(rank, 0);
  int64_t s = 1;
  for (int64_t a = rank - 1; a >= 0; --a) {
    if (!reduced[a]) {
      slot_stride[a] = s;
      s *= dims[a];
    }
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<int64_t> index(rank, 0);
  int64_t slot = 0;
  for (int64_t e = 0; e < total; ++e) {
    fn(e, slot);
    for (int64_t a = rank - 1; a >= 0; --a) {
      if (++index[a] < dims[a]) {
        slot += slot_stride[a];
        break;
      }
      slot -= slot_stride[a] * (dims[a] - 1);
      index[a] = 0;
    }
  }
}

template <typename T>
void mvn(const T* x, T* y, const Shape& dims, const std::vector<bool>& reduced) {
  int64_t slots = 1, per_slot = 1;
  for (size_t a = 0; a < dims.size(); ++a) (reduced[a] ? per_slot : slots) *= dims[a];
  std::vector<double> mean(static_cast<size_t>(slots), 0.0), var(mean.size(), 0.0);
  for_each_slot(dims, reduced, [&](int64_t e, int64_t s) { mean[s] += x[e]; });
  for (double& m : mean) m /= static_cast<double>(per_slot);
  for_each_slot(dims, reduced, [&](int64_t e, int64_t s) {
    const double d = x[e] - mean[s];
    var[s] += d * d;
  });
  for (double& v : var) v = std::sqrt(v / static_cast<double>(per_slot)) + 1e-9;
  for_each_slot(dims, reduced, [&](int64_t e, int64_t s) { y[e] = static_cast<T>((x[e] - mean[s]) / var[s]); });
}

class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0, "X"));
    if (!is_float_type(x->dtype())) return unsupported_dtype(node, 0, x->dtype());
    const int64_t rank = x->rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t axis : axes_) {
      EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axis, rank));
      if (reduced[a]) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "axis " + std::to_string(axis) + " appears twice in 'axes'");
      }
      reduced[a] = true;
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->element_count() == 0) return Status::ok();
    if (x->dtype() == DataType::kFloat32) {
      mvn(x->data<float>(), y->data<float>(), x->shape(), reduced);
    } else {
      mvn(x->data<double>(), y->data<double>(), x->shape(), reduced);
    }
    return Status::ok();
  }

 private:
  std::vector<int64_t> axes_;
};

Expected<std::unique_ptr<Kernel>> make_mvn(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, info.node.attr_ints("axes", {0, 2, 3}));
  return std::unique_ptr<Kernel>(std::make_unique<MvnKernel>(std::move(axes)));
}

}  // namespace

void register_normalization_kernels(KernelRegistry& registry) {
  for (int since : {1, 6, 7, 9, 14, 15}) {
    registry.add("", "BatchNormalization", since, make_batch_norm);
  }
  registry.add("", "InstanceNormalization", 1, make_instance_norm);
  registry.add("", "InstanceNormalization", 6, make_instance_norm);
  registry.add("", "LayerNormalization", 17, make_layer_norm);
  // Same semantics for any model opset: passes::fuse_layer_norm writes this one.
  registry.add("com.edgemm", "LayerNormalization", 1, make_layer_norm);
  registry.add("", "LpNormalization", 1, make_lp_norm);
  for (int since : {9, 13}) registry.add("", "MeanVarianceNormalization", since, make_mvn);
}

}  // namespace edgemm::kernels
