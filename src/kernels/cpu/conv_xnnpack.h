#pragma once
/// \file conv_xnnpack.h
/// ONNX Conv (Operators.md "Conv" 1/11) on XNNPACK's `convolution2d_nhwc_f32` operator
/// (`f32_conv__xnnpack`): 2-D, float32, constant weights, any group count (depthwise included),
/// strides, dilations and non-negative pads, activations in NHWC. Only where
/// xnnpack::enabled() (aarch64 without SVE, kernels/cpu/xnnpack.h). At the "fp16" precision
/// (`f16_conv__xnnpack`, where xnnpack::fp16_enabled()) `convolution2d_nhwc_f16`: weights and
/// bias rounded to half once, X rounded to half on each run, products and sums in half precision,
/// Y widened back to float32.

#include <cstdint>
#include <mutex>
#include <vector>

#include "edgemm/status.h"
#include "ir/graph.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/xnnpack.h"

namespace edgemm::kernels {

#if defined(__aarch64__)

/// One Conv node's XNNPACK operator. XNNPACK packs the weights (and bias) when the operator is
/// created, for the pads, strides and dilations of the first run; a run with other pads (auto_pad
/// SAME with another input size) creates it again. An operator is set up and run under a mutex, so
/// one kernel may run on several threads at once (one at a time).
class XnnpackConv {
 public:
  /// Whether a Conv with weights of `w_shape` [M, C/group, kh, kw] takes this path: 2-D.
  static bool applies(const Shape& w_shape);

  /// Keeps `w` (float32 [M, C/group, kh, kw], ONNX layout, copied into XNNPACK's
  /// [group, M/group, kh, kw, C/group]) and the constant `bias` ([M], copied; null: none).
  /// `fp16`: the half-precision operator (callers check xnnpack::fp16_enabled()).
  XnnpackConv(const float* w, const Shape& w_shape, const float* bias, bool fp16);
  ~XnnpackConv();
  XnnpackConv(const XnnpackConv&) = delete;
  XnnpackConv& operator=(const XnnpackConv&) = delete;

  /// y = conv(x) + bias for geometry `g` (conv_geometry() has checked x against the weights):
  /// x NHWC [N, H, W, C], y NHWC [N, OH, OW, M], float32, on `threads` pthreadpool workers.
  /// Errors: negative pads (Unsupported) and XNNPACK's own refusals (Internal), naming `node`.
  Status run(const ir::Node& node, const ConvGeometry& g, const float* x, float* y, int threads) const;

 private:
  Status prepare(const ir::Node& node, const ConvGeometry& g) const;  // with mutex_ held

  int64_t out_channels_, in_per_group_, kh_, kw_;
  bool fp16_;
  std::vector<float> weights_;  // [group, M/group, kh, kw, C/group]
  std::vector<float> bias_;     // [M] or empty
  mutable std::mutex mutex_;
  mutable xnn_operator_t op_ = nullptr;
  mutable std::vector<int64_t> op_key_;  // group, strides, dilations, pads the operator was made for
};

#endif

}  // namespace edgemm::kernels
