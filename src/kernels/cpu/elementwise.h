#pragma once
/// \file elementwise.h
/// Internal machinery shared by the elementwise kernel files (unary.cc, activation.cc,
/// binary.cc, variadic.cc, cast.cc): dtype sets per op version, dtype → C++ type dispatch,
/// float16/bfloat16 handling through float32, defined float → integer conversion, and the
/// numpy-style broadcast iteration ("Broadcasting in ONNX", multidirectional) that all
/// n-ary elementwise ops share.
///
/// Conventions: bool tensors are read and written as uint8_t (0 or 1; any non-zero byte
/// read counts as true), so no kernel ever loads a C++ `bool` from caller memory.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "kernels/cpu/common.h"
#include "kernels/kernel.h"

namespace edgemm::kernels::elementwise {

// ---------------------------------------------------------------------------------------
// dtype sets (bit i set ⇔ DataType value i allowed), mirroring the ONNX type constraints.

using DTypeSet = uint32_t;

constexpr DTypeSet dtype_bit(DataType d) { return DTypeSet{1} << static_cast<int>(d); }
inline bool dtype_in(DTypeSet set, DataType d) {
  const int v = static_cast<int>(d);
  return v >= 0 && v < 32 && (set & (DTypeSet{1} << v)) != 0;
}

inline constexpr DTypeSet kFloat16Set = dtype_bit(DataType::kFloat16);
inline constexpr DTypeSet kBFloat16Set = dtype_bit(DataType::kBFloat16);
inline constexpr DTypeSet kBoolSet = dtype_bit(DataType::kBool);
/// float16, float, double: the "T: float types" constraint of most ops before opset 13.
inline constexpr DTypeSet kFloatSet = kFloat16Set | dtype_bit(DataType::kFloat32) | dtype_bit(DataType::kFloat64);
inline constexpr DTypeSet kSignedSet = dtype_bit(DataType::kInt8) | dtype_bit(DataType::kInt16) |
                                       dtype_bit(DataType::kInt32) | dtype_bit(DataType::kInt64);
inline constexpr DTypeSet kUnsignedSet = dtype_bit(DataType::kUInt8) | dtype_bit(DataType::kUInt16) |
                                         dtype_bit(DataType::kUInt32) | dtype_bit(DataType::kUInt64);
/// uint8..uint64, int8..int64, float16, float, double (no bfloat16, no bool).
inline constexpr DTypeSet kNumericSet = kFloatSet | kSignedSet | kUnsignedSet;

// ---------------------------------------------------------------------------------------
// dtype → C++ type dispatch. Lists name the C++ types an op's code compiles for; the
// runtime DTypeSet decides what a given op version accepts.

template <typename... Ts>
struct TypeList {};
template <typename T>
struct Tag {
  using type = T;
};

using FloatTypes = TypeList<float, double>;
using SignedTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

/// ListHas<T, TypeList<...>>::value: whether the list names T.
template <typename T, typename List>
struct ListHas;
template <typename T, typename... Ts>
struct ListHas<T, TypeList<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};

template <typename T>
constexpr DataType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::kFloat64;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DataType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DataType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DataType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DataType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DataType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DataType::kUInt64;
  else
    static_assert(sizeof(T) == 0, "no DataType for this C++ type");
}

/// Calls fn(Tag<T>{}) for the T in `List` whose dtype is `dt`; false when none matches.
template <typename... Ts, typename Fn>
bool dispatch(TypeList<Ts...>, DataType dt, Fn&& fn) {
  (void)dt;
  return ((dt == dtype_of<Ts>() ? (fn(Tag<Ts>{}), true) : false) || ...);
}

inline bool is_half(DataType dt) { return dt == DataType::kFloat16 || dt == DataType::kBFloat16; }
inline float half_load(uint16_t v, bool bf16) { return bf16 ? bfloat16_to_float(v) : half_to_float(v); }
inline uint16_t half_store(float v, bool bf16) { return bf16 ? float_to_bfloat16(v) : float_to_half(v); }

// ---------------------------------------------------------------------------------------
// Defined conversions.

/// Floating → integer: truncates toward zero. Values inside int64 range reach narrower
/// targets modulo 2^bits (what x86 conversion + truncation and numpy give, e.g. -1.0 →
/// uint8 255); values outside saturate; NaN gives 0. Never undefined behaviour.
template <typename I, typename F>
I float_to_int(F x) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  if (std::isnan(x)) return I{0};
  const F t = std::trunc(x);
  const F two63 = F(9223372036854775808.0);
  if constexpr (std::is_same_v<I, uint64_t>) {
    if (t >= F(0) && t < two63 * F(2)) return static_cast<uint64_t>(t);
    if (t < F(0) && t >= -two63) return static_cast<uint64_t>(static_cast<int64_t>(t));
    return t < F(0) ? uint64_t{0} : std::numeric_limits<uint64_t>::max();
  } else {
    if (t >= -two63 && t < two63) return static_cast<I>(static_cast<int64_t>(t));
    return t < F(0) ? std::numeric_limits<I>::min() : std::numeric_limits<I>::max();
  }
}

/// Converts one value between native numeric types with the rules above (int → int is
/// modular, int → float rounds to nearest, float → float per IEEE).
template <typename To, typename From>
To convert_value(From v) {
  if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

/// Integer arithmetic modulo 2^bits (no signed overflow, no int promotion surprises).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

/// Clamps to [lo, hi] (lo first, so lo > hi yields hi, like numpy.clip); NaN passes through.
template <typename T>
T clamp_nan(T v, T lo, T hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// ---------------------------------------------------------------------------------------
// Kernel helpers.

/// Input `i`, or an InvalidModel error naming the node when the node lacks it.
Expected<const Tensor*> need_input(const KernelContext& ctx, int i);

/// The node's value name for input `i` ("" when absent).
std::string input_name(const ir::Node& node, int i);

/// InvalidArgument when inputs `i` and `j` have different dtypes (ops with one type T).
Status check_same_dtype(const ir::Node& node, const Tensor& a, int i, const Tensor& b, int j);

/// A kernel whose behaviour is fixed at compile: wraps a callable `Status(KernelContext&)`.
template <typename Fn>
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(Fn fn) : fn_(std::move(fn)) {}
  Status run(KernelContext& ctx) const override { return fn_(ctx); }

 private:
  Fn fn_;
};

template <typename Fn>
Expected<std::unique_ptr<Kernel>> make_fn_kernel(Fn fn) {
  return std::unique_ptr<Kernel>(std::make_unique<FnKernel<Fn>>(std::move(fn)));
}

/// Copies `src` into a new float32 tensor (any numeric dtype or bool); used to run 16-bit
/// float inputs through the float32 code.
Expected<Tensor> to_float32(const ir::Node& node, const Tensor& src, int threads);

/// Converts every element of `src` into `dst` (same element count, any numeric/bool dtypes,
/// float16/bfloat16 included). Implemented in cast.cc; the rules of Cast apply.
Status convert_tensor(const ir::Node& node, const Tensor& src, Tensor& dst, int threads);

// ---------------------------------------------------------------------------------------
// Broadcast iteration.

/// Iteration plan for N inputs broadcast to one output: unit axes dropped, adjacent axes
/// merged when every input is contiguous or broadcast across both. The output is walked as
/// `outer` rows of `inner` elements; input k advances by inner_stride[k] (0 or 1) inside a row.
struct BroadcastPlan {
  int n = 0;          ///< number of inputs
  int64_t outer = 1;  ///< product of outer_dims
  int64_t inner = 1;  ///< extent of the innermost merged axis
  std::vector<int64_t> outer_dims;
  std::vector<int64_t> strides;  ///< [k * outer_dims.size() + d]: input k, outer axis d
  std::vector<int64_t> inner_stride;
};

/// Builds a plan; each input shape must broadcast to `out` (checked by the caller).
BroadcastPlan make_broadcast_plan(const Shape& out, const std::vector<const Shape*>& inputs);

/// Output shape of numpy-broadcasting all inputs; InvalidArgument naming the node otherwise.
Expected<Shape> broadcast_all(const ir::Node& node, const std::vector<const Tensor*>& inputs);

/// Calls fn(out_offset, in_offsets[N], len) for contiguous runs covering the whole output,
/// split across `threads` (large rows are split too). `cost` is per element.
template <int N, typename Fn>
void for_each_run(const BroadcastPlan& p, int threads, int64_t cost, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(p.outer_dims.size());
  // Split rows into blocks when there are too few rows to keep the threads busy.
  int64_t block = p.inner;
  if (threads > 1 && p.outer < 4 * threads && p.inner > 8192) {
    const int64_t parts = 4 * threads / (p.outer > 0 ? p.outer : 1) + 1;
    block = (p.inner + parts - 1) / parts;
    block = (block + 63) / 64 * 64;
  }
  if (block <= 0) block = 1;
  const int64_t blocks_per_row = (p.inner + block - 1) / block;
  const int64_t tasks = p.outer * blocks_per_row;
  parallel_for(threads, tasks, cost * block, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    int64_t off[N];
    int64_t row = begin / blocks_per_row;
    int64_t blk = begin % blocks_per_row;
    for (int k = 0; k < N; ++k) off[k] = 0;
    int64_t rem = row;
    for (int64_t d = rank - 1; d >= 0; --d) {
      idx[d] = rem % p.outer_dims[d];
      rem /= p.outer_dims[d];
      for (int k = 0; k < N; ++k) off[k] += idx[d] * p.strides[k * rank + d];
    }
    int64_t run_off[N];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t start = blk * block;
      const int64_t len = start + block <= p.inner ? block : p.inner - start;
      for (int k = 0; k < N; ++k) run_off[k] = off[k] + start * p.inner_stride[k];
      fn(row * p.inner + start, static_cast<const int64_t*>(run_off), len);
      if (++blk == blocks_per_row) {
        blk = 0;
        ++row;
        for (int64_t d = rank - 1; d >= 0; --d) {
          ++idx[d];
          for (int k = 0; k < N; ++k) off[k] += p.strides[k * rank + d];
          if (idx[d] < p.outer_dims[d]) break;
          for (int k = 0; k < N; ++k) off[k] -= p.strides[k * rank + d] * p.outer_dims[d];
          idx[d] = 0;
        }
      }
    }
  });
}

/// out[i] = f(a[ia], b[ib]) over a broadcast plan with two inputs. `a` may alias `out` when
/// it already has the output's shape (in-place accumulation).
template <typename A, typename B, typename O, typename F>
void binary_loop(const BroadcastPlan& p, const A* a, const B* b, O* out, int threads, int64_t cost, F f) {
  for_each_run<2>(p, threads, cost, [&](int64_t o, const int64_t* in, int64_t len) {
    const A* pa = a + in[0];
    const B* pb = b + in[1];
    O* po = out + o;
    const bool sa = p.inner_stride[0] != 0, sb = p.inner_stride[1] != 0;
    if (sa && sb) {
      for (int64_t i = 0; i < len; ++i) po[i] = f(pa[i], pb[i]);
    } else if (sa) {
      const B vb = *pb;
      for (int64_t i = 0; i < len; ++i) po[i] = f(pa[i], vb);
    } else if (sb) {
      const A va = *pa;
      for (int64_t i = 0; i < len; ++i) po[i] = f(va, pb[i]);
    } else {
      const O v = f(*pa, *pb);
      for (int64_t i = 0; i < len; ++i) po[i] = v;
    }
  });
}

/// Contiguous unary map y[i] = f(x[i]) split across threads.
template <typename In, typename Out, typename F>
void unary_loop(const In* x, Out* y, int64_t n, int threads, int64_t cost, F f) {
  parallel_for(threads, n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

/// Unary map over float16/bfloat16 storage through float32, in stack-sized chunks.
/// `Out` is uint16_t (same 16-bit type out) or uint8_t (bool predicates).
template <typename Out, typename F>
void unary_loop_half(const uint16_t* x, Out* y, int64_t n, bool bf16, int threads, int64_t cost, F f) {
  parallel_for(threads, n, cost, [&](int64_t begin, int64_t end) {
    constexpr int64_t kChunk = 256;
    float buf[kChunk];
    for (int64_t c = begin; c < end; c += kChunk) {
      const int64_t len = end - c < kChunk ? end - c : kChunk;
      for (int64_t i = 0; i < len; ++i) buf[i] = half_load(x[c + i], bf16);
      if constexpr (std::is_same_v<Out, uint16_t>) {
        for (int64_t i = 0; i < len; ++i) y[c + i] = half_store(f(buf[i]), bf16);
      } else {
        for (int64_t i = 0; i < len; ++i) y[c + i] = static_cast<Out>(f(buf[i]));
      }
    }
  });
}

// ---------------------------------------------------------------------------------------
// Generic unary kernel.

/// Runs `Op` elementwise on input 0 into output 0 of the same shape. `Op` provides
///   `using Types = TypeList<...>;`   C++ types its operator() compiles for (float included
///                                     when float16/bfloat16 are allowed: they run as float),
///   `static constexpr int64_t kCost;` rough cost per element (1 = an add) for threading,
///   `static constexpr bool kPredicate;` true when the output is bool (IsNaN, IsInf),
///   `template <typename T> auto operator()(T x) const`.
/// Dtypes outside `allowed` (the op version's type constraint) give unsupported_dtype.
template <typename Op>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(Op op, DTypeSet allowed) : op_(std::move(op)), allowed_(allowed) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    const DataType dt = x->dtype();
    if (!dtype_in(allowed_, dt)) return unsupported_dtype(node, 0, dt);
    const DataType out_dt = Op::kPredicate ? DataType::kBool : dt;
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, x->shape()));
    const int64_t n = x->element_count();
    const int threads = ctx.threads();
    if (is_half(dt)) {
      const bool bf16 = dt == DataType::kBFloat16;
      auto f = [this](float v) { return op_(v); };
      if constexpr (Op::kPredicate) {
        unary_loop_half(x->data<uint16_t>(), y->data<uint8_t>(), n, bf16, threads, Op::kCost, f);
      } else {
        unary_loop_half(x->data<uint16_t>(), y->data<uint16_t>(), n, bf16, threads, Op::kCost, f);
      }
      return Status::ok();
    }
    const bool done = dispatch(typename Op::Types{}, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using O = std::conditional_t<Op::kPredicate, uint8_t, T>;
      unary_loop(x->data<T>(), y->data<O>(), n, threads, Op::kCost, [this](T v) { return static_cast<O>(op_(v)); });
    });
    return done ? Status::ok() : unsupported_dtype(node, 0, dt);
  }

 private:
  Op op_;
  DTypeSet allowed_;
};

/// Registers a UnaryKernel<Op> built by `make(const KernelInfo&) -> Expected<Op>` (which
/// reads the node's attributes) for the ONNX default domain from `since_version`.
template <typename Op, typename Make>
void add_unary(KernelRegistry& registry, const char* op_type, int since_version, DTypeSet allowed, Make make) {
  registry.add("", op_type, since_version,
               [make, allowed](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
                 EDGEMM_ASSIGN_OR_RETURN(Op op, make(info));
                 return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel<Op>>(std::move(op), allowed));
               });
}

/// add_unary for ops without attributes.
template <typename Op>
void add_unary(KernelRegistry& registry, const char* op_type, int since_version, DTypeSet allowed) {
  add_unary<Op>(registry, op_type, since_version, allowed, [](const KernelInfo&) -> Expected<Op> { return Op{}; });
}

}  // namespace edgemm::kernels::elementwise
