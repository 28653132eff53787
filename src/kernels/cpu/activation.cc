/// \file activation.cc
/// Activation kernels of the default ONNX domain (Operators.md, opsets 6–20):
/// Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus,
/// Softsign, ThresholdedRelu, Shrink, Clip, Mish, Gelu.
///
/// Versions and type constraints follow the ONNX 1.12 schemas:
/// - Relu-6/13/14: float16/float/double; 13 adds bfloat16; 14 adds int8..int64.
/// - LeakyRelu-6/16 (alpha 0.01; 16 adds bfloat16), Elu-6 (alpha 1), Selu-6 (alpha
///   1.67326319…, gamma 1.05070102…), HardSigmoid-6 (alpha 0.2, beta 0.5), Softplus-1,
///   Softsign-1, ThresholdedRelu-10 (alpha 1), HardSwish-14 (alpha 1/6, beta 0.5),
///   Sigmoid-6/13, Tanh-6/13 (13 adds bfloat16): float16/float/double.
/// - Celu-12 (alpha 1): float only.
/// - PRelu-7/9/16: slope broadcasts unidirectionally to X (the output has X's shape); 7 is
///   float types, 9 adds int32/int64/uint32/uint64, 16 adds bfloat16. PRelu-6 (kept for
///   older exports): a 1-D slope of C values is per channel (axis 1), otherwise as in 7.
/// - Shrink-9 (lambd 0.5, bias 0): all integer and float types; integers compute in double
///   and convert back with Cast's rules.
/// - Clip-6: bounds from attributes min/max (default ∓FLT_MAX); Clip-11: bounds from the
///   optional scalar inputs 2 and 3 (absent = unbounded); Clip-12 adds integer types, 13
///   bfloat16. min > max gives max (numpy.clip). NaN passes through Relu and Clip.
/// - Mish-18: x * tanh(softplus(x)) (softplus as Softplus computes it, without overflow):
///   float16/float/double.
/// - Gelu-20: approximate "none" (default): 0.5·x·(1 + erf(x/√2)); "tanh":
///   0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), the formulas of ir::apply_unary's gelu and
///   gelu_tanh steps; float16/float/double/bfloat16. Any other approximate is kInvalidModel.
/// float16/bfloat16 compute in float32.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

using namespace elementwise;  // NOLINT: kernel-internal helpers

struct Relu {
  using Types = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
};

/// Base for float-only activations.
struct FloatAct {
  using Types = FloatTypes;
  static constexpr int64_t kCost = 2;
  static constexpr bool kPredicate = false;
};

struct LeakyRelu : FloatAct {
  float alpha = 0.01f;
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(alpha) * x : x;
  }
};

struct Elu : FloatAct {
  static constexpr int64_t kCost = 12;
  float alpha = 1.0f;
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(alpha) * std::expm1(x) : x;
  }
};

struct Selu : FloatAct {
  static constexpr int64_t kCost = 12;
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? T(gamma) * x : T(gamma) * (T(alpha) * std::exp(x) - T(alpha));
  }
};

struct Celu : FloatAct {
  static constexpr int64_t kCost = 12;
  float alpha = 1.0f;
  template <typename T>
  T operator()(T x) const {
    const T a = T(alpha);
    const T neg = a * std::expm1(x / a);
    return (x > T(0) ? x : T(0)) + (neg < T(0) ? neg : T(0));
  }
};

struct Sigmoid : FloatAct {
  static constexpr int64_t kCost = 12;
  template <typename T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};

struct HardSigmoid : FloatAct {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <typename T>
  T operator()(T x) const {
    return clamp_nan(T(alpha) * x + T(beta), T(0), T(1));
  }
};

struct HardSwish : FloatAct {
  template <typename T>
  T operator()(T x) const {
    return x * clamp_nan(x / T(6) + T(0.5), T(0), T(1));
  }
};

struct Tanh : FloatAct {
  static constexpr int64_t kCost = 12;
  template <typename T>
  T operator()(T x) const {
    return std::tanh(x);
  }
};

struct Softplus : FloatAct {
  static constexpr int64_t kCost = 20;
  template <typename T>
  T operator()(T x) const {
    // log(1 + e^x) without overflow for large x.
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

struct Mish : FloatAct {
  static constexpr int64_t kCost = 40;
  template <typename T>
  T operator()(T x) const {
    return x * std::tanh(Softplus{}(x));
  }
};

struct Gelu : FloatAct {
  static constexpr int64_t kCost = 20;
  bool tanh_approx = false;
  template <typename T>
  T operator()(T x) const {
    if (tanh_approx) {
      const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);  // √(2/π)·(x + 0.044715·x³)
      return T(0.5) * x * (T(1) + std::tanh(inner));
    }
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));  // x/√2
  }
};

struct Softsign : FloatAct {
  template <typename T>
  T operator()(T x) const {
    return x / (T(1) + std::fabs(x));
  }
};

struct ThresholdedRelu : FloatAct {
  float alpha = 1.0f;
  template <typename T>
  T operator()(T x) const {
    return x > T(alpha) ? x : T(0);
  }
};

struct Shrink {
  using Types = NumericTypes;
  static constexpr int64_t kCost = 2;
  static constexpr bool kPredicate = false;
  float lambd = 0.5f;
  float bias = 0.0f;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (x < -T(lambd)) return x + T(bias);
      if (x > T(lambd)) return x - T(bias);
      return T(0);
    } else {
      const double v = static_cast<double>(x);
      if (v < -static_cast<double>(lambd)) return float_to_int<T>(v + bias);
      if (v > static_cast<double>(lambd)) return float_to_int<T>(v - bias);
      return T(0);
    }
  }
};

/// Reads float attribute `key` into `out` (keeps the default when absent).
Status read_float(const KernelInfo& info, const char* key, float& out) {
  EDGEMM_ASSIGN_OR_RETURN(out, info.node.attr_float(key, out));
  return Status::ok();
}

template <typename Op>
auto with_alpha() {
  return [](const KernelInfo& info) -> Expected<Op> {
    Op op;
    EDGEMM_RETURN_IF_ERROR(read_float(info, "alpha", op.alpha));
    return op;
  };
}

Expected<Selu> make_selu(const KernelInfo& info) {
  Selu op;
  EDGEMM_RETURN_IF_ERROR(read_float(info, "alpha", op.alpha));
  EDGEMM_RETURN_IF_ERROR(read_float(info, "gamma", op.gamma));
  return op;
}

Expected<HardSigmoid> make_hard_sigmoid(const KernelInfo& info) {
  HardSigmoid op;
  EDGEMM_RETURN_IF_ERROR(read_float(info, "alpha", op.alpha));
  EDGEMM_RETURN_IF_ERROR(read_float(info, "beta", op.beta));
  return op;
}

Expected<Shrink> make_shrink(const KernelInfo& info) {
  Shrink op;
  EDGEMM_RETURN_IF_ERROR(read_float(info, "lambd", op.lambd));
  EDGEMM_RETURN_IF_ERROR(read_float(info, "bias", op.bias));
  return op;
}

Expected<Gelu> make_gelu(const KernelInfo& info) {
  Gelu op;
  EDGEMM_ASSIGN_OR_RETURN(std::string approximate, info.node.attr_string("approximate", "none"));
  if (approximate != "none" && approximate != "tanh") {
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  }
  op.tanh_approx = approximate == "tanh";
  return op;
}

// ---------------------------------------------------------------------------------------
// PRelu

Status run_prelu(KernelContext& ctx, DTypeSet allowed, bool per_channel) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* slope, need_input(ctx, 1));
  const DataType dt = x->dtype();
  if (!dtype_in(allowed, dt)) return unsupported_dtype(node, 0, dt);
  EDGEMM_RETURN_IF_ERROR(check_same_dtype(node, *x, 0, *slope, 1));
  // PRelu-6: a 1-D slope of C values applies per channel (axis 1 of X).
  Shape slope_shape = slope->shape();
  if (per_channel && slope_shape.size() == 1 && x->rank() >= 2 && slope_shape[0] == x->dim(1) && slope_shape[0] != 1) {
    slope_shape.resize(static_cast<size_t>(x->rank() - 1), 1);
  }
  EDGEMM_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(node, x->shape(), slope_shape));
  if (shape != x->shape()) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "slope '" + input_name(node, 1) + "' of shape " + shape_to_string(slope->shape()) +
                              " does not broadcast to the shape of X " + shape_to_string(x->shape()));
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, shape));
  const BroadcastPlan plan = make_broadcast_plan(shape, {&x->shape(), &slope_shape});
  const int threads = ctx.threads();
  auto f = [](auto v, auto s) { return v < decltype(v)(0) ? s * v : v; };
  if (is_half(dt)) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor x32, to_float32(node, *x, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor s32, to_float32(node, *slope, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, shape));
    binary_loop(plan, x32.data<float>(), s32.data<float>(), y32.data<float>(), threads, 2, f);
    return convert_tensor(node, y32, *y, threads);
  }
  const bool done = dispatch(TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>{}, dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      binary_loop(plan, x->data<T>(), slope->data<T>(), y->data<T>(), threads, 2, f);
    } else {
      binary_loop(plan, x->data<T>(), slope->data<T>(), y->data<T>(), threads, 2,
                  [](T v, T s) { return v < T(0) ? wrap_mul(s, v) : v; });
    }
  });
  return done ? Status::ok() : unsupported_dtype(node, 0, dt);
}

void add_prelu(KernelRegistry& registry, int since, DTypeSet allowed) {
  registry.add("", "PRelu", since, [allowed, since](const KernelInfo&) {
    return make_fn_kernel([allowed, since](KernelContext& ctx) { return run_prelu(ctx, allowed, since < 7); });
  });
}

// ---------------------------------------------------------------------------------------
// Clip

/// Reads an optional scalar bound input (Clip-11+) as T.
template <typename T>
Status read_bound(KernelContext& ctx, int i, DataType dt, T& out) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || !t->defined()) return Status::ok();
  const ir::Node& node = ctx.node();
  if (t->dtype() != dt) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          std::string(i == 1 ? "min" : "max") + " '" + input_name(node, i) + "' has dtype " +
                              dtype_name(t->dtype()) + " but input has " + dtype_name(dt));
  }
  if (t->element_count() != 1) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          std::string(i == 1 ? "min" : "max") + " '" + input_name(node, i) +
                              "' must be a scalar, got shape " + shape_to_string(t->shape()));
  }
  if constexpr (std::is_same_v<T, float>) {
    if (is_half(dt)) {
      out = half_load(t->data<uint16_t>()[0], dt == DataType::kBFloat16);
      return Status::ok();
    }
  }
  out = t->data<T>()[0];
  return Status::ok();
}

struct ClipConfig {
  DTypeSet allowed;
  bool bounds_from_inputs;  // opset >= 11
  bool has_min = false;     // Clip-6 attributes; absent = unbounded
  bool has_max = false;
  float attr_min = 0;
  float attr_max = 0;
};

Status run_clip(KernelContext& ctx, const ClipConfig& cfg) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
  const DataType dt = x->dtype();
  if (!dtype_in(cfg.allowed, dt)) return unsupported_dtype(node, 0, dt);
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
  const int64_t n = x->element_count();
  const int threads = ctx.threads();
  auto run_typed = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T lo = std::numeric_limits<T>::lowest();
    T hi = std::numeric_limits<T>::max();
    if (cfg.bounds_from_inputs) {
      EDGEMM_RETURN_IF_ERROR(read_bound(ctx, 1, dt, lo));
      EDGEMM_RETURN_IF_ERROR(read_bound(ctx, 2, dt, hi));
    } else {
      if (cfg.has_min) lo = static_cast<T>(cfg.attr_min);
      if (cfg.has_max) hi = static_cast<T>(cfg.attr_max);
    }
    auto f = [lo, hi](T v) { return clamp_nan(v, lo, hi); };
    if (is_half(dt)) {
      if constexpr (std::is_same_v<T, float>) {
        unary_loop_half(x->data<uint16_t>(), y->data<uint16_t>(), n, dt == DataType::kBFloat16, threads, 1, f);
      }
    } else {
      unary_loop(x->data<T>(), y->data<T>(), n, threads, 1, f);
    }
    return Status::ok();
  };
  if (is_half(dt)) return run_typed(Tag<float>{});
  Status status = unsupported_dtype(node, 0, dt);
  dispatch(NumericTypes{}, dt, [&](auto tag) { status = run_typed(tag); });
  return status;
}

void add_clip(KernelRegistry& registry, int since, DTypeSet allowed) {
  registry.add("", "Clip", since, [since, allowed](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    ClipConfig cfg{allowed, since >= 11};
    if (!cfg.bounds_from_inputs) {
      cfg.has_min = info.node.has_attr("min");
      cfg.has_max = info.node.has_attr("max");
      EDGEMM_ASSIGN_OR_RETURN(cfg.attr_min, info.node.attr_float("min", cfg.attr_min));
      EDGEMM_ASSIGN_OR_RETURN(cfg.attr_max, info.node.attr_float("max", cfg.attr_max));
    }
    return make_fn_kernel([cfg](KernelContext& ctx) { return run_clip(ctx, cfg); });
  });
}

}  // namespace

void register_activation_kernels(KernelRegistry& registry) {
  constexpr DTypeSet kF = kFloatSet;
  constexpr DTypeSet kF13 = kFloatSet | kBFloat16Set;
  constexpr DTypeSet kF32 = dtype_bit(DataType::kFloat32);
  constexpr DTypeSet kPReluInts = dtype_bit(DataType::kInt32) | dtype_bit(DataType::kInt64) |
                                  dtype_bit(DataType::kUInt32) | dtype_bit(DataType::kUInt64);

  add_unary<Relu>(registry, "Relu", 6, kF);
  add_unary<Relu>(registry, "Relu", 13, kF13);
  add_unary<Relu>(registry, "Relu", 14, kF13 | kSignedSet);
  add_unary<LeakyRelu>(registry, "LeakyRelu", 6, kF, with_alpha<LeakyRelu>());
  add_unary<LeakyRelu>(registry, "LeakyRelu", 16, kF13, with_alpha<LeakyRelu>());
  add_prelu(registry, 6, kF);
  add_prelu(registry, 7, kF);
  add_prelu(registry, 9, kF | kPReluInts);
  add_prelu(registry, 16, kF13 | kPReluInts);
  add_unary<Elu>(registry, "Elu", 6, kF, with_alpha<Elu>());
  add_unary<Selu>(registry, "Selu", 6, kF, make_selu);
  add_unary<Celu>(registry, "Celu", 12, kF32, with_alpha<Celu>());
  add_unary<Sigmoid>(registry, "Sigmoid", 6, kF);
  add_unary<Sigmoid>(registry, "Sigmoid", 13, kF13);
  add_unary<HardSigmoid>(registry, "HardSigmoid", 6, kF, make_hard_sigmoid);
  add_unary<HardSwish>(registry, "HardSwish", 14, kF);
  add_unary<Tanh>(registry, "Tanh", 6, kF);
  add_unary<Tanh>(registry, "Tanh", 13, kF13);
  add_unary<Softplus>(registry, "Softplus", 1, kF);
  add_unary<Softsign>(registry, "Softsign", 1, kF);
  add_unary<Mish>(registry, "Mish", 18, kF);
  add_unary<Gelu>(registry, "Gelu", 20, kF13, make_gelu);
  add_unary<ThresholdedRelu>(registry, "ThresholdedRelu", 10, kF, with_alpha<ThresholdedRelu>());
  add_unary<Shrink>(registry, "Shrink", 9, kNumericSet, make_shrink);
  add_clip(registry, 6, kF);
  add_clip(registry, 11, kF);
  add_clip(registry, 12, kNumericSet);
  add_clip(registry, 13, kNumericSet | kBFloat16Set);
}

}  // namespace edgemm::kernels
