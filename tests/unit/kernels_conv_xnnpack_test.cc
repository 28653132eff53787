// Conv on XNNPACK (src/kernels/cpu/conv_xnnpack.cc, f32_conv__xnnpack, and at precision fp16
// f16_conv__xnnpack; aarch64 without SVE only)
// against the plain reference path of the same node on seeded random inputs: Conv and FusedConv
// nodes (HardSwish then + residual epilogue) through their kernel factories, regular, grouped,
// depthwise and 1x1 convolutions with strides, dilations and asymmetric pads, activations in NCHW,
// NHWC and nChw8c, on 1 and 2 threads, and which kernel ran (by name). The wide geometry grid of
// tests/unit/kernels_conv_test.cc (Conv.OnednnMatchesReference) runs XNNPACK too on such CPUs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/xnnpack.h"
#include "edgemm/cpu.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_conv_xnnpack_test {  // named for the file: unity batches merge anonymous namespaces

using namespace nntest;

struct XnnCase {
  const char* name;
  int64_t c, m, group, k, stride, dilation;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

ir::Node xnn_node(const XnnCase& xc, bool fused, ir::ActivationLayout layout) {
  ir::Node node = make_node(fused ? "FusedConv" : "Conv", fused ? std::vector<std::string>{"X", "W", "B", "R"}
                                                                : std::vector<std::string>{"X", "W", "B"});
  node.name = xc.name;
  set_ints(node, "kernel_shape", {xc.k, xc.k});
  set_ints(node, "strides", {xc.stride, xc.stride});
  set_ints(node, "dilations", {xc.dilation, xc.dilation});
  set_ints(node, "pads", xc.pads);
  set_int(node, "group", xc.group);
  if (fused) {
    node.domain = ir::kEdgemmDomain;
    ir::write_steps(node, {{ir::StepKind::kHardSwish, 0, 0, -1}, {ir::StepKind::kAdd, 0, 0, 3}});
    set_string(node, "src_layout", kernels::layout_name(layout));
    set_string(node, "dst_layout", kernels::layout_name(layout));
  }
  return node;
}

// `t` (logical NCHW) stored in `layout`.
Tensor in_layout(const Tensor& t, ir::ActivationLayout layout) {
  if (layout == ir::ActivationLayout::kNchw) return t;
  Tensor out = *Tensor::create(DataType::kFloat32, kernels::physical_shape(t.shape(), layout));
  kernels::to_layout(t.data<float>(), out.data<float>(), t.shape(), layout, 1);
  return out;
}

/// Runs the cases through the kernels of `registry` (named `prefix` + "_conv__xnnpack" or
/// "_fused_conv__xnnpack") against the reference, within expect_close's `tolerance`.
void expect_xnnpack_convs_match_reference(const kernels::KernelRegistry& registry, const std::string& prefix,
                                          double tolerance) {
  const std::vector<XnnCase> cases = {
      {"regular_3x3", 5, 12, 1, 3, 1, 1, {1, 1, 1, 1}},     {"regular_3x3_s2_asym", 8, 16, 1, 3, 2, 1, {1, 0, 2, 1}},
      {"grouped", 8, 6, 2, 3, 1, 2, {2, 2, 2, 2}},          {"depthwise_3x3_s2", 24, 24, 24, 3, 2, 1, {1, 0, 2, 1}},
      {"depthwise_5x5", 13, 13, 13, 5, 1, 1, {2, 2, 2, 2}}, {"pointwise", 16, 24, 1, 1, 1, 1, {0, 0, 0, 0}},
  };
  uint32_t seed = 1;
  for (const XnnCase& xc : cases) {
    const Tensor x = random_f32({2, xc.c, 11, 14}, ++seed);
    const Tensor w = random_f32({xc.m, xc.c / xc.group, xc.k, xc.k}, ++seed);
    const Tensor b = random_f32({xc.m}, ++seed);
    for (bool fused : {false, true}) {
      for (auto layout : {ir::ActivationLayout::kNchw, ir::ActivationLayout::kNhwc, ir::ActivationLayout::kNChw8c}) {
        if (!fused && layout != ir::ActivationLayout::kNchw) continue;  // layouts are FusedConv attributes
        const bool blockable = xc.c % kernels::kChannelBlock == 0 && xc.m % kernels::kChannelBlock == 0;
        if (layout == ir::ActivationLayout::kNChw8c && !blockable) continue;
        const ir::Node node = xnn_node(xc, fused, layout);
        auto attrs = kernels::parse_conv_attrs(node, false);
        ASSERT_TRUE(attrs.has_value());
        auto g = kernels::conv_geometry(node, *attrs, x.shape(), w.shape(), nullptr);
        ASSERT_TRUE(g.has_value()) << xc.name << ": " << g.status().message();
        const Shape y_shape = g->output_shape();
        std::vector<Tensor> in = {in_layout(x, layout), w, b};
        if (fused) in.push_back(in_layout(random_f32(y_shape, ++seed), layout));
        const std::string what = std::string(xc.name) + (fused ? " fused " : " ") + kernels::layout_name(layout);
        expect_kernel_matches_reference(node, in, prefix + (fused ? "_fused_conv__xnnpack" : "_conv__xnnpack"), what,
                                        kernels::physical_shape(y_shape, layout), registry, tolerance);
      }
    }
  }
}

TEST(ConvXnnpack, NodesRunXnnpackAndMatchReference) {
  if (!kernels::xnnpack::enabled()) {
    const CpuFeatures& f = cpu_features();
    GTEST_SKIP() << "f32_conv__xnnpack runs on aarch64 with asimd and without SVE; this CPU: " << f.arch;
  }
  expect_xnnpack_convs_match_reference(kernels::cpu_registry(), "f32", 1e-5);
}

// At precision fp16 the same nodes run XNNPACK's half-precision convolution (weights, input and
// sums in IEEE half): within 2e-2 · max(1, |y|) of the float32 reference for these sums of up to
// 325 products of values in [-1, 1] (measured under qemu's Cortex-A76: at most 1.03e-2).
TEST(ConvXnnpack, HalfPrecisionStaysNearReference) {
  if (!kernels::fp16_available()) GTEST_SKIP() << "fp16 runs on Arm CPUs with FP16 arithmetic only";
  expect_xnnpack_convs_match_reference(*kernels::fp16_kernels(), "f16", 2e-2);
}

// Weights below half's normal range (a folded BatchNorm's 1e-6 scale, as in PP-OCRv4 det's head)
// would keep only a few bits in half: at precision fp16 such a node stays float32, and exact.
TEST(ConvXnnpack, HalfPrecisionKeepsFloat32WhereHalfLosesWeights) {
  if (!kernels::fp16_available()) GTEST_SKIP() << "fp16 runs on Arm CPUs with FP16 arithmetic only";
  const XnnCase xc{"tiny_weights", 8, 8, 1, 3, 1, 1, {1, 1, 1, 1}};
  Tensor w = random_f32({8, 8, 3, 3}, 7);
  for (int64_t i = 0; i < w.element_count(); ++i) w.data<float>()[i] *= 1e-6f;
  const std::vector<Tensor> in = {random_f32({1, 8, 9, 9}, 8), w, random_f32({8}, 9)};
  expect_kernel_matches_reference(xnn_node(xc, false, ir::ActivationLayout::kNchw), in, "f32_conv__xnnpack",
                                  "tiny weights at fp16", std::nullopt, *kernels::fp16_kernels());
}

}  // namespace kernels_conv_xnnpack_test
}  // namespace edgemm
