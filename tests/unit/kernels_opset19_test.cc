// Opset 18-21 versions of pooling (LpPool-18, AveragePool-19), GridSample-20, AffineGrid-20,
// Cast / CastLike-19/21 and QuantizeLinear / DequantizeLinear-19/21 (src/kernels/cpu/pool.cc,
// grid_sample.cc, cast.cc, quantize.cc), run at the opset that has them. Expected values are
// worked out by hand in the comments next to each case (the kernels were compared with ONNX
// Runtime 1.30 separately). Also: fuse_qdq leaves opset 21's blocked and output_dtype Q/DQ
// nodes alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "ir/onnx_import.h"
#include "model_builder.h"
#include "nn_test_util.h"
#include "pass_test_util.h"
#include "passes/passes.h"
#include "quant_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_opset19_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;
using nntest::set_int;
using nntest::set_ints;
using nntest::set_string;

Tensor run_ok(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  auto out = run(node, inputs, opset);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : Tensor();
}

ir::Node pool_node(const std::string& op, std::vector<int64_t> kernel) {
  ir::Node n = make_node(op, {"X"});
  set_ints(n, "kernel_shape", std::move(kernel));
  return n;
}

// ---- LpPool-18 ------------------------------------------------------------------------------

TEST(Opset19LpPool, CeilModeAddsTheClippedLastWindow) {
  // x = [3, 4, 0, 1, 2], windows of 2 with stride 2, p = 2: sqrt(9 + 16) = 5, sqrt(0 + 1) = 1,
  // and with ceil_mode the last window [2] alone: 2.
  ir::Node n = pool_node("LpPool", {2});
  set_ints(n, "strides", {2});
  set_int(n, "ceil_mode", 1);
  const Tensor x = f32({1, 1, 5}, {3, 4, 0, 1, 2});
  expect_near(run_ok(n, {x}, 18), {1, 1, 3}, {5, 1, 2});
  // LpPool-11 has no ceil_mode: the attribute is ignored there.
  expect_near(run_ok(n, {x}, 11), {1, 1, 2}, {5, 1});
  set_int(n, "ceil_mode", 0);
  expect_near(run_ok(n, {x}, 18), {1, 1, 2}, {5, 1});
}

TEST(Opset19LpPool, DilationsSpreadTheWindow) {
  // x = [3, -1, 4, 1, -5], kernel 2 dilated by 2, p = 1: |3|+|4| = 7, |-1|+|1| = 2, |4|+|-5| = 9.
  ir::Node n = pool_node("LpPool", {2});
  set_ints(n, "dilations", {2});
  set_int(n, "p", 1);
  const Tensor x = f32({1, 1, 5}, {3, -1, 4, 1, -5});
  expect_near(run_ok(n, {x}, 18), {1, 1, 3}, {7, 2, 9});
  // 2-D, p = 2: x = 1..9 in a 3x3, kernel 2x2 dilated by 2 reads the corners 1, 3, 7, 9:
  // sqrt(1 + 9 + 49 + 81) = sqrt(140).
  ir::Node n2 = pool_node("LpPool", {2, 2});
  set_ints(n2, "dilations", {2, 2});
  expect_near(run_ok(n2, {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, 18), {1, 1, 1, 1}, {std::sqrt(140.0f)});
}

TEST(Opset19LpPool, BadDilationsAreRefused) {
  ir::Node n = pool_node("LpPool", {2});
  set_ints(n, "dilations", {0});
  expect_error(run_direct(n, {f32({1, 1, 4}, {1, 2, 3, 4})}, 18), StatusCode::kInvalidArgument,
               {"n_LpPool", "dilations", "positive"});
  set_ints(n, "dilations", {1, 1});
  expect_error(run_direct(n, {f32({1, 1, 4}, {1, 2, 3, 4})}, 18), StatusCode::kInvalidArgument,
               {"dilations [1,1]", "'X'"});
}

// ---- AveragePool-19 -------------------------------------------------------------------------

TEST(Opset19AveragePool, DilationsSpreadTheWindow) {
  // x = [1, 2, 3, 4, 5], kernel 2 dilated by 2: (1+3)/2, (2+4)/2, (3+5)/2.
  ir::Node n = pool_node("AveragePool", {2});
  set_ints(n, "dilations", {2});
  expect_near(run_ok(n, {f32({1, 1, 5}, {1, 2, 3, 4, 5})}, 19), {1, 1, 3}, {2, 3, 4});
  // 2-D: the corners of 1..9 in a 3x3: (1 + 3 + 7 + 9) / 4 = 5.
  ir::Node n2 = pool_node("AveragePool", {2, 2});
  set_ints(n2, "dilations", {2, 2});
  expect_near(run_ok(n2, {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, 19), {1, 1, 1, 1}, {5});
}

TEST(Opset19AveragePool, DilatedWindowsOverPadding) {
  // x = [1, 2, 3, 4], pads 1 and 1 (padded [0, 1, 2, 3, 4, 0]), kernel 2 dilated by 2 (span 3),
  // 4 windows reading padded positions (0,2) (1,3) (2,4) (3,5): x values {pad, 2}, {1, 3},
  // {2, 4}, {3, pad}. count_include_pad: (0+2)/2, (1+3)/2, (2+4)/2, (3+0)/2; else the pads are
  // left out of the count: 2/1, 2, 3, 3/1.
  ir::Node n = pool_node("AveragePool", {2});
  set_ints(n, "dilations", {2});
  set_ints(n, "pads", {1, 1});
  const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  expect_near(run_ok(n, {x}, 19), {1, 1, 4}, {2, 2, 3, 3});
  set_int(n, "count_include_pad", 1);
  expect_near(run_ok(n, {x}, 19), {1, 1, 4}, {1, 2, 3, 1.5f});
}

TEST(Opset19AveragePool, CeilModeWithDilations) {
  // x = [1..6], kernel 2 dilated by 2 (span 3), stride 2, ceil_mode: windows at 0, 2 and 4
  // (the last clipped to [5]): (1+3)/2, (3+5)/2, 5.
  ir::Node n = pool_node("AveragePool", {2});
  set_ints(n, "dilations", {2});
  set_ints(n, "strides", {2});
  set_int(n, "ceil_mode", 1);
  expect_near(run_ok(n, {f32({1, 1, 6}, {1, 2, 3, 4, 5, 6})}, 19), {1, 1, 3}, {2, 4, 5});
}

TEST(Opset19AveragePool, BeforeOpset19DilationsAreNotAnAttribute) {
  // AveragePool-11 has no dilations: a stray attribute is ignored, windows are contiguous.
  ir::Node n = pool_node("AveragePool", {2});
  set_ints(n, "dilations", {2});
  expect_near(run_ok(n, {f32({1, 1, 3}, {1, 2, 3})}, 11), {1, 1, 2}, {1.5f, 2.5f});
}

// ---- GridSample-20 --------------------------------------------------------------------------

ir::Node grid_node(const std::string& mode, int64_t align_corners) {
  ir::Node n = make_node("GridSample", {"X", "grid"});
  set_string(n, "mode", mode);
  set_int(n, "align_corners", align_corners);
  return n;
}

TEST(Opset19GridSample, LinearAndCubicAreTheOpset20Names) {
  // The center of [[1, 2], [3, 4]] is their mean 2.5 (bilinear), with either name at opset 20.
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor g = f32({1, 1, 1, 2}, {0, 0});
  expect_near(run_ok(grid_node("linear", 0), {x, g}, 20), {1, 1, 1, 1}, {2.5f});
  expect_near(run_ok(grid_node("bilinear", 0), {x, g}, 20), {1, 1, 1, 1}, {2.5f});
  // Bicubic at the center of a 2x2 with border padding: each axis weighs
  // (1, 1, 2, 2)·w with w(t=0.5) = (-0.09375, 0.59375, 0.59375, -0.09375): 1.5 along x,
  // so 1.5 + 2 * 1 = 2.5 overall (a linear ramp stays linear).
  ir::Node cubic = grid_node("cubic", 0);
  set_string(cubic, "padding_mode", "border");
  expect_near(run_ok(cubic, {x, g}, 20), {1, 1, 1, 1}, {2.5f});
  expect_error(run_direct(grid_node("linear", 0), {x, g}, 16), StatusCode::kInvalidModel,
               {"mode 'linear'", "opset 16"});
}

// X [1, 1, 2, 2, 2] = 0..7: value = 4 z + 2 y + x for the voxel (z, y, x).
Tensor cube() { return f32({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}); }

TEST(Opset19GridSample, VolumetricLinear) {
  // align_corners 1: -1 and 1 are the voxel centers 0 and 1 on each axis; trilinear of the
  // linear function 4z + 2y + x is exact. grid [1, D_out 2, H_out 1, W_out 3, 3] of (x, y, z):
  //   (0,0,0) → 3.5; (-1,-1,-1) → 0; (1,1,1) → 7; (1,-1,-1) → 1; (-1,-1,1) → 4;
  //   (0.5,-1,-1) → x = 0.75 → 0.75.
  const Tensor g = f32({1, 2, 1, 3, 3}, {0, 0, 0, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1, 1, 0.5f, -1, -1});
  expect_near(run_ok(grid_node("linear", 1), {cube(), g}, 20), {1, 1, 2, 1, 3}, {3.5f, 0, 7, 1, 4, 0.75f});
  // align_corners 0, zeros padding: (x, y, z) = (1, 1, 1) is the outer corner, location 1.5
  // on each axis; only voxel 7 has weight 0.5^3 inside: 7 / 8. (2, 0, 0): x location 2.5, both
  // x neighbours outside: 0.
  const Tensor g2 = f32({1, 1, 1, 2, 3}, {1, 1, 1, 2, 0, 0});
  expect_near(run_ok(grid_node("linear", 0), {cube(), g2}, 20), {1, 1, 1, 1, 2}, {7.0f / 8, 0});
}

TEST(Opset19GridSample, VolumetricNearestAndBorder) {
  // align_corners 1: (0.4, -0.6, 0.9) → locations x 0.7, y 0.2, z 0.95 → voxel (1, 0, 1) = 5.
  // Border padding clamps (3, -3, 0.2) → x 1, y 0, z 0.6 → (z 1, y 0, x 1) = 5 too; (-3, 3, -3)
  // → (0, 1, 0) = 2.
  ir::Node n = grid_node("nearest", 1);
  set_string(n, "padding_mode", "border");
  const Tensor g = f32({1, 1, 1, 3, 3}, {0.4f, -0.6f, 0.9f, 3, -3, 0.2f, -3, 3, -3});
  expect_near(run_ok(n, {cube(), g}, 20), {1, 1, 1, 1, 3}, {5, 5, 2});
}

TEST(Opset19GridSample, VolumetricErrors) {
  const Tensor g = f32({1, 1, 1, 1, 3}, {0, 0, 0});
  expect_error(run_direct(grid_node("cubic", 0), {cube(), g}, 20), StatusCode::kUnsupported,
               {"n_GridSample", "cubic", "5-D"});
  expect_error(run_direct(grid_node("bilinear", 0), {cube(), g}, 16), StatusCode::kUnsupported,
               {"[1,1,2,2,2]", "opset 20"});
  expect_error(run_direct(grid_node("linear", 0), {cube(), f32({1, 1, 1, 1, 2}, {0, 0})}, 20),
               StatusCode::kInvalidArgument, {"[N, D_out, H_out, W_out, 3]", "[1,1,1,1,2]"});
  expect_error(run_direct(grid_node("linear", 0), {f32({1, 1, 2}, {1, 2}), f32({1, 1, 1}, {0})}, 20),
               StatusCode::kUnsupported, {"'X'", "[1,1,2]"});
}

// ---- AffineGrid-20 --------------------------------------------------------------------------

ir::Node affine_node(int64_t align_corners) {
  ir::Node n = make_node("AffineGrid", {"theta", "size"}, {"grid"});
  set_int(n, "align_corners", align_corners);
  return n;
}

TEST(Opset19AffineGrid, IdentityGivesThePixelCenters) {
  const Tensor theta = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  const Tensor size = i64({4}, {1, 1, 2, 3});
  // align_corners 0: x = (2j + 1) / 3 - 1 = -2/3, 0, 2/3; y = (2i + 1) / 2 - 1 = -0.5, 0.5.
  const float t = 2.0f / 3;
  expect_near(run_ok(affine_node(0), {theta, size}, 20), {1, 2, 3, 2},
              {-t, -0.5f, 0, -0.5f, t, -0.5f, -t, 0.5f, 0, 0.5f, t, 0.5f});
  // align_corners 1: x = -1, 0, 1; y = -1, 1.
  expect_near(run_ok(affine_node(1), {theta, size}, 20), {1, 2, 3, 2}, {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1});
}

TEST(Opset19AffineGrid, ScaleTranslateAndTwoBatches) {
  // Batch 0: x' = 2x + 0.5, y' = y - 1; batch 1: x' = y, y' = -x. size (2, 3, 1, 2),
  // align_corners 0: x = -0.5, 0.5; y = 0. Batch 0: (-0.5, -1), (1.5, -1); batch 1: (0, 0.5),
  // (0, -0.5).
  const Tensor theta = f32({2, 2, 3}, {2, 0, 0.5f, 0, 1, -1, 0, 1, 0, -1, 0, 0});
  expect_near(run_ok(affine_node(0), {theta, i64({4}, {2, 3, 1, 2})}, 20), {2, 1, 2, 2},
              {-0.5f, -1, 1.5f, -1, 0, 0.5f, 0, -0.5f});
}

TEST(Opset19AffineGrid, Volumetric) {
  // theta swaps x and z: (x', y', z') = (z, y, x). size (1, 1, D 2, H 1, W 2), align_corners 0:
  // z = -0.5, 0.5; y = 0; x = -0.5, 0.5. grid [1, 2, 1, 2, 3] at (d, 0, w) = (z_d, 0, x_w).
  const Tensor theta = f32({1, 3, 4}, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0});
  expect_near(run_ok(affine_node(0), {theta, i64({5}, {1, 1, 2, 1, 2})}, 20), {1, 2, 1, 2, 3},
              {-0.5f, 0, -0.5f, -0.5f, 0, 0.5f, 0.5f, 0, -0.5f, 0.5f, 0, 0.5f});
  // float64 theta gives a float64 grid: translation only, one pixel, align_corners 0: (0.25, -2, 3).
  auto out =
      run(affine_node(0), {f64({1, 3, 4}, {0, 0, 0, 0.25, 0, 0, 0, -2, 0, 0, 0, 3}), i64({5}, {1, 1, 1, 1, 1})}, 20);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(out->dtype(), DataType::kFloat64);
  EXPECT_EQ(values<double>(*out), (std::vector<double>{0.25, -2, 3}));
}

TEST(Opset19AffineGrid, Errors) {
  const Tensor theta2 = f32({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  ir::Node n = affine_node(0);
  expect_error(run_direct(n, {theta2, i64({5}, {1, 1, 2, 2, 2})}, 20), StatusCode::kInvalidArgument,
               {"n_AffineGrid", "'theta'", "[1,2,3]", "[1,3,4]"});
  expect_error(run_direct(n, {theta2, i64({4}, {2, 1, 2, 2})}, 20), StatusCode::kInvalidArgument,
               {"'theta'", "[2,2,3]"});
  expect_error(run_direct(n, {theta2, i32({4}, {1, 1, 2, 2})}, 20), StatusCode::kInvalidArgument,
               {"'size'", "int64", "int32"});
  expect_error(run_direct(n, {theta2, i64({3}, {1, 1, 2})}, 20), StatusCode::kInvalidArgument,
               {"'size'", "(N, C, H, W)"});
  expect_error(run_direct(n, {theta2, i64({4}, {1, 1, -2, 2})}, 20), StatusCode::kInvalidArgument, {"negative"});
  expect_error(run_direct(affine_node(1), {theta2, i64({4}, {1, 1, 1, 2})}, 20), StatusCode::kUnsupported,
               {"extent of 1", "align_corners=1"});
  expect_error(run_direct(affine_node(2), {theta2, i64({4}, {1, 1, 2, 2})}, 20), StatusCode::kInvalidModel,
               {"align_corners is 2"});
  expect_error(run_direct(n, {theta2, i64({4}, {1, 1, int64_t{1} << 40, int64_t{1} << 40})}, 20),
               StatusCode::kOutOfMemory, {});
  expect_error(run_direct(n, {i32({1, 2, 3}, {1, 0, 0, 0, 1, 0}), i64({4}, {1, 1, 2, 2})}, 20),
               StatusCode::kUnsupported, {"int32"});
  // No AffineGrid before opset 20.
  EXPECT_FALSE(run(n, {theta2, i64({4}, {1, 1, 2, 2})}, 19).has_value());
}

// ---- Cast / CastLike-19/21 ------------------------------------------------------------------

TEST(Opset19Cast, SaturateIsAcceptedAndChangesNothing) {
  ir::Node n = make_node("Cast", {"X"});
  set_int(n, "to", static_cast<int64_t>(DataType::kInt32));
  const Tensor x = f32({3}, {1.9f, -2.5f, 300});
  for (int64_t opset : {19, 21}) {
    for (int64_t saturate : {0, 1}) {
      set_int(n, "saturate", saturate);
      auto y = run(n, {x}, opset);
      ASSERT_TRUE(y.has_value()) << y.status().to_string();
      EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{1, -2, 300}));
    }
  }
  ir::Node like = make_node("CastLike", {"X", "L"});
  set_int(like, "saturate", 0);
  auto y = run(like, {x, u8({1}, {0})}, 21);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{1, 254, 44}));  // -2 and 300 wrap modulo 256
}

TEST(Opset19Cast, Float8AndInt4AreRefusedByName) {
  ir::Node n = make_node("Cast", {"X"});
  const Tensor x = f32({1}, {1});
  const std::pair<int64_t, const char*> types[] = {{17, "float8e4m3fn"},   {18, "float8e4m3fnuz"}, {19, "float8e5m2"},
                                                   {20, "float8e5m2fnuz"}, {21, "uint4"},          {22, "int4"}};
  for (const auto& [to, name] : types) {
    set_int(n, "to", to);
    expect_error(run_direct(n, {x}, 21), StatusCode::kUnsupported, {"n_Cast", name, std::to_string(to)});
  }
  set_int(n, "to", 1);
  set_int(n, "saturate", 2);
  expect_error(run_direct(n, {x}, 19), StatusCode::kInvalidModel, {"saturate is 2"});
  ir::Node like = make_node("CastLike", {"X", "L"});
  set_int(like, "saturate", -1);
  expect_error(run_direct(like, {x, x}, 19), StatusCode::kInvalidModel, {"n_CastLike", "saturate is -1"});
}

// ---- QuantizeLinear / DequantizeLinear-19/21 ------------------------------------------------

ir::Node q_node(const std::string& op, int inputs) {
  std::vector<std::string> names = {"x", "scale", "zp"};
  names.resize(static_cast<size_t>(inputs));
  return make_node(op, names);
}

TEST(Opset19Quantize, SaturateIsAcceptedAtOpset19) {
  // 2.5 / 1 rounds half to even to 2, + 10 → 12; 300 saturates to 255; -7.5 → -8 + 10 = 2.
  ir::Node n = q_node("QuantizeLinear", 3);
  set_int(n, "saturate", 0);
  auto y = run(n, {f32({3}, {2.5f, 300, -7.5f}), f32({}, {1}), u8({}, {10})}, 19);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{12, 255, 2}));
  set_int(n, "saturate", 3);
  expect_error(run_direct(n, {f32({1}, {1}), f32({}, {1}), u8({}, {0})}, 19), StatusCode::kInvalidModel,
               {"n_QuantizeLinear", "saturate is 3"});
}

TEST(Opset19Quantize, BlockedAlongTheLastAxis) {
  // x [2, 4] in blocks of 2 along axis 1: scale and zero point [2, 2].
  //   row 0, scale (1, 2), zp (0, 10): 0, 1 | 2/2 + 10 = 11, 1.5 → 2 (half to even) + 10 = 12
  //   row 1, scale (0.5, 4), zp (100, 0): 8 + 100 = 108, 10 + 100 = 110 | 1.5 → 2, 1.75 → 2
  ir::Node n = q_node("QuantizeLinear", 3);
  set_int(n, "block_size", 2);
  const Tensor x = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor scale = f32({2, 2}, {1, 2, 0.5f, 4});
  auto y = run(n, {x, scale, u8({2, 2}, {0, 10, 100, 0})}, 21);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kUInt8);
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{0, 1, 11, 12, 108, 110, 2, 2}));
  // DequantizeLinear-21 with the same blocks, int8: (x - zp) * scale.
  //   row 0, scale (1, 2), zp (0, 1): -1, 2 | (3-1)*2 = 4, (-4-1)*2 = -10
  //   row 1, scale (0.5, 4), zp (2, 0): 1.5, 2 | 28, 32
  ir::Node dq = q_node("DequantizeLinear", 3);
  set_int(dq, "block_size", 2);
  expect_near(run_ok(dq, {i8({2, 4}, {-1, 2, 3, -4, 5, 6, 7, 8}), scale, i8({2, 2}, {0, 1, 2, 0})}, 21), {2, 4},
              {-1, 2, 4, -10, 1.5f, 2, 28, 32});
}

TEST(Opset19Quantize, BlockedWithARemainderAndAlongAxis0) {
  // x [1, 5] in blocks of 2: 3 blocks, the last of one element. scale (1, 2, 4), output_dtype
  // int8, no zero point: 1, 2 | 1.5 → 2, 2 | 1.25 → 1.
  ir::Node n = q_node("QuantizeLinear", 2);
  set_int(n, "block_size", 2);
  set_int(n, "output_dtype", static_cast<int64_t>(DataType::kInt8));
  auto y = run(n, {f32({1, 5}, {1, 2, 3, 4, 5}), f32({1, 3}, {1, 2, 4})}, 21);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt8);
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{1, 2, 2, 2, 1}));
  // x [4, 2] in blocks of 3 along axis 0: scale [2, 2]; rows 0-2 use scale row (1, 2), row 3
  // (10, 20): 1, 1 | 3, 2 | 5, 3 | 0.7 → 1, 0.4 → 0.
  ir::Node n0 = q_node("QuantizeLinear", 2);
  set_int(n0, "block_size", 3);
  set_int(n0, "axis", 0);
  auto y0 = run(n0, {f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 2}, {1, 2, 10, 20})}, 21);
  ASSERT_TRUE(y0.has_value()) << y0.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y0), (std::vector<uint8_t>{1, 1, 3, 2, 5, 3, 1, 0}));
  // DequantizeLinear-21 of int32 in blocks of 3 along axis -2 (= 0), no zero point.
  ir::Node dq = q_node("DequantizeLinear", 2);
  set_int(dq, "block_size", 3);
  set_int(dq, "axis", -2);
  expect_near(run_ok(dq, {i32({4, 2}, {1, 2, 3, 4, 5, 6, -7, 8}), f32({2, 2}, {1, 0.5f, 10, 0.25f})}, 21), {4, 2},
              {1, 1, 3, 2, 5, 3, -70, 2});
}

TEST(Opset19Quantize, OneElementScaleIsPerTensorWithBlockSize) {
  // A scalar scale applies to every element, block_size or not (ONNX's reference does so).
  ir::Node n = q_node("DequantizeLinear", 2);
  set_int(n, "block_size", 2);
  expect_near(run_ok(n, {u8({2, 3}, {0, 1, 2, 3, 4, 5}), f32({}, {0.5f})}, 21), {2, 3}, {0, 0.5f, 1, 1.5f, 2, 2.5f});
}

TEST(Opset19Quantize, OutputDtype) {
  // No zero point: output_dtype int8 keeps -3 (uint8 would saturate it to 0).
  ir::Node n = q_node("QuantizeLinear", 2);
  set_int(n, "output_dtype", static_cast<int64_t>(DataType::kInt8));
  auto y = run(n, {f32({2}, {-3, 3}), f32({}, {1})}, 21);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt8);
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{-3, 3}));
  // Agreeing with the zero point is fine; disagreeing is an error.
  ir::Node nz = q_node("QuantizeLinear", 3);
  set_int(nz, "output_dtype", static_cast<int64_t>(DataType::kUInt8));
  auto yz = run(nz, {f32({1}, {-3}), f32({}, {1}), u8({}, {5})}, 21);
  ASSERT_TRUE(yz.has_value()) << yz.status().to_string();
  EXPECT_EQ(values<uint8_t>(*yz), (std::vector<uint8_t>{2}));
  expect_error(run_direct(nz, {f32({1}, {-3}), f32({}, {1}), i8({}, {5})}, 21), StatusCode::kInvalidArgument,
               {"n_QuantizeLinear", "output_dtype is uint8", "'zp'", "int8"});
  // Types edgemm does not have, and non-quantized types.
  const std::pair<int64_t, const char*> refused[] = {
      {4, "uint16"}, {5, "int16"}, {17, "float8e4m3fn"}, {21, "uint4"}, {22, "int4"}};
  for (const auto& [type, name] : refused) {
    set_int(n, "output_dtype", type);
    expect_error(run_direct(n, {f32({1}, {1}), f32({}, {1})}, 21), StatusCode::kUnsupported, {"output_dtype", name});
  }
  set_int(n, "output_dtype", 1);
  expect_error(run_direct(n, {f32({1}, {1}), f32({}, {1})}, 21), StatusCode::kInvalidModel,
               {"output_dtype = 1", "not a quantized type"});
}

TEST(Opset19Quantize, BlockedShapeErrors) {
  ir::Node n = q_node("QuantizeLinear", 2);
  set_int(n, "block_size", 2);
  const Tensor x = f32({2, 5}, std::vector<float>(10, 1.0f));
  // [2, 5] in blocks of 2 along axis 1 needs [2, 3].
  expect_error(run_direct(n, {x, f32({2, 2}, {1, 1, 1, 1})}, 21), StatusCode::kInvalidArgument,
               {"n_QuantizeLinear", "'scale'", "[2,2]", "block_size 2", "[2,3]"});
  expect_error(run_direct(n, {x, f32({3}, {1, 1, 1})}, 21), StatusCode::kInvalidArgument, {"[3]", "[2,3]"});
  ir::Node dq = q_node("DequantizeLinear", 3);
  set_int(dq, "block_size", 2);
  expect_error(run_direct(dq,
                          {u8({2, 5}, std::vector<uint8_t>(10, 1)), f32({2, 3}, std::vector<float>(6, 1.0f)),
                           u8({2, 2}, {0, 0, 0, 0})},
                          21),
               StatusCode::kInvalidArgument, {"'zp'"});
  set_int(n, "block_size", -1);
  expect_error(run_direct(n, {x, f32({}, {1})}, 21), StatusCode::kInvalidModel, {"block_size is -1"});
  set_int(n, "block_size", 2);
  set_int(n, "axis", 2);
  expect_error(run_direct(n, {x, f32({2, 3}, std::vector<float>(6, 1.0f))}, 21), StatusCode::kInvalidArgument,
               {"axis"});
  // int16 input to DequantizeLinear-21 is refused.
  expect_error(run_direct(q_node("DequantizeLinear", 2), {make<int16_t>(DataType::kInt16, {1}, {1}), f32({}, {1})}, 21),
               StatusCode::kUnsupported, {"int16"});
}

// ---- fuse_qdq and opset 21 attributes -------------------------------------------------------

/// x [1, 4] → Q(0.05, zp) → DQ → MatMul(DQ(B_int8 [4, 1], scalar scale)) → y at opset 13; the
/// ir nodes are edited afterwards to carry opset 21 attributes.
ir::Model qdq_matmul_model(bool with_zero_points) {
  testing::ModelBuilder b(13);
  b.input("x", testing::kFloat, {1, 4});
  b.output("y", testing::kFloat, {1, 1});
  b.initializer_floats("x_scale", {}, {0.05f});
  std::vector<std::string> q_in = {"x", "x_scale"}, dq_in = {"xq", "x_scale"};
  if (with_zero_points) {
    testutil::raw_initializer(b, "x_zp", onnx::TensorProto::UINT8, {}, std::string(1, '\0'));
    q_in.push_back("x_zp");
    dq_in.push_back("x_zp");
  }
  b.node("QuantizeLinear", q_in, {"xq"});
  b.node("DequantizeLinear", dq_in, {"xdq"});
  testutil::raw_initializer(b, "w_q", onnx::TensorProto::INT8, {4, 1}, std::string("\x01\x02\x03\x04", 4));
  b.initializer_floats("w_scale", {1, 1}, {0.01f});
  b.node("DequantizeLinear", {"w_q", "w_scale"}, {"w"});
  b.node("MatMul", {"xdq", "w"}, {"y"}, "matmul");
  auto model = ir::import_onnx_file(b.save(testing::temp_dir("opset19_qdq") / "m.onnx"));
  EXPECT_TRUE(model.has_value()) << model.status().to_string();
  return model.has_value() ? std::move(*model) : ir::Model{};
}

int fused_matmuls(ir::Model model) {
  passes::PassReport report;
  passes::fuse_qdq(model, report);
  return count_ops(model.graph, "Int8MatMul", ir::kEdgemmDomain);
}

TEST(Opset19QdqFusion, BlockedAndOutputDtypeNodesAreNotFused) {
  ASSERT_EQ(fused_matmuls(qdq_matmul_model(true)), 1);  // the opset 13 graph fuses
  ir::Model blocked = qdq_matmul_model(true);
  for (ir::Node& n : blocked.graph.nodes) {
    if (n.op_type == "DequantizeLinear" && n.inputs[0] == "w_q") {
      set_int(n, "axis", 0);
      set_int(n, "block_size", 4);
    }
  }
  EXPECT_EQ(fused_matmuls(blocked), 0);
  // Without zero points the activation QDQ is uint8 (zero point 0) and fuses, unless
  // output_dtype makes it int8.
  ASSERT_EQ(fused_matmuls(qdq_matmul_model(false)), 1);
  for (int64_t dtype : {2, 3}) {
    ir::Model m = qdq_matmul_model(false);
    for (ir::Node& n : m.graph.nodes) {
      if (n.op_type == "QuantizeLinear") set_int(n, "output_dtype", dtype);
    }
    EXPECT_EQ(fused_matmuls(m), dtype == 2 ? 1 : 0) << "output_dtype " << dtype;
  }
}

}  // namespace kernels_opset19_test
}  // namespace edgemm
