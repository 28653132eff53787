// Col2Im-18 (src/kernels/cpu/col2im.cc) runs through runtime::run_node at opset 18; error cases
// through run_direct so that messages name the node's own values. Expected values are worked out
// by hand in the comments, never taken from an earlier run of the kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_col2im_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;
using nntest::set_ints;

ir::Node col2im_node() { return make_node("Col2Im", {"input", "image_shape", "block_shape"}); }

TEST(KernelsCol2Im, OneDimOverlaps) {
  // image [4], block [2], stride 1: 3 blocks, C = 2 / 2 = 1. Kernel offset 0 holds {1, 2, 3},
  // offset 1 {10, 20, 30}; pixel p = l + k: p0 = 1, p1 = 2 + 10, p2 = 3 + 20, p3 = 30.
  auto y = run(col2im_node(), {f32({1, 2, 3}, {1, 2, 3, 10, 20, 30}), i64({1}, {4}), i64({1}, {2})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4}, {1, 12, 23, 30});
}

TEST(KernelsCol2Im, TwoDimCountsOverlaps) {
  // image [3, 3], block [2, 2], stride 1: 2 x 2 blocks; all ones sum to the number of blocks
  // covering each pixel: corners 1, edges 2, centre 4.
  auto y = run(col2im_node(), {f32({1, 4, 4}, std::vector<float>(16, 1.0f)), i64({2}, {3, 3}), i64({2}, {2, 2})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 3, 3}, {1, 2, 1, 2, 4, 2, 1, 2, 1});
}

TEST(KernelsCol2Im, StridesPadsDilations) {
  // image [5], block [2], dilations [2] (span 3), pads [1, 1] (padded extent 7), strides [2]:
  // (7 - 3) / 2 + 1 = 3 blocks. Pixel p = 2·l - 1 + 2·k:
  //   l0: k0 → -1 (out), k1 → 1; l1: k0 → 1, k1 → 3; l2: k0 → 3, k1 → 5 (out).
  // Offset 0 holds {1, 2, 3}, offset 1 {10, 20, 30}: y1 = 10 + 2, y3 = 20 + 3, the rest 0.
  ir::Node node = col2im_node();
  set_ints(node, "dilations", {2});
  set_ints(node, "pads", {1, 1});
  set_ints(node, "strides", {2});
  auto y = run(node, {f32({1, 2, 3}, {1, 2, 3, 10, 20, 30}), i64({1}, {5}), i64({1}, {2})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 5}, {0, 12, 0, 23, 0});
}

TEST(KernelsCol2Im, BatchesChannelsAndIntegers) {
  // N 2, C 2, image [3], block [2]: 2 blocks; row c·2 + k. Batch 0: channel 0 offsets {1, 2},
  // {3, 4} → {1, 2 + 3, 4}; channel 1 {5, 6}, {7, 8} → {5, 6 + 7, 8}. Batch 1 is its negation.
  // int32 sums exactly; image_shape and block_shape given as int32.
  const std::vector<int32_t> b0 = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int32_t> in = b0;
  for (int32_t v : b0) in.push_back(-v);
  auto y = run(col2im_node(), {i32({2, 4, 2}, in), i32({1}, {3}), i32({1}, {2})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kInt32);
  EXPECT_EQ(y->shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{1, 5, 4, 5, 13, 8, -1, -5, -4, -5, -13, -8}));
}

TEST(KernelsCol2Im, ThreeDimKernelOrderIsRowMajor) {
  // image [2, 2, 2] = block [2, 2, 2]: one block, so kernel offset k lands on pixel k (row-major).
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  auto y = run(col2im_node(), {f32({1, 8, 1}, in), i64({3}, {2, 2, 2}), i64({3}, {2, 2, 2})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 2, 2, 2}, in);
  // float16 takes the same path through float32: 1 + 2 in the 1-D overlap case is exact.
  auto h = run(col2im_node(),
               {f16({1, 2, 2}, {float_to_half(1), float_to_half(2), float_to_half(3), float_to_half(4)}), i64({1}, {3}),
                i64({1}, {2})},
               18);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  ASSERT_EQ(h->dtype(), DataType::kFloat16);
  // offset 0 {1, 2}, offset 1 {3, 4} → {1, 2 + 3, 4}.
  const std::vector<uint16_t> hv = values<uint16_t>(*h);
  EXPECT_EQ(half_to_float(hv[0]), 1.0f);
  EXPECT_EQ(half_to_float(hv[1]), 5.0f);
  EXPECT_EQ(half_to_float(hv[2]), 4.0f);
}

TEST(KernelsCol2Im, Errors) {
  const Tensor x = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const StatusCode bad = StatusCode::kInvalidArgument;
  expect_error(run_direct(col2im_node(), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {4}), i64({1}, {2})}, 18), bad,
               {"Col2Im", "'input'", "3-D", "[2,3]"});
  expect_error(run_direct(col2im_node(), {x, i64({2}, {4, 4}), i64({1}, {2})}, 18), bad,
               {"'image_shape'", "'block_shape'", "one length"});
  expect_error(run_direct(col2im_node(), {x, i64({1}, {4}), i64({1}, {0})}, 18), bad, {"block_shape [0]"});
  expect_error(run_direct(col2im_node(), {x, i64({1}, {int64_t{1} << 40}), i64({1}, {2})}, 18), bad,
               {"image_shape [1099511627776]", "2147483647"});
  // dimension 1 (3) is not a multiple of prod(block_shape) = 2.
  expect_error(run_direct(col2im_node(), {f32({1, 3, 3}, std::vector<float>(9, 0)), i64({1}, {4}), i64({1}, {2})}, 18),
               bad, {"dimension 1 (3)", "not a multiple", "= 2"});
  // image [4], block [2]: 3 blocks, but L is 4.
  expect_error(run_direct(col2im_node(), {f32({1, 2, 4}, std::vector<float>(8, 0)), i64({1}, {4}), i64({1}, {2})}, 18),
               bad, {"dimension 2 (4)", "number of blocks [3]"});
  // block [4] is larger than image [2].
  expect_error(run_direct(col2im_node(), {f32({1, 4, 1}, {0, 0, 0, 0}), i64({1}, {2}), i64({1}, {4})}, 18), bad,
               {"does not fit", "axis 0"});
  ir::Node zero_stride = col2im_node();
  set_ints(zero_stride, "strides", {0});
  expect_error(run_direct(zero_stride, {x, i64({1}, {4}), i64({1}, {2})}, 18), bad, {"attribute strides [0]"});
  ir::Node short_pads = col2im_node();
  set_ints(short_pads, "pads", {1});
  expect_error(run_direct(short_pads, {x, i64({1}, {4}), i64({1}, {2})}, 18), bad,
               {"attribute pads [1]", "must have 2 values"});
  ir::Node negative_pad = col2im_node();
  set_ints(negative_pad, "pads", {-1, 0});
  expect_error(run_direct(negative_pad, {x, i64({1}, {4}), i64({1}, {2})}, 18), bad, {"attribute pads [-1,0]"});
  expect_error(run_direct(col2im_node(), {bools({1, 2, 3}, {0, 0, 0, 0, 0, 0}), i64({1}, {4}), i64({1}, {2})}, 18),
               StatusCode::kUnsupported, {"'input'", "bool"});
  expect_error(run(col2im_node(), {x, i64({1}, {4}), i64({1}, {2})}, 17), StatusCode::kUnsupported, {});
}

}  // namespace kernels_col2im_test
}  // namespace edgemm
