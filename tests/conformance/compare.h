#pragma once
/// \file compare.h
/// Output comparison of the ONNX backend conformance runner (header-only so the unit tests
/// can check the rule on hand-made tensors).
///
/// Rule (the one onnx/backend/test/runner uses through numpy.testing.assert_allclose, with
/// edgemm's tolerances): dtype and shape must match exactly; floating types (float16,
/// bfloat16, float32, float64) pass element-wise when |got - expected| <= atol + rtol*|expected|,
/// NaN equals NaN and infinities must match in sign; integer and bool types must be equal.

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "edgemm/tensor.h"

namespace edgemm::conformance {

/// Default tolerances of the conformance gate.
inline constexpr double kDefaultRtol = 1e-3;
inline constexpr double kDefaultAtol = 1e-7;

/// Outcome of comparing one output tensor.
struct CompareResult {
  bool ok = true;
  /// Empty when ok; otherwise a one-line description of the first mismatch: dtype, shape, or
  /// "element i [multi-index]: got G, expected E" plus how many elements differ.
  std::string message;
  int64_t first_index = -1;    ///< flat index of the first differing element, -1 if none
  int64_t mismatch_count = 0;  ///< number of differing elements
};

namespace detail {

inline bool is_float_type(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}

inline double load_float(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32: return t.data<float>()[i];
    case DataType::kFloat64: return t.data<double>()[i];
    case DataType::kFloat16: return half_to_float(t.data<uint16_t>()[i]);
    case DataType::kBFloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    default: return 0.0;
  }
}

/// Integer/bool element as a signed and an unsigned view (exact for every integer dtype).
inline bool load_int(const Tensor& t, int64_t i, int64_t* s, uint64_t* u) {
  switch (t.dtype()) {
    case DataType::kInt8: *s = t.data<int8_t>()[i]; break;
    case DataType::kInt16: *s = t.data<int16_t>()[i]; break;
    case DataType::kInt32: *s = t.data<int32_t>()[i]; break;
    case DataType::kInt64: *s = t.data<int64_t>()[i]; break;
    case DataType::kUInt8: *s = t.data<uint8_t>()[i]; break;
    case DataType::kUInt16: *s = t.data<uint16_t>()[i]; break;
    case DataType::kUInt32: *s = t.data<uint32_t>()[i]; break;
    case DataType::kBool: *s = t.data<uint8_t>()[i] != 0 ? 1 : 0; break;
    case DataType::kUInt64:
      *u = t.data<uint64_t>()[i];
      *s = static_cast<int64_t>(*u);
      return true;
    default: return false;
  }
  *u = static_cast<uint64_t>(*s);
  return true;
}

inline std::string format_float(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

inline std::string format_element(const Tensor& t, int64_t i) {
  if (is_float_type(t.dtype())) return format_float(load_float(t, i));
  int64_t s = 0;
  uint64_t u = 0;
  load_int(t, i, &s, &u);
  if (t.dtype() == DataType::kBool) return s ? "true" : "false";
  char buf[32];
  if (t.dtype() == DataType::kUInt64) std::snprintf(buf, sizeof buf, "%" PRIu64, u);
  else std::snprintf(buf, sizeof buf, "%" PRId64, s);
  return buf;
}

inline std::string multi_index(const Shape& shape, int64_t flat) {
  std::string out = "]";
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t extent = shape[k] > 0 ? shape[k] : 1;
    out = std::to_string(flat % extent) + (out == "]" ? "" : ",") + out;
    flat /= extent;
  }
  return "[" + out;
}

}  // namespace detail

/// True when `got` is within tolerance of `expected` under the rule above (floating values).
inline bool close_enough(double got, double expected, double rtol, double atol) {
  if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
  if (got == expected) return true;  // covers equal infinities
  if (std::isinf(got) || std::isinf(expected)) return false;
  return std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

/// Compares one output with its reference. Strings are not comparable (edgemm has no string
/// tensors); both tensors must be defined.
inline CompareResult compare_tensors(const Tensor& got, const Tensor& expected,
                                     double rtol = kDefaultRtol, double atol = kDefaultAtol) {
  CompareResult r;
  if (got.dtype() != expected.dtype()) {
    r.ok = false;
    r.message = std::string("dtype ") + dtype_name(got.dtype()) + ", expected " +
                dtype_name(expected.dtype());
    return r;
  }
  if (got.shape() != expected.shape()) {
    r.ok = false;
    r.message = "shape " + shape_to_string(got.shape()) + ", expected " +
                shape_to_string(expected.shape());
    return r;
  }
  const int64_t n = expected.element_count();
  const bool is_float = detail::is_float_type(expected.dtype());
  int64_t s_got = 0, s_exp = 0;
  uint64_t u_got = 0, u_exp = 0;
  double max_abs = 0.0;
  if (!is_float && !detail::load_int(expected, 0, &s_exp, &u_exp) && n > 0) {
    r.ok = false;
    r.message = std::string("cannot compare dtype ") + dtype_name(expected.dtype());
    return r;
  }
  for (int64_t i = 0; i < n; ++i) {
    bool equal;
    if (is_float) {
      const double a = detail::load_float(got, i), b = detail::load_float(expected, i);
      equal = close_enough(a, b, rtol, atol);
      if (!equal && std::isfinite(a) && std::isfinite(b)) max_abs = std::fmax(max_abs, std::fabs(a - b));
    } else {
      detail::load_int(got, i, &s_got, &u_got);
      detail::load_int(expected, i, &s_exp, &u_exp);
      equal = u_got == u_exp;
    }
    if (equal) continue;
    if (r.mismatch_count++ == 0) r.first_index = i;
  }
  if (r.mismatch_count == 0) return r;
  r.ok = false;
  const int64_t i = r.first_index;
  r.message = "element " + std::to_string(i) + " " + detail::multi_index(expected.shape(), i) +
              ": got " + detail::format_element(got, i) + ", expected " +
              detail::format_element(expected, i) + " (" + std::to_string(r.mismatch_count) +
              " of " + std::to_string(n) + " elements differ";
  if (is_float && max_abs > 0.0) r.message += ", max finite |diff| " + detail::format_float(max_abs);
  r.message += ")";
  return r;
}

}  // namespace edgemm::conformance
