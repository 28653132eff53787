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
#include "nn_test_util.h"

namespace edgemm {
namespace {

using namespace nntest;

ir::Node strided_node(int64_t kh, int64_t kw, bool bias) {
  ir::Node node =
      make_node("ConvTranspose", bias ? std::vector<std::string>{"X", "W", "B"} : std::vector<std::string>{"X", "W"});
  set_ints(node, "kernel_shape", {kh, kw});
  set_ints(node, "strides", {kh, kw});
  return node;
}

// NCHW `t` in nChw8c, [N, C/8, H, W, 8].
Tensor blocked(const Tensor& t) {
  auto b = Tensor::create(DataType::kFloat32, kernels::blocked_shape(t.shape()));
  EXPECT_TRUE(b.has_value());
  kernels::to_blocked(t.data<float>(), b->data<float>(), t.shape(), 1);
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
              const Tensor xb = c % kernels::kChannelBlock == 0 ? blocked(x) : Tensor();
              for (bool x_blocked : {false, true}) {
                if (x_blocked && !xb.defined()) continue;
                for (bool y_blocked : {false, true}) {
                  if (y_blocked && m % kernels::kChannelBlock != 0) continue;
                  for (int threads : {1, 2}) {
                    auto y = Tensor::create(DataType::kFloat32,
                                            y_blocked ? kernels::blocked_shape(g->output_shape()) : g->output_shape());
                    auto got = Tensor::create(DataType::kFloat32, g->output_shape());
                    ASSERT_TRUE(y.has_value() && got.has_value());
                    std::fill_n(y->data<float>(), y->element_count(), NAN);  // every element must be written
                    kernel.run(*g, (x_blocked ? xb : x).data<float>(), x_blocked, bp, y->data<float>(), y_blocked,
                               threads);
                    if (y_blocked) {
                      kernels::from_blocked(y->data<float>(), got->data<float>(), g->output_shape(), 1);
                    } else {
                      *got = *y;
                    }
                    expect_close(got->data<float>(), want->data<float>(), want->element_count(),
                                 what + " x " + (x_blocked ? "nChw8c" : "NCHW") + " y " +
                                     (y_blocked ? "nChw8c" : "NCHW") + " threads " + std::to_string(threads));
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
  // 36 shapes per (C, M), each in (1 + [C % 8 == 0]) x (1 + [M % 8 == 0]) layout pairs: 36 x 5 x 6,
  // on 1 and 2 threads.
  EXPECT_EQ(checked, 2160);
}

// A (Fused)ConvTranspose node, kernel = stride 2x2, with bias; `steps` as its epilogue (fused).
ir::Node node_with(const std::vector<ir::Step>& steps, bool fused, bool x_blocked, bool y_blocked, bool residual) {
  std::vector<std::string> inputs = {"X", "W", "B"};
  if (residual) inputs.push_back("R");
  ir::Node node = make_node(fused ? "FusedConvTranspose" : "ConvTranspose", inputs);
  node.name = "up";
  set_ints(node, "kernel_shape", {2, 2});
  set_ints(node, "strides", {2, 2});
  if (fused) {
    node.domain = ir::kEdgemmDomain;
    ir::write_steps(node, steps);
    if (x_blocked) set_string(node, "src_layout", "nChw8c");
    if (y_blocked) set_string(node, "dst_layout", "nChw8c");
  }
  return node;
}

TEST(ConvTransposeStrided, NodesRunTheNewKernelWithEpilogues) {
  // PP-OCR det's head at 20x24: 24 -> 24 (BatchNorm folded, Relu; nChw8c in and out) and
  // 24 -> 1 (Sigmoid; nChw8c in, NCHW out), plus every other layout pair and a residual Add.
  const ir::Step relu{ir::StepKind::kRelu, 0, 0, -1}, sigmoid{ir::StepKind::kSigmoid, 0, 0, -1};
  const ir::Step add{ir::StepKind::kAdd, 0, 0, 3};
  struct NodeCase {
    int64_t m;
    std::vector<ir::Step> steps;
    bool fused, x_blocked, y_blocked;
  };
  const std::vector<NodeCase> cases = {{24, {}, false, false, false},         {1, {}, false, false, false},
                                       {24, {relu}, true, true, true},        {1, {sigmoid}, true, true, false},
                                       {24, {sigmoid}, true, false, true},    {24, {relu}, true, false, false},
                                       {3, {relu, add}, true, false, false},  {24, {add, relu}, true, true, true},
                                       {8, {sigmoid, add}, true, true, false}};
  for (const NodeCase& nc : cases) {
    const bool residual = !nc.steps.empty() && nc.steps.back().binary();
    const bool residual_first = !nc.steps.empty() && nc.steps.front().binary();
    const std::string what = "M " + std::to_string(nc.m) + " steps " + std::to_string(nc.steps.size()) +
                             (nc.x_blocked ? " x nChw8c" : " x NCHW") + (nc.y_blocked ? " y nChw8c" : " y NCHW");
    const ir::Node node = node_with(nc.steps, nc.fused, nc.x_blocked, nc.y_blocked, residual || residual_first);
    const Tensor x = random_f32({2, 24, 20, 24}, 1), w = random_f32({24, nc.m, 2, 2}, 2), b = random_f32({nc.m}, 3);
    const Shape y_shape = {2, nc.m, 40, 48};
    std::vector<Tensor> in = {nc.x_blocked ? blocked(x) : x, w, b};
    if (residual || residual_first) {
      const Tensor r = random_f32(y_shape, 4);
      in.push_back(nc.y_blocked ? blocked(r) : r);
    }
    expect_kernel_matches_reference(
        node, in, nc.fused ? "f32_fused_conv_transpose_strided__edgemm" : "f32_conv_transpose_strided__edgemm", what);
  }
}

TEST(ConvTransposeStrided, OverlapsPadsAndGroupsKeepOnednn) {
  // kernel = stride 2x2 but with pads, output_padding or group 2, or kernel 3 over stride 2:
  // not this kernel's case; oneDNN runs and matches the reference.
  struct Variant {
    const char* what;
    const char* attr;
    std::vector<int64_t> value;
    int64_t group;
  };
  for (const Variant& v :
       {Variant{"pads", "pads", {1, 0, 1, 0}, 1}, Variant{"output_padding", "output_padding", {1, 1}, 1},
        Variant{"group 2", nullptr, {}, 2}, Variant{"kernel 3 stride 2", "kernel_shape", {3, 3}, 1}}) {
    ir::Node node = node_with({ir::Step{ir::StepKind::kRelu, 0, 0, -1}}, true, false, false, false);
    if (v.attr != nullptr) set_ints(node, v.attr, v.value);
    if (v.group != 1) set_int(node, "group", v.group);
    const int64_t k = std::string(v.what) == "kernel 3 stride 2" ? 3 : 2;
    const Tensor x = random_f32({1, 8, 9, 11}, 5), w = random_f32({8, 8 / v.group, k, k}, 6), b = random_f32({8}, 7);
    auto attrs = kernels::parse_conv_attrs(node, true);
    ASSERT_TRUE(attrs.has_value());
    EXPECT_FALSE(kernels::ConvTransposeStrided::applies(*attrs, w)) << v.what;
    expect_kernel_matches_reference(node, {x, w, b}, "f32_fused_conv_transpose__onednn", v.what);
  }
}

}  // namespace
}  // namespace edgemm
