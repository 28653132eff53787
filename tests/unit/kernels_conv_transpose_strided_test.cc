// The non-overlapping ConvTranspose (src/kernels/cpu/conv_transpose_strided.cc,
// f32_conv_transpose_strided__edgemm) against the plain reference loops
// (conv_transpose_reference) on seeded random inputs.
// (1) The kernel called directly over C in {1, 3, 13, 24}, M in {1, 3, 8, 24}, kernel = stride
//     2x2 / 3x3 / 2x1, images 1x1 / 5x7 / 16x16, batch 1 and 2, with and without bias, in every
//     NCHW / nChw8c combination the channel counts allow, on 1 and 2 threads.
// (2) ConvTranspose and FusedConvTranspose nodes (Relu / Sigmoid / + residual epilogues, NCHW
//     and nChw8c) through their kernel factory: the new kernel ran (by name) and matches the
//     reference path; nodes with pads, output_padding or group 2 keep oneDNN and still match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/conv_transpose_strided.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/xnnpack.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_conv_transpose_strided_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

ir::Node strided_node(int64_t kh, int64_t kw, bool bias) {
  ir::Node node =
      make_node("ConvTranspose", bias ? std::vector<std::string>{"X", "W", "B"} : std::vector<std::string>{"X", "W"});
  set_ints(node, "kernel_shape", {kh, kw});
  set_ints(node, "strides", {kh, kw});
  return node;
}

// NCHW `t` stored in `layout`.
Tensor stored(const Tensor& t, ir::ActivationLayout layout) {
  auto b = Tensor::create(DataType::kFloat32, kernels::physical_shape(t.shape(), layout));
  EXPECT_TRUE(b.has_value());
  kernels::to_layout(t.data<float>(), b->data<float>(), t.shape(), layout, 1);
  return *b;
}

TEST(ConvTransposeStrided, MatchesReference) {
  uint32_t seed = 1;
  int checked = 0;
  for (int64_t c : {1, 3, 13, 24}) {
    for (int64_t m : {1, 3, 8, 24}) {
      for (auto [kh, kw] : {std::pair<int64_t, int64_t>{2, 2}, {3, 3}, {2, 1}}) {
        for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {16, 16}}) {
          for (int64_t n : {1, 2}) {
            for (bool bias : {false, true}) {
              const std::string what = "C " + std::to_string(c) + " M " + std::to_string(m) + " k " +
                                       std::to_string(kh) + "x" + std::to_string(kw) + " image " + std::to_string(h) +
                                       "x" + std::to_string(w) + " N " + std::to_string(n) + " bias " +
                                       std::to_string(bias);
              const ir::Node node = strided_node(kh, kw, bias);
              auto attrs = kernels::parse_conv_attrs(node, true);
              ASSERT_TRUE(attrs.has_value());
              const Tensor x = random_f32({n, c, h, w}, ++seed);
              const Tensor wt = random_f32({c, m, kh, kw}, ++seed);
              const Tensor b = random_f32({m}, ++seed);
              ASSERT_TRUE(kernels::ConvTransposeStrided::applies(*attrs, wt)) << what;
              const Shape b_shape = b.shape();
              auto g = kernels::conv_transpose_geometry(node, *attrs, x.shape(), wt.shape(), bias ? &b_shape : nullptr);
              ASSERT_TRUE(g.has_value()) << what << ": " << g.status().message();
              ASSERT_TRUE(kernels::ConvTransposeStrided::fits(*g)) << what;
              ASSERT_EQ(g->output_shape(), (Shape{n, m, h * kh, w * kw})) << what;
              auto want = Tensor::create(DataType::kFloat32, g->output_shape());
              ASSERT_TRUE(want.has_value());
              const float* bp = bias ? b.data<float>() : nullptr;
              kernels::conv_transpose_reference<float>(*g, x.data<float>(), wt.data<float>(), bp, want->data<float>(),
                                                       1);
              const kernels::ConvTransposeStrided kernel(wt.data<float>(), c, m, kh, kw);
              using ir::ActivationLayout;
              for (ActivationLayout x_layout :
                   {ActivationLayout::kNchw, ActivationLayout::kNChw8c, ActivationLayout::kNhwc}) {
                if (x_layout == ActivationLayout::kNChw8c && c % kernels::kChannelBlock != 0) continue;
                const Tensor xs = stored(x, x_layout);
                for (ActivationLayout y_layout :
                     {ActivationLayout::kNchw, ActivationLayout::kNChw8c, ActivationLayout::kNhwc}) {
                  if (y_layout != ActivationLayout::kNchw && m % kernels::kChannelBlock != 0) continue;
                  for (int threads : {1, 2}) {
                    auto y = Tensor::create(DataType::kFloat32, kernels::physical_shape(g->output_shape(), y_layout));
                    auto got = Tensor::create(DataType::kFloat32, g->output_shape());
                    ASSERT_TRUE(y.has_value() && got.has_value());
                    std::fill_n(y->data<float>(), y->element_count(), NAN);  // every element must be written
                    kernel.run(*g, xs.data<float>(), x_layout, bp, y->data<float>(), y_layout, {}, threads);
                    kernels::from_layout(y->data<float>(), got->data<float>(), g->output_shape(), y_layout, 1);
                    expect_close(got->data<float>(), want->data<float>(), want->element_count(),
                                 what + " x " + kernels::layout_name(x_layout) + " y " +
                                     kernels::layout_name(y_layout) + " threads " + std::to_string(threads));
                    ++checked;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  // 36 shapes per (C, M), each in (2 + [C % 8 == 0]) x (1 + 2 [M % 8 == 0]) layout pairs:
  // 36 x 9 x 8, on 1 and 2 threads.
  EXPECT_EQ(checked, 5184);
}

// A (Fused)ConvTranspose node, kernel = stride 2x2, with bias; `steps` as its epilogue (fused).
ir::Node node_with(const std::vector<ir::Step>& steps, bool fused, ir::ActivationLayout x_layout,
                   ir::ActivationLayout y_layout, bool residual) {
  std::vector<std::string> inputs = {"X", "W", "B"};
  if (residual) inputs.push_back("R");
  ir::Node node = make_node(fused ? "FusedConvTranspose" : "ConvTranspose", inputs);
  node.name = "up";
  set_ints(node, "kernel_shape", {2, 2});
  set_ints(node, "strides", {2, 2});
  if (fused) {
    node.domain = ir::kEdgemmDomain;
    ir::write_steps(node, steps);
    set_string(node, "src_layout", kernels::layout_name(x_layout));
    set_string(node, "dst_layout", kernels::layout_name(y_layout));
  }
  return node;
}

TEST(ConvTransposeStrided, NodesRunTheNewKernelWithEpilogues) {
  // PP-OCR det's head at 20x24: 24 -> 24 (BatchNorm folded, Relu; nChw8c or NHWC in and out, or
  // NHWC in and NCHW out) and 24 -> 1 (Sigmoid; nChw8c or NHWC in, NCHW out), plus every other
  // layout pair the kernel writes and a residual Add. Unary epilogues run inside the kernel, on
  // each input row's output rows; others after it.
  const ir::Step relu{ir::StepKind::kRelu, 0, 0, -1}, sigmoid{ir::StepKind::kSigmoid, 0, 0, -1};
  const ir::Step add{ir::StepKind::kAdd, 0, 0, 3};
  using L = ir::ActivationLayout;
  struct NodeCase {
    int64_t m;
    std::vector<ir::Step> steps;
    bool fused;
    L x, y;
  };
  const std::vector<NodeCase> cases = {{24, {}, false, L::kNchw, L::kNchw},
                                       {1, {}, false, L::kNchw, L::kNchw},
                                       {24, {relu}, true, L::kNChw8c, L::kNChw8c},
                                       {1, {sigmoid}, true, L::kNChw8c, L::kNchw},
                                       {24, {sigmoid}, true, L::kNchw, L::kNChw8c},
                                       {24, {relu}, true, L::kNchw, L::kNchw},
                                       {3, {relu, add}, true, L::kNchw, L::kNchw},
                                       {24, {add, relu}, true, L::kNChw8c, L::kNChw8c},
                                       {8, {sigmoid, add}, true, L::kNChw8c, L::kNchw},
                                       {24, {relu}, true, L::kNhwc, L::kNchw},
                                       {24, {relu}, true, L::kNhwc, L::kNhwc},
                                       {16, {sigmoid, relu}, true, L::kNChw8c, L::kNhwc},
                                       {1, {sigmoid}, true, L::kNhwc, L::kNchw},
                                       {8, {add, relu}, true, L::kNhwc, L::kNChw8c}};
  for (const NodeCase& nc : cases) {
    const bool residual = !nc.steps.empty() && nc.steps.back().binary();
    const bool residual_first = !nc.steps.empty() && nc.steps.front().binary();
    const std::string what = "M " + std::to_string(nc.m) + " steps " + std::to_string(nc.steps.size()) + " x " +
                             kernels::layout_name(nc.x) + " y " + kernels::layout_name(nc.y);
    const ir::Node node = node_with(nc.steps, nc.fused, nc.x, nc.y, residual || residual_first);
    const Tensor x = random_f32({2, 24, 20, 24}, 1), w = random_f32({24, nc.m, 2, 2}, 2), b = random_f32({nc.m}, 3);
    const Shape y_shape = {2, nc.m, 40, 48};
    std::vector<Tensor> in = {stored(x, nc.x), w, b};
    if (residual || residual_first) in.push_back(stored(random_f32(y_shape, 4), nc.y));
    expect_kernel_matches_reference(
        node, in, nc.fused ? "f32_fused_conv_transpose_strided__edgemm" : "f32_conv_transpose_strided__edgemm", what);
  }
}

TEST(ConvTransposeStrided, OverlapsPadsAndGroupsKeepOnednn) {
  // kernel = stride 2x2 but with pads, output_padding or group 2, or kernel 3 over stride 2:
  // not this kernel's case; oneDNN (XNNPACK on aarch64 without SVE) runs and matches the reference.
  struct Variant {
    const char* what;
    const char* attr;
    std::vector<int64_t> value;
    int64_t group;
  };
  for (const Variant& v :
       {Variant{"pads", "pads", {1, 0, 1, 0}, 1}, Variant{"output_padding", "output_padding", {1, 1}, 1},
        Variant{"group 2", nullptr, {}, 2}, Variant{"kernel 3 stride 2", "kernel_shape", {3, 3}, 1}}) {
    ir::Node node = node_with({ir::Step{ir::StepKind::kRelu, 0, 0, -1}}, true, ir::ActivationLayout::kNchw,
                              ir::ActivationLayout::kNchw, false);
    if (v.attr != nullptr) set_ints(node, v.attr, v.value);
    if (v.group != 1) set_int(node, "group", v.group);
    const int64_t k = std::string(v.what) == "kernel 3 stride 2" ? 3 : 2;
    const Tensor x = random_f32({1, 8, 9, 11}, 5), w = random_f32({8, 8 / v.group, k, k}, 6), b = random_f32({8}, 7);
    auto attrs = kernels::parse_conv_attrs(node, true);
    ASSERT_TRUE(attrs.has_value());
    EXPECT_FALSE(kernels::ConvTransposeStrided::applies(*attrs, w)) << v.what;
    expect_kernel_matches_reference(
        node, {x, w, b},
        kernels::xnnpack::enabled() ? "f32_fused_conv_transpose__xnnpack" : "f32_fused_conv_transpose__onednn", v.what);
  }
}

}  // namespace kernels_conv_transpose_strided_test
}  // namespace edgemm
