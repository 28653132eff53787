/// \file binary.cc
/// Binary elementwise kernels of the default ONNX domain with multidirectional (numpy)
/// broadcasting ("Broadcasting in ONNX"), opsets 7–18: arithmetic Add, Sub, Mul, Div, Pow,
/// Mod, BitShift; logic And, Or, Xor; bitwise BitwiseAnd, BitwiseOr, BitwiseXor (and the unary
/// BitwiseNot); comparisons Equal, Less, Greater, LessOrEqual, GreaterOrEqual. All share one
/// broadcast loop (elementwise.h).
///
/// Versions and type constraints follow the ONNX 1.12 schemas:
/// - Add, Sub, Mul, Div -7/13/14: 7 is int32/int64/uint32/uint64 and float types, 13 adds
///   bfloat16, 14 adds int8/int16/uint8/uint16. Integer results wrap modulo 2^bits; integer
///   Div truncates toward zero (C, as ONNX Runtime does); an integer divisor of 0 is an
///   InvalidArgument error instead of a crash.
/// - Pow-7: base and exponent of one float type. Pow-12/13/15: base T (int32, int64, float
///   types; 13 adds bfloat16) and exponent T1 (any integer or float type; 15 adds bfloat16);
///   the output has the base's type. Integer^integer is exact by repeated squaring (wrapping;
///   negative exponents give 1, ±1 or 0 as the truncated real result, and 0 for base 0);
///   other mixes compute in double (float^float in float) and convert with Cast's rules.
/// - Mod-10/13 (13 adds bfloat16): fmod=0 (default) is Python's %, the result takes the
///   divisor's sign, integers only (floats with fmod=0 are an InvalidArgument error);
///   fmod=1 is C fmod / %, the result takes the dividend's sign.
/// - BitShift-11: uint8..uint64, direction "LEFT" or "RIGHT" (required); shifting by the
///   bit width or more gives 0.
/// - And, Or, Xor -7: bool.
/// - BitwiseAnd, BitwiseOr, BitwiseXor -18 (broadcasting) and BitwiseNot-18 (unary, output of
///   the input's shape): int8..int64, uint8..uint64, two's complement bits; other dtypes
///   (bool, floats) are unsupported_dtype errors.
/// - Equal-7: bool/int32/int64; Equal-11 adds the other integer and float types; 13 adds
///   bfloat16. Less, Greater -7: float types; -9 all integer and float types; -13 bfloat16.
///   LessOrEqual, GreaterOrEqual -12; -16 adds bfloat16. Comparisons with NaN are false
///   (Equal: NaN != NaN).
/// float16/bfloat16 inputs compute in float32 and round back to nearest even.
/// Older exports (pytorch-operator tests) also get Add/Sub/Mul/Div-6, Pow-1, And/Or/Xor-1,
/// Equal/Less/Greater-1: attribute broadcast=1 broadcasts B onto A, B's shape matching a
/// contiguous run of A's starting at `axis` (suffix when absent); broadcast=0 needs equal shapes.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/elementwise_chain.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

using namespace elementwise;  // NOLINT: kernel-internal helpers

// Functors. kPredicate: bool output. kBoolInputs: accepts bool inputs (as C++ bool).
// kIntDivisor: integer zero divisors must be rejected before the loop.
struct ArithBase {
  using Types = NumericTypes;
  static constexpr bool kPredicate = false;
  static constexpr bool kBoolInputs = false;
  static constexpr bool kIntDivisor = false;
  static constexpr int64_t kCost = 1;
};

struct AddOp : ArithBase {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};
struct SubOp : ArithBase {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrap_sub(a, b);
    else
      return a - b;
  }
};
struct MulOp : ArithBase {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrap_mul(a, b);
    else
      return a * b;
  }
};
struct DivOp : ArithBase {
  static constexpr bool kIntDivisor = true;
  static constexpr int64_t kCost = 4;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (b == T(-1)) return wrap_sub(T(0), a);  // INT_MIN / -1 wraps instead of trapping
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
};

/// Mod with fmod=1: remainder with the dividend's sign.
struct FmodOp : ArithBase {
  static constexpr bool kIntDivisor = true;
  static constexpr int64_t kCost = 8;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
      }
      return static_cast<T>(a % b);
    }
  }
};

/// Mod with fmod=0 (integers only): remainder with the divisor's sign.
struct PyModOp : ArithBase {
  using Types = IntTypes;
  static constexpr bool kIntDivisor = true;
  static constexpr int64_t kCost = 8;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  }
};

struct ShiftBase : ArithBase {
  using Types = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
};
struct ShiftLeftOp : ShiftBase {
  template <typename T>
  T operator()(T a, T b) const {
    return b >= sizeof(T) * 8 ? T(0) : static_cast<T>(static_cast<WrapType<T>>(a) << b);
  }
};
struct ShiftRightOp : ShiftBase {
  template <typename T>
  T operator()(T a, T b) const {
    return b >= sizeof(T) * 8 ? T(0) : static_cast<T>(a >> b);
  }
};

struct BitwiseBase : ArithBase {
  using Types = IntTypes;
};
struct BitwiseAndOp : BitwiseBase {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitwiseOrOp : BitwiseBase {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitwiseXorOp : BitwiseBase {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
/// BitwiseNot-18, run by elementwise::UnaryKernel.
struct BitwiseNotOp {
  using Types = IntTypes;
  static constexpr int64_t kCost = 1;
  static constexpr bool kPredicate = false;
  template <typename T>
  T operator()(T x) const {
    // UnaryKernel also compiles a float path for 16-bit floats, never taken (not in the dtype set).
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(~x);
    } else {
      return x;
    }
  }
};

struct LogicBase {
  using Types = TypeList<>;
  static constexpr bool kPredicate = true;
  static constexpr bool kBoolInputs = true;
  static constexpr bool kIntDivisor = false;
  static constexpr int64_t kCost = 1;
};
struct AndOp : LogicBase {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : LogicBase {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : LogicBase {
  bool operator()(bool a, bool b) const { return a != b; }
};

struct CompareBase {
  using Types = NumericTypes;
  static constexpr bool kPredicate = true;
  static constexpr bool kBoolInputs = false;
  static constexpr bool kIntDivisor = false;
  static constexpr int64_t kCost = 1;
};
struct EqualOp : CompareBase {
  static constexpr bool kBoolInputs = true;
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct LessOp : CompareBase {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct GreaterOp : CompareBase {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct LessOrEqualOp : CompareBase {
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp : CompareBase {
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};

template <typename T>
Status check_no_zero(const ir::Node& node, const Tensor& b) {
  const T* p = b.data<T>();
  const int64_t n = b.element_count();
  bool zero = false;
  for (int64_t i = 0; i < n; ++i) zero |= p[i] == T(0);
  if (!zero) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "integer division by zero: divisor '" + input_name(node, 1) + "' contains 0");
}

/// Broadcasting of the opset 1–6 versions (Add-6, Pow-1, And-1, Equal-1, ...): with
/// broadcast=0 both shapes must match; with broadcast=1, B's shape is a contiguous run of A's
/// shape starting at `axis` (default: suffix matching), and B is broadcast onto A.
struct LegacyBroadcast {
  bool enabled = false;
  bool broadcast = false;
  bool has_axis = false;
  int64_t axis = 0;
};

Expected<LegacyBroadcast> read_legacy(const ir::Node& node, int since) {
  LegacyBroadcast l;
  if (since >= 7) return l;
  l.enabled = true;
  EDGEMM_ASSIGN_OR_RETURN(int64_t b, node.attr_int("broadcast", 0));
  l.broadcast = b != 0;
  l.has_axis = node.has_attr("axis");
  EDGEMM_ASSIGN_OR_RETURN(l.axis, node.attr_int("axis", 0));
  return l;
}

/// Shared front end: both inputs present, same dtype, dtype allowed, broadcastable. b_shape is
/// B's shape as the broadcast loop should see it (legacy broadcasting pads it with 1s).
struct Operands {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Shape b_shape;
  Shape shape;
};

Status legacy_b_shape(const ir::Node& node, const LegacyBroadcast& l, const Shape& a, Operands& ops) {
  const Shape& b = ops.b->shape();
  auto mismatch = [&](const std::string& why) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input '" + input_name(node, 1) + "' of shape " + shape_to_string(b) +
                              " cannot be broadcast onto " + shape_to_string(a) + ": " + why);
  };
  if (!l.broadcast) {
    if (a != b) return mismatch("shapes differ and attribute broadcast is 0");
    ops.b_shape = b;
    return Status::ok();
  }
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t start = ra - rb;
  if (l.has_axis) {
    EDGEMM_ASSIGN_OR_RETURN(start, normalize_axis(node, l.axis, ra > 0 ? ra : 1));
  }
  if (rb > ra || start < 0 || start + rb > ra) {
    return mismatch("it does not fit at axis " + std::to_string(start));
  }
  for (int64_t i = 0; i < rb; ++i) {
    if (b[i] != a[start + i] && b[i] != 1) return mismatch("extent mismatch");
  }
  ops.b_shape = b;
  ops.b_shape.resize(static_cast<size_t>(ra - start), 1);
  return Status::ok();
}

Expected<Operands> prepare(KernelContext& ctx, DTypeSet allowed, bool same_dtype, const LegacyBroadcast& legacy) {
  const ir::Node& node = ctx.node();
  Operands ops;
  EDGEMM_ASSIGN_OR_RETURN(ops.a, need_input(ctx, 0));
  EDGEMM_ASSIGN_OR_RETURN(ops.b, need_input(ctx, 1));
  if (!dtype_in(allowed, ops.a->dtype())) return unsupported_dtype(node, 0, ops.a->dtype());
  if (same_dtype) EDGEMM_RETURN_IF_ERROR(check_same_dtype(node, *ops.a, 0, *ops.b, 1));
  ops.b_shape = ops.b->shape();
  if (legacy.enabled) EDGEMM_RETURN_IF_ERROR(legacy_b_shape(node, legacy, ops.a->shape(), ops));
  EDGEMM_ASSIGN_OR_RETURN(ops.shape, broadcast_shapes(node, ops.a->shape(), ops.b_shape));
  return ops;
}

/// The ElementwiseChain step computing Op on float32 with the same formula, if there is one: those
/// ops run float32 through the chain's tiled loop (vectorized, and fast for broadcasts with short
/// rows such as a per-channel operand of an nChw8c tensor) instead of binary_loop.
template <typename Op>
constexpr std::optional<ir::StepKind> chain_step() {
  if constexpr (std::is_same_v<Op, AddOp>) return ir::StepKind::kAdd;
  if constexpr (std::is_same_v<Op, SubOp>) return ir::StepKind::kSub;
  if constexpr (std::is_same_v<Op, MulOp>) return ir::StepKind::kMul;
  if constexpr (std::is_same_v<Op, DivOp>) return ir::StepKind::kDiv;
  return std::nullopt;
}

template <typename Op>
Status run_binary(KernelContext& ctx, const Op& op, DTypeSet allowed, const LegacyBroadcast& legacy = {}) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(Operands in, prepare(ctx, allowed, true, legacy));
  const DataType dt = in.a->dtype();
  const DataType out_dt = Op::kPredicate ? DataType::kBool : dt;
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, in.shape));
  const int threads = ctx.threads();
  if constexpr (chain_step<Op>().has_value()) {
    if (dt == DataType::kFloat32 && !legacy.enabled) {
      const ir::Step step{*chain_step<Op>(), 0.f, 0.f, 1};
      run_elementwise_chain({step}, {in.a, in.b}, in.shape, y->data<float>(), threads);
      return Status::ok();
    }
  }
  const BroadcastPlan plan = make_broadcast_plan(in.shape, {&in.a->shape(), &in.b_shape});

  if (dt == DataType::kBool) {
    if constexpr (Op::kBoolInputs) {
      binary_loop(plan, in.a->data<uint8_t>(), in.b->data<uint8_t>(), y->data<uint8_t>(), threads, 1,
                  [&op](uint8_t a, uint8_t b) { return static_cast<uint8_t>(op(bool(a != 0), bool(b != 0))); });
      return Status::ok();
    }
    return unsupported_dtype(node, 0, dt);
  }
  if (is_half(dt)) {
    if constexpr (ListHas<float, typename Op::Types>::value) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor a32, to_float32(node, *in.a, threads));
      EDGEMM_ASSIGN_OR_RETURN(Tensor b32, to_float32(node, *in.b, threads));
      if constexpr (Op::kPredicate) {
        binary_loop(plan, a32.data<float>(), b32.data<float>(), y->data<uint8_t>(), threads, Op::kCost,
                    [&op](float a, float b) { return static_cast<uint8_t>(op(a, b)); });
        return Status::ok();
      } else {
        EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, in.shape));
        binary_loop(plan, a32.data<float>(), b32.data<float>(), y32.data<float>(), threads, Op::kCost, op);
        return convert_tensor(node, y32, *y, threads);
      }
    }
    return unsupported_dtype(node, 0, dt);
  }
  Status status = unsupported_dtype(node, 0, dt);
  dispatch(typename Op::Types{}, dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<Op::kPredicate, uint8_t, T>;
    if constexpr (Op::kIntDivisor && std::is_integral_v<T>) {
      status = check_no_zero<T>(node, *in.b);
      if (!status.is_ok()) return;
    }
    binary_loop(plan, in.a->data<T>(), in.b->data<T>(), y->data<O>(), threads, Op::kCost,
                [&op](T a, T b) { return static_cast<O>(op(a, b)); });
    status = Status::ok();
  });
  return status;
}

template <typename Op>
void add_binary(KernelRegistry& registry, const char* op_type, int since, DTypeSet allowed, Op op = Op{}) {
  registry.add("", op_type, since, [op, allowed, since](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(LegacyBroadcast legacy, read_legacy(info.node, since));
    return make_fn_kernel([op, allowed, legacy](KernelContext& ctx) { return run_binary(ctx, op, allowed, legacy); });
  });
}

// ---------------------------------------------------------------------------------------
// Mod, BitShift (attributes)

void add_mod(KernelRegistry& registry, int since, DTypeSet allowed) {
  registry.add("", "Mod", since, [allowed](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(int64_t fmod, info.node.attr_int("fmod", 0));
    if (fmod != 0) {
      return make_fn_kernel([allowed](KernelContext& ctx) { return run_binary(ctx, FmodOp{}, allowed); });
    }
    return make_fn_kernel([allowed](KernelContext& ctx) -> Status {
      const Tensor* a = ctx.input(0);
      if (a != nullptr &&
          (is_half(a->dtype()) || a->dtype() == DataType::kFloat32 || a->dtype() == DataType::kFloat64)) {
        return ir::node_error(
            ctx.node(), StatusCode::kInvalidArgument,
            std::string("fmod must be 1 for floating inputs, ") + "got fmod=0 with dtype " + dtype_name(a->dtype()));
      }
      return run_binary(ctx, PyModOp{}, allowed);
    });
  });
}

void add_bitshift(KernelRegistry& registry, DTypeSet allowed) {
  registry.add("", "BitShift", 11, [allowed](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(std::string dir, info.node.attr_string("direction", ""));
    if (dir == "LEFT") {
      return make_fn_kernel([allowed](KernelContext& ctx) { return run_binary(ctx, ShiftLeftOp{}, allowed); });
    }
    if (dir == "RIGHT") {
      return make_fn_kernel([allowed](KernelContext& ctx) { return run_binary(ctx, ShiftRightOp{}, allowed); });
    }
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" + dir + "\"");
  });
}

// ---------------------------------------------------------------------------------------
// Pow

/// x^e for integer x and e by repeated squaring, wrapping modulo 2^bits.
template <typename T>
T int_pow(T x, int64_t e) {
  if (e < 0) {
    if (x == T(1)) return T(1);
    if (x == T(-1)) return (e & 1) ? T(-1) : T(1);
    return T(0);
  }
  T result = T(1);
  T base = x;
  while (e != 0) {
    if (e & 1) result = wrap_mul(result, base);
    e >>= 1;
    if (e != 0) base = wrap_mul(base, base);
  }
  return result;
}

struct PowConfig {
  DTypeSet base_allowed;
  DTypeSet exp_allowed;
  bool same_type;  // Pow-1/7: one type T for both inputs
  LegacyBroadcast legacy = {};
};

/// Converts `t` to `dt` in a new tensor unless it already has that dtype.
Expected<Tensor> as_dtype(const ir::Node& node, const Tensor& t, DataType dt, int threads) {
  if (t.dtype() == dt) return t;
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(dt, t.shape()));
  EDGEMM_RETURN_IF_ERROR(convert_tensor(node, t, out, threads));
  return out;
}

Status run_pow(KernelContext& ctx, const PowConfig& cfg) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(Operands in, prepare(ctx, cfg.base_allowed, cfg.same_type, cfg.legacy));
  if (!dtype_in(cfg.exp_allowed, in.b->dtype())) return unsupported_dtype(node, 1, in.b->dtype());
  const int threads = ctx.threads();
  const DataType out_dt = in.a->dtype();
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, in.shape));
  const BroadcastPlan plan = make_broadcast_plan(in.shape, {&in.a->shape(), &in.b_shape});

  // 16-bit float bases compute in float32; the exponent follows the base where it can.
  const bool half_base = is_half(out_dt);
  const DataType base_dt = half_base ? DataType::kFloat32 : out_dt;
  EDGEMM_ASSIGN_OR_RETURN(Tensor base, as_dtype(node, *in.a, base_dt, threads));
  Tensor result = *y;
  if (half_base) {
    EDGEMM_ASSIGN_OR_RETURN(result, Tensor::create(DataType::kFloat32, in.shape));
  }
  const DataType e_dt = in.b->dtype();
  const bool e_float = is_half(e_dt) || e_dt == DataType::kFloat32 || e_dt == DataType::kFloat64;
  Status status = unsupported_dtype(node, 0, out_dt);
  auto run_typed = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = base.data<T>();
    T* out = result.data<T>();
    if constexpr (std::is_floating_point_v<T>) {
      if (e_dt == base_dt || (is_half(e_dt) && base_dt == DataType::kFloat32)) {
        auto e = as_dtype(node, *in.b, base_dt, threads);
        if (!e) return void(status = e.status());
        const T* pe = e->template data<T>();
        if (e->element_count() == 1 && pe[0] == T(2)) {
          binary_loop(plan, x, pe, out, threads, 1, [](T v, T) { return v * v; });
        } else {
          binary_loop(plan, x, pe, out, threads, 12, [](T v, T p) { return std::pow(v, p); });
        }
      } else {
        auto e = as_dtype(node, *in.b, DataType::kFloat64, threads);
        if (!e) return void(status = e.status());
        binary_loop(plan, x, e->template data<double>(), out, threads, 12,
                    [](T v, double p) { return static_cast<T>(std::pow(static_cast<double>(v), p)); });
      }
    } else if (e_float) {
      auto e = as_dtype(node, *in.b, DataType::kFloat64, threads);
      if (!e) return void(status = e.status());
      binary_loop(plan, x, e->template data<double>(), out, threads, 12,
                  [](T v, double p) { return float_to_int<T>(std::pow(static_cast<double>(v), p)); });
    } else {
      auto e = as_dtype(node, *in.b, DataType::kInt64, threads);
      if (!e) return void(status = e.status());
      binary_loop(plan, x, e->template data<int64_t>(), out, threads, 8, [](T v, int64_t p) { return int_pow(v, p); });
    }
    status = Status::ok();
  };
  dispatch(TypeList<float, double, int32_t, int64_t>{}, base_dt, run_typed);
  EDGEMM_RETURN_IF_ERROR(status);
  if (half_base) return convert_tensor(node, result, *y, threads);
  return Status::ok();
}

void add_pow(KernelRegistry& registry, int since, PowConfig cfg) {
  registry.add("", "Pow", since, [cfg, since](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    PowConfig c = cfg;
    EDGEMM_ASSIGN_OR_RETURN(c.legacy, read_legacy(info.node, since));
    return make_fn_kernel([c](KernelContext& ctx) { return run_pow(ctx, c); });
  });
}

void register_pow_kernels(KernelRegistry& registry) {
  constexpr DTypeSet kBase12 = kFloatSet | dtype_bit(DataType::kInt32) | dtype_bit(DataType::kInt64);
  add_pow(registry, 1, {kFloatSet, kFloatSet, true});
  add_pow(registry, 7, {kFloatSet, kFloatSet, true});
  add_pow(registry, 12, {kBase12, kNumericSet, false});
  add_pow(registry, 13, {kBase12 | kBFloat16Set, kNumericSet, false});
  add_pow(registry, 15, {kBase12 | kBFloat16Set, kNumericSet | kBFloat16Set, false});
}

}  // namespace

void register_binary_kernels(KernelRegistry& registry) {
  constexpr DTypeSet k7 = kFloatSet | dtype_bit(DataType::kInt32) | dtype_bit(DataType::kInt64) |
                          dtype_bit(DataType::kUInt32) | dtype_bit(DataType::kUInt64);
  constexpr DTypeSet k13 = k7 | kBFloat16Set;
  constexpr DTypeSet k14 = kNumericSet | kBFloat16Set;
  add_binary<AddOp>(registry, "Add", 6, k7);  // legacy broadcast attributes
  add_binary<AddOp>(registry, "Add", 7, k7);
  add_binary<AddOp>(registry, "Add", 13, k13);
  add_binary<AddOp>(registry, "Add", 14, k14);
  add_binary<SubOp>(registry, "Sub", 6, k7);  // legacy broadcast attributes
  add_binary<SubOp>(registry, "Sub", 7, k7);
  add_binary<SubOp>(registry, "Sub", 13, k13);
  add_binary<SubOp>(registry, "Sub", 14, k14);
  add_binary<MulOp>(registry, "Mul", 6, k7);  // legacy broadcast attributes
  add_binary<MulOp>(registry, "Mul", 7, k7);
  add_binary<MulOp>(registry, "Mul", 13, k13);
  add_binary<MulOp>(registry, "Mul", 14, k14);
  add_binary<DivOp>(registry, "Div", 6, k7);  // legacy broadcast attributes
  add_binary<DivOp>(registry, "Div", 7, k7);
  add_binary<DivOp>(registry, "Div", 13, k13);
  add_binary<DivOp>(registry, "Div", 14, k14);

  add_mod(registry, 10, kNumericSet);
  add_mod(registry, 13, kNumericSet | kBFloat16Set);
  add_bitshift(registry, kUnsignedSet);

  add_binary<AndOp>(registry, "And", 1, kBoolSet);
  add_binary<AndOp>(registry, "And", 7, kBoolSet);
  add_binary<OrOp>(registry, "Or", 1, kBoolSet);
  add_binary<OrOp>(registry, "Or", 7, kBoolSet);
  add_binary<XorOp>(registry, "Xor", 1, kBoolSet);
  add_binary<XorOp>(registry, "Xor", 7, kBoolSet);

  constexpr DTypeSet kInts = kSignedSet | kUnsignedSet;
  add_binary<BitwiseAndOp>(registry, "BitwiseAnd", 18, kInts);
  add_binary<BitwiseOrOp>(registry, "BitwiseOr", 18, kInts);
  add_binary<BitwiseXorOp>(registry, "BitwiseXor", 18, kInts);
  add_unary<BitwiseNotOp>(registry, "BitwiseNot", 18, kInts);

  constexpr DTypeSet kAll = kNumericSet;
  constexpr DTypeSet kAll13 = kNumericSet | kBFloat16Set;
  constexpr DTypeSet kEq7 = kBoolSet | dtype_bit(DataType::kInt32) | dtype_bit(DataType::kInt64);
  add_binary<EqualOp>(registry, "Equal", 1, kEq7);
  add_binary<EqualOp>(registry, "Equal", 7, kEq7);
  add_binary<EqualOp>(registry, "Equal", 11, kBoolSet | kAll);
  add_binary<EqualOp>(registry, "Equal", 13, kBoolSet | kAll13);
  add_binary<LessOp>(registry, "Less", 1, kFloatSet);
  add_binary<LessOp>(registry, "Less", 7, kFloatSet);
  add_binary<LessOp>(registry, "Less", 9, kAll);
  add_binary<LessOp>(registry, "Less", 13, kAll13);
  add_binary<GreaterOp>(registry, "Greater", 1, kFloatSet);
  add_binary<GreaterOp>(registry, "Greater", 7, kFloatSet);
  add_binary<GreaterOp>(registry, "Greater", 9, kAll);
  add_binary<GreaterOp>(registry, "Greater", 13, kAll13);
  add_binary<LessOrEqualOp>(registry, "LessOrEqual", 12, kAll);
  add_binary<LessOrEqualOp>(registry, "LessOrEqual", 16, kAll13);
  add_binary<GreaterOrEqualOp>(registry, "GreaterOrEqual", 12, kAll);
  add_binary<GreaterOrEqualOp>(registry, "GreaterOrEqual", 16, kAll13);

  register_pow_kernels(registry);
}

}  // namespace edgemm::kernels
