// Tolerance rule of the conformance runner (tests/conformance/compare.h) on hand-made tensors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "../conformance/compare.h"

namespace edgemm::conformance {
namespace conformance_compare_test {  // named for the file: unity batches merge anonymous namespaces

template <typename T>
Tensor make(DataType dtype, Shape shape, std::initializer_list<T> values) {
  auto t = Tensor::create(dtype, std::move(shape));
  EXPECT_TRUE(t.has_value());
  if (values.size() > 0) std::memcpy(t->raw_data(), values.begin(), values.size() * sizeof(T));
  return *t;
}

Tensor f32(Shape shape, std::initializer_list<float> v) { return make<float>(DataType::kFloat32, shape, v); }

TEST(ConformanceCompare, ToleranceIsAtolPlusRtolTimesExpected) {
  // |a - b| <= 1e-7 + 1e-3 * |b|: for b = 1000 the bound is 1.0000001.
  EXPECT_TRUE(compare_tensors(f32({1}, {1000.9f}), f32({1}, {1000.0f})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {1001.5f}), f32({1}, {1000.0f})).ok);
  // Relative to the expected value, not the result: b = 1, a = 1.0015 fails.
  EXPECT_FALSE(compare_tensors(f32({1}, {1.0015f}), f32({1}, {1.0f})).ok);
  // Near zero only atol applies.
  EXPECT_TRUE(compare_tensors(f32({1}, {5e-8f}), f32({1}, {0.0f})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {1e-6f}), f32({1}, {0.0f})).ok);
  EXPECT_TRUE(close_enough(1.0005, 1.0, 1e-3, 1e-7));
  EXPECT_FALSE(close_enough(1.0, 1.0005, 0.0, 1e-4));
}

TEST(ConformanceCompare, NanEqualsNanAndInfinitiesMustMatch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_tensors(f32({3}, {nan, inf, -inf}), f32({3}, {nan, inf, -inf})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {nan}), f32({1}, {0.0f})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {0.0f}), f32({1}, {nan})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {inf}), f32({1}, {-inf})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {3e38f}), f32({1}, {inf})).ok);
}

TEST(ConformanceCompare, DtypeAndShapeMustMatch) {
  CompareResult r = compare_tensors(f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "shape [2,3], expected [3,2]");
  r = compare_tensors(make<double>(DataType::kFloat64, {1}, {1.0}), f32({1}, {1.0f}));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message, "dtype float64, expected float32");
  // Scalars and empty tensors compare by shape alone.
  EXPECT_TRUE(compare_tensors(f32({}, {2.0f}), f32({}, {2.0f})).ok);
  EXPECT_TRUE(compare_tensors(f32({0, 3}, {}), f32({0, 3}, {})).ok);
  EXPECT_FALSE(compare_tensors(f32({0, 3}, {}), f32({3, 0}, {})).ok);
}

TEST(ConformanceCompare, IntegersAndBoolAreExact) {
  EXPECT_TRUE(compare_tensors(make<int64_t>(DataType::kInt64, {2}, {7, -3}),
                              make<int64_t>(DataType::kInt64, {2}, {7, -3})).ok);
  // 1000 vs 1001 would pass with rtol 1e-3 if integers were compared with tolerance.
  EXPECT_FALSE(compare_tensors(make<int32_t>(DataType::kInt32, {1}, {1001}),
                               make<int32_t>(DataType::kInt32, {1}, {1000})).ok);
  // Values that differ only above 2^53 (lost by a double comparison).
  EXPECT_FALSE(compare_tensors(make<uint64_t>(DataType::kUInt64, {1}, {(uint64_t{1} << 63) + 1}),
                               make<uint64_t>(DataType::kUInt64, {1}, {uint64_t{1} << 63})).ok);
  EXPECT_FALSE(compare_tensors(make<uint8_t>(DataType::kBool, {2}, {1, 0}),
                               make<uint8_t>(DataType::kBool, {2}, {1, 1})).ok);
}

TEST(ConformanceCompare, HalfPrecisionComparedAsFloat) {
  const uint16_t one = float_to_half(1.0f), near_one = float_to_half(1.0009765625f);  // 1 + 2^-10
  EXPECT_TRUE(compare_tensors(make<uint16_t>(DataType::kFloat16, {1}, {near_one}),
                              make<uint16_t>(DataType::kFloat16, {1}, {one})).ok);
  const uint16_t b_one = float_to_bfloat16(1.0f), b_next = float_to_bfloat16(1.0078125f);  // 1 + 2^-7
  EXPECT_FALSE(compare_tensors(make<uint16_t>(DataType::kBFloat16, {1}, {b_next}),
                               make<uint16_t>(DataType::kBFloat16, {1}, {b_one})).ok);
}

TEST(ConformanceCompare, ReportsFirstMismatchWithIndexAndCount) {
  CompareResult r = compare_tensors(f32({2, 2}, {1, 2, 3.5f, 9}), f32({2, 2}, {1, 2, 3, 4}));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_index, 2);
  EXPECT_EQ(r.mismatch_count, 2);
  EXPECT_EQ(r.message, "element 2 [1,0]: got 3.5, expected 3 (2 of 4 elements differ, max finite |diff| 5)");
}

}  // namespace conformance_compare_test
}  // namespace edgemm::conformance
