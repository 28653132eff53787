// The NEON depthwise convolution (src/kernels/cpu/conv_depthwise.cc, f32_conv_depthwise__neon)
// against the plain reference loops (conv_reference) on seeded random inputs.
// (1) The kernel called directly over a grid of kernel sizes, strides, dilations, asymmetric
//     pads, channel counts that are not multiples of 8, tiny images, with and without bias, in
//     NCHW and nChw8c, on 1 and 2 threads. Skipped where the variant is not available (x86, SVE).
// (2) Conv and FusedConv nodes (activation + residual epilogue, NCHW and nChw8c) through their
//     kernel factories: which kernel ran (by name) and that it matches the reference path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu_features.h"
#include "nn_test_util.h"

namespace edgemm {
namespace {

using namespace nntest;

#if defined(__aarch64__)
// The direct kernel test's grid (DepthwiseConvNeon exists on aarch64 only).
struct DwCase {
  int64_t c, h, w, kh, kw, stride, dilation;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

ir::Node dw_node(const DwCase& dc, bool bias) {
  ir::Node node =
      make_node("Conv", bias ? std::vector<std::string>{"X", "W", "B"} : std::vector<std::string>{"X", "W"});
  set_ints(node, "kernel_shape", {dc.kh, dc.kw});
  set_ints(node, "strides", {dc.stride, dc.stride});
  set_ints(node, "dilations", {dc.dilation, dc.dilation});
  set_ints(node, "pads", dc.pads);
  set_int(node, "group", dc.c);
  return node;
}

std::string describe(const DwCase& dc) {
  return "C " + std::to_string(dc.c) + " " + std::to_string(dc.h) + "x" + std::to_string(dc.w) + " k " +
         std::to_string(dc.kh) + "x" + std::to_string(dc.kw) + " s " + std::to_string(dc.stride) + " d " +
         std::to_string(dc.dilation) + " pads " + std::to_string(dc.pads[0]) + "," + std::to_string(dc.pads[1]) + "," +
         std::to_string(dc.pads[2]) + "," + std::to_string(dc.pads[3]);
}

// Every case of the grid whose dilated kernel fits the padded image.
std::vector<DwCase> grid() {
  std::vector<DwCase> cases;
  const std::vector<std::vector<int64_t>> pads = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 3}};
  for (int64_t c : {3, 13, 24}) {
    for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {7, 9}, {12, 17}}) {
      for (auto [kh, kw] : {std::pair<int64_t, int64_t>{3, 3}, {5, 5}, {1, 1}, {3, 1}}) {
        for (int64_t s : {1, 2}) {
          for (int64_t d : {1, 2}) {
            for (const auto& p : pads) {
              if (h + p[0] + p[2] < (kh - 1) * d + 1 || w + p[1] + p[3] < (kw - 1) * d + 1) continue;
              cases.push_back({c, h, w, kh, kw, s, d, p});
            }
          }
        }
      }
    }
  }
  return cases;
}

#endif

TEST(ConvDepthwise, NeonMatchesReference) {
  if (!kernels::conv_depthwise_neon_available()) {
    const kernels::CpuFeatures& f = kernels::cpu_features();
    GTEST_SKIP() << "f32_conv_depthwise__neon needs aarch64 with asimd and without SVE; this CPU: " << f.arch
                 << (f.sve ? " with SVE (oneDNN's jit_dw kernels run instead)" : "");
  }
#if defined(__aarch64__)
  uint32_t seed = 1;
  int checked = 0;
  for (const DwCase& dc : grid()) {
    for (bool bias : {false, true}) {
      const ir::Node node = dw_node(dc, bias);
      auto attrs = kernels::parse_conv_attrs(node, false);
      ASSERT_TRUE(attrs.has_value());
      const Tensor x = random_f32({2, dc.c, dc.h, dc.w}, ++seed);
      const Tensor w = random_f32({dc.c, 1, dc.kh, dc.kw}, ++seed);
      const Tensor b = random_f32({dc.c}, ++seed);
      const Shape b_shape = b.shape();
      auto g = kernels::conv_geometry(node, *attrs, x.shape(), w.shape(), bias ? &b_shape : nullptr);
      ASSERT_TRUE(g.has_value()) << describe(dc) << ": " << g.status().message();
      auto want = Tensor::create(DataType::kFloat32, g->output_shape());
      ASSERT_TRUE(want.has_value());
      kernels::conv_reference<float>(*g, x.data<float>(), w.data<float>(), bias ? b.data<float>() : nullptr,
                                     want->data<float>(), 1);
      const kernels::DepthwiseConvNeon dw(w.data<float>(), dc.c, dc.kh, dc.kw);
      const float* bp = bias ? b.data<float>() : nullptr;
      for (int threads : {1, 2}) {
        auto got = Tensor::create(DataType::kFloat32, g->output_shape());
        ASSERT_TRUE(got.has_value());
        dw.run(*g, x.data<float>(), false, bp, got->data<float>(), false, threads);
        expect_close(got->data<float>(), want->data<float>(), want->element_count(),
                     describe(dc) + " bias " + std::to_string(bias) + " threads " + std::to_string(threads));
        ++checked;
      }
      if (dc.c % kernels::kChannelBlock == 0) {
        // Blocked in and out: the same numbers in nChw8c.
        auto xb = Tensor::create(DataType::kFloat32, kernels::blocked_shape(x.shape()));
        auto yb = Tensor::create(DataType::kFloat32, kernels::blocked_shape(g->output_shape()));
        auto got = Tensor::create(DataType::kFloat32, g->output_shape());
        ASSERT_TRUE(xb.has_value() && yb.has_value() && got.has_value());
        kernels::to_blocked(x.data<float>(), xb->data<float>(), x.shape(), 1);
        dw.run(*g, xb->data<float>(), true, bp, yb->data<float>(), true, 2);
        kernels::from_blocked(yb->data<float>(), got->data<float>(), g->output_shape(), 1);
        expect_close(got->data<float>(), want->data<float>(), want->element_count(), describe(dc) + " blocked");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500);
#endif
}

// A FusedConv (or Conv) depthwise node: 3x3, stride 2, pads 1,0,2,1, and with `fused` a
// HardSwish then + residual epilogue (input 3, the output's shape).
ir::Node dw_fused_node(int64_t c, bool fused, bool blocked) {
  ir::Node node = make_node(fused ? "FusedConv" : "Conv", fused ? std::vector<std::string>{"X", "W", "B", "R"}
                                                                : std::vector<std::string>{"X", "W", "B"});
  node.name = "dw";
  set_ints(node, "kernel_shape", {3, 3});
  set_ints(node, "strides", {2, 2});
  set_ints(node, "pads", {1, 0, 2, 1});
  set_int(node, "group", c);
  if (fused) {
    node.domain = ir::kEdgemmDomain;
    ir::write_steps(node, {{ir::StepKind::kHardSwish, 0, 0, -1}, {ir::StepKind::kAdd, 0, 0, 3}});
    if (blocked) {
      set_string(node, "src_layout", "nChw8c");
      set_string(node, "dst_layout", "nChw8c");
    }
  }
  return node;
}

TEST(ConvDepthwise, NodesRunTheNeonKernelAndMatchReference) {
  // Names: on aarch64 without SVE the NEON kernel, elsewhere oneDNN. Results: the reference
  // path of the same node on the same (NCHW or blocked) inputs (oneDNN off: conv_reference,
  // then the epilogue in loops).
  const bool neon = kernels::conv_depthwise_neon_available();
  struct NodeCase {
    int64_t c;
    bool fused, blocked;
  };
  for (const NodeCase& nc : {NodeCase{13, false, false}, NodeCase{24, false, false}, NodeCase{13, true, false},
                             NodeCase{24, true, false}, NodeCase{24, true, true}}) {
    const std::string what =
        "C " + std::to_string(nc.c) + (nc.fused ? " fused" : "") + (nc.blocked ? " nChw8c" : " NCHW");
    const ir::Node node = dw_fused_node(nc.c, nc.fused, nc.blocked);
    const Tensor x = random_f32({2, nc.c, 11, 14}, 1), w = random_f32({nc.c, 1, 3, 3}, 2), b = random_f32({nc.c}, 3);
    const Shape y_shape = {2, nc.c, 6, 7};  // (11 + 3 - 3) / 2 + 1, (14 + 1 - 3) / 2 + 1
    const Tensor r = random_f32(y_shape, 4);
    std::vector<Tensor> in = {x, w, b};
    if (nc.fused) in.push_back(r);
    if (nc.blocked) {
      in[0] = *Tensor::create(DataType::kFloat32, kernels::blocked_shape(x.shape()));
      kernels::to_blocked(x.data<float>(), in[0].data<float>(), x.shape(), 1);
      in[3] = *Tensor::create(DataType::kFloat32, kernels::blocked_shape(y_shape));
      kernels::to_blocked(r.data<float>(), in[3].data<float>(), y_shape, 1);
    }
    const std::string expected =
        std::string(nc.fused ? "f32_fused_conv" : "f32_conv") + (neon ? "_depthwise__neon" : "__onednn");
    expect_kernel_matches_reference(node, in, expected, what, nc.blocked ? kernels::blocked_shape(y_shape) : y_shape);
  }
}

}  // namespace
}  // namespace edgemm
