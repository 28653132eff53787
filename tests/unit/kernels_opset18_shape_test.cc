// The opset 18–21 forms of Split, Pad, CenterCropPad and Resize (src/kernels/cpu/concat_split.cc,
// pad_tile_expand.cc, resize.cc) run through runtime::run_node at the op's opset. Expected values
// are worked out by hand in the comments next to each case, never taken from an earlier run of
// these kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_opset18_shape_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::set_float;
using nntest::set_int;
using nntest::set_ints;
using nntest::set_string;

/// A Split node with `outputs` outputs y0, y1, ...
ir::Node split18_node(std::vector<std::string> inputs, int outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) names.push_back("y" + std::to_string(i));
  return make_node("Split", std::move(inputs), names);
}

/// Every output of `node` run at `opset`; fails the test on an error.
std::vector<Tensor> run_all18(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  auto out = runtime::run_node(node, inputs, opset, 1);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : std::vector<Tensor>{};
}

// ---- Split-18 -------------------------------------------------------------------------------

TEST(Opset18Split, NumOutputsUnevenLastChunkSmaller) {
  // 7 into 3: chunks of ceil(7 / 3) = 3, the last 7 - 6 = 1.
  ir::Node node = split18_node({"x"}, 3);
  set_int(node, "num_outputs", 3);
  auto out = run_all18(node, {f32({7}, {1, 2, 3, 4, 5, 6, 7})}, 18);
  ASSERT_EQ(out.size(), 3u);
  expect_near(out[0], {3}, {1, 2, 3});
  expect_near(out[1], {3}, {4, 5, 6});
  expect_near(out[2], {1}, {7});
  // [2, 5] on axis -1 into 2: 3 and 2 columns.
  ir::Node two = split18_node({"x"}, 2);
  set_int(two, "num_outputs", 2);
  set_int(two, "axis", -1);
  out = run_all18(two, {f32({2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})}, 18);
  ASSERT_EQ(out.size(), 2u);
  expect_near(out[0], {2, 3}, {1, 2, 3, 6, 7, 8});
  expect_near(out[1], {2, 2}, {4, 5, 9, 10});
  // Even: 6 into 3 of 2.
  out = run_all18(node, {i64({6}, {1, 2, 3, 4, 5, 6})}, 18);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{5, 6}));
}

TEST(Opset18Split, SplitInputStillWorks) {
  ir::Node node = split18_node({"x", "split"}, 2);
  auto out = run_all18(node, {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {4, 1})}, 18);
  ASSERT_EQ(out.size(), 2u);
  expect_near(out[0], {4}, {1, 2, 3, 4});
  expect_near(out[1], {1}, {5});
}

TEST(Opset18Split, NumOutputsErrors) {
  ir::Node node = split18_node({"x"}, 4);
  set_int(node, "num_outputs", 4);
  // 9 into 4: chunks of 3 leave nothing for the last; 5 into 4: chunks of 2 overrun.
  expect_error(run(node, {f32({9}, std::vector<float>(9, 1.0f))}, 18), StatusCode::kInvalidArgument,
               {"n_Split", "extent 9", "4 chunks of 3", "0 elements"});
  expect_error(run(node, {f32({5}, std::vector<float>(5, 1.0f))}, 18), StatusCode::kInvalidArgument,
               {"extent 5", "4 chunks of 2", "-1 elements"});
  // More parts than elements.
  expect_error(run(node, {f32({2}, {1, 2})}, 18), StatusCode::kInvalidArgument, {"extent 2"});
  // num_outputs must match the outputs and be >= 1.
  ir::Node mismatch = split18_node({"x"}, 3);
  set_int(mismatch, "num_outputs", 2);
  expect_error(run(mismatch, {f32({6}, std::vector<float>(6, 1.0f))}, 18), StatusCode::kInvalidModel,
               {"'num_outputs' is 2", "3 outputs"});
  ir::Node zero = split18_node({"x"}, 1);
  set_int(zero, "num_outputs", 0);
  expect_error(run(zero, {f32({6}, std::vector<float>(6, 1.0f))}, 18), StatusCode::kInvalidModel,
               {"'num_outputs' is 0"});
  // Both the split input and num_outputs.
  ir::Node both = split18_node({"x", "split"}, 2);
  set_int(both, "num_outputs", 2);
  expect_error(run(both, {f32({4}, {1, 2, 3, 4}), i64({2}, {2, 2})}, 18), StatusCode::kInvalidModel,
               {"both the 'split' input and attribute 'num_outputs'"});
}

// ---- Pad-18 / 19 / 21 -----------------------------------------------------------------------

TEST(Opset18Pad, AxesInput) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // axes [1]: pads [begin 1, end 2] on the columns only.
  ir::Node node = make_node("Pad", {"x", "pads", "", "axes"});
  auto out = run(node, {x, i64({2}, {1, 2}), Tensor(), i64({1}, {1})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 6}, {0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0});
  // Negative axis -2 (the rows), edge mode, int32 axes.
  ir::Node edge = make_node("Pad", {"x", "pads", "", "axes"});
  set_string(edge, "mode", "edge");
  out = run(edge, {x, i64({2}, {1, 0}), Tensor(), i32({1}, {-2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {3, 3}, {1, 2, 3, 1, 2, 3, 4, 5, 6});
  // axes [1, 0]: pads are begins (axis 1: 1, axis 0: 0) then ends (axis 1: 0, axis 0: 1).
  ir::Node constant = make_node("Pad", {"x", "pads", "value", "axes"});
  out = run(constant, {x, i64({4}, {1, 0, 0, 1}), f32({}, {9}), i64({2}, {1, 0})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {3, 4}, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
}

TEST(Opset18Pad, AxesErrors) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ir::Node node = make_node("Pad", {"x", "pads", "", "axes"});
  expect_error(run(node, {x, i64({4}, {1, 1, 1, 1}), Tensor(), i64({2}, {1, -1})}, 18), StatusCode::kInvalidArgument,
               {"names axis 1 twice"});
  expect_error(run(node, {x, i64({2}, {1, 1}), Tensor(), i64({1}, {2})}, 18), StatusCode::kInvalidArgument, {});
  expect_error(run(node, {x, i64({4}, {1, 1, 1, 1}), Tensor(), i64({1}, {1})}, 18), StatusCode::kInvalidArgument,
               {"'pads' has 4 entries, expected 2"});
  // Pad-13 has no axes input.
  expect_error(run(node, {x, i64({2}, {1, 1}), Tensor(), i64({1}, {1})}, 13), StatusCode::kInvalidModel,
               {"'axes'", "opset 18"});
}

TEST(Opset19Pad, Wrap) {
  // [1, 2, 3] with 2 before and 4 after: positions -2..5 wrap to 2 3 | 1 2 3 | 1 2 3 1.
  ir::Node node = make_node("Pad", {"x", "pads"});
  set_string(node, "mode", "wrap");
  auto out = run(node, {f32({3}, {1, 2, 3}), i64({2}, {2, 4})}, 19);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {9}, {2, 3, 1, 2, 3, 1, 2, 3, 1});
  // A negative pad crops first: [1..6] without its first element is [2..6], then 2 wrap after.
  out = run(node, {f32({6}, {1, 2, 3, 4, 5, 6}), i64({2}, {-1, 2})}, 19);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {7}, {2, 3, 4, 5, 6, 2, 3});
  // uint8 (Pad-21 widens the types; bytes are copied whatever the dtype), on axis 1 of [2, 2].
  out = run(node, {u8({2, 2}, {1, 2, 3, 4}), i64({4}, {0, 1, 0, 0})}, 21);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(values<uint8_t>(*out), (std::vector<uint8_t>{2, 1, 2, 4, 3, 4}));
  // Cropped to nothing, there is nothing to wrap.
  expect_error(run(node, {f32({2}, {1, 2}), i64({2}, {-2, 1})}, 19), StatusCode::kInvalidArgument,
               {"wrap-pad axis 0", "cropped to 0"});
}

// ---- CenterCropPad-18 -----------------------------------------------------------------------

TEST(Opset18CenterCropPad, CropAndPad) {
  // x[r][c] = 5r + c, [4, 5] -> [2, 7]: rows 1..2 (crop 2, one from each side), columns padded
  // by one zero on each side.
  std::vector<float> v(20);
  for (int i = 0; i < 20; ++i) v[i] = static_cast<float>(i);
  ir::Node node = make_node("CenterCropPad", {"x", "shape"});
  auto out = run(node, {f32({4, 5}, v), i64({2}, {2, 7})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 7}, {0, 5, 6, 7, 8, 9, 0, 0, 10, 11, 12, 13, 14, 0});
  // Odd differences: cropping 5 to 2 cuts 1 before and 2 after; padding 2 to 5 adds 1 before,
  // 2 after.
  out = run(node, {f32({5}, {1, 2, 3, 4, 5}), i64({1}, {2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {2, 3});
  out = run(node, {i64({2}, {7, 8}), i64({1}, {5})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(values<int64_t>(*out), (std::vector<int64_t>{0, 7, 8, 0, 0}));
}

TEST(Opset18CenterCropPad, Axes) {
  // axes [-1]: only the columns of [[1, 2, 3], [4, 5, 6]], cropped to the middle one.
  ir::Node node = make_node("CenterCropPad", {"x", "shape"});
  set_ints(node, "axes", {-1});
  auto out = run(node, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {1})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 1}, {2, 5});
  // axes [1, 0] with shape [2, 4]: columns to 2 (crop 1 after), rows padded to 4 (1 before, 1 after).
  set_ints(node, "axes", {1, 0});
  out = run(node, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 4})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {4, 2}, {0, 0, 1, 2, 4, 5, 0, 0});
}

TEST(Opset18CenterCropPad, Errors) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  ir::Node node = make_node("CenterCropPad", {"x", "shape"});
  expect_error(run(node, {x, i64({1}, {2})}, 18), StatusCode::kInvalidArgument,
               {"n_CenterCropPad", "'shape' has 1 values", "2 axes"});
  expect_error(run(node, {x, i64({2}, {2, -1})}, 18), StatusCode::kInvalidArgument, {"negative extent -1"});
  set_ints(node, "axes", {0, -2});
  expect_error(run(node, {x, i64({2}, {2, 2})}, 18), StatusCode::kInvalidModel, {"names axis 0 twice"});
  set_ints(node, "axes", {2});
  expect_error(run(node, {x, i64({1}, {2})}, 18), StatusCode::kInvalidArgument, {});
  // Not an op before opset 18.
  ir::Node old = make_node("CenterCropPad", {"x", "shape"});
  expect_error(run(old, {x, i64({2}, {2, 2})}, 17), StatusCode::kUnsupported, {});
}

// ---- Resize-18 / 19 -------------------------------------------------------------------------

/// Resize with inputs X, roi (absent), scales or sizes.
ir::Node resize18_node(const std::string& mode, bool sizes) {
  ir::Node node = make_node(
      "Resize", sizes ? std::vector<std::string>{"x", "", "", "sizes"} : std::vector<std::string>{"x", "", "scales"});
  set_string(node, "mode", mode);
  return node;
}

TEST(Opset18Resize, Axes) {
  // axes [-1], sizes [4]: the columns of [[1, 2], [3, 4]] doubled with half_pixel linear;
  // samples at -0.25 (clamped: the edge), 0.25, 0.75, 1.25 (clamped).
  ir::Node node = resize18_node("linear", true);
  set_ints(node, "axes", {-1});
  auto out = run(node, {f32({2, 2}, {1, 2, 3, 4}), Tensor(), Tensor(), i64({1}, {4})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 4}, {1, 1.25f, 1.75f, 2, 3, 3.25f, 3.75f, 4});
  // The same through scales listing only axis 1.
  ir::Node scales = resize18_node("linear", false);
  set_ints(scales, "axes", {1});
  out = run(scales, {f32({2, 2}, {1, 2, 3, 4}), Tensor(), f32({1}, {2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 4}, {1, 1.25f, 1.75f, 2, 3, 3.25f, 3.75f, 4});
}

TEST(Opset18Resize, KeepAspectRatioPolicy) {
  // x[r][c] = 6r + c on [4, 6], sizes [2, 2]: size / in = 0.5 (rows) and 1/3 (columns).
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  const Tensor x = f32({4, 6}, v);
  ir::Node node = resize18_node("nearest", true);
  // not_smaller: scale 0.5 for both, output [2, 3]; half_pixel samples 2o + 0.5 round (prefer
  // floor) to 2o: rows 0, 2 and columns 0, 2, 4.
  set_string(node, "keep_aspect_ratio_policy", "not_smaller");
  auto out = run(node, {x, Tensor(), Tensor(), i64({2}, {2, 2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2, 3}, {0, 2, 4, 12, 14, 16});
  // not_larger: scale 1/3, output [round(4/3), 2] = [1, 2]; samples 3o + 1: row 1, columns 1, 4.
  set_string(node, "keep_aspect_ratio_policy", "not_larger");
  out = run(node, {x, Tensor(), Tensor(), i64({2}, {2, 2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {1, 2}, {7, 10});
  // stretch (the default): exactly the sizes.
  set_string(node, "keep_aspect_ratio_policy", "stretch");
  out = run(node, {x, Tensor(), Tensor(), i64({2}, {2, 2})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(out->shape(), (Shape{2, 2}));
  // Only the listed axes share the scale: axes [1] with size 3 of 6 leaves the rows alone.
  set_string(node, "keep_aspect_ratio_policy", "not_larger");
  set_ints(node, "axes", {1});
  out = run(node, {x, Tensor(), Tensor(), i64({1}, {3})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(out->shape(), (Shape{4, 3}));
  set_string(node, "keep_aspect_ratio_policy", "smallest");
  expect_error(run(node, {x, Tensor(), Tensor(), i64({1}, {3})}, 18), StatusCode::kInvalidModel,
               {"keep_aspect_ratio_policy 'smallest'"});
}

TEST(Opset19Resize, HalfPixelSymmetric) {
  // [0, 1, 2, 3] at scale 0.6: output floor(2.4) = 2. half_pixel samples (o + 0.5) / 0.6 - 0.5 =
  // 1/3 and 2; half_pixel_symmetric adds 4/2 · (1 - 2 / 2.4) = 1/3: 2/3 and 7/3. Linear
  // interpolation of these values returns the sample positions.
  const Tensor x = f32({4}, {0, 1, 2, 3});
  ir::Node node = resize18_node("linear", false);
  set_string(node, "coordinate_transformation_mode", "half_pixel_symmetric");
  auto out = run(node, {x, Tensor(), f32({1}, {0.6f})}, 19);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {2.0f / 3, 7.0f / 3});
  set_string(node, "coordinate_transformation_mode", "half_pixel");
  out = run(node, {x, Tensor(), f32({1}, {0.6f})}, 19);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {1.0f / 3, 2});
  // Not known before opset 19.
  set_string(node, "coordinate_transformation_mode", "half_pixel_symmetric");
  expect_error(run(node, {x, Tensor(), f32({1}, {0.6f})}, 18), StatusCode::kInvalidModel, {"half_pixel_symmetric"});
}

TEST(Opset18Resize, AntialiasLinear) {
  // [0, 1, 2, 3] at scale 0.5: samples at 0.5 and 2.5. The filter 1 - |d| · 0.5 reaches 2
  // inputs each side: at 0.5 inputs -1, 0, 1, 2 weigh 0.25, 0.75, 0.75, 0.25 (/2), input -1
  // clamped to 0: 0.375 · 1 + 0.125 · 2 = 0.625; at 2.5 inputs 1..4 (4 clamped to 3):
  // 0.125 + 0.375 · 2 + 0.375 · 3 + 0.125 · 3 = 2.375.
  const Tensor x = f32({4}, {0, 1, 2, 3});
  ir::Node node = resize18_node("linear", false);
  set_int(node, "antialias", 1);
  auto out = run(node, {x, Tensor(), f32({1}, {0.5f})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {0.625f, 2.375f});
  // Scale 0.25: one sample at 1.5 whose filter 1 - |d| / 4 reaches inputs -2..5 (weights 1, 3, 5,
  // 7, 7, 5, 3, 1 eighths, sum 4); the outside ones merge into the edges: 9, 7, 7, 9 eighths,
  // (7 + 14 + 27) / 8 / 4 = 1.5.
  auto wide = run(node, {x, Tensor(), f32({1}, {0.25f})}, 18);
  ASSERT_TRUE(wide.has_value()) << wide.status().to_string();
  expect_near(*wide, {1}, {1.5f});
  // exclude_outside drops the outside taps: (0.75 · 1 + 0.25 · 2) / 1.75 and
  // (0.25 · 1 + 0.75 · 2 + 0.75 · 3) / 1.75.
  set_int(node, "exclude_outside", 1);
  out = run(node, {x, Tensor(), f32({1}, {0.5f})}, 18);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {1.25f / 1.75f, 4.0f / 1.75f});
  // Opset 17 has no antialias: plain linear samples 0.5 and 2.5.
  out = run(node, {x, Tensor(), f32({1}, {0.5f})}, 17);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_near(*out, {2}, {0.5f, 2.5f});
  // Upsampling is plain interpolation, antialias or not.
  ir::Node plain = resize18_node("cubic", false);
  ir::Node aa = resize18_node("cubic", false);
  set_int(aa, "antialias", 1);
  auto a = run(plain, {x, Tensor(), f32({1}, {2.5f})}, 18);
  auto b = run(aa, {x, Tensor(), f32({1}, {2.5f})}, 18);
  ASSERT_TRUE(a.has_value() && b.has_value());
  expect_near(*b, a->shape(), values<float>(*a));
}

TEST(Opset18Resize, AntialiasCubicKeepsConstants) {
  // Normalized weights: a constant image stays constant, clamped at the edges or not.
  ir::Node node = resize18_node("cubic", false);
  set_int(node, "antialias", 1);
  for (int exclude : {0, 1}) {
    set_int(node, "exclude_outside", exclude);
    auto out =
        run(node, {f32({1, 1, 9, 7}, std::vector<float>(63, 2.5f)), Tensor(), f32({4}, {1, 1, 0.3f, 0.45f})}, 18);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    expect_near(*out, {1, 1, 2, 3}, std::vector<float>(6, 2.5f));
  }
}

TEST(Opset18Resize, Errors) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  ir::Node node = resize18_node("nearest", false);
  set_ints(node, "axes", {1, -1});
  expect_error(run(node, {x, Tensor(), f32({2}, {2, 2})}, 18), StatusCode::kInvalidModel,
               {"n_Resize", "names axis 1 twice"});
  set_ints(node, "axes", {2});
  expect_error(run(node, {x, Tensor(), f32({1}, {2})}, 18), StatusCode::kInvalidArgument, {});
  set_ints(node, "axes", {0});
  expect_error(run(node, {x, Tensor(), f32({2}, {2, 2})}, 18), StatusCode::kInvalidArgument,
               {"'scales' has 2 values", "'axes' lists 1 axes"});
  // antialias is for linear and cubic only.
  ir::Node nearest = resize18_node("nearest", false);
  set_int(nearest, "antialias", 1);
  expect_error(run(nearest, {x, Tensor(), f32({2}, {0.5f, 0.5f})}, 18), StatusCode::kInvalidModel,
               {"antialias", "nearest"});
}

}  // namespace kernels_opset18_shape_test
}  // namespace edgemm
