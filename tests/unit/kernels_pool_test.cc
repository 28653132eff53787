// Pooling (src/kernels/cpu/pool.cc): MaxPool (pads, strides, dilations, ceil_mode, Indices in
// both storage orders, int8/uint8), AveragePool (count_include_pad, auto_pad), LpPool, and the
// Global* variants. Every expected value is hand-computed (the windows are written out in the
// comments) or follows from a loop written in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nn_test_util.h"

namespace edgemm {
namespace kernels_pool_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(Pool, WindowsInsideTheInputMatchTheFormula) {
  // Unpadded 2-D pools (the fast path: PP-OCR cls MaxPool 2x2/2, rec AveragePool) on seeded
  // data against max / mean written out here, with overlapping and non-square windows.
  struct Case {
    int64_t kh, kw, sh, sw;
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<float> xv(2 * 3 * 7 * 9);
  for (float& v : xv) v = u(rng);
  for (const Case c : {Case{2, 2, 2, 2}, Case{3, 2, 1, 2}, Case{2, 3, 2, 1}, Case{7, 9, 1, 1}}) {
    for (const char* op : {"MaxPool", "AveragePool"}) {
      ir::Node node = make_node(op, {"X"});
      set_ints(node, "kernel_shape", {c.kh, c.kw});
      set_ints(node, "strides", {c.sh, c.sw});
      auto y = run(node, {f32({2, 3, 7, 9}, xv)});
      ASSERT_TRUE(y.has_value()) << y.status().to_string();
      const int64_t oh = (7 - c.kh) / c.sh + 1, ow = (9 - c.kw) / c.sw + 1;
      std::vector<float> want;
      for (int64_t p = 0; p < 6; ++p) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            float m = -INFINITY;
            double sum = 0;
            for (int64_t a = 0; a < c.kh; ++a) {
              for (int64_t b = 0; b < c.kw; ++b) {
                const float v = xv[(p * 7 + i * c.sh + a) * 9 + j * c.sw + b];
                m = std::max(m, v);
                sum += v;
              }
            }
            want.push_back(std::string(op) == "MaxPool" ? m : static_cast<float>(sum / (c.kh * c.kw)));
          }
        }
      }
      expect_near(*y, {2, 3, oh, ow}, want);
    }
  }
}

TEST(MaxPool, Basic2x2Stride2) {
  ir::Node node = make_node("MaxPool", {"X"});
  set_ints(node, "kernel_shape", {2, 2});
  set_ints(node, "strides", {2, 2});
  auto y = run(node, {f32({1, 1, 4, 4}, iota(16, 1))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2}, {6, 8, 14, 16});
}

TEST(MaxPool, CeilModeKeepsThePartialWindow) {
  // 4x4 of 1..16, kernel 3, stride 2: floor gives one window, ceil two per axis (the second
  // covers rows/columns 2..3 only).
  ir::Node node = make_node("MaxPool", {"X"});
  set_ints(node, "kernel_shape", {3, 3});
  set_ints(node, "strides", {2, 2});
  set_int(node, "ceil_mode", 1);
  auto y = run(node, {f32({1, 1, 4, 4}, iota(16, 1))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2}, {11, 12, 15, 16});
  // A window that would start in the end padding is dropped: in 5, kernel 2, stride 2, pads
  // (0, 1): ceil((5 + 1 - 2) / 2) + 1 = 3 windows start at 0, 2, 4 (4 < 5 keeps it).
  ir::Node n1 = make_node("MaxPool", {"X"});
  set_ints(n1, "kernel_shape", {2});
  set_ints(n1, "strides", {2});
  set_ints(n1, "pads", {0, 1});
  set_int(n1, "ceil_mode", 1);
  auto z = run(n1, {f32({1, 1, 5}, {1, 5, 2, 4, 3})});
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  expect_near(*z, {1, 1, 3}, {5, 4, 3});
}

TEST(MaxPool, Dilations1D) {
  // kernel 2, dilation 2: windows (0,2), (1,3), (2,4), (3,5) of [1,9,2,8,3,7].
  ir::Node node = make_node("MaxPool", {"X"});
  set_ints(node, "kernel_shape", {2});
  set_ints(node, "dilations", {2});
  auto y = run(node, {f32({1, 1, 6}, {1, 9, 2, 8, 3, 7})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4}, {2, 9, 3, 8});
}

TEST(MaxPool, IndicesRowAndColumnMajor) {
  // Two channels of 2x3, kernel 2x2, stride 1 -> 1x2 outputs.
  // ch0 [[1,5,2],[4,3,6]]: maxima 5 at (0,1), 6 at (1,2); ch1 [[9,0,0],[0,0,8]]: 9 at (0,0),
  // 8 at (1,2). Row-major flat index h*3 + w, column-major h + w*2, plus 6 per channel.
  ir::Node node = make_node("MaxPool", {"X"}, {"Y", "Indices"});
  set_ints(node, "kernel_shape", {2, 2});
  const Tensor x = f32({1, 2, 2, 3}, {1, 5, 2, 4, 3, 6, 9, 0, 0, 0, 0, 8});
  auto y = run(node, {x}, 12, 1, 0);
  auto i0 = run(node, {x}, 12, 1, 1);
  ASSERT_TRUE(y.has_value() && i0.has_value()) << i0.status().to_string();
  expect_near(*y, {1, 2, 1, 2}, {5, 6, 9, 8});
  ASSERT_EQ(i0->dtype(), DataType::kInt64);
  EXPECT_EQ(values<int64_t>(*i0), (std::vector<int64_t>{1, 5, 6, 11}));
  set_int(node, "storage_order", 1);
  auto i1 = run(node, {x}, 12, 1, 1);
  ASSERT_TRUE(i1.has_value());
  EXPECT_EQ(values<int64_t>(*i1), (std::vector<int64_t>{2, 5, 6, 11}));
}

TEST(MaxPool, Int8AndUInt8) {
  ir::Node node = make_node("MaxPool", {"X"});
  set_ints(node, "kernel_shape", {2});
  auto a = run(node, {make<int8_t>(DataType::kInt8, {1, 1, 4}, {-5, -7, 100, -128})}, 12);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  EXPECT_EQ(values<int8_t>(*a), (std::vector<int8_t>{-5, 100, 100}));
  auto b = run(node, {make<uint8_t>(DataType::kUInt8, {1, 1, 3}, {255, 0, 7})}, 12);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values<uint8_t>(*b), (std::vector<uint8_t>{255, 7}));
}

TEST(MaxPool, ThreeDimensional) {
  ir::Node node = make_node("MaxPool", {"X"});
  set_ints(node, "kernel_shape", {2, 2, 2});
  auto y = run(node, {f32({1, 1, 2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  // windows over w = 0..1 and 1..2: max(0,1,3,4,6,7,9,10) = 10, max(1,2,4,5,7,8,10,-1) = 10.
  expect_near(*y, {1, 1, 1, 1, 2}, {10, 10});
}

TEST(AveragePool, PadsWithAndWithoutCountIncludePad) {
  // 3x3 of 0..8, kernel 3, pads 1: corner window holds 0,1,3,4 (sum 8) of 9 positions, the top
  // edge 0..5 (sum 15) of 9, the center everything (36).
  ir::Node node = make_node("AveragePool", {"X"});
  set_ints(node, "kernel_shape", {3, 3});
  set_ints(node, "pads", {1, 1, 1, 1});
  const Tensor x = f32({1, 1, 3, 3}, iota(9));
  auto excl = run(node, {x});
  ASSERT_TRUE(excl.has_value()) << excl.status().to_string();
  std::vector<float> v = values<float>(*excl);
  EXPECT_NEAR(v[0], 8.0 / 4, 1e-6);
  EXPECT_NEAR(v[1], 15.0 / 6, 1e-6);
  EXPECT_NEAR(v[4], 36.0 / 9, 1e-6);
  set_int(node, "count_include_pad", 1);
  auto incl = run(node, {x});
  ASSERT_TRUE(incl.has_value());
  v = values<float>(*incl);
  EXPECT_NEAR(v[0], 8.0 / 9, 1e-6);
  EXPECT_NEAR(v[1], 15.0 / 9, 1e-6);
  EXPECT_NEAR(v[4], 36.0 / 9, 1e-6);
}

TEST(AveragePool, SameUpperPadsTheEnd) {
  // in 5, kernel 2, stride 2: 3 outputs, one pad at the end: [1,2], [3,4], [5].
  ir::Node node = make_node("AveragePool", {"X"});
  set_ints(node, "kernel_shape", {2});
  set_ints(node, "strides", {2});
  set_string(node, "auto_pad", "SAME_UPPER");
  auto y = run(node, {f32({1, 1, 5}, {1, 2, 3, 4, 5})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 3}, {1.5f, 3.5f, 5});
  set_string(node, "auto_pad", "SAME_LOWER");
  auto z = run(node, {f32({1, 1, 5}, {1, 2, 3, 4, 5})});
  ASSERT_TRUE(z.has_value());
  expect_near(*z, {1, 1, 3}, {1, 2.5f, 4.5f});
}

TEST(AveragePool, PpocrRecKernel3x2) {
  // PP-OCRv4 rec: kernel (3, 2), stride (3, 2) over [1, 2, 3, 4]; each output averages a 3x2 block.
  ir::Node node = make_node("AveragePool", {"X"});
  set_ints(node, "kernel_shape", {3, 2});
  set_ints(node, "strides", {3, 2});
  set_ints(node, "pads", {0, 0, 0, 0});
  auto y = run(node, {f32({1, 2, 3, 4}, iota(24))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  // ch0 block cols 0-1: (0+1+4+5+8+9)/6 = 4.5, cols 2-3: 6.5; ch1 adds 12.
  expect_near(*y, {1, 2, 1, 2}, {4.5f, 6.5f, 16.5f, 18.5f});
}

TEST(LpPool, PNormsOfWindows) {
  ir::Node node = make_node("LpPool", {"X"});
  set_ints(node, "kernel_shape", {2});
  auto y = run(node, {f32({1, 1, 3}, {3, -4, 0})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2}, {5, 4});
  set_int(node, "p", 1);
  auto z = run(node, {f32({1, 1, 3}, {3, -4, 0})});
  ASSERT_TRUE(z.has_value());
  expect_near(*z, {1, 1, 2}, {7, 4});
  set_int(node, "p", 3);
  auto c = run(node, {f32({1, 1, 2}, {1, 2})});
  ASSERT_TRUE(c.has_value());
  expect_near(*c, {1, 1, 1}, {std::cbrt(9.0f)});
}

TEST(GlobalPool, AverageMaxLp) {
  const Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, -8});
  auto avg = run(make_node("GlobalAveragePool", {"X"}), {x});
  ASSERT_TRUE(avg.has_value()) << avg.status().to_string();
  expect_near(*avg, {1, 2, 1, 1}, {2.5f, 2.5f});
  auto mx = run(make_node("GlobalMaxPool", {"X"}), {x});
  ASSERT_TRUE(mx.has_value());
  expect_near(*mx, {1, 2, 1, 1}, {4, 7});
  auto lp = run(make_node("GlobalLpPool", {"X"}), {x});
  ASSERT_TRUE(lp.has_value());
  expect_near(*lp, {1, 2, 1, 1}, {std::sqrt(30.0f), std::sqrt(174.0f)}, 1e-5f);
}

TEST(GlobalPool, LargePlaneMatchesLoop) {
  // 160x160 planes as in PP-OCR det: the 16-lane sum must stay accurate.
  const Tensor x = random_f32({2, 3, 160, 161}, 5);
  auto avg = run(make_node("GlobalAveragePool", {"X"}), {x}, 17, 2);
  auto mx = run(make_node("GlobalMaxPool", {"X"}), {x}, 17, 2);
  ASSERT_TRUE(avg.has_value() && mx.has_value());
  const float* p = x.data<float>();
  const int64_t plane = 160 * 161;
  for (int64_t c = 0; c < 6; ++c) {
    double s = 0;
    float m = p[c * plane];
    for (int64_t i = 0; i < plane; ++i) {
      s += p[c * plane + i];
      m = std::max(m, p[c * plane + i]);
    }
    EXPECT_NEAR(avg->data<float>()[c], s / plane, 1e-7);
    EXPECT_EQ(mx->data<float>()[c], m);
  }
}

TEST(MaxUnpool, ScattersToTheIndices) {
  // MaxPool of a 4x4 (kernel 2, stride 2) picked flat indices 5, 7, 13, 15 = (1,1), (1,3),
  // (3,1), (3,3); unpooling puts the values back there. With output_shape 5x5 the same (h, w)
  // positions are used in the larger plane.
  ir::Node node = make_node("MaxUnpool", {"X", "I", "output_shape"});
  set_ints(node, "kernel_shape", {2, 2});
  set_ints(node, "strides", {2, 2});
  const Tensor x = f32({1, 1, 2, 2}, {5, 6, 7, 8});
  const Tensor i = make<int64_t>(DataType::kInt64, {1, 1, 2, 2}, {5, 7, 13, 15});
  auto y = run(node, {x, i, Tensor()}, 11);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4, 4}, {0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8});
  auto z = run(node, {x, i, make<int64_t>(DataType::kInt64, {4}, {1, 1, 5, 5})}, 11);
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  expect_near(*z, {1, 1, 5, 5}, {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0});
  auto bad = run(node, {x, make<int64_t>(DataType::kInt64, {1, 1, 2, 2}, {5, 7, 13, 16}), Tensor()}, 11);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(MaxPool, WindowLargerThanThePaddedInputFollowsTheSpecAndOnnxRuntime) {
  // X 1x1x2x2 = [[1, 4], [3, 2]], kernel 3x3, no pads: the window overhangs the input by 1.
  // Spec (Operators.md MaxPool): floor/ceil((2 - 3) / stride + 1); ONNX Runtime 1.30 (ort_run.js)
  // gives Y [1,1,0,0] for stride 1, [[4]] (MaxPool) and [[2.5]] (AveragePool, mean of the 4
  // inputs) for stride 2 with ceil_mode, [[4]] for stride 2 without ceil_mode where the spec
  // says 0 outputs, and "Calculated output dimension is negative" for kernel 10.
  const Tensor x = f32({1, 1, 2, 2}, {1, 4, 3, 2});
  auto pool = [&](const char* op, int64_t kernel, int64_t stride, int64_t ceil_mode) {
    ir::Node node = make_node(op, {"X"});
    set_ints(node, "kernel_shape", {kernel, kernel});
    set_ints(node, "strides", {stride, stride});
    set_int(node, "ceil_mode", ceil_mode);
    return run(node, {x});
  };
  for (int64_t ceil_mode : {0, 1}) {
    auto empty = pool("MaxPool", 3, 1, ceil_mode);
    ASSERT_TRUE(empty.has_value()) << empty.status().to_string();
    EXPECT_EQ(empty->shape(), (Shape{1, 1, 0, 0}));
  }
  auto max = pool("MaxPool", 3, 2, 1);
  ASSERT_TRUE(max.has_value()) << max.status().to_string();
  expect_near(*max, {1, 1, 1, 1}, {4});
  auto avg = pool("AveragePool", 3, 2, 1);
  ASSERT_TRUE(avg.has_value()) << avg.status().to_string();
  expect_near(*avg, {1, 1, 1, 1}, {2.5f});
  auto ambiguous = pool("MaxPool", 3, 2, 0);
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ambiguous.status().message().find("gives 0 outputs but ONNX Runtime 1"), std::string::npos)
      << ambiguous.status().message();
  auto negative = pool("MaxPool", 10, 1, 1);
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.status().message().find("negative extent"), std::string::npos) << negative.status().message();
}

TEST(Pool, ErrorsAreClear) {
  ir::Node node = make_node("MaxPool", {"X"});
  node.name = "p1";
  auto missing = run(node, {f32({1, 1, 4}, iota(4))});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("kernel_shape"), std::string::npos);
  set_ints(node, "kernel_shape", {6});
  auto big = run(node, {f32({1, 1, 4}, iota(4))});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  set_ints(node, "kernel_shape", {2, 2});
  auto rank = run(node, {f32({1, 1, 4}, iota(4))});
  EXPECT_FALSE(rank.has_value());
  auto low = run(make_node("GlobalAveragePool", {"X"}), {f32({4}, iota(4))});
  EXPECT_FALSE(low.has_value());
  ir::Node avg = make_node("AveragePool", {"X"});
  set_ints(avg, "kernel_shape", {2});
  auto ints = run(avg, {make<int32_t>(DataType::kInt32, {1, 1, 2}, {1, 2})});
  ASSERT_FALSE(ints.has_value());
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
}

}  // namespace kernels_pool_test
}  // namespace edgemm
