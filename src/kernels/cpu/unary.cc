/// \file unary.cc
/// Unary math kernels of the default ONNX domain (Operators.md, opsets 7–17):
/// Abs, Neg, Reciprocal, Floor, Ceil, Round, Sign, Sqrt, Exp, Log, Erf, Sin, Cos, Tan, Asin,
/// Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, IsNaN, IsInf, Not.
///
/// Versions and type constraints follow the ONNX 1.12 schemas:
/// - Abs-6/13, Sign-9/13, Erf-9/13: all integer types plus float16/float/double (13 adds
///   bfloat16). Integer Erf computes in double and truncates (the result is -1, 0 or 1).
///   Abs and Neg of the most negative integer wrap (two's complement), as in C/numpy.
/// - Neg-6/13: signed integers and float types (13 adds bfloat16).
/// - Reciprocal, Floor, Ceil, Sqrt, Exp, Log -6/13; Round-11 (halves to even, like
///   numpy.round); Sin, Cos, Tan, Asin, Acos, Atan -7; Sinh, Cosh, Asinh, Acosh, Atanh -9:
///   float16/float/double (13 adds bfloat16 where the spec has a 13 version).
/// - IsNaN-9/13 (float16/float/double, 13 adds bfloat16) and IsInf-10 (float/double; the
///   detect_positive / detect_negative attributes, default 1) return bool.
/// - Not-1: bool.
/// float16 and bfloat16 are computed in float32 and rounded back to nearest even.
/// Sign of NaN is NaN; Sign of ±0 is 0.

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

using namespace elementwise;  // NOLINT: kernel-internal helpers

/// Two's-complement negation without signed overflow.
template <typename T>
T wrap_negate(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
}

struct Abs {
  using Types = NumericTypes;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrap_negate(x) : x;
    else
      return x;
  }
};

struct Neg {
  using Types = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return -x;
    else
      return wrap_negate(x);
  }
};

struct Sign {
  using Types = NumericTypes;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((x > 0) - (x < 0));
    } else {
      return static_cast<T>(x > 0);
    }
  }
};

struct Erf {
  using Types = NumericTypes;
  static constexpr int64_t kCost = 16;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::erf(x);
    else
      return float_to_int<T>(std::erf(static_cast<double>(x)));
  }
};

/// Float-only unary op from a function object on float/double.
#define EDGEMM_FLOAT_UNARY(NAME, COST, EXPR)  \
  struct NAME {                               \
    using Types = FloatTypes;                 \
    static constexpr int64_t kCost = COST;    \
    static constexpr bool kPredicate = false; \
    template <typename T>                     \
    T operator()(T x) const {                 \
      return EXPR;                            \
    }                                         \
  }

EDGEMM_FLOAT_UNARY(Reciprocal, 2, T(1) / x);
EDGEMM_FLOAT_UNARY(Floor, 1, std::floor(x));
EDGEMM_FLOAT_UNARY(Ceil, 1, std::ceil(x));
// nearbyint rounds halves to even in the default rounding mode (FE_TONEAREST).
EDGEMM_FLOAT_UNARY(Round, 1, std::nearbyint(x));
EDGEMM_FLOAT_UNARY(Sqrt, 4, std::sqrt(x));
EDGEMM_FLOAT_UNARY(Exp, 12, std::exp(x));
EDGEMM_FLOAT_UNARY(Log, 12, std::log(x));
EDGEMM_FLOAT_UNARY(Sin, 16, std::sin(x));
EDGEMM_FLOAT_UNARY(Cos, 16, std::cos(x));
EDGEMM_FLOAT_UNARY(Tan, 20, std::tan(x));
EDGEMM_FLOAT_UNARY(Asin, 20, std::asin(x));
EDGEMM_FLOAT_UNARY(Acos, 20, std::acos(x));
EDGEMM_FLOAT_UNARY(Atan, 20, std::atan(x));
EDGEMM_FLOAT_UNARY(Sinh, 20, std::sinh(x));
EDGEMM_FLOAT_UNARY(Cosh, 20, std::cosh(x));
EDGEMM_FLOAT_UNARY(Asinh, 20, std::asinh(x));
EDGEMM_FLOAT_UNARY(Acosh, 20, std::acosh(x));
EDGEMM_FLOAT_UNARY(Atanh, 20, std::atanh(x));

#undef EDGEMM_FLOAT_UNARY

struct IsNaN {
  using Types = FloatTypes;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = true;
  template <typename T>
  bool operator()(T x) const {
    return std::isnan(x);
  }
};

struct IsInf {
  using Types = FloatTypes;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = true;
  bool detect_positive = true;
  bool detect_negative = true;
  template <typename T>
  bool operator()(T x) const {
    return std::isinf(x) && (x > 0 ? detect_positive : detect_negative);
  }
};

Expected<IsInf> make_is_inf(const KernelInfo& info) {
  IsInf op;
  EDGEMM_ASSIGN_OR_RETURN(int64_t pos, info.node.attr_int("detect_positive", 1));
  EDGEMM_ASSIGN_OR_RETURN(int64_t neg, info.node.attr_int("detect_negative", 1));
  op.detect_positive = pos != 0;
  op.detect_negative = neg != 0;
  return op;
}

/// Not-1: logical negation of a bool tensor.
Status run_not(KernelContext& ctx) {
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
  if (x->dtype() != DataType::kBool) return unsupported_dtype(ctx.node(), 0, x->dtype());
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, x->shape()));
  unary_loop(x->data<uint8_t>(), y->data<uint8_t>(), x->element_count(), ctx.threads(), 1,
             [](uint8_t v) { return static_cast<uint8_t>(v == 0); });
  return Status::ok();
}

}  // namespace

void register_unary_kernels(KernelRegistry& registry) {
  constexpr DTypeSet kF = kFloatSet;
  constexpr DTypeSet kF13 = kFloatSet | kBFloat16Set;
  constexpr DTypeSet kAll = kNumericSet;
  constexpr DTypeSet kAll13 = kNumericSet | kBFloat16Set;
  constexpr DTypeSet kNeg = kFloatSet | kSignedSet;

  add_unary<Abs>(registry, "Abs", 6, kAll);
  add_unary<Abs>(registry, "Abs", 13, kAll13);
  add_unary<Neg>(registry, "Neg", 6, kNeg);
  add_unary<Neg>(registry, "Neg", 13, kNeg | kBFloat16Set);
  add_unary<Sign>(registry, "Sign", 9, kAll);
  add_unary<Sign>(registry, "Sign", 13, kAll13);
  add_unary<Erf>(registry, "Erf", 9, kAll);
  add_unary<Erf>(registry, "Erf", 13, kAll13);

  add_unary<Reciprocal>(registry, "Reciprocal", 6, kF);
  add_unary<Reciprocal>(registry, "Reciprocal", 13, kF13);
  add_unary<Floor>(registry, "Floor", 6, kF);
  add_unary<Floor>(registry, "Floor", 13, kF13);
  add_unary<Ceil>(registry, "Ceil", 6, kF);
  add_unary<Ceil>(registry, "Ceil", 13, kF13);
  add_unary<Sqrt>(registry, "Sqrt", 6, kF);
  add_unary<Sqrt>(registry, "Sqrt", 13, kF13);
  add_unary<Exp>(registry, "Exp", 6, kF);
  add_unary<Exp>(registry, "Exp", 13, kF13);
  add_unary<Log>(registry, "Log", 6, kF);
  add_unary<Log>(registry, "Log", 13, kF13);
  add_unary<Round>(registry, "Round", 11, kF);

  add_unary<Sin>(registry, "Sin", 7, kF);
  add_unary<Cos>(registry, "Cos", 7, kF);
  add_unary<Tan>(registry, "Tan", 7, kF);
  add_unary<Asin>(registry, "Asin", 7, kF);
  add_unary<Acos>(registry, "Acos", 7, kF);
  add_unary<Atan>(registry, "Atan", 7, kF);
  add_unary<Sinh>(registry, "Sinh", 9, kF);
  add_unary<Cosh>(registry, "Cosh", 9, kF);
  add_unary<Asinh>(registry, "Asinh", 9, kF);
  add_unary<Acosh>(registry, "Acosh", 9, kF);
  add_unary<Atanh>(registry, "Atanh", 9, kF);

  add_unary<IsNaN>(registry, "IsNaN", 9, kF);
  add_unary<IsNaN>(registry, "IsNaN", 13, kF13);
  add_unary<IsInf>(registry, "IsInf", 10, dtype_bit(DataType::kFloat32) | dtype_bit(DataType::kFloat64), make_is_inf);
  registry.add("", "Not", 1, [](const KernelInfo&) { return make_fn_kernel(run_not); });
}

}  // namespace edgemm::kernels
