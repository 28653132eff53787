/// \file cast.cc
/// Cast and CastLike of the default ONNX domain (Operators.md, opsets 7–21), plus the
/// dtype conversion the other elementwise kernels use for float16/bfloat16.
///
/// Versions and type constraints follow the ONNX 1.12 schemas:
/// - Cast-6: from/to bool, int8..int64, uint8..uint64, float16, float, double.
///   Cast-9 adds string (not supported here: an Unsupported error). Cast-13 adds bfloat16.
/// - CastLike-15: casts input 0 to the dtype of input 1 (every type above; not string).
/// - Cast-19 / CastLike-19 add the float8 types and attribute saturate (default 1; it only
///   affects float8); -21 add int4 and uint4. edgemm has no tensors of these types: casting to
///   them is Unsupported (naming the type); saturate must be 0 or 1 and changes nothing here.
/// Conversion rules (the spec leaves out-of-range results undefined; ours are fixed):
/// - to bool: x != 0 (NaN is true); from bool: 0 or 1.
/// - floating → integer: truncate toward zero; values inside the int64 range wrap modulo
///   2^bits into narrower types (numpy on x86: -1.0 → uint8 255); beyond it, saturate;
///   NaN → 0.
/// - integer → integer: modulo 2^bits (two's complement), as numpy astype.
/// - to float16/bfloat16: via float32, rounding to nearest even (so double → float16 may
///   round twice); to float/double: IEEE round to nearest.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace elementwise {
namespace {

// Storage tags for the non-native element types.
struct BoolTag {};
struct F16Tag {};
struct BF16Tag {};

template <typename S>
struct Storage {
  using type = S;
};
template <>
struct Storage<BoolTag> {
  using type = uint8_t;
};
template <>
struct Storage<F16Tag> {
  using type = uint16_t;
};
template <>
struct Storage<BF16Tag> {
  using type = uint16_t;
};
template <typename S>
using StorageT = typename Storage<S>::type;

/// Loaded value: bool, float (for 16-bit floats) or the native type.
template <typename S>
auto load(StorageT<S> v) {
  if constexpr (std::is_same_v<S, BoolTag>)
    return v != 0;
  else if constexpr (std::is_same_v<S, F16Tag>)
    return half_to_float(v);
  else if constexpr (std::is_same_v<S, BF16Tag>)
    return bfloat16_to_float(v);
  else
    return v;
}

/// double → float with overflow to ±inf spelled out (no out-of-range conversion).
inline float narrow_to_float(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (v > kMax) {
    // Values that round down to FLT_MAX stay finite.
    return v < kMax + std::ldexp(1.0, 103) ? std::numeric_limits<float>::max() : std::numeric_limits<float>::infinity();
  }
  if (v < -kMax) {
    return v > -kMax - std::ldexp(1.0, 103) ? std::numeric_limits<float>::lowest()
                                            : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(v);
}

template <typename V>
float to_float(V v) {
  if constexpr (std::is_same_v<V, double>)
    return narrow_to_float(v);
  else
    return static_cast<float>(v);
}

template <typename D, typename V>
StorageT<D> store(V v) {
  if constexpr (std::is_same_v<D, BoolTag>) {
    if constexpr (std::is_same_v<V, bool>)
      return static_cast<uint8_t>(v);
    else
      return static_cast<uint8_t>(v != V(0));
  } else if constexpr (std::is_same_v<D, F16Tag>) {
    return float_to_half(to_float(v));
  } else if constexpr (std::is_same_v<D, BF16Tag>) {
    return float_to_bfloat16(to_float(v));
  } else if constexpr (std::is_same_v<D, float>) {
    return to_float(v);
  } else if constexpr (std::is_same_v<V, bool>) {
    return static_cast<D>(v ? 1 : 0);
  } else {
    return convert_value<D>(v);
  }
}

/// Calls fn(Tag<S>{}) with the storage tag of any numeric/bool dtype; false otherwise.
template <typename Fn>
bool dispatch_any(DataType dt, Fn&& fn) {
  switch (dt) {
    case DataType::kBool:
      fn(Tag<BoolTag>{});
      return true;
    case DataType::kFloat16:
      fn(Tag<F16Tag>{});
      return true;
    case DataType::kBFloat16:
      fn(Tag<BF16Tag>{});
      return true;
    default:
      return dispatch(NumericTypes{}, dt, fn);
  }
}

}  // namespace

Status convert_tensor(const ir::Node& node, const Tensor& src, Tensor& dst, int threads) {
  const int64_t n = src.element_count();
  if (dst.element_count() != n) {
    return ir::node_error(node, StatusCode::kInternal,
                          "conversion between tensors of different sizes " + shape_to_string(src.shape()) + " and " +
                              shape_to_string(dst.shape()));
  }
  if (src.dtype() == dst.dtype()) {
    if (n > 0 && src.raw_data() != dst.raw_data()) {
      std::memcpy(dst.raw_data(), src.raw_data(), src.byte_size());
    }
    return Status::ok();
  }
  bool dst_ok = false;
  const bool src_ok = dispatch_any(src.dtype(), [&](auto stag) {
    using S = typename decltype(stag)::type;
    const StorageT<S>* in = src.data<StorageT<S>>();
    dst_ok = dispatch_any(dst.dtype(), [&](auto dtag) {
      using D = typename decltype(dtag)::type;
      StorageT<D>* out = dst.data<StorageT<D>>();
      unary_loop(in, out, n, threads, 2, [](StorageT<S> v) { return store<D>(load<S>(v)); });
    });
  });
  if (!src_ok) return unsupported_dtype(node, 0, src.dtype());
  if (!dst_ok) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          std::string("conversion to dtype ") + dtype_name(dst.dtype()) + " is not supported");
  }
  return Status::ok();
}

}  // namespace elementwise

namespace {

using namespace elementwise;  // NOLINT: kernel-internal helpers

/// Checks a Cast target dtype against the op version's type constraint.
Status check_target(const ir::Node& node, int64_t to, DTypeSet allowed) {
  const DataType dt = static_cast<DataType>(to);
  if (to == static_cast<int64_t>(DataType::kString)) {
    return ir::node_error(node, StatusCode::kUnsupported, "casting to string is not supported");
  }
  if (const char* name = onnx_only_type_name(to)) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          "attribute to = " + std::to_string(to) + " (" + name +
                              "): edgemm has no tensors of this type, so it cannot cast to it");
  }
  if (to < 0 || to >= 32 || !dtype_in(allowed, dt)) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          "cannot cast to dtype " + std::to_string(to) + " (" + dtype_name(dt) + ") in this opset");
  }
  return Status::ok();
}

Status run_cast(KernelContext& ctx, DataType to, DTypeSet allowed) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
  if (!dtype_in(allowed, x->dtype())) return unsupported_dtype(node, 0, x->dtype());
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x->shape()));
  return convert_tensor(node, *x, *y, ctx.threads());
}

/// Reads attribute saturate (Cast / CastLike 19+, default 1). It only changes conversions to
/// float8, which edgemm does not have, so it is checked (0 or 1) and otherwise ignored.
Status check_saturate(const KernelInfo& info) {
  if (info.opset < 19) return Status::ok();
  EDGEMM_ASSIGN_OR_RETURN(int64_t saturate, info.node.attr_int("saturate", 1));
  if (saturate != 0 && saturate != 1) {
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute saturate is " + std::to_string(saturate) + "; expected 0 or 1");
  }
  return Status::ok();
}

void add_cast(KernelRegistry& registry, int since, DTypeSet allowed) {
  registry.add("", "Cast", since, [allowed](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    if (!info.node.has_attr("to")) {
      return ir::node_error(info.node, StatusCode::kInvalidModel, "required attribute 'to' is missing");
    }
    EDGEMM_RETURN_IF_ERROR(check_saturate(info));
    EDGEMM_ASSIGN_OR_RETURN(int64_t to, info.node.attr_int("to", 0));
    EDGEMM_RETURN_IF_ERROR(check_target(info.node, to, allowed));
    const DataType dt = static_cast<DataType>(to);
    return make_fn_kernel([dt, allowed](KernelContext& ctx) { return run_cast(ctx, dt, allowed); });
  });
}

Status run_cast_like(KernelContext& ctx, DTypeSet allowed) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* like, need_input(ctx, 1));
  if (!dtype_in(allowed, like->dtype())) return unsupported_dtype(node, 1, like->dtype());
  return run_cast(ctx, like->dtype(), allowed);
}

}  // namespace

void register_cast_kernels(KernelRegistry& registry) {
  constexpr DTypeSet k6 = kNumericSet | kBoolSet;
  add_cast(registry, 6, k6);
  add_cast(registry, 9, k6);  // adds string, which we do not support
  add_cast(registry, 13, k6 | kBFloat16Set);
  // 19 adds float8 and saturate, 21 int4/uint4: types edgemm refuses (check_target).
  add_cast(registry, 19, k6 | kBFloat16Set);
  add_cast(registry, 21, k6 | kBFloat16Set);
  for (int since : {15, 19, 21}) {
    registry.add("", "CastLike", since, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
      EDGEMM_RETURN_IF_ERROR(check_saturate(info));
      return make_fn_kernel(
          [](KernelContext& ctx) { return run_cast_like(ctx, kNumericSet | kBoolSet | kBFloat16Set); });
    });
  }
}

}  // namespace edgemm::kernels
