// DeformConv-19 (src/kernels/cpu/deform_conv.cc) runs through runtime::run_node at opset 19; error
// cases through run_direct so that messages name the node's own values. Expected values are
// worked out by hand in the comments, never taken from an earlier run of the kernel.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_deform_conv_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;
using nntest::set_int;
using nntest::set_ints;

ir::Node deform_node(bool bias = false, bool mask = false) {
  std::vector<std::string> in = {"X", "W", "offset"};
  if (bias || mask) in.push_back(bias ? "B" : "");
  if (mask) in.push_back("mask");
  return make_node("DeformConv", in);
}

const Tensor kX22 = f32({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(KernelsDeformConv, ZeroOffsetsAreAConvolution) {
  // 1x1 kernel W = 2, bias 0.5, zero offsets: Y = 2·X + 0.5.
  auto y = run(deform_node(true),
               {kX22, f32({1, 1, 1, 1}, {2}), f32({1, 2, 2, 2}, std::vector<float>(8, 0)), f32({1}, {0.5f})}, 19);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2}, {2.5f, 4.5f, 6.5f, 8.5f});
  // 2x2 kernel of ones over X 3x3 = 1..9: sums of the 2x2 windows 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9.
  auto y2 = run(deform_node(),
                {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                 f32({1, 8, 2, 2}, std::vector<float>(32, 0))},
                19);
  ASSERT_TRUE(y2.has_value()) << y2.status().to_string();
  expect_near(*y2, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(KernelsDeformConv, FractionalOffsetsInterpolateWithZerosOutside) {
  // 1x1 kernel W = 1, every tap shifted by (+0.5, +0.5) over X [[1, 2], [3, 4]]:
  //   (0, 0) → (0.5, 0.5): the mean of all four = 2.5;
  //   (0, 1) → (0.5, 1.5): 2 and 4 in the image, a quarter each = 1.5;
  //   (1, 0) → (1.5, 0.5): 3 and 4 = 1.75;  (1, 1) → (1.5, 1.5): only 4 = 1.
  std::vector<float> off(8, 0.5f);
  auto y = run(deform_node(), {kX22, f32({1, 1, 1, 1}, {1}), f32({1, 2, 2, 2}, off)}, 19);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2}, {2.5f, 1.5f, 1.75f, 1.0f});
  // A mask of 0.5, 1, 0, 2 per output position scales each sample.
  auto m =
      run(deform_node(false, true),
          {kX22, f32({1, 1, 1, 1}, {1}), f32({1, 2, 2, 2}, off), Tensor(), f32({1, 1, 2, 2}, {0.5f, 1, 0, 2})}, 19);
  ASSERT_TRUE(m.has_value()) << m.status().to_string();
  expect_near(*m, {1, 1, 2, 2}, {1.25f, 1.5f, 0, 2});
}

TEST(KernelsDeformConv, GroupsAndOffsetGroups) {
  // X [1, 2, 1, 1] = {3, 5}; group 2: output 0 reads channel 0 with W 2, output 1 channel 1 with
  // W 10. offset_group 2: channel 0 is not shifted; channel 1 is shifted one row up to (-1, 0),
  // outside the image, so it reads 0. Y = {2·3, 10·0}.
  ir::Node node = deform_node();
  set_int(node, "group", 2);
  set_int(node, "offset_group", 2);
  auto y = run(node, {f32({1, 2, 1, 1}, {3, 5}), f32({2, 1, 1, 1}, {2, 10}), f32({1, 4, 1, 1}, {0, 0, -1, 0})}, 19);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 2, 1, 1}, {6, 0});
}

TEST(KernelsDeformConv, StridesPadsDilations) {
  // X 1x1x3x3 = 1..9, 2x2 kernel of ones, dilations [2, 2] (span 3), pads 1 all round, strides
  // [2, 2]: oH = (3 + 2 - 3) / 2 + 1 = 2. Output (y, x) reads rows 2y - 1 + {0, 2} and columns
  // 2x - 1 + {0, 2}: (0, 0) → only (1, 1) = 5; (0, 1) → (1, 1), (1, 3 out) = 5; likewise 5, 5.
  ir::Node node = deform_node();
  set_ints(node, "dilations", {2, 2});
  set_ints(node, "pads", {1, 1, 1, 1});
  set_ints(node, "strides", {2, 2});
  auto y = run(node,
               {f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                f32({1, 8, 2, 2}, std::vector<float>(32, 0))},
               19);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2}, {5, 5, 5, 5});
  // float64 runs the same code: X 2·(1..9) gives 10 everywhere.
  auto y64 = run(node,
                 {f64({1, 1, 3, 3}, {2, 4, 6, 8, 10, 12, 14, 16, 18}), f64({1, 1, 2, 2}, {1, 1, 1, 1}),
                  f64({1, 8, 2, 2}, std::vector<double>(32, 0))},
                 19);
  ASSERT_TRUE(y64.has_value()) << y64.status().to_string();
  EXPECT_EQ(values<double>(*y64), (std::vector<double>{10, 10, 10, 10}));
}

TEST(KernelsDeformConv, Errors) {
  const Tensor w = f32({1, 1, 1, 1}, {1});
  const Tensor off = f32({1, 2, 2, 2}, std::vector<float>(8, 0));
  const StatusCode bad = StatusCode::kInvalidArgument;
  expect_error(run_direct(deform_node(), {f32({1, 1, 2}, {1, 2}), w, off}, 19), bad, {"DeformConv", "'X'", "4-D"});
  expect_error(run_direct(deform_node(), {f32({1, 1, 1, 1, 1}, {1}), w, off}, 19), StatusCode::kUnsupported,
               {"'X'", "4-D"});
  // W's input channels times group must be C.
  expect_error(run_direct(deform_node(), {kX22, f32({1, 2, 1, 1}, {1, 1}), off}, 19), bad, {"'W'", "[1,2,1,1]"});
  // offset of the wrong extent: 2x2 output wants [1, 2, 2, 2].
  expect_error(run_direct(deform_node(), {kX22, w, f32({1, 2, 1, 1}, {0, 0})}, 19), bad,
               {"offset 'offset'", "[1,2,2,2]", "got [1,2,1,1]"});
  expect_error(run_direct(deform_node(true), {kX22, w, off, f32({2}, {0, 0})}, 19), bad, {"bias B 'B'", "[1]"});
  expect_error(
      run_direct(deform_node(false, true), {kX22, w, off, Tensor(), f32({1, 2, 2, 2}, std::vector<float>(8))}, 19), bad,
      {"mask 'mask'", "[1,1,2,2]"});
  // A 3x3 kernel does not fit a 2x2 image without padding.
  expect_error(run_direct(deform_node(), {kX22, f32({1, 1, 3, 3}, std::vector<float>(9, 1)), off}, 19), bad,
               {"does not fit"});
  ir::Node og = deform_node();
  set_int(og, "offset_group", 2);
  expect_error(run_direct(og, {kX22, w, f32({1, 4, 2, 2}, std::vector<float>(16))}, 19), bad,
               {"offset_group 2", "1 channels"});
  ir::Node zero_group = deform_node();
  set_int(zero_group, "group", 0);
  expect_error(run_direct(zero_group, {kX22, w, off}, 19), StatusCode::kInvalidModel, {"group", ">= 1"});
  ir::Node short_pads = deform_node();
  set_ints(short_pads, "pads", {1, 1});
  expect_error(run_direct(short_pads, {kX22, w, off}, 19), StatusCode::kInvalidModel, {"attribute pads [1,1]", "4"});
  expect_error(run_direct(deform_node(), {kX22, f64({1, 1, 1, 1}, {1}), off}, 19), bad, {"'W'", "float64"});
  expect_error(run(deform_node(), {kX22, w, off}, 18), StatusCode::kUnsupported, {});
}

}  // namespace kernels_deform_conv_test
}  // namespace edgemm
