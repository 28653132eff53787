// Resize and Upsample (src/kernels/cpu/resize.cc). Expected values are hand-computed from the
// ONNX formulas (coordinates and weights written out in the comments), or come from a direct
// per-element bilinear formula written in this test (the kernel runs separable passes).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn_test_util.h"

namespace edgemm {
namespace kernels_resize_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

ir::Node resize_node(const std::string& mode, const std::string& coord = "") {
  ir::Node node = make_node("Resize", {"X", "roi", "scales", "sizes"});
  set_string(node, "mode", mode);
  if (!coord.empty()) set_string(node, "coordinate_transformation_mode", coord);
  return node;
}
Tensor sizes(std::vector<int64_t> v) { return make<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v); }

TEST(Resize, PpocrNearestAsymmetricFloorX2) {
  // PP-OCRv4 det's FPN upsampling: every pixel becomes a 2x2 block.
  ir::Node node = resize_node("nearest", "asymmetric");
  set_string(node, "nearest_mode", "floor");
  auto y = run(node, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), f32({4}, {1, 1, 2, 2})}, 11);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // The same through opset 13 with an empty roi tensor, and x8 as in the det neck.
  auto z = run(node, {f32({1, 1, 1, 2}, {5, 6}), f32({0}, {}), f32({4}, {1, 1, 1, 8})}, 13);
  ASSERT_TRUE(z.has_value()) << z.status().to_string();
  expect_near(*z, {1, 1, 1, 16}, {5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6});
}

TEST(Resize, NearestOnBlockedValuesMovesTheChannelBlock) {
  // An nChw8c value [1, 2, 3, 4, 8] upsampled 2x in H and 3x in W (the layout pass adds a fifth
  // scale of 1): y[n, c, h, w, j] = x[n, c, floor(h / 2), floor(w / 3), j].
  ir::Node node = resize_node("nearest", "asymmetric");
  set_string(node, "nearest_mode", "floor");
  std::vector<float> xv(2 * 3 * 4 * 8);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  auto y = run(node, {f32({1, 2, 3, 4, 8}, xv), Tensor(), f32({5}, {1, 1, 2, 3, 1})}, 11);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  std::vector<float> want;
  for (int c = 0; c < 2; ++c) {
    for (int h = 0; h < 6; ++h) {
      for (int w = 0; w < 12; ++w) {
        for (int j = 0; j < 8; ++j) want.push_back(xv[((c * 3 + h / 2) * 4 + w / 3) * 8 + j]);
      }
    }
  }
  expect_near(*y, {1, 2, 6, 12, 8}, want);
}

TEST(Resize, LinearHalfPixel) {
  // x_original = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped at the edges:
  // [1, 2] -> [1, 1.25, 1.75, 2]; rows mix the same way.
  ir::Node node = resize_node("linear");
  auto y = run(node, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), f32({4}, {1, 1, 2, 2})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4, 4}, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(Resize, LinearAlignCornersWithSizes) {
  // x_original = x * (3 - 1) / (5 - 1): 0, 0.5, 1, 1.5, 2.
  ir::Node node = resize_node("linear", "align_corners");
  auto y = run(node, {f32({1, 3}, {1, 2, 3}), Tensor(), Tensor(), sizes({1, 5})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 5}, {1, 1.5, 2, 2.5, 3});
}

TEST(Resize, NearestModes) {
  // 4 -> 3 with half_pixel: x_original = (x + 0.5) / 0.75 - 0.5 = 1/6, 1.5, 17/6.
  const Tensor x = f32({4}, {10, 20, 30, 40});
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {{"round_prefer_floor", {10, 20, 40}},
                                                                         {"round_prefer_ceil", {10, 30, 40}},
                                                                         {"floor", {10, 20, 30}},
                                                                         {"ceil", {20, 30, 40}}};
  for (const auto& [mode, want] : cases) {
    SCOPED_TRACE(mode);
    ir::Node node = resize_node("nearest");
    set_string(node, "nearest_mode", mode);
    auto y = run(node, {x, Tensor(), Tensor(), sizes({3})});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    expect_near(*y, {3}, want);
  }
  // tf_half_pixel_for_nn: x_original = (x + 0.5) / 0.75 = 2/3, 2, 10/3 -> 1, 2, 3.
  ir::Node node = resize_node("nearest", "tf_half_pixel_for_nn");
  auto y = run(node, {x, Tensor(), Tensor(), sizes({3})});
  ASSERT_TRUE(y.has_value());
  expect_near(*y, {3}, {20, 30, 40});
}

TEST(Resize, CubicWeightsAndExcludeOutside) {
  // Keys kernel with A = -0.75 at t = 0.5: weights [-0.09375, 0.59375, 0.59375, -0.09375].
  // Data 0,1,4,9,16, asymmetric, scale 2: x_original = x / 2.
  //   x=1 (0.5): taps -1,0,1,2 -> values 0,0,1,4 -> 0.59375 - 0.375 = 0.21875
  //   x=2 (1.0): exactly 1;  x=3 (1.5): 0.59375 * 5 - 0.09375 * 9 = 2.125
  //   x=9 (4.5): taps 3..6 clamp to 9,16,16,16 -> 16.65625
  // exclude_outside drops tap -1 and renormalizes by 1.09375: 0.21875 / 1.09375 = 0.2.
  ir::Node node = resize_node("cubic", "asymmetric");
  const Tensor x = f32({5}, {0, 1, 4, 9, 16});
  auto y = run(node, {x, Tensor(), f32({1}, {2})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  std::vector<float> v = values<float>(*y);
  ASSERT_EQ(v.size(), 10u);
  EXPECT_NEAR(v[0], 0, 1e-6);
  EXPECT_NEAR(v[1], 0.21875, 1e-6);
  EXPECT_NEAR(v[2], 1, 1e-6);
  EXPECT_NEAR(v[3], 2.125, 1e-6);
  EXPECT_NEAR(v[9], 16.65625, 1e-5);
  set_int(node, "exclude_outside", 1);
  auto z = run(node, {x, Tensor(), f32({1}, {2})});
  ASSERT_TRUE(z.has_value());
  EXPECT_NEAR(values<float>(*z)[1], 0.2, 1e-6);
  // cubic_coeff_a = -0.5 at t = 0.5: w(1.5) = -0.0625, w(0.5) = 0.5625; x=3: 0.5625*5 - 0.0625*9.
  ir::Node half = resize_node("cubic", "asymmetric");
  set_float(half, "cubic_coeff_a", -0.5f);
  auto h = run(half, {x, Tensor(), f32({1}, {2})});
  ASSERT_TRUE(h.has_value());
  EXPECT_NEAR(values<float>(*h)[3], 0.5625 * 5 - 0.0625 * 9, 1e-6);
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  // roi [0.4, 1.2] on 5 samples, 3 outputs: x_original = 1.6 + 1.6 x = 1.6, 3.2, 4.8; the last
  // lies beyond 4 and takes extrapolation_value 10.
  ir::Node node = resize_node("linear", "tf_crop_and_resize");
  set_float(node, "extrapolation_value", 10);
  auto y = run(node, {f32({5}, {1, 2, 3, 4, 5}), f32({2}, {0.4f, 1.2f}), Tensor(), sizes({3})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {3}, {2.6f, 4.2f, 10});
  ir::Node nn = resize_node("nearest", "tf_crop_and_resize");
  set_float(nn, "extrapolation_value", -1);
  auto z = run(nn, {f32({5}, {1, 2, 3, 4, 5}), f32({2}, {0.4f, 1.2f}), Tensor(), sizes({3})});
  ASSERT_TRUE(z.has_value());
  expect_near(*z, {3}, {3, 4, -1});  // 1.6 -> 2, 3.2 -> 3 (round_prefer_floor)
}

TEST(Resize, BilinearMatchesDirectFormula) {
  // Separable passes against a per-element bilinear formula (pytorch_half_pixel, both axes
  // resized, one up and one down), two channels.
  ir::Node node = resize_node("linear", "pytorch_half_pixel");
  const Tensor x = random_f32({1, 2, 7, 9}, 3);
  auto y = run(node, {x, Tensor(), Tensor(), sizes({1, 2, 13, 5})}, 13, 2);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  auto coord = [](int64_t o, int64_t in, int64_t out) {
    double c = (o + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
    return std::min(std::max(c, 0.0), static_cast<double>(in - 1));
  };
  const float* xv = x.data<float>();
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t oh = 0; oh < 13; ++oh) {
      for (int64_t ow = 0; ow < 5; ++ow) {
        const double h = coord(oh, 7, 13), w = coord(ow, 9, 5);
        const int64_t h0 = static_cast<int64_t>(h), w0 = static_cast<int64_t>(w);
        const int64_t h1 = std::min<int64_t>(h0 + 1, 6), w1 = std::min<int64_t>(w0 + 1, 8);
        const double th = h - h0, tw = w - w0;
        auto at = [&](int64_t i, int64_t j) { return static_cast<double>(xv[(c * 7 + i) * 9 + j]); };
        const double want =
            (1 - th) * ((1 - tw) * at(h0, w0) + tw * at(h0, w1)) + th * ((1 - tw) * at(h1, w0) + tw * at(h1, w1));
        EXPECT_NEAR(y->data<float>()[(c * 13 + oh) * 5 + ow], want, 1e-5);
      }
    }
  }
}

TEST(Resize, NearestCopiesAnyDtype) {
  ir::Node node = resize_node("nearest", "asymmetric");
  auto y = run(node, {make<uint8_t>(DataType::kUInt8, {2}, {7, 200}), Tensor(), f32({1}, {2})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{7, 7, 200, 200}));
  // scale 1.5: x_original = 0, 2/3, 4/3 -> round_prefer_floor 0, 1, 1.
  auto z = run(node, {make<int64_t>(DataType::kInt64, {2}, {-3, 1LL << 40}), Tensor(), f32({1}, {1.5f})});
  ASSERT_TRUE(z.has_value());
  EXPECT_EQ(values<int64_t>(*z), (std::vector<int64_t>{-3, 1LL << 40, 1LL << 40}));
}

TEST(Resize, Opset10AndUpsample) {
  // Opset 10 / Upsample: asymmetric; nearest rounds down when upsampling and up when
  // downsampling (scale 0.6: x_original = 0, 1.67 -> 0, 2).
  ir::Node r10 = make_node("Resize", {"X", "scales"});
  auto down = run(r10, {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({4}, {1, 1, 0.6f, 0.6f})}, 10);
  ASSERT_TRUE(down.has_value()) << down.status().to_string();
  expect_near(*down, {1, 1, 1, 2}, {1, 3});
  ir::Node u9 = make_node("Upsample", {"X", "scales"});
  // scale 3: x_original = 0, 1/3, 2/3, 1, ... -> floor.
  auto up = run(u9, {f32({1, 1, 1, 2}, {1, 2}), f32({4}, {1, 1, 1, 3})}, 9);
  ASSERT_TRUE(up.has_value()) << up.status().to_string();
  expect_near(*up, {1, 1, 1, 6}, {1, 1, 1, 2, 2, 2});
  ir::Node u7 = make_node("Upsample", {"X"});
  set_floats(u7, "scales", {1, 2});
  set_string(u7, "mode", "linear");
  // asymmetric linear: x_original = 0, 0.5, 1, 1.5 (clamped to 1) -> [1, 2, 3, 3].
  auto lin = run(u7, {f32({1, 2}, {1, 3})}, 7);
  ASSERT_TRUE(lin.has_value()) << lin.status().to_string();
  expect_near(*lin, {1, 4}, {1, 2, 3, 3});
}

TEST(Resize, ErrorsAreClear) {
  ir::Node node = resize_node("linear");
  auto both = run(node, {f32({2}, {1, 2}), Tensor(), f32({1}, {2}), sizes({4})});
  ASSERT_FALSE(both.has_value());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  auto count = run(node, {f32({1, 2}, {1, 2}), Tensor(), f32({1}, {2})});
  ASSERT_FALSE(count.has_value());
  EXPECT_NE(count.status().message().find("rank"), std::string::npos) << count.status().message();
  auto neg = run(node, {f32({2}, {1, 2}), Tensor(), f32({1}, {-2})});
  EXPECT_FALSE(neg.has_value());
  auto ints = run(node, {make<int32_t>(DataType::kInt32, {2}, {1, 2}), Tensor(), f32({1}, {2})});
  ASSERT_FALSE(ints.has_value());
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
  // A scale that would make a multi-terabyte output is refused before any table is built.
  auto huge = run(node, {f32({2}, {1, 2}), Tensor(), f32({1}, {1e12f})});
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.status().code(), StatusCode::kOutOfMemory);
  ir::Node bad = resize_node("bicubic");
  auto mode = run(bad, {f32({2}, {1, 2}), Tensor(), f32({1}, {2})});
  EXPECT_FALSE(mode.has_value());
}

}  // namespace kernels_resize_test
}  // namespace edgemm
