// NonMaxSuppression, RoiAlign (src/kernels/cpu/detection.cc) and GridSample
// (src/kernels/cpu/grid_sample.cc) run through runtime::run_node. Expected values are worked
// out by hand in the comments next to each case, never taken from an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_detection_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::set_float;
using nntest::set_int;
using nntest::set_string;

/// A node "my_<op>" with `inputs` inputs and one output.
ir::Node make_node(const std::string& op, int inputs) {
  ir::Node node;
  node.op_type = op;
  node.name = "my_" + op;
  for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
  node.outputs.push_back("y");
  return node;
}
Tensor run_one(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset, int threads = 1) {
  auto out = runtime::run_node(node, inputs, opset, threads);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? (*out)[0] : Tensor();
}
Status run_error(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  auto out = runtime::run_node(node, inputs, opset, 1);
  EXPECT_FALSE(out.has_value());
  return out.has_value() ? Status::ok() : out.status();
}

void expect_f32(const Tensor& got, const Shape& shape, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(shape));
  ASSERT_EQ(got.dtype(), DataType::kFloat32);
  const auto v = values<float>(got);
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "element " << i << " = " << v[i];
    } else {
      EXPECT_NEAR(v[i], want[i], tol) << "element " << i;
    }
  }
}

// ---- NonMaxSuppression ------------------------------------------------------------------

/// Runs NMS (opset 11) on one batch and returns the selected rows flattened.
std::vector<int64_t> nms(const Tensor& boxes, const Tensor& scores, int64_t max_out, float iou, const float* score_thr,
                         int64_t center = 0, Shape* shape = nullptr) {
  ir::Node node = make_node("NonMaxSuppression", 5);
  if (center != 0) set_int(node, "center_point_box", center);
  std::vector<Tensor> in = {boxes, scores, i64({1}, {max_out}), f32({1}, {iou}), Tensor()};
  if (score_thr != nullptr) in[4] = f32({1}, {*score_thr});
  const Tensor y = run_one(node, in, 11);
  EXPECT_EQ(y.dtype(), DataType::kInt64);
  if (y.rank() == 2) {
    EXPECT_EQ(y.shape()[1], 3);
  }
  if (shape != nullptr) *shape = y.shape();
  return values<int64_t>(y);
}

TEST(DetectionTest, NmsIdenticalScoresLowerIndexFirst) {
  // Three disjoint unit boxes; scores 0.5, 0.9, 0.5: box 1 first, then the tie 0 before 2.
  const Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5});
  const Tensor scores = f32({1, 1, 3}, {0.5f, 0.9f, 0.5f});
  EXPECT_EQ(nms(boxes, scores, 10, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
  // Two identical boxes with the same score: IoU 1 > 0.5, only the lower index (0) stays.
  const Tensor same = f32({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  EXPECT_EQ(nms(same, f32({1, 1, 2}, {0.7f, 0.7f}), 10, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 0}));
  // max_output_boxes_per_class = 2 over the three disjoint boxes: 1, then 0.
  EXPECT_EQ(nms(boxes, scores, 2, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 1, 0, 0, 0}));
}

TEST(DetectionTest, NmsZeroAreaBoxesAreNeverSuppressed) {
  // Box 0 [0,0,2,2] (area 4), box 1 the point (1,1) inside it, box 2 the same point again,
  // box 3 a line [0,0,0,2]: every zero-area box has IoU "undefined" and is kept, even with
  // iou_threshold 0.
  const Tensor boxes = f32({1, 4, 4}, {0, 0, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 2});
  const Tensor scores = f32({1, 1, 4}, {0.9f, 0.8f, 0.7f, 0.6f});
  EXPECT_EQ(nms(boxes, scores, 10, 0.0f, nullptr), (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3}));
}

TEST(DetectionTest, NmsScoreThresholdExcludingAllAndMaxZero) {
  const Tensor boxes = f32({1, 2, 4}, {0, 0, 1, 1, 0, 2, 1, 3});
  const Tensor scores = f32({1, 1, 2}, {0.3f, 0.4f});
  Shape shape;
  // Scores must be strictly greater than the threshold: 0.4 is not > 0.4.
  const float thr = 0.4f;
  EXPECT_TRUE(nms(boxes, scores, 10, 0.5f, &thr, 0, &shape).empty());
  EXPECT_EQ(shape_to_string(shape), shape_to_string(Shape{0, 3}));
  // 0.35 keeps box 1 only.
  const float low = 0.35f;
  EXPECT_EQ(nms(boxes, scores, 10, 0.5f, &low), (std::vector<int64_t>{0, 0, 1}));
  // max_output_boxes_per_class 0 and absent: no output.
  EXPECT_TRUE(nms(boxes, scores, 0, 0.5f, nullptr, 0, &shape).empty());
  EXPECT_EQ(shape_to_string(shape), shape_to_string(Shape{0, 3}));
  ir::Node two_inputs = make_node("NonMaxSuppression", 2);
  const Tensor y = run_one(two_inputs, {boxes, scores}, 10);
  EXPECT_EQ(shape_to_string(y.shape()), shape_to_string(Shape{0, 3}));
}

TEST(DetectionTest, NmsIouEqualToThresholdIsKept) {
  // A = [0,0,1,4], B = [0,1,1,5] ([y1,x1,y2,x2]): intersection 1x3 = 3, union 4 + 4 - 3 = 5,
  // IoU 0.6. Suppression needs IoU > threshold: kept at 0.6, suppressed at 0.5.
  const Tensor boxes = f32({1, 2, 4}, {0, 0, 1, 4, 0, 1, 1, 5});
  const Tensor scores = f32({1, 1, 2}, {0.9f, 0.8f});
  EXPECT_EQ(nms(boxes, scores, 10, 0.6f, nullptr), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(nms(boxes, scores, 10, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 0}));
  // The same boxes with flipped corners ([y2,x2,y1,x1]) and as centers ([xc,yc,w,h]:
  // A = [2, 0.5, 4, 1], B = [3, 0.5, 4, 1]) give the same result.
  const Tensor flipped = f32({1, 2, 4}, {1, 4, 0, 0, 1, 5, 0, 1});
  EXPECT_EQ(nms(flipped, scores, 10, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 0}));
  const Tensor centers = f32({1, 2, 4}, {2, 0.5f, 4, 1, 3, 0.5f, 4, 1});
  EXPECT_EQ(nms(centers, scores, 10, 0.5f, nullptr, 1), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(nms(centers, scores, 10, 0.6f, nullptr, 1), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
}

TEST(DetectionTest, NmsOrderIsBatchThenClassThenScore) {
  // 2 batches x 2 classes over 2 disjoint boxes; class 1 prefers box 1 in batch 0 only.
  const Tensor boxes = f32({2, 2, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 0, 1, 1, 0, 2, 1, 3});
  const Tensor scores = f32({2, 2, 2}, {0.9f, 0.1f, 0.2f, 0.8f, 0.9f, 0.1f, 0.8f, 0.2f});
  EXPECT_EQ(nms(boxes, scores, 1, 0.5f, nullptr), (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0}));
}

TEST(DetectionTest, NmsBadIouThreshold) {
  ir::Node node = make_node("NonMaxSuppression", 4);
  const Status s =
      run_error(node, {f32({1, 1, 4}, {0, 0, 1, 1}), f32({1, 1, 1}, {1}), i64({1}, {1}), f32({1}, {1.5f})}, 11);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.to_string().find("NonMaxSuppression 'my_NonMaxSuppression'"), std::string::npos) << s.to_string();
}

// ---- RoiAlign ---------------------------------------------------------------------------

ir::Node roi_node(const std::string& mode, int64_t oh, int64_t ow, int64_t ratio, const char* ctm = nullptr) {
  ir::Node node = make_node("RoiAlign", 3);
  set_string(node, "mode", mode);
  set_int(node, "output_height", oh);
  set_int(node, "output_width", ow);
  set_int(node, "sampling_ratio", ratio);
  set_float(node, "spatial_scale", 1.0f);
  if (ctm != nullptr) set_string(node, "coordinate_transformation_mode", ctm);
  return node;
}

TEST(DetectionTest, RoiAlignRampAvgBothCoordinateModes) {
  // X[y][x] = x + 4y on 4x4 (bilinear samples of a linear function are exact).
  std::vector<float> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[i] = static_cast<float>(i % 4 + 4 * (i / 4));
  const Tensor x = f32({1, 1, 4, 4}, ramp);
  const Tensor rois = f32({1, 4}, {0, 0, 2, 2});
  const Tensor bi = i64({1}, {0});
  // output_half_pixel: samples at 0.5, 1.5 on both axes → mean x 1, mean y 1 → 1 + 4 = 5.
  expect_f32(run_one(roi_node("avg", 1, 1, 2, "output_half_pixel"), {x, rois, bi}, 16), {1, 1, 1, 1}, {5});
  // Opset 10 has no shift either.
  expect_f32(run_one(roi_node("avg", 1, 1, 2), {x, rois, bi}, 10), {1, 1, 1, 1}, {5});
  // half_pixel (opset 16 default): roi [-0.5, 1.5], samples at 0 and 1 → 0.5 + 4·0.5 = 2.5.
  expect_f32(run_one(roi_node("avg", 1, 1, 2), {x, rois, bi}, 16), {1, 1, 1, 1}, {2.5f});
  // 2x2 bins, sampling_ratio 1, output_half_pixel: bin centers 0.5, 1.5 → 0.5+2, 1.5+2, 0.5+6, 1.5+6.
  expect_f32(run_one(roi_node("avg", 2, 2, 1, "output_half_pixel"), {x, rois, bi}, 16), {1, 1, 2, 2},
             {2.5f, 3.5f, 6.5f, 7.5f});
}

TEST(DetectionTest, RoiAlignMaxTakesLargestWeightedCorner) {
  // X = [[1, 2], [3, 4]], roi [0,0,2,2], 1x1 bin, 2x2 samples at 0.5 / 1.5 (output_half_pixel):
  //   (0.5, 0.5): weights 0.25 on all → corners 0.25, 0.5, 0.75, 1 → max 1 (avg value 2.5)
  //   (x 1.5, y 0.5): x clamps to 1 → 0.5·2, 0.5·4 → max 2 (avg value 3)
  //   (x 0.5, y 1.5): y clamps to 1 → 0.5·3, 0.5·4 → max 2 (avg value 3.5)
  //   (1.5, 1.5): both clamp → 1·4 → 4 (avg value 4)
  // max = 4; avg = (2.5 + 3 + 3.5 + 4) / 4 = 3.25.
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor rois = f32({1, 4}, {0, 0, 2, 2});
  const Tensor bi = i64({1}, {0});
  expect_f32(run_one(roi_node("max", 1, 1, 2, "output_half_pixel"), {x, rois, bi}, 16), {1, 1, 1, 1}, {4});
  expect_f32(run_one(roi_node("avg", 1, 1, 2, "output_half_pixel"), {x, rois, bi}, 16), {1, 1, 1, 1}, {3.25f});
  // A roi beyond the right edge (x > W + 1 = 3): every sample reads nothing → 0.
  expect_f32(run_one(roi_node("avg", 1, 1, 2, "output_half_pixel"), {x, f32({1, 4}, {5, 0, 7, 2}), bi}, 16),
             {1, 1, 1, 1}, {0});
}

TEST(DetectionTest, RoiAlignBatchIndexOutOfRange) {
  const Tensor x = f32({2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor rois = f32({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  for (int64_t bad : {2, -1}) {
    const Status s = run_error(roi_node("avg", 1, 1, 1), {x, rois, i64({2}, {1, bad})}, 16);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    const std::string m = s.to_string();
    EXPECT_NE(m.find("RoiAlign 'my_RoiAlign'"), std::string::npos) << m;
    EXPECT_NE(m.find("batch_indices[1] = " + std::to_string(bad)), std::string::npos) << m;
    EXPECT_NE(m.find("[0, 2)"), std::string::npos) << m;
  }
  // The valid index 1 reads the second image: roi [0,0,1,1] with 1 sample at (0.5, 0.5)
  // (output_half_pixel) → mean of 5, 6, 7, 8 = 6.5.
  expect_f32(run_one(roi_node("avg", 1, 1, 1, "output_half_pixel"), {x, f32({1, 4}, {0, 0, 1, 1}), i64({1}, {1})}, 16),
             {1, 1, 1, 1}, {6.5f});
}

// ---- GridSample -------------------------------------------------------------------------

ir::Node gs_node(const std::string& mode, const std::string& padding, int64_t align) {
  ir::Node node = make_node("GridSample", 2);
  set_string(node, "mode", mode);
  set_string(node, "padding_mode", padding);
  set_int(node, "align_corners", align);
  return node;
}

/// GridSample of X [1, 1, H, W] at the grid points (x, y) pairs, as a [1, 1, 1, P] output.
Tensor sample(const Tensor& x, const std::vector<float>& points, const std::string& mode, const std::string& padding,
              int64_t align) {
  const int64_t p = static_cast<int64_t>(points.size() / 2);
  return run_one(gs_node(mode, padding, align), {x, f32({x.shape()[0], 1, p, 2}, points)}, 16);
}

TEST(DetectionTest, GridSampleBilinearOnAndOutsideTheBorder) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  // align_corners 1: (1, 1) is the center of pixel (1, 1) = 4, (-1, -1) of pixel (0, 0) = 1,
  // in every padding mode. (1.5, 0) → x = 1.25, y = 0.5:
  //   zeros: 0.75 · (0.5·2 + 0.5·4) = 2.25 (the column 2 reads 0);
  //   border: x clamps to 1 → 0.5·2 + 0.5·4 = 3;
  //   reflection at 1: x = 0.75 → rows 0.25·1 + 0.75·2 = 1.75 and 0.25·3 + 0.75·4 = 3.75 → 2.75.
  const std::vector<float> pts = {1, 1, -1, -1, 1.5f, 0};
  expect_f32(sample(x, pts, "bilinear", "zeros", 1), {1, 1, 1, 3}, {4, 1, 2.25f});
  expect_f32(sample(x, pts, "bilinear", "border", 1), {1, 1, 1, 3}, {4, 1, 3});
  expect_f32(sample(x, pts, "bilinear", "reflection", 1), {1, 1, 1, 3}, {4, 1, 2.75f});
  // align_corners 0: (1, 1) is the outer corner, x = y = 1.5: zeros weighs pixel (1, 1) by
  // 0.5·0.5 → 1; border and reflection read pixel (1, 1) for the outside taps → 4.
  // (0, 0) → x = y = 0.5 → mean of all four = 2.5.
  const std::vector<float> edge = {1, 1, 0, 0};
  expect_f32(sample(x, edge, "bilinear", "zeros", 0), {1, 1, 1, 2}, {1, 2.5f});
  expect_f32(sample(x, edge, "bilinear", "border", 0), {1, 1, 1, 2}, {4, 2.5f});
  expect_f32(sample(x, edge, "bilinear", "reflection", 0), {1, 1, 1, 2}, {4, 2.5f});
  // Far outside (3, 0): zeros → 0; border (align 0) → x clamps to 1, y = 0.5 → 0.5·2 + 0.5·4 = 3.
  expect_f32(sample(x, {3, 0}, "bilinear", "zeros", 0), {1, 1, 1, 1}, {0});
  expect_f32(sample(x, {3, 0}, "bilinear", "border", 0), {1, 1, 1, 1}, {3});
}

TEST(DetectionTest, GridSampleNearestRoundsHalfToEven) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  // align 0: (0, 0) → x = y = 0.5 → rounds to 0 → 1; (0.1, 0) → x = 0.6 → 1, y 0 → 2;
  // (-0.6, 0) → x = -0.1 → -0 → column 0 → 1; (-1, 1) → x = -0.5 → -0, y = 1.5 → 2 → zeros: 0.
  expect_f32(sample(x, {0, 0, 0.1f, 0, -0.6f, 0, -1, 1}, "nearest", "zeros", 0), {1, 1, 1, 4}, {1, 2, 1, 0});
  // Border: y = 2 clamps to 1 → pixel (1, 0) = 3.
  expect_f32(sample(x, {-1, 1}, "nearest", "border", 0), {1, 1, 1, 1}, {3});
}

TEST(DetectionTest, GridSampleBicubicPaddingModes) {
  // X = [1, 2, 4, 8] as 1x4; align 0; y = 0 (g_y = 0 → ((0+1)·1 - 1) / 2 = 0) so only the
  // row matters. Keys (a = -0.75) weights at t = 0.5: -0.09375, 0.59375, 0.59375, -0.09375.
  //  g_x = -0.5 → x = 0.5, taps -1..2 → reflection/border [1, 1, 2, 4] → 1.3125;
  //                              zeros [0, 1, 2, 4] → 1.40625.
  //  g_x = -1.5 → x = -1.5: reflection at -0.5 → 0.5 → 1.3125; border clamps to 0 → 1;
  //                          zeros taps -3..0 → only pixel 0 with -0.09375.
  const Tensor x = f32({1, 1, 1, 4}, {1, 2, 4, 8});
  expect_f32(sample(x, {-0.5f, 0, -1.5f, 0}, "bicubic", "reflection", 0), {1, 1, 1, 2}, {1.3125f, 1.3125f});
  expect_f32(sample(x, {-0.5f, 0, -1.5f, 0}, "bicubic", "border", 0), {1, 1, 1, 2}, {1.3125f, 1});
  expect_f32(sample(x, {-0.5f, 0, -1.5f, 0}, "bicubic", "zeros", 0), {1, 1, 1, 2}, {1.40625f, -0.09375f});
  // Border pads the neighbours, not the location: g_x = -1.1 → x = -0.7 (outside [-0.5, 3.5]),
  // taps -2..1 → [1, 1, 1, 2] at t = 0.3 with weights Keys(1.3) = -0.11025, Keys(0.3) = 0.83125,
  // Keys(0.7) = 0.32625, Keys(1.7) = -0.04725 → 1.04725 - 0.0945 = 0.95275 (not pixel 0's 1).
  expect_f32(sample(x, {-1.1f, 0}, "bicubic", "border", 0), {1, 1, 1, 1}, {0.95275f});
  // On a pixel center the weights are 0, 1, 0, 0: align 1 on 3x3 values 1..9, (0, 0) → 5.
  const Tensor nine = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_f32(sample(nine, {0, 0}, "bicubic", "zeros", 1), {1, 1, 1, 1}, {5});
}

TEST(DetectionTest, GridSampleNanAndInfiniteGrid) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Two channels; a NaN coordinate gives NaN in both without reading anything, its neighbour
  // point (0, 0) = mean 2.5 (and 25) is unaffected.
  const Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  const Tensor grid = f32({1, 1, 3, 2}, {nan, 0, 0, 0, 0, nan});
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      const Tensor y = run_one(gs_node(mode, padding, 0), {x, grid}, 16);
      const auto v = values<float>(y);
      ASSERT_EQ(v.size(), 6u);
      for (int i : {0, 2, 3, 5}) EXPECT_TRUE(std::isnan(v[i])) << mode << " " << padding << " element " << i;
      if (std::string(mode) == "bilinear") {
        EXPECT_FLOAT_EQ(v[1], 2.5f);
        EXPECT_FLOAT_EQ(v[4], 25.0f);
      }
    }
  }
  // Infinite coordinates: zeros reads nothing (0), border the edge (x → 1, y = 0.5 → 3),
  // reflection has no reflected location (NaN).
  const Tensor one = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_f32(sample(one, {inf, 0, -inf, 0}, "bilinear", "zeros", 0), {1, 1, 1, 2}, {0, 0});
  expect_f32(sample(one, {inf, 0}, "bilinear", "border", 0), {1, 1, 1, 1}, {3});
  expect_f32(sample(one, {inf, 0}, "bicubic", "reflection", 1), {1, 1, 1, 1}, {nan});
}

TEST(DetectionTest, GridSampleThreadsAgree) {
  // A larger grid with two threads gives the same values as one thread.
  const int64_t h = 16, w = 16, ho = 64, wo = 64;
  std::vector<float> img(static_cast<size_t>(2 * 3 * h * w)), pts(static_cast<size_t>(2 * ho * wo * 2));
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 101) / 7.0f;
  for (size_t i = 0; i < pts.size(); ++i) pts[i] = static_cast<float>((i * 53) % 97) / 32.0f - 1.5f;
  const Tensor x = f32({2, 3, h, w}, img);
  const Tensor grid = f32({2, ho, wo, 2}, pts);
  const ir::Node node = gs_node("bicubic", "reflection", 0);
  const auto a = values<float>(run_one(node, {x, grid}, 16, 1));
  const auto b = values<float>(run_one(node, {x, grid}, 16, 2));
  EXPECT_EQ(a, b);
}

}  // namespace kernels_detection_test
}  // namespace edgemm
