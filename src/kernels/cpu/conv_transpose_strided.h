#pragma once
/// \file conv_transpose_strided.h
/// edgemm's own float32 kernel for the non-overlapping 2-D ConvTranspose
/// (`f32_conv_transpose_strided__edgemm`): ONNX ConvTranspose (Operators.md "ConvTranspose"
/// 1/11) with kernel == strides on both axes, dilations 1, no pads, no output_padding or
/// output_shape, group 1. Every input pixel then writes its own kh x kw output block:
/// y[n][m][s*i + a][s*j + b] = bias[m] + sum_c x[n][c][i][j] * W[c][m][a][b], one dot product
/// of length C per output element (PP-OCR det's 2x2 stride-2 upsampling head, where oneDNN 2.6
/// runs at 1-12 GFLOP/s).
///
/// Layouts: x is NCHW [N, C, H, W], blocked nChw8c [N, C/8, H, W, 8] or NHWC [N, H, W, C]
/// (kernels/cpu/layout.h); y is NCHW [N, M, s*H, s*W], or nChw8c or NHWC with M a multiple of 8.
/// Each input row is first copied into a per-thread [C][W rounded up to 8] buffer. nChw8c and
/// NHWC y: per input pixel and tap, the 8 channels of a block are a broadcast multiply-add over
/// C (8 pixels at once). Plain y: per output row of one channel and tap, vectorized over the
/// input columns.

#include <cstdint>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/elementwise_steps.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/layout.h"

namespace edgemm::kernels {

/// A non-overlapping ConvTranspose's constant weights, repacked once. Owns a copy; immutable
/// after construction, so runs on several threads at once are safe.
class ConvTransposeStrided {
 public:
  /// Whether a ConvTranspose with these attributes and constant weights `w` takes this kernel:
  /// float32 W [C, M, kh, kw], group 1, strides == (kh, kw), kernel_shape absent or (kh, kw),
  /// dilations absent or 1, pads absent or 0, output_padding absent or 0, no output_shape,
  /// auto_pad NOTSET or VALID. Such nodes always have a geometry that fits().
  static bool applies(const ConvAttrs& attrs, const Tensor& w);

  /// Whether the resolved geometry `g` is one this kernel computes (the run-time check of
  /// applies(): 2-D, group 1, kernel == strides, dilations 1, zero pads, output = stride * input).
  static bool fits(const ConvGeometry& g);

  /// Packs float32 weights `w` [C, M, kh, kw] (ONNX layout, not retained) into
  /// [ceil(M/8), kh, kw, C, 8], output channels past M zero.
  ConvTransposeStrided(const float* w, int64_t in_channels, int64_t out_channels, int64_t kh, int64_t kw);

  /// y = steps(conv_transpose(x) + bias) for a geometry `g` that fits() and matches the packed
  /// weights. `bias` is float32 [M] or null. `x_layout`: x is NCHW, nChw8c [N, C/8, H, W, 8] (C a
  /// multiple of 8) or NHWC [N, H, W, C]; `y_layout` likewise for y [N, M, s*H, s*W] (nChw8c and
  /// NHWC: M a multiple of 8). `unary_steps` (no binary step; may be empty) finish each input
  /// row's output rows while they are in cache. Parallel over (n, input row) on `threads` OpenMP
  /// threads (parallel_for).
  void run(const ConvGeometry& g, const float* x, ActivationLayout x_layout, const float* bias, float* y,
           ActivationLayout y_layout, const std::vector<ir::Step>& unary_steps, int threads) const;

  /// Bytes of the packed weights.
  int64_t packed_bytes() const { return static_cast<int64_t>(packed_.size() * sizeof(float)); }

 private:
  int64_t in_channels_, out_channels_, kh_, kw_;
  std::vector<float> packed_;  // [ceil(M/8), kh, kw, C, 8]
};

}  // namespace edgemm::kernels
