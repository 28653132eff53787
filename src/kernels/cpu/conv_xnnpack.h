#pragma once
/// \file conv_xnnpack.h
/// ONNX Conv (Operators.md "Conv" 1/11) on XNNPACK's `convolution2d_nhwc_f32` operator
/// (`f32_conv__xnnpack`): 2-D, float32, constant weights, any group count (depthwise included),
/// strides, dilations and non-negative pads, activations in NHWC. ConvTranspose ("ConvTranspose"
/// 1/11) likewise on `deconvolution2d_nhwc_f32` (`f32_conv_transpose__xnnpack`), where fits(). Only where
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

/// One Conv (or ConvTranspose) node's XNNPACK operator. XNNPACK packs the weights (and bias) when
/// the operator is created, for the pads, strides and dilations of the first run; a run with other
/// pads (auto_pad SAME with another input size) creates it again. An operator is set up and run
/// under a mutex, so one kernel may run on several threads at once (one at a time).
class XnnpackConv {
 public:
  /// Whether a Conv or ConvTranspose with weights of `w_shape` takes this path: 2-D.
  static bool applies(const Shape& w_shape);

  /// Conv: keeps `w` (float32 [M, C/group, kh, kw], ONNX layout, copied into XNNPACK's
  /// [group, M/group, kh, kw, C/group]) and the constant `bias` ([M], copied; null: none).
  /// `fp16`: the half-precision operator (callers check xnnpack::fp16_enabled()).
  XnnpackConv(const float* w, const Shape& w_shape, const float* bias, bool fp16);

  /// ConvTranspose (`deconvolution2d_nhwc_f32`, float32 only): `w` float32 [C, M/group, kh, kw]
  /// (ONNX layout) with `group` groups, copied into the same [group, M/group, kh, kw, C/group];
  /// `bias` [M] as above.
  XnnpackConv(const float* w, const Shape& w_shape, const float* bias, int64_t group);

  ~XnnpackConv();
  XnnpackConv(const XnnpackConv&) = delete;
  XnnpackConv& operator=(const XnnpackConv&) = delete;

  /// Whether XNNPACK can run geometry `g`: always for Conv; for ConvTranspose when the pads are
  /// non-negative and the extra output rows and columns (output_padding, or what output_shape
  /// adds) are fewer than the stride, as XNNPACK's adjustment must be. Otherwise the caller runs
  /// another path.
  bool fits(const ConvGeometry& g) const;

  /// y = conv(x) + bias for geometry `g` (conv_geometry() or conv_transpose_geometry() has checked
  /// x against the weights; fits(g)): x NHWC [N, H, W, C], y NHWC [N, OH, OW, M], float32, on
  /// `threads` pthreadpool workers. Errors: XNNPACK's own refusals (Internal), naming `node`.
  Status run(const ir::Node& node, const ConvGeometry& g, const float* x, float* y, int threads) const;

  /// Bytes of the weights and bias held here in XNNPACK's order, plus the operator's packed copy
  /// once it exists, counted as as many elements at the operator's precision (XNNPACK does not
  /// report its packed size).
  int64_t packed_bytes() const;

 private:
  Status prepare(const ir::Node& node, const ConvGeometry& g) const;  // with mutex_ held
  /// ConvTranspose: output rows (axis 0) or columns (1) beyond XNNPACK's padded output, i.e. the
  /// adjustment.
  int64_t adjustment(const ConvGeometry& g, int axis) const;

  int64_t out_channels_, in_per_group_, kh_, kw_;
  bool fp16_;
  bool transpose_ = false;
  std::vector<float> weights_;  // [group, M/group, kh, kw, C/group]
  std::vector<float> bias_;     // [M] or empty
  mutable std::mutex mutex_;
  mutable xnn_operator_t op_ = nullptr;
  mutable std::vector<int64_t> op_key_;  // group, strides, dilations, pads the operator was made for
};

#endif

}  // namespace edgemm::kernels
