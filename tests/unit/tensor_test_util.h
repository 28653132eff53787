#pragma once
// Tensor helpers shared by the kernel unit tests: build a tensor of a dtype from literal values
// (checking the count against the shape) and read its elements back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "edgemm/tensor.h"

namespace edgemm::testutil {

/// An owning tensor of `dt` and `shape` holding `v` (element type T must match dt's size).
template <typename T>
Tensor make(DataType dt, Shape shape, const std::vector<T>& v) {
  auto t = Tensor::create(dt, std::move(shape));
  EXPECT_TRUE(t.has_value());
  EXPECT_EQ(static_cast<size_t>(t->element_count()), v.size());
  if (!v.empty()) std::memcpy(t->raw_data(), v.data(), v.size() * sizeof(T));
  return *t;
}
inline Tensor f32(Shape s, const std::vector<float>& v) { return make(DataType::kFloat32, s, v); }
inline Tensor f64(Shape s, const std::vector<double>& v) { return make(DataType::kFloat64, s, v); }
inline Tensor i8(Shape s, const std::vector<int8_t>& v) { return make(DataType::kInt8, s, v); }
inline Tensor i32(Shape s, const std::vector<int32_t>& v) { return make(DataType::kInt32, s, v); }
inline Tensor i64(Shape s, const std::vector<int64_t>& v) { return make(DataType::kInt64, s, v); }
inline Tensor u8(Shape s, const std::vector<uint8_t>& v) { return make(DataType::kUInt8, s, v); }
/// Bool tensors hold one byte per element (0 or 1).
inline Tensor bools(Shape s, const std::vector<uint8_t>& v) { return make(DataType::kBool, s, v); }
/// float16 / bfloat16 from raw bit patterns.
inline Tensor f16(Shape s, const std::vector<uint16_t>& v) { return make(DataType::kFloat16, s, v); }
inline Tensor bf16(Shape s, const std::vector<uint16_t>& v) { return make(DataType::kBFloat16, s, v); }

/// The tensor's elements as a vector of T.
template <typename T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.element_count()));
  if (!out.empty()) std::memcpy(out.data(), t.raw_data(), out.size() * sizeof(T));
  return out;
}

}  // namespace edgemm::testutil
