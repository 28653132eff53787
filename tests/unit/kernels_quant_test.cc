// The quantization operators (src/kernels/cpu/quantize.cc, quant_matmul.cc, quant_conv.cc,
// quant_common.h): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul, ConvInteger, QLinearConv.
// (1) Hand-computed cases, the arithmetic written out in the comments: rounding ties (x.5 to
//     even, also below zero), saturation at both ends of uint8 and int8, negative zero points,
//     per-axis / per-row / per-column / per-output-channel parameters, padding that reads as
//     the zero point.
// (2) Every error: bad dtypes, scale / zero-point shape mismatches, zero points whose dtype is
//     not their data's; the status names the node, the op, the input and the offending value.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/flops.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_quant_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;
using testutil::f64;
using testutil::i32;
using testutil::i8;
using testutil::u8;

ir::Node quantize_node(const std::string& op, int inputs) {
  static const std::vector<std::string> names = {"x", "scale", "zero_point"};
  return make_node(op, std::vector<std::string>(names.begin(), names.begin() + inputs));
}

// ---------------------------------------------------------------------------------------------
// QuantizeLinear

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturatesUint8) {
  // scale 2, zero point 128: x / 2 = 0, 0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 500, -500
  // -> round half to even 0, 0, 2, 2, 4, -0, -2 -> +128; 628 and -372 saturate to 255 and 0.
  ir::Node node = quantize_node("QuantizeLinear", 3);
  auto y = run(node, {f32({9}, {0, 1, 3, 5, 7, -1, -3, 1000, -1000}), f32({}, {2}), u8({}, {128})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kUInt8);
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{128, 128, 130, 130, 132, 128, 126, 255, 0}));
}

TEST(QuantizeLinear, Int8WithNegativeZeroPoint) {
  // scale 1, zero point -10: 0.5 -> 0 -> -10; 1.5 -> 2 -> -8; 2.5 -> 2 -> -8; -0.5 -> -0 -> -10;
  // -118.5 -> -118 -> -128; 200 -> 190 -> 127 (saturated); -200 -> -210 -> -128 (saturated).
  ir::Node node = quantize_node("QuantizeLinear", 3);
  auto y = run(node, {f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -118.5f, 200, -200}), f32({}, {1}), i8({}, {-10})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt8);
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{-10, -8, -8, -10, -128, 127, -128}));
}

TEST(QuantizeLinear, AbsentZeroPointIsUint8Zero) {
  // scale 1: -1 -> 0 (saturated), 300 -> 255 (saturated), 1.5 -> 2, 0.5 -> 0.
  ir::Node node = quantize_node("QuantizeLinear", 2);
  for (int64_t opset : {10, 13}) {
    auto y = run(node, {f32({4}, {-1, 300, 1.5f, 0.5f}), f32({}, {1})}, opset);
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    EXPECT_EQ(y->dtype(), DataType::kUInt8);
    EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{0, 255, 2, 0}));
  }
}

TEST(QuantizeLinear, Int32Input) {
  // scale 2, int8 zero point 0: 3 / 2 = 1.5 -> 2; -3 / 2 -> -2; 7 / 2 = 3.5 -> 4; 1000 -> 127.
  ir::Node node = quantize_node("QuantizeLinear", 3);
  auto y = run(node, {i32({4}, {3, -3, 7, 1000}), f32({}, {2}), i8({}, {0})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{2, -2, 4, 127}));
}

TEST(QuantizeLinear, PerAxis) {
  // x [2, 3], axis 1, scales [1, 2, 4], zero points [0, 10, 20]:
  // column 0: 1 -> 1, 3 -> 3; column 1: 2/2 = 1 -> 11, 5/2 = 2.5 -> 2 -> 12;
  // column 2: 4/4 = 1 -> 21, -8/4 = -2 -> 18.
  ir::Node node = quantize_node("QuantizeLinear", 3);
  const Tensor x = f32({2, 3}, {1, 2, 4, 3, 5, -8});
  auto y = run(node, {x, f32({3}, {1, 2, 4}), u8({3}, {0, 10, 20})}, 13);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{1, 11, 21, 3, 12, 18}));
  // axis -2 (rows): scales [2, 1], zero points [-1, 1] (int8):
  // row 0: 1/2 = 0.5 -> 0 -> -1, 2/2 = 1 -> 0, 4/2 = 2 -> 1; row 1: 3 -> 4, 5 -> 6, -8 -> -7.
  set_int(node, "axis", -2);
  auto z = run(node, {x, f32({2}, {2, 1}), i8({2}, {-1, 1})}, 13);
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  EXPECT_EQ(values<int8_t>(*z), (std::vector<int8_t>{-1, 0, 1, 4, 6, -7}));
}

TEST(QuantizeLinear, ThreadsGiveTheSameResult) {
  ir::Node node = quantize_node("QuantizeLinear", 3);
  const Tensor x = random_f32({4, 64, 257}, 7);
  const Tensor scale = f32({64}, std::vector<float>(64, 0.01f));
  const Tensor zp = i8({64}, std::vector<int8_t>(64, 3));
  set_int(node, "axis", 1);
  auto one = run(node, {x, scale, zp}, 13, 1);
  auto two = run(node, {x, scale, zp}, 13, 2);
  ASSERT_TRUE(one.has_value() && two.has_value());
  EXPECT_EQ(values<int8_t>(*one), values<int8_t>(*two));
}

TEST(QuantizeLinear, Errors) {
  ir::Node node = quantize_node("QuantizeLinear", 3);
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // A zero point of a dtype no version allows here.
  expect_error(run_direct(node, {x, f32({}, {1}), f32({}, {0})}), StatusCode::kUnsupported,
               {"QuantizeLinear 'n_QuantizeLinear'", "input 2 'zero_point'", "float32"});
  // x must be float32 or int32; the scale float32.
  expect_error(run_direct(node, {u8({2}, {1, 2}), f32({}, {1}), u8({}, {0})}), StatusCode::kUnsupported,
               {"input 0 'x'", "uint8"});
  expect_error(run_direct(node, {x, f64({}, {1}), u8({}, {0})}), StatusCode::kUnsupported,
               {"input 1 'scale'", "float64"});
  // Scale and zero point of different shapes.
  expect_error(run_direct(node, {x, f32({3}, {1, 1, 1}), u8({2}, {0, 0})}, 13), StatusCode::kInvalidArgument,
               {"'n_QuantizeLinear'", "input 1 'scale' has shape [3]", "input 2 'zero_point' has shape [2]"});
  // Per-axis scale whose length is not the axis extent (axis 1 has 3).
  expect_error(run_direct(node, {x, f32({2}, {1, 1}), u8({2}, {0, 0})}, 13), StatusCode::kInvalidArgument,
               {"input 1 'scale' has 2 elements", "axis 1", "[2,3]", "extent 3"});
  // Opset 10 quantizes per tensor only.
  expect_error(run_direct(node, {x, f32({3}, {1, 1, 1}), u8({3}, {0, 0, 0})}, 10), StatusCode::kInvalidArgument,
               {"input 1 'scale' has shape [3]", "per tensor only"});
  // Axis out of range for per-axis parameters.
  set_int(node, "axis", 2);
  expect_error(run_direct(node, {x, f32({3}, {1, 1, 1}), u8({3}, {0, 0, 0})}, 13), StatusCode::kInvalidArgument,
               {"'n_QuantizeLinear'", "axis 2 is out of range for rank 2"});
  // The scale is required.
  expect_error(run_direct(quantize_node("QuantizeLinear", 3), {x, Tensor(), u8({}, {0})}), StatusCode::kInvalidModel,
               {"'n_QuantizeLinear'", "input 1 (y_scale)"});
}

// ---------------------------------------------------------------------------------------------
// DequantizeLinear

TEST(DequantizeLinear, Uint8AndInt8) {
  // (x - 128) * 2: 0 -> -256, 3 -> -250, 128 -> 0, 255 -> 254.
  ir::Node node = quantize_node("DequantizeLinear", 3);
  auto y = run(node, {u8({4}, {0, 3, 128, 255}), f32({}, {2}), u8({}, {128})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {4}, {-256, -250, 0, 254});
  // Negative zero point: (x + 5) * 0.5: -128 -> -61.5, 0 -> 2.5, 127 -> 66.
  auto z = run(node, {i8({3}, {-128, 0, 127}), f32({}, {0.5f}), i8({}, {-5})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  expect_near(*z, {3}, {-61.5f, 2.5f, 66});
}

TEST(DequantizeLinear, Int32WithoutZeroPoint) {
  // x * 0.25: -5 -> -1.25, 1000000 -> 250000; an explicit zero point 0 is accepted.
  ir::Node two = quantize_node("DequantizeLinear", 2);
  auto y = run(two, {i32({2}, {-5, 1000000}), f32({}, {0.25f})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2}, {-1.25f, 250000});
  auto z = run(quantize_node("DequantizeLinear", 3), {i32({2}, {-5, 1000000}), f32({}, {0.25f}), i32({}, {0})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  expect_near(*z, {2}, {-1.25f, 250000});
}

TEST(DequantizeLinear, PerAxis) {
  // x [2, 2] (axis 0): row 0 (x - 1) * 1, row 1 (x - 2) * 10: [[0, 4], [-20, 30]].
  ir::Node node = quantize_node("DequantizeLinear", 3);
  set_int(node, "axis", 0);
  auto y = run(node, {u8({2, 2}, {1, 5, 0, 5}), f32({2}, {1, 10}), u8({2}, {1, 2})}, 13);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2, 2}, {0, 4, -20, 30});
}

TEST(DequantizeLinear, Errors) {
  ir::Node node = quantize_node("DequantizeLinear", 3);
  // int32 data has no zero point: a non-zero one is refused, naming the value.
  expect_error(run_direct(node, {i32({2}, {1, 2}), f32({}, {1}), i32({}, {3})}), StatusCode::kInvalidArgument,
               {"DequantizeLinear 'n_DequantizeLinear'", "input 2 'zero_point'", "value 3"});
  // The zero point must have x's dtype.
  expect_error(run_direct(node, {u8({2}, {1, 2}), f32({}, {1}), i8({}, {0})}), StatusCode::kInvalidArgument,
               {"input 2 'zero_point' has dtype int8", "input 0 'x' has dtype uint8"});
  expect_error(run_direct(node, {f32({2}, {1, 2}), f32({}, {1}), u8({}, {0})}), StatusCode::kUnsupported,
               {"input 0 'x'", "float32"});
  expect_error(run_direct(node, {u8({2, 2}, {1, 2, 3, 4}), f32({3}, {1, 1, 1}), u8({3}, {0, 0, 0})}, 13),
               StatusCode::kInvalidArgument, {"input 1 'scale' has 3 elements", "extent 2"});
}

// ---------------------------------------------------------------------------------------------
// DynamicQuantizeLinear

struct Dynamic {
  std::vector<uint8_t> y;
  float scale = 0;
  uint8_t zero_point = 0;
};

Dynamic run_dynamic(const Tensor& x) {
  ir::Node node = make_node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
  auto outs = runtime::run_node(node, {x}, 11);
  EXPECT_TRUE(outs.has_value()) << outs.status().to_string();
  Dynamic d;
  if (!outs.has_value() || outs->size() != 3) return d;
  EXPECT_EQ((*outs)[0].dtype(), DataType::kUInt8);
  EXPECT_EQ((*outs)[1].dtype(), DataType::kFloat32);
  EXPECT_EQ((*outs)[2].dtype(), DataType::kUInt8);
  EXPECT_EQ((*outs)[1].rank(), 0);
  EXPECT_EQ((*outs)[2].rank(), 0);
  d.y = values<uint8_t>((*outs)[0]);
  d.scale = values<float>((*outs)[1])[0];
  d.zero_point = values<uint8_t>((*outs)[2])[0];
  return d;
}

TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  // [0, 255]: scale 255 / 255 = 1, zero point 0; 2.5 -> 2, 3.5 -> 4, 0.5 -> 0 (ties to even).
  Dynamic a = run_dynamic(f32({5}, {0, 255, 2.5f, 3.5f, 0.5f}));
  EXPECT_EQ(a.scale, 1.0f);
  EXPECT_EQ(a.zero_point, 0);
  EXPECT_EQ(a.y, (std::vector<uint8_t>{0, 255, 2, 4, 0}));
  // All negative: the range is [-255, 0]: scale 1, zero point 255; -1.5 -> -2 + 255 = 253.
  Dynamic b = run_dynamic(f32({3}, {-255, -1.5f, -100}));
  EXPECT_EQ(b.scale, 1.0f);
  EXPECT_EQ(b.zero_point, 255);
  EXPECT_EQ(b.y, (std::vector<uint8_t>{0, 253, 155}));
  // All positive: the range is [0, 4]: scale 4 / 255, zero point 0.
  Dynamic c = run_dynamic(f32({2}, {1, 4}));
  EXPECT_FLOAT_EQ(c.scale, 4.0f / 255.0f);
  EXPECT_EQ(c.zero_point, 0);
  EXPECT_EQ(c.y, (std::vector<uint8_t>{64, 255}));  // 1 / (4/255) = 63.75 -> 64
}

TEST(DynamicQuantizeLinear, ZeroPointTieAndSaturation) {
  // [-25.5, 229.5]: scale 1; zero point -(-25.5) = 25.5 -> 26 (even). y: -25.5 -> -26 + 26 = 0;
  // 229.5 -> 230 + 26 = 256 -> 255 (saturated); 1.5 -> 2 + 26 = 28.
  Dynamic d = run_dynamic(f32({3}, {-25.5f, 229.5f, 1.5f}));
  EXPECT_EQ(d.scale, 1.0f);
  EXPECT_EQ(d.zero_point, 26);
  EXPECT_EQ(d.y, (std::vector<uint8_t>{0, 255, 28}));
}

TEST(DynamicQuantizeLinear, OnnxExample) {
  // Operators.md's example: x = [0, 2, -3, -2.5, 1.34, 0.5]: scale 5 / 255, zero point 153.
  Dynamic d = run_dynamic(f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f}));
  EXPECT_FLOAT_EQ(d.scale, 5.0f / 255.0f);
  EXPECT_EQ(d.zero_point, 153);
  EXPECT_EQ(d.y, (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
}

TEST(DynamicQuantizeLinear, AllZerosAndErrors) {
  // Empty range: scale 1 and zero point 0 instead of dividing by zero.
  Dynamic d = run_dynamic(f32({3}, {0, 0, 0}));
  EXPECT_EQ(d.scale, 1.0f);
  EXPECT_EQ(d.zero_point, 0);
  EXPECT_EQ(d.y, (std::vector<uint8_t>{0, 0, 0}));
  ir::Node node = make_node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
  expect_error(run_direct(node, {f64({1}, {1})}, 11), StatusCode::kUnsupported,
               {"DynamicQuantizeLinear 'n_DynamicQuantizeLinear'", "input 0 'x'", "float64"});
}

// ---------------------------------------------------------------------------------------------
// MatMulInteger

TEST(MatMulInteger, OnnxExamplePerTensor) {
  // A - 12 = [[-1,-5,-9],[-2,-6,-10],[-3,-7,-11],[-4,-8,-12]], B = [[1,4],[2,5],[3,6]]:
  // row 0: -1 - 10 - 27 = -38, -4 - 25 - 54 = -83; each next row adds -6 and -15.
  ir::Node node = make_node("MatMulInteger", {"A", "B", "a_zero_point", "b_zero_point"});
  auto y = run(node, {u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}), u8({3, 2}, {1, 4, 2, 5, 3, 6}), u8({}, {12}),
                      u8({}, {0})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt32);
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(MatMulInteger, PerRowAndPerColumnNegativeZeroPoints) {
  // A int8 [[1,-2],[3,4]] minus per-row [-1, 2] = [[2,-1],[1,2]];
  // B uint8 [[10,20,30],[40,50,60]] minus per-column [10, 0, 60] = [[0,20,-30],[30,50,0]].
  // Row 0: 2*[0,20,-30] - [30,50,0] = [-30,-10,-60]; row 1: [0,20,-30] + 2*[30,50,0] = [60,120,-30].
  ir::Node node = make_node("MatMulInteger", {"A", "B", "a_zero_point", "b_zero_point"});
  const Tensor a = i8({2, 2}, {1, -2, 3, 4});
  const Tensor b = u8({2, 3}, {10, 20, 30, 40, 50, 60});
  auto y = run(node, {a, b, i8({2}, {-1, 2}), u8({3}, {10, 0, 60})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{-30, -10, -60, 60, 120, -30}));
  // The same parameters written as [M, 1] and [1, N].
  auto z = run(node, {a, b, i8({2, 1}, {-1, 2}), u8({1, 3}, {10, 0, 60})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  EXPECT_EQ(values<int32_t>(*z), values<int32_t>(*y));
  // Without zero points: [[1*10 - 2*40, ...]] = [[-70,-80,-90],[190,260,330]].
  ir::Node plain = make_node("MatMulInteger", {"A", "B"});
  auto p = run(plain, {a, b});
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(values<int32_t>(*p), (std::vector<int32_t>{-70, -80, -90, 190, 260, 330}));
}

TEST(MatMulInteger, BatchedZeroPointsAndBroadcastB) {
  // A [2, 1, 2] = [[[3,4]], [[5,6]]] minus a_zero_point [2, 1, 1] = [1, 2]: [[2,3]], [[3,4]];
  // B [2, 1] = [[1],[2]] shared by both batches: [2 + 6] = 8, [3 + 8] = 11.
  ir::Node node = make_node("MatMulInteger", {"A", "B", "a_zero_point"});
  auto y = run(node, {u8({2, 1, 2}, {3, 4, 5, 6}), u8({2, 1}, {1, 2}), u8({2, 1, 1}, {1, 2})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(shape_to_string(y->shape()), "[2,1,1]");
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{8, 11}));
}

TEST(MatMulInteger, AccumulatesInWrapping32Bits) {
  // 33100 products of 255 * 255 = 65025 sum to 2152327500 > 2^31 - 1: stored modulo 2^32 as a
  // 32-bit accumulator gives it (the spec allows overflow in 32-bit accumulation only):
  // 2152327500 - 4294967296 = -2142639796.
  constexpr int64_t k = 33100;
  ir::Node node = make_node("MatMulInteger", {"A", "B"});
  auto y = run(node, {u8({1, k}, std::vector<uint8_t>(k, 255)), u8({k, 1}, std::vector<uint8_t>(k, 255))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{-2142639796}));
}

TEST(MatMulInteger, Errors) {
  ir::Node node = make_node("MatMulInteger", {"A", "B", "a_zero_point", "b_zero_point"});
  const Tensor a = u8({2, 2}, {1, 2, 3, 4});
  const Tensor b = u8({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(
      run_direct(node, {a, b, i8({}, {0}), u8({}, {0})}), StatusCode::kInvalidArgument,
      {"MatMulInteger 'n_MatMulInteger'", "input 2 'a_zero_point' has dtype int8", "input 0 'A' has dtype uint8"});
  expect_error(run_direct(node, {a, b, u8({3}, {0, 0, 0}), u8({}, {0})}), StatusCode::kInvalidArgument,
               {"input 2 'a_zero_point' has shape [3]", "[2] or [..., 2, 1] (per row)"});
  // b's 1-D zero point counts columns (N = 3), not K.
  expect_error(run_direct(node, {a, b, u8({}, {0}), u8({2}, {0, 0})}), StatusCode::kInvalidArgument,
               {"input 3 'b_zero_point' has shape [2]", "[3] or [..., 1, 3] (per column)"});
  // [M, K] is not a per-row layout: the reduced axis must be 1.
  expect_error(run_direct(node, {a, b, u8({2, 2}, {0, 0, 0, 0}), u8({}, {0})}), StatusCode::kInvalidArgument,
               {"input 2 'a_zero_point' has shape [2,2]"});
  expect_error(run_direct(node, {f32({2, 2}, {1, 2, 3, 4}), b, Tensor(), Tensor()}), StatusCode::kUnsupported,
               {"input 0 'A'", "float32"});
  expect_error(run_direct(node, {a, u8({3, 1}, {1, 2, 3}), Tensor(), Tensor()}), StatusCode::kInvalidArgument,
               {"'n_MatMulInteger'", "mismatched inner dimensions 2 and 3"});
}

// ---------------------------------------------------------------------------------------------
// QLinearMatMul

ir::Node qlinear_matmul_node() {
  return make_node("QLinearMatMul",
                   {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"});
}

TEST(QLinearMatMul, PerTensorTiesAndSaturation) {
  // a - 128 = [2, -2] (scale 0.5), b - 128 = [[1,-1],[3,0]] (scale 0.25): product [2 - 6, -2] = [-4, -2].
  // y_scale 0.5: multiplier 0.5 * 0.25 / 0.5 = 0.25 -> [-1, -0.5] -> round [-1, -0] -> + 10 = [9, 10].
  ir::Node node = qlinear_matmul_node();
  const Tensor a = u8({1, 2}, {130, 126});
  const Tensor b = u8({2, 2}, {129, 127, 131, 128});
  auto y =
      run(node, {a, f32({}, {0.5f}), u8({}, {128}), b, f32({}, {0.25f}), u8({}, {128}), f32({}, {0.5f}), u8({}, {10})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{9, 10}));
  // int8 output with zero point -128: -1 - 128 = -129 saturates to -128; -0 - 128 = -128.
  auto z = run(
      node, {a, f32({}, {0.5f}), u8({}, {128}), b, f32({}, {0.25f}), u8({}, {128}), f32({}, {0.5f}), i8({}, {-128})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  EXPECT_EQ(z->dtype(), DataType::kInt8);
  EXPECT_EQ(values<int8_t>(*z), (std::vector<int8_t>{-128, -128}));
  // y_scale 0.001: multiplier 125 -> [-500, -250] + 125, both saturate to 0.
  auto w = run(
      node, {a, f32({}, {0.5f}), u8({}, {128}), b, f32({}, {0.25f}), u8({}, {128}), f32({}, {0.001f}), u8({}, {125})});
  ASSERT_TRUE(w.has_value()) << w.status().to_string();
  EXPECT_EQ(values<uint8_t>(*w), (std::vector<uint8_t>{0, 0}));
}

TEST(QLinearMatMul, PerRowAndPerColumnScales) {
  // a [[12],[14]] - per-row zero points [10, 10] = [[2],[4]], per-row scales [1, 2];
  // b [[3, 5]] - per-column zero points [1, 1] = [[2, 4]], per-column scales [1, 0.5].
  // Products [[4, 8], [8, 16]] times a_scale[i] * b_scale[j] / 1 = [[4, 4], [16, 16]].
  ir::Node node = qlinear_matmul_node();
  auto y = run(node, {u8({2, 1}, {12, 14}), f32({2}, {1, 2}), u8({2}, {10, 10}), u8({1, 2}, {3, 5}),
                      f32({2}, {1, 0.5f}), u8({2}, {1, 1}), f32({}, {1}), u8({}, {0})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{4, 4, 16, 16}));
}

TEST(QLinearMatMul, Errors) {
  ir::Node node = qlinear_matmul_node();
  const Tensor a = u8({2, 2}, {1, 2, 3, 4});
  const Tensor b = i8({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor one = f32({}, {1});
  // y's zero point gives the output dtype: uint8 or int8.
  expect_error(run_direct(node, {a, one, u8({}, {0}), b, one, i8({}, {0}), one, i32({}, {0})}),
               StatusCode::kUnsupported, {"QLinearMatMul 'n_QLinearMatMul'", "input 7 'y_zero_point'", "int32"});
  // b's zero point must be int8 like b.
  expect_error(run_direct(node, {a, one, u8({}, {0}), b, one, u8({}, {0}), one, u8({}, {0})}),
               StatusCode::kInvalidArgument, {"input 5 'b_zero_point' has dtype uint8", "input 3 'b' has dtype int8"});
  // Per-column scale with K instead of N values.
  expect_error(run_direct(node, {a, one, u8({}, {0}), b, f32({2}, {1, 1}), i8({2}, {0, 0}), one, u8({}, {0})}),
               StatusCode::kInvalidArgument, {"input 4 'b_scale' has shape [2]", "(per column)"});
  // Scale and zero point of different shapes.
  expect_error(run_direct(node, {a, one, u8({2}, {0, 0}), b, one, i8({}, {0}), one, u8({}, {0})}),
               StatusCode::kInvalidArgument,
               {"input 1 'a_scale' has shape []", "input 2 'a_zero_point' has shape [2]", "must match"});
  expect_error(run_direct(node, {a, f64({}, {1}), u8({}, {0}), b, one, i8({}, {0}), one, u8({}, {0})}),
               StatusCode::kUnsupported, {"input 1 'a_scale'", "float64"});
  expect_error(run_direct(node, {a, one, u8({}, {0}), b, one, i8({}, {0}), one, Tensor()}), StatusCode::kInvalidModel,
               {"'n_QLinearMatMul'", "input 7 (y_zero_point)"});
}

// ---------------------------------------------------------------------------------------------
// ConvInteger

TEST(ConvInteger, OnnxExampleWithAndWithoutPadding) {
  // x = 2..10 (3x3) minus zero point 1 = 1..9, w = 2x2 ones: window sums 1+2+4+5 = 12, 16, 24, 28.
  ir::Node node = make_node("ConvInteger", {"x", "w", "x_zero_point"});
  std::vector<uint8_t> xs = {2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Tensor x = u8({1, 1, 3, 3}, xs);
  const Tensor w = u8({1, 1, 2, 2}, {1, 1, 1, 1});
  auto y = run(node, {x, w, u8({}, {1})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt32);
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{12, 16, 24, 28}));
  // pads 1: the padding reads as the zero point (0 after centering): corners are single values.
  set_ints(node, "pads", {1, 1, 1, 1});
  auto p = run(node, {x, w, u8({}, {1})});
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  EXPECT_EQ(shape_to_string(p->shape()), "[1,1,4,4]");
  EXPECT_EQ(values<int32_t>(*p), (std::vector<int32_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

TEST(ConvInteger, NegativeZeroPointAndPerChannelWeights) {
  // x int8 [-3, 5] minus -3 = [0, 8]; w uint8 [10, 200] (two 1x1 filters) minus per-channel
  // [8, 100] = [2, 100]: channel 0 = [0, 16], channel 1 = [0, 800].
  ir::Node node = make_node("ConvInteger", {"x", "w", "x_zero_point", "w_zero_point"});
  auto y = run(node, {i8({1, 1, 1, 2}, {-3, 5}), u8({2, 1, 1, 1}, {10, 200}), i8({}, {-3}), u8({2}, {8, 100})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(shape_to_string(y->shape()), "[1,2,1,2]");
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{0, 16, 0, 800}));
}

TEST(ConvInteger, Errors) {
  ir::Node node = make_node("ConvInteger", {"x", "w", "x_zero_point", "w_zero_point"});
  const Tensor x = u8({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = u8({2, 1, 1, 1}, {1, 2});
  expect_error(run_direct(node, {x, w, u8({}, {0}), u8({3}, {0, 0, 0})}), StatusCode::kInvalidArgument,
               {"ConvInteger 'n_ConvInteger'", "input 3 'w_zero_point' has shape [3]", "[2] (per output channel)"});
  expect_error(run_direct(node, {x, w, u8({2}, {0, 0}), Tensor()}), StatusCode::kInvalidArgument,
               {"input 2 'x_zero_point' has shape [2]", "per tensor"});
  expect_error(run_direct(node, {x, w, i8({}, {0}), Tensor()}), StatusCode::kInvalidArgument,
               {"input 2 'x_zero_point' has dtype int8", "input 0 'x' has dtype uint8"});
  expect_error(run_direct(node, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), w, Tensor(), Tensor()}), StatusCode::kUnsupported,
               {"input 0 'x'", "float32"});
  // Conv's shape checks name ConvInteger's inputs.
  expect_error(run_direct(node, {x, u8({2, 2, 1, 1}, {1, 2, 3, 4}), Tensor(), Tensor()}), StatusCode::kInvalidArgument,
               {"'n_ConvInteger'", "input 'x' has 1 channels, weight expects 2"});
}

// ---------------------------------------------------------------------------------------------
// QLinearConv

ir::Node qlinear_conv_node(bool bias) {
  std::vector<std::string> in = {"x",       "x_scale",      "x_zero_point", "w",
                                 "w_scale", "w_zero_point", "y_scale",      "y_zero_point"};
  if (bias) in.push_back("B");
  return make_node("QLinearConv", in);
}

TEST(QLinearConv, PerChannelScalesBiasAndTies) {
  // x [130, 124] - 128 = [2, -4] (scale 0.5); w int8 1x1 filters [3, -2], zero points 0, scales
  // [1, 0.25]; bias [1, -3]; y_scale 1, y_zero_point 100.
  // channel 0: acc 1 + 6 = 7 and 1 - 12 = -11, times 0.5: 3.5 -> 4, -5.5 -> -6: [104, 94];
  // channel 1: acc -3 - 4 = -7 and -3 + 8 = 5, times 0.125: -0.875 -> -1, 0.625 -> 1: [99, 101].
  ir::Node node = qlinear_conv_node(true);
  const Tensor x = u8({1, 1, 1, 2}, {130, 124});
  const Tensor w = i8({2, 1, 1, 1}, {3, -2});
  auto y = run(node, {x, f32({}, {0.5f}), u8({}, {128}), w, f32({2}, {1, 0.25f}), i8({2}, {0, 0}), f32({}, {1}),
                      u8({}, {100}), i32({2}, {1, -3})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kUInt8);
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{104, 94, 99, 101}));
  // int8 output, y_scale 1/64 and zero point 120: multipliers 32 and 8;
  // 7 * 32 + 120 = 344 -> 127, -11 * 32 + 120 = -232 -> -128, -7 * 8 + 120 = 64, 5 * 8 + 120 = 160 -> 127.
  auto z = run(node, {x, f32({}, {0.5f}), u8({}, {128}), w, f32({2}, {1, 0.25f}), i8({2}, {0, 0}), f32({}, {0.015625f}),
                      i8({}, {120}), i32({2}, {1, -3})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  EXPECT_EQ(values<int8_t>(*z), (std::vector<int8_t>{127, -128, 64, 127}));
}

TEST(QLinearConv, PerTensorWithoutBias) {
  // x - 10 = [[1, 2], [3, 4]], w (2x2, zero point 1) - 1 = [[1, 0], [0, 1]]: acc 1 + 4 = 5;
  // scales 0.5 * 0.5 / 0.5 = 0.5: 2.5 -> 2 (even), + zero point 0.
  ir::Node node = qlinear_conv_node(false);
  auto y = run(node, {u8({1, 1, 2, 2}, {11, 12, 13, 14}), f32({}, {0.5f}), u8({}, {10}), u8({1, 1, 2, 2}, {2, 1, 1, 2}),
                      f32({}, {0.5f}), u8({}, {1}), f32({}, {0.5f}), u8({}, {0})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(shape_to_string(y->shape()), "[1,1,1,1]");
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{2}));
}

TEST(QLinearConv, Errors) {
  ir::Node node = qlinear_conv_node(true);
  const Tensor x = u8({1, 1, 1, 2}, {1, 2});
  const Tensor w = i8({2, 1, 1, 1}, {1, 2});
  const Tensor one = f32({}, {1});
  const Tensor xz = u8({}, {0}), wz = i8({}, {0}), yz = u8({}, {0});
  expect_error(run_direct(node, {x, one, xz, w, one, wz, one, yz, f32({2}, {0, 0})}), StatusCode::kUnsupported,
               {"QLinearConv 'n_QLinearConv'", "input 8 'B'", "float32"});
  expect_error(run_direct(node, {x, one, xz, w, one, wz, one, yz, i32({3}, {0, 0, 0})}), StatusCode::kInvalidArgument,
               {"bias 'B' has shape [3]", "expected [2]"});
  expect_error(run_direct(node, {x, f32({2}, {1, 1}), u8({2}, {0, 0}), w, one, wz, one, yz, Tensor()}),
               StatusCode::kInvalidArgument, {"zero point input 2 'x_zero_point' has shape [2]", "per tensor"});
  expect_error(run_direct(node, {x, one, xz, w, f32({3}, {1, 1, 1}), i8({3}, {0, 0, 0}), one, yz, Tensor()}),
               StatusCode::kInvalidArgument, {"input 5 'w_zero_point' has shape [3]", "[2] (per output channel)"});
  expect_error(run_direct(node, {x, one, xz, w, one, u8({}, {0}), one, yz, Tensor()}), StatusCode::kInvalidArgument,
               {"input 5 'w_zero_point' has dtype uint8", "input 3 'w' has dtype int8"});
  expect_error(run_direct(node, {x, one, xz, w, f32({2}, {1, 1}), wz, one, yz, Tensor()}), StatusCode::kInvalidArgument,
               {"input 4 'w_scale' has shape [2]", "input 5 'w_zero_point' has shape []"});
  expect_error(run_direct(node, {x, one, xz, w, one, wz, one, i32({}, {0}), Tensor()}), StatusCode::kUnsupported,
               {"input 7 'y_zero_point'", "int32"});
  expect_error(run_direct(node, {x, one, xz, w, one, wz, f32({2}, {1, 1}), u8({2}, {0, 0}), Tensor()}),
               StatusCode::kInvalidArgument, {"input 6 'y_scale' has shape [2]", "one value"});
}

// ---------------------------------------------------------------------------------------------
// Kernel names (profiles, `edgemm inspect --optimized`) say these are the reference loops.

TEST(QuantKernels, NamedReference) {
  const std::vector<std::pair<ir::Node, std::string>> cases = {
      {quantize_node("QuantizeLinear", 3), "quantize_linear__reference"},
      {quantize_node("DequantizeLinear", 3), "dequantize_linear__reference"},
      {make_node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"}), "dynamic_quantize_linear__reference"},
      {make_node("MatMulInteger", {"A", "B"}), "matmul_integer__reference"},
      {qlinear_matmul_node(), "qlinear_matmul__reference"},
      {make_node("ConvInteger", {"x", "w"}), "conv_integer__reference"},
      {qlinear_conv_node(true), "qlinear_conv__reference"}};
  for (const auto& [node, name] : cases) {
    for (int64_t opset : {11, 13}) {
      auto kernel = make_kernel(node, {}, opset);
      ASSERT_TRUE(kernel.has_value()) << node.op_type << ": " << kernel.status().to_string();
      EXPECT_EQ(std::string((*kernel)->name()), name) << node.op_type << " opset " << opset;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// FLOPs in profiles (ir::node_flops): as MatMul / Conv, plus one requantization per output.

TEST(QuantFlops, CountedLikeMatMulAndConv) {
  // [2, 3] x [3, 4]: 2 * 8 outputs * K 3 = 48; QLinearMatMul adds 8 requantizations.
  const ir::NodeShapes y_mm = {Shape{2, 4}};
  EXPECT_EQ(ir::node_flops(make_node("MatMulInteger", {"A", "B"}), {Shape{2, 3}, Shape{3, 4}}, y_mm), 48);
  const ir::NodeShapes qmm_in = {Shape{2, 3}, Shape{}, Shape{}, Shape{3, 4}, Shape{}, Shape{}, Shape{}, Shape{}};
  EXPECT_EQ(ir::node_flops(qlinear_matmul_node(), qmm_in, y_mm), 56);
  // x [1, 2, 5, 5], w [4, 2, 3, 3] -> y [1, 4, 3, 3]: 2 * 36 * 18 = 1296; QLinearConv (w at 3) + 36.
  const ir::NodeShapes y_conv = {Shape{1, 4, 3, 3}};
  EXPECT_EQ(ir::node_flops(make_node("ConvInteger", {"x", "w"}), {Shape{1, 2, 5, 5}, Shape{4, 2, 3, 3}}, y_conv), 1296);
  const ir::NodeShapes qconv_in = {Shape{1, 2, 5, 5}, Shape{}, Shape{}, Shape{4, 2, 3, 3},
                                   Shape{},           Shape{}, Shape{}, Shape{}};
  EXPECT_EQ(ir::node_flops(qlinear_conv_node(false), qconv_in, y_conv), 1332);
}

}  // namespace kernels_quant_test
}  // namespace edgemm
