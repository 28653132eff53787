// Conv and ConvTranspose (src/kernels/cpu/conv.cc, conv_reference.cc).
// (1) Hand-computed cases (sums written out in the comments, or the worked examples of the
//     ONNX operator documentation, recomputed by hand).
// (2) The oneDNN path (for 2-D Conv on aarch64 without SVE: XNNPACK, see
//     kernels_conv_xnnpack_test.cc) against the plain reference kernel on seeded random
//     inputs for many shapes: PP-OCRv4's conv shapes (at reduced spatial size), groups, depthwise with and
//     without multiplier, strides, dilations, asymmetric pads, auto_pad, 1x1, 1-D, 3-D,
//     batch > 1, no bias, weights not constant at compile, concurrent runs.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/xnnpack.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_conv_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Hand-computed

TEST(Conv, Basic3x3WithAndWithoutPadding) {
  // X = 0..24 (5x5), W = 3x3 of ones: each output is the sum of a 3x3 window.
  ir::Node node = make_node("Conv", {"X", "W"});
  set_ints(node, "kernel_shape", {3, 3});
  const Tensor x = f32({1, 1, 5, 5}, iota(25));
  const Tensor w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto valid = run(node, {x, w});
  ASSERT_TRUE(valid.has_value()) << valid.status().to_string();
  // Window at (0,0): 0+1+2+5+6+7+10+11+12 = 54; each step right adds 3, down adds 15.
  expect_near(*valid, {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});

  set_ints(node, "pads", {1, 1, 1, 1});
  auto padded = run(node, {x, w});
  ASSERT_TRUE(padded.has_value()) << padded.status().to_string();
  // Corner (0,0) sees 0+1+5+6 = 12; (0,1) sees 0+1+2+5+6+7 = 21.
  expect_near(*padded, {1, 1, 5, 5}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                      117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});

  set_ints(node, "strides", {2, 2});
  auto strided = run(node, {x, w});
  ASSERT_TRUE(strided.has_value());
  expect_near(*strided, {1, 1, 3, 3}, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

TEST(Conv, DepthwiseWithBias) {
  // Channel 0 [[1,2],[3,4]] * [[1,0],[0,1]] = 1+4 = 5, +10; channel 1 [[5,6],[7,8]] * [[0,1],[1,0]]
  // = 6+7 = 13, +20.
  ir::Node node = make_node("Conv", {"X", "W", "B"});
  set_int(node, "group", 2);
  auto y = run(node, {f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0}),
                      f32({2}, {10, 20})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 2, 1, 1}, {15, 33});
}

TEST(Conv, GroupsMixOnlyTheirChannels) {
  // 4 input channels (1x1 pixels 1,2,3,4), group 2: out0 = 1*1 + 1*2 = 3, out1 = 1*3 - 1*4 = -1.
  ir::Node node = make_node("Conv", {"X", "W"});
  set_int(node, "group", 2);
  auto y = run(node, {f32({1, 4, 1, 1}, {1, 2, 3, 4}), f32({2, 2, 1, 1}, {1, 1, 1, -1})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 2, 1, 1}, {3, -1});
}

TEST(Conv, Dilated1D) {
  // y[i] = x[i] + 10 x[i+2] + 100 x[i+4] for x = 1..7.
  ir::Node node = make_node("Conv", {"X", "W"});
  set_ints(node, "dilations", {2});
  auto y = run(node, {f32({1, 1, 7}, iota(7, 1)), f32({1, 1, 3}, {1, 10, 100})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 3}, {531, 642, 753});
}

TEST(Conv, AutoPadSameUpperAndLower) {
  // x = [1,2,3,4], kernel [1,1]: 4 outputs need one pad; SAME_UPPER puts it at the end
  // ([3,5,7,4]), SAME_LOWER at the beginning ([1,3,5,7]).
  ir::Node node = make_node("Conv", {"X", "W"});
  const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4}), w = f32({1, 1, 2}, {1, 1});
  set_string(node, "auto_pad", "SAME_UPPER");
  auto upper = run(node, {x, w});
  ASSERT_TRUE(upper.has_value()) << upper.status().to_string();
  expect_near(*upper, {1, 1, 4}, {3, 5, 7, 4});
  set_string(node, "auto_pad", "SAME_LOWER");
  auto lower = run(node, {x, w});
  ASSERT_TRUE(lower.has_value());
  expect_near(*lower, {1, 1, 4}, {1, 3, 5, 7});
  set_string(node, "auto_pad", "VALID");
  auto valid = run(node, {x, w});
  ASSERT_TRUE(valid.has_value());
  expect_near(*valid, {1, 1, 3}, {3, 5, 7});
}

TEST(Conv, ThreeDimensional) {
  // A 2x2x2 kernel of ones over 0..7 sums everything: 28.
  ir::Node node = make_node("Conv", {"X", "W"});
  auto y = run(node, {f32({1, 1, 2, 2, 2}, iota(8)), f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 1, 1, 1}, {28});
}

TEST(Conv, Float64UsesTheReferencePath) {
  ir::Node node = make_node("Conv", {"X", "W"});
  std::vector<double> x(25), w(9, 1.0);
  for (int i = 0; i < 25; ++i) x[i] = i;
  auto y = run(node, {make(DataType::kFloat64, {1, 1, 5, 5}, x), make(DataType::kFloat64, {1, 1, 3, 3}, w)});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kFloat64);
  EXPECT_EQ(values<double>(*y), (std::vector<double>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
  const Tensor w64 = make(DataType::kFloat64, {1, 1, 3, 3}, w);
  auto kernel = make_kernel(node, {nullptr, &w64});
  ASSERT_TRUE(kernel.has_value());
  EXPECT_STREQ((*kernel)->name(), "f64_conv__reference");
}

TEST(ConvTranspose, Basic) {
  // X = 0..8 (3x3), W = ones (1, 2, 3, 3): y[o] sums the inputs whose 3x3 footprint covers o,
  // e.g. y[1][1] = 0+1+3+4 = 8, y[2][2] = 0+...+8 = 36; both output channels equal.
  ir::Node node = make_node("ConvTranspose", {"X", "W"});
  auto y = run(node, {f32({1, 1, 3, 3}, iota(9)), f32({1, 2, 3, 3}, std::vector<float>(18, 1))});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  const std::vector<float> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                    27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<float> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  expect_near(*y, {1, 2, 5, 5}, want);
}

TEST(ConvTranspose, Stride2Kernel2TilesTheKernel) {
  // PP-OCR det's upsampling: each input pixel v writes v * W into its own 2x2 block.
  ir::Node node = make_node("ConvTranspose", {"X", "W", "B"});
  set_ints(node, "strides", {2, 2});
  set_ints(node, "kernel_shape", {2, 2});
  auto y = run(node, {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1}, {0.5f})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 4, 4}, {1.5, 2.5, 2.5, 4.5, 3.5, 4.5, 6.5, 8.5, 3.5, 6.5, 4.5, 8.5, 9.5, 12.5, 12.5, 16.5});
}

TEST(ConvTranspose, Dilations) {
  // y[o] = sum x[i] W[k] over o = i + 2k; e.g. y[0][2] = x[0][2]*7 + x[0][0]*2 = 7 + 6 = 13.
  ir::Node node = make_node("ConvTranspose", {"X", "W"});
  set_ints(node, "dilations", {2, 2});
  auto y = run(node, {f32({1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6}), f32({1, 1, 2, 2}, {7, 2, 1, 9})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {1, 1, 5, 5},
              {21, 56, 13, 16, 2, 63, 35, 67, 10, 14, 24, 22, 76, 76, 21, 9, 5, 88, 45, 63, 3, 2, 33, 18, 54});
}

TEST(ConvTranspose, OutputPaddingAndOutputShapeExtendTheEnd) {
  // Full output of a 3x3 input, kernel 3, strides (3, 2) is 9x7; output_padding (1, 1) or
  // output_shape (10, 8) append one zero row and column (no input reaches them).
  ir::Node node = make_node("ConvTranspose", {"X", "W"});
  set_ints(node, "strides", {3, 2});
  set_ints(node, "output_padding", {1, 1});
  const Tensor x = f32({1, 1, 3, 3}, iota(9)), w = f32({1, 1, 3, 3}, std::vector<float>(9, 1));
  auto a = run(node, {x, w});
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  ASSERT_EQ(a->shape(), (Shape{1, 1, 10, 8}));
  node.attributes.erase("output_padding");
  set_ints(node, "output_shape", {10, 8});
  auto b = run(node, {x, w});
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  ASSERT_EQ(b->shape(), (Shape{1, 1, 10, 8}));
  const std::vector<float> va = values<float>(*a), vb = values<float>(*b);
  EXPECT_EQ(va, vb);
  // Row 0: x[0][0..2] = 0,1,2 land at columns 0-2, 2-4, 4-6: [0,0,1,1,3,2,2,0].
  EXPECT_EQ(std::vector<float>(va.begin(), va.begin() + 8), (std::vector<float>{0, 0, 1, 1, 3, 2, 2, 0}));
  for (int c = 0; c < 8; ++c) EXPECT_EQ(va[9 * 8 + c], 0.0f);
}

TEST(ConvTranspose, AutoPadSameUpperTrimsTheEnd) {
  // in 3, stride 2, kernel 3: full output 7, SAME wants 6, so one element is cut; SAME_UPPER
  // cuts it at the end (total / 2 = 0 at the beginning).
  ir::Node node = make_node("ConvTranspose", {"X", "W"});
  set_ints(node, "strides", {2});
  set_string(node, "auto_pad", "SAME_UPPER");
  auto y = run(node, {f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 3}, {1, 1, 1})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  // Full: [1, 1, 1+2, 2, 2+3, 3, 3] -> first six.
  expect_near(*y, {1, 1, 6}, {1, 1, 3, 2, 5, 3});
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(Conv, ChannelMismatchNamesNodeInputAndValues) {
  ir::Node node = make_node("Conv", {"X", "W"});
  node.name = "c1";
  const Tensor x = random_f32({1, 3, 8, 8}, 1), w = random_f32({2, 4, 3, 3}, 2);
  auto kernel = make_kernel(node, {nullptr, &w});
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
  DirectContext ctx(node, {x, w});
  Status s = (*kernel)->run(ctx);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Conv 'c1': input 'X' has 3 channels, weight expects 4 (group 1)"), std::string::npos)
      << s.message();
}

TEST(Conv, BadShapesAreErrorsNotCrashes) {
  ir::Node node = make_node("Conv", {"X", "W", "B"});
  node.name = "c2";
  // Bias of the wrong length.
  auto b = run(node, {random_f32({1, 2, 5, 5}, 1), random_f32({3, 2, 3, 3}, 2), random_f32({4}, 3)});
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("bias"), std::string::npos) << b.status().message();
  // Kernel larger than the input.
  auto big = run(node, {random_f32({1, 2, 2, 2}, 1), random_f32({3, 2, 3, 3}, 2), random_f32({3}, 3)});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  // Rank mismatch, rank too small.
  auto rank = run(node, {random_f32({1, 2, 5, 5}, 1), random_f32({3, 2, 3}, 2), random_f32({3}, 3)});
  EXPECT_FALSE(rank.has_value());
  auto low = run(node, {random_f32({2, 5}, 1), random_f32({3, 2}, 2), random_f32({3}, 3)});
  EXPECT_FALSE(low.has_value());
  // Group that does not divide the output channels.
  set_int(node, "group", 2);
  auto grp = run(node, {random_f32({1, 4, 5, 5}, 1), random_f32({3, 2, 3, 3}, 2), random_f32({3}, 3)});
  EXPECT_FALSE(grp.has_value());
  // Pads large enough to overflow the shape arithmetic are refused.
  ir::Node padded = make_node("Conv", {"X", "W"});
  set_ints(padded, "pads", {int64_t{1} << 62, 0, 0, 0});
  auto overflow = run(padded, {random_f32({1, 2, 5, 5}, 1), random_f32({3, 2, 3, 3}, 2)});
  ASSERT_FALSE(overflow.has_value());
  EXPECT_EQ(overflow.status().code(), StatusCode::kInvalidModel);
  // int32 input: a clear Unsupported error.
  ir::Node plain = make_node("Conv", {"X", "W"});
  auto ints = run(plain, {make<int32_t>(DataType::kInt32, {1, 1, 2, 2}, {1, 2, 3, 4}),
                          make<int32_t>(DataType::kInt32, {1, 1, 1, 1}, {1})});
  ASSERT_FALSE(ints.has_value());
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------------------------
// oneDNN against the reference

struct ConvCase {
  const char* name;
  int64_t n, c, m;
  Shape spatial, kernel;
  std::vector<int64_t> strides{}, dilations{}, pads{};
  int64_t group = 1;
  bool bias = true;
  const char* auto_pad = nullptr;
  // ConvTranspose only
  std::vector<int64_t> output_padding{}, output_shape{};
};

ir::Node conv_node(const ConvCase& cc, bool transpose) {
  ir::Node node = make_node(transpose ? "ConvTranspose" : "Conv",
                            cc.bias ? std::vector<std::string>{"X", "W", "B"} : std::vector<std::string>{"X", "W"});
  node.name = cc.name;
  set_ints(node, "kernel_shape", cc.kernel);
  if (!cc.strides.empty()) set_ints(node, "strides", cc.strides);
  if (!cc.dilations.empty()) set_ints(node, "dilations", cc.dilations);
  if (!cc.pads.empty()) set_ints(node, "pads", cc.pads);
  if (cc.group != 1) set_int(node, "group", cc.group);
  if (cc.auto_pad) set_string(node, "auto_pad", cc.auto_pad);
  if (!cc.output_padding.empty()) set_ints(node, "output_padding", cc.output_padding);
  if (!cc.output_shape.empty()) set_ints(node, "output_shape", cc.output_shape);
  return node;
}

std::vector<Tensor> conv_inputs(const ConvCase& cc, bool transpose, uint32_t seed) {
  Shape x = {cc.n, cc.c};
  x.insert(x.end(), cc.spatial.begin(), cc.spatial.end());
  Shape w = transpose ? Shape{cc.c, cc.m / cc.group} : Shape{cc.m, cc.c / cc.group};
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  std::vector<Tensor> in = {random_f32(x, seed), random_f32(w, seed + 1)};
  if (cc.bias) in.push_back(random_f32({cc.m}, seed + 2));
  return in;
}

// Reduction length of one output element, for the tolerance.
double reduction(const ConvCase& cc) {
  double k = static_cast<double>(cc.c / cc.group);
  for (int64_t d : cc.kernel) k *= static_cast<double>(d);
  return k;
}

void check_against_reference(const ConvCase& cc, bool transpose, uint32_t seed) {
  SCOPED_TRACE(cc.name);
  const ir::Node node = conv_node(cc, transpose);
  const std::vector<Tensor> in = conv_inputs(cc, transpose, seed);
  auto ref = run_reference(node, in);
  ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
  for (int threads : {1, 2}) {
    auto got = run(node, in, 17, threads);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    const Diff d = diff(*got, *ref);
    // fp32 sums of products of U(-1, 1) values: error grows like sqrt(K) ulps of the result.
    const double tol = 2e-6 * std::sqrt(reduction(cc)) * std::max(1.0, d.max_ref);
    EXPECT_LE(d.max_abs, tol) << "threads " << threads << ", max |ref| " << d.max_ref;
  }
  std::vector<const Tensor*> constants;
  for (const Tensor& t : in) constants.push_back(&t);
  constants[0] = nullptr;
  auto kernel = make_kernel(node, constants);
  ASSERT_TRUE(kernel.has_value());
  // 2-D Conv and ConvTranspose run XNNPACK on aarch64 without SVE; a 2-D ConvTranspose with
  // kernel == strides and nothing else set runs edgemm's strided kernel everywhere.
  const bool xnnpack = cc.spatial.size() == 2 && kernels::xnnpack::enabled();
  const bool strided = transpose && cc.spatial.size() == 2 && cc.kernel == cc.strides && cc.group == 1 &&
                       cc.dilations.empty() && cc.pads.empty() && cc.auto_pad == nullptr && cc.output_padding.empty() &&
                       cc.output_shape.empty();
  EXPECT_STREQ((*kernel)->name(), strided     ? "f32_conv_transpose_strided__edgemm"
                                  : transpose ? (xnnpack ? "f32_conv_transpose__xnnpack" : "f32_conv_transpose__onednn")
                                  : xnnpack   ? "f32_conv__xnnpack"
                                              : "f32_conv__onednn");
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      // PP-OCRv4 det/rec/cls shapes at reduced spatial size.
      {"ppocr_first_3x3_s2", 1, 3, 16, {40, 48}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}},
      {"ppocr_dw3x3", 1, 16, 16, {20, 24}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 16},
      {"ppocr_dw3x3_s2", 1, 32, 32, {20, 20}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 32},
      {"ppocr_dw3x3_s21", 1, 24, 24, {12, 16}, {3, 3}, {2, 1}, {}, {1, 1, 1, 1}, 24},
      {"ppocr_dw5x5", 1, 48, 48, {12, 12}, {5, 5}, {1, 1}, {}, {2, 2, 2, 2}, 48},
      {"ppocr_dw5x5_s2", 1, 40, 40, {12, 16}, {5, 5}, {2, 2}, {}, {2, 2, 2, 2}, 40},
      {"ppocr_dw5x5_s21", 1, 104, 104, {3, 24}, {5, 5}, {2, 1}, {}, {2, 2, 2, 2}, 104},
      {"ppocr_pw", 1, 48, 96, {20, 20}, {1, 1}},
      {"ppocr_pw_no_bias", 1, 96, 24, {16, 16}, {1, 1}, {}, {}, {}, 1, false},
      {"ppocr_se_1x1_on_1x1", 1, 96, 24, {1, 1}, {1, 1}},
      {"ppocr_se_odd", 1, 200, 50, {1, 1}, {1, 1}},
      {"pw_few_outputs_plain_layout", 2, 96, 6, {20, 20}, {1, 1}},
      {"few_outputs_3x3", 1, 24, 2, {20, 20}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}},
      {"ppocr_neck_3x3", 1, 96, 24, {16, 16}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 1, false},
      {"ppocr_rec_1x3", 1, 48, 12, {1, 40}, {1, 3}, {1, 1}, {}, {0, 1, 0, 1}, 1, false},
      // Generic coverage.
      {"dw_multiplier", 1, 8, 16, {9, 11}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 8},
      {"groups4", 1, 8, 12, {10, 10}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 4},
      {"dilated", 1, 8, 8, {14, 14}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}},
      {"dilated_dw", 1, 16, 16, {14, 14}, {3, 3}, {1, 1}, {3, 2}, {1, 2, 3, 2}, 16},
      {"asymmetric_pads", 1, 6, 10, {11, 9}, {3, 3}, {2, 2}, {}, {0, 1, 2, 0}},
      {"same_upper_s2", 1, 8, 8, {11, 12}, {3, 3}, {2, 2}, {}, {}, 1, true, "SAME_UPPER"},
      {"same_lower_k4", 1, 8, 8, {11, 12}, {4, 4}, {1, 1}, {}, {}, 1, true, "SAME_LOWER"},
      {"valid", 1, 8, 8, {11, 12}, {3, 2}, {1, 2}, {}, {}, 1, true, "VALID"},
      {"batch3", 3, 16, 32, {9, 7}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}},
      {"batch2_dw", 2, 32, 32, {9, 7}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 32},
      {"odd_channels", 1, 5, 7, {8, 8}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}},
      {"big_k", 1, 64, 64, {8, 8}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}},
      {"conv1d", 2, 4, 6, {50}, {5}, {2}, {}, {2, 2}, 2},
      {"conv1d_dw", 1, 16, 16, {40}, {3}, {1}, {2}, {2, 2}, 16},
      {"conv3d", 1, 4, 4, {6, 6, 6}, {3, 3, 3}, {1, 2, 2}, {}, {1, 1, 1, 1, 1, 1}},
      {"conv3d_groups", 1, 8, 8, {5, 6, 4}, {3, 3, 1}, {1, 1, 1}, {}, {1, 1, 0, 1, 1, 0}, 2},
  };
  return cases;
}

TEST(Conv, OnednnMatchesReference) {
  uint32_t seed = 100;
  for (const ConvCase& cc : conv_cases()) check_against_reference(cc, false, seed += 10);
}

const std::vector<ConvCase>& conv_transpose_cases() {
  static const std::vector<ConvCase> cases = {
      {"ppocr_up_k2_s2", 1, 24, 24, {16, 16}, {2, 2}, {2, 2}, {}, {}, 1, true},
      {"ppocr_up_k2_s2_to_1", 1, 24, 1, {16, 16}, {2, 2}, {2, 2}, {}, {}, 1, true},
      {"k3_s2_p1_outpad1", 1, 8, 6, {7, 9}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 1, true, nullptr, {1, 1}},
      {"groups2", 1, 8, 6, {6, 6}, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, 2},
      {"depthwise", 1, 8, 8, {6, 6}, {4, 4}, {2, 2}, {}, {1, 1, 1, 1}, 8},
      {"dilated", 1, 4, 4, {5, 5}, {3, 3}, {1, 1}, {2, 2}, {}},
      {"asymmetric_pads", 2, 4, 3, {5, 6}, {3, 3}, {2, 3}, {}, {0, 1, 2, 0}, 1, false},
      {"same_upper", 1, 4, 4, {5, 6}, {3, 3}, {2, 2}, {}, {}, 1, true, "SAME_UPPER"},
      {"same_lower", 1, 4, 4, {5, 6}, {3, 3}, {2, 2}, {}, {}, 1, true, "SAME_LOWER"},
      {"output_shape", 1, 4, 4, {5, 6}, {3, 3}, {2, 2}, {}, {}, 1, true, nullptr, {}, {11, 13}},
      {"deconv1d", 1, 6, 4, {20}, {4}, {2}, {}, {1, 1}},
      {"deconv3d", 1, 4, 4, {3, 4, 5}, {2, 3, 3}, {2, 1, 2}, {}, {0, 1, 1, 0, 1, 1}},
  };
  return cases;
}

TEST(ConvTranspose, OnednnMatchesReference) {
  uint32_t seed = 500;
  for (const ConvCase& cc : conv_transpose_cases()) check_against_reference(cc, true, seed += 10);
}

TEST(Conv, WeightsComputedAtRunTimeStillUseOnednn) {
  // The factory sees no constant weights: oneDNN reorders them on every run.
  for (bool transpose : {false, true}) {
    const ConvCase cc = transpose ? conv_transpose_cases()[2] : conv_cases()[4];
    const ir::Node node = conv_node(cc, transpose);
    const std::vector<Tensor> in = conv_inputs(cc, transpose, 7);
    auto ref = run_reference(node, in);
    ASSERT_TRUE(ref.has_value());
    auto kernel = make_kernel(node, {nullptr, nullptr, nullptr});
    ASSERT_TRUE(kernel.has_value());
    EXPECT_STREQ((*kernel)->name(), transpose ? "f32_conv_transpose__onednn" : "f32_conv__onednn");
    DirectContext ctx(node, in);
    ASSERT_TRUE((*kernel)->run(ctx).is_ok());
    const Diff d = diff(ctx.output(0), *ref);
    EXPECT_LE(d.max_abs, 1e-4 * std::max(1.0, d.max_ref));
  }
}

TEST(Conv, ConcurrentRunsOfOneKernelWithChangingShapes) {
  // One kernel object, 4 threads, two input shapes interleaved: every result equals the
  // reference for its shape (plans are created lazily under the kernel's mutex).
  const ConvCase cc = conv_cases()[5];  // depthwise 5x5 stride 2
  const ir::Node node = conv_node(cc, false);
  const Tensor w = random_f32({cc.m, 1, 5, 5}, 11), b = random_f32({cc.m}, 12);
  const Tensor xa = random_f32({1, cc.c, 12, 16}, 13), xb = random_f32({2, cc.c, 17, 9}, 14);
  auto ra = run_reference(node, {xa, w, b});
  auto rb = run_reference(node, {xb, w, b});
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  auto kernel = make_kernel(node, {nullptr, &w, &b});
  ASSERT_TRUE(kernel.has_value());
  std::vector<int> failures(4, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const bool a = (i + t) % 2 == 0;
        DirectContext ctx(node, {a ? xa : xb, w, b}, 1);
        if (!(*kernel)->run(ctx).is_ok()) {
          ++failures[t];
          continue;
        }
        const Diff d = diff(ctx.output(0), a ? *ra : *rb);
        if (d.max_abs > 1e-4) ++failures[t];
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace kernels_conv_test
}  // namespace edgemm
