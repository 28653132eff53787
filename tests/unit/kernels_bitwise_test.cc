// BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot (opset 18, src/kernels/cpu/binary.cc) run
// through runtime::run_node at opset 18. Expected values are worked out by hand in the comments
// (two's complement bits), never taken from an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_bitwise_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;

/// Runs op_type on `inputs` at opset 18 and returns output 0 (an empty tensor on failure).
Tensor bitwise_run(const std::string& op_type, const std::vector<Tensor>& inputs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) names.push_back("x" + std::to_string(i));
  auto out = run(make_node(op_type, names), inputs, /*opset=*/18);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : Tensor();
}

TEST(KernelsBitwise, AndBroadcastsInt32) {
  // A [2, 3] & B [3]: 12 & 10 = 0b1100 & 0b1010 = 0b1000 = 8; -1 & 6 = 6; 7 & -8 (…11111000) = 0;
  // 5 & 10 = 0; 0 & 6 = 0; 255 & -8 = 0b11111000 = 248.
  const Tensor y = bitwise_run("BitwiseAnd", {i32({2, 3}, {12, -1, 7, 5, 0, 255}), i32({3}, {10, 6, -8})});
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{8, 6, 0, 0, 0, 248}));
}

TEST(KernelsBitwise, OrBroadcastsUInt8BothWays) {
  // A [2, 1] | B [1, 2]: rows 0x0F, 0xF0 against columns 0x33, 0x80 → [2, 2].
  // 0x0F | 0x33 = 0x3F, 0x0F | 0x80 = 0x8F, 0xF0 | 0x33 = 0xF3, 0xF0 | 0x80 = 0xF0.
  const Tensor y = bitwise_run("BitwiseOr", {u8({2, 1}, {0x0F, 0xF0}), u8({1, 2}, {0x33, 0x80})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{0x3F, 0x8F, 0xF3, 0xF0}));
}

TEST(KernelsBitwise, XorInt64AndScalar) {
  // 5 ^ 3 = 0b101 ^ 0b011 = 0b110 = 6; -1 ^ 3 = ~3 = -4; INT64_MIN ^ 3 = INT64_MIN + 3.
  const Tensor y = bitwise_run("BitwiseXor", {i64({3}, {5, -1, INT64_MIN}), i64({}, {3})});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{6, -4, INT64_MIN + 3}));
}

TEST(KernelsBitwise, EveryIntegerDtype) {
  // 0x5A & 0x0F = 0x0A, | = 0x5F, ^ = 0x55 in every width (signed and unsigned alike).
  for (DataType dt : {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
                      DataType::kUInt16, DataType::kUInt32, DataType::kUInt64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor a = make<int64_t>(DataType::kInt64, {1}, {0x5A});
    Tensor b = make<int64_t>(DataType::kInt64, {1}, {0x0F});
    auto cast_to = [dt](const Tensor& t) {
      ir::Node cast = make_node("Cast", {"x"});
      nntest::set_int(cast, "to", static_cast<int64_t>(dt));
      auto out = run(cast, {t}, 18);
      EXPECT_TRUE(out.has_value()) << out.status().to_string();
      return *out;
    };
    const Tensor ta = cast_to(a), tb = cast_to(b);
    const std::vector<std::pair<const char*, int64_t>> cases = {
        {"BitwiseAnd", 0x0A}, {"BitwiseOr", 0x5F}, {"BitwiseXor", 0x55}};
    for (const auto& [op, want] : cases) {
      const Tensor y = bitwise_run(op, {ta, tb});
      ASSERT_EQ(y.dtype(), dt) << op;
      ir::Node back = make_node("Cast", {"y"});
      nntest::set_int(back, "to", static_cast<int64_t>(DataType::kInt64));
      auto y64 = run(back, {y}, 18);
      ASSERT_TRUE(y64.has_value());
      EXPECT_EQ(values<int64_t>(*y64), (std::vector<int64_t>{want})) << op;
    }
  }
}

TEST(KernelsBitwise, NotFlipsEveryBit) {
  // int8: ~0 = -1, ~-1 = 0, ~127 = -128, ~-128 = 127.
  const Tensor a = bitwise_run("BitwiseNot", {i8({2, 2}, {0, -1, 127, -128})});
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int8_t>(a), (std::vector<int8_t>{-1, 0, -128, 127}));
  // uint16: ~0 = 0xFFFF, ~0xFFFF = 0, ~0x00FF = 0xFF00.
  const Tensor b = bitwise_run("BitwiseNot", {make<uint16_t>(DataType::kUInt16, {3}, {0, 0xFFFF, 0x00FF})});
  EXPECT_EQ(values<uint16_t>(b), (std::vector<uint16_t>{0xFFFF, 0, 0xFF00}));
  // uint64: ~0 = 2^64 - 1; int32: ~5 = -6.
  const Tensor c = bitwise_run("BitwiseNot", {make<uint64_t>(DataType::kUInt64, {1}, {0})});
  EXPECT_EQ(values<uint64_t>(c), (std::vector<uint64_t>{UINT64_MAX}));
  const Tensor d = bitwise_run("BitwiseNot", {i32({}, {5})});
  EXPECT_EQ(d.shape(), Shape{});
  EXPECT_EQ(values<int32_t>(d), (std::vector<int32_t>{-6}));
}

TEST(KernelsBitwise, EmptyBroadcast) {
  // [0, 3] & [3] → [0, 3].
  const Tensor y = bitwise_run("BitwiseAnd", {i32({0, 3}, {}), i32({3}, {1, 2, 3})});
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(KernelsBitwise, Errors) {
  // Floats and bool are not integer types.
  expect_error(run_direct(make_node("BitwiseAnd", {"fa", "fb"}), {f32({1}, {1}), f32({1}, {1})}, 18),
               StatusCode::kUnsupported, {"BitwiseAnd", "'fa'", "float32"});
  expect_error(run_direct(make_node("BitwiseOr", {"ba", "bb"}), {bools({1}, {1}), bools({1}, {0})}, 18),
               StatusCode::kUnsupported, {"BitwiseOr", "'ba'", "bool"});
  expect_error(run_direct(make_node("BitwiseNot", {"fx"}), {f32({1}, {1})}, 18), StatusCode::kUnsupported,
               {"BitwiseNot", "'fx'", "float32"});
  // One type T for both inputs.
  expect_error(run_direct(make_node("BitwiseXor", {"a32", "a64"}), {i32({1}, {1}), i64({1}, {1})}, 18),
               StatusCode::kInvalidArgument, {"BitwiseXor", "a64"});
  // Shapes that do not broadcast.
  expect_error(run_direct(make_node("BitwiseAnd", {"p", "q"}), {i32({2}, {1, 2}), i32({3}, {1, 2, 3})}, 18),
               StatusCode::kInvalidArgument, {"BitwiseAnd", "[2]", "[3]"});
  // Not an op before opset 18.
  expect_error(run(make_node("BitwiseAnd", {"a", "b"}), {i32({1}, {1}), i32({1}, {1})}, 17), StatusCode::kUnsupported,
               {});
}

}  // namespace kernels_bitwise_test
}  // namespace edgemm
