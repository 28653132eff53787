#pragma once
/// \file conv_int8_neon.h
/// The 2-D convolution of com.edgemm Int8Conv (conv_int8.h) on Arm CPUs with dot product
/// (`u8s8_conv__neon_dot`, where int8_neon::enabled()): uint8 NHWC in, float32 NHWC out, before
/// the node's epilogue. Computes Σ (x − x_zero_point) · W exactly in int32 (a padded input reads
/// as the zero point, adding 0), then · x_scale · w_scales[m] + B[m].
///
/// Paths: depthwise (group == C == M): x − zero point widened to int16 once, then int16
/// multiply-accumulates over the taps in bounds, 16 channels at a time; every other group count:
/// 8 output pixels at a time gathered (im2col, or read in place for 1×1 kernels without padding)
/// into the SDOT product of int8_gemm_neon.h, one packed B per group.

#include <cstdint>
#include <vector>

#include "edgemm/tensor.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/int8_common.h"
#include "kernels/cpu/int8_gemm_neon.h"

namespace edgemm::kernels {

#if defined(__aarch64__)

class Int8ConvNeon {
 public:
  /// Whether an Int8Conv with int8 `weights` [M, C/group, kh, kw] takes this path: 2-D, and at
  /// most int8_neon::kMaxDepth values per output.
  static bool applies(const Tensor& weights);

  /// Packs `weights` (int8 [M, C/group, kh, kw], constant) for `group` groups with the
  /// quantization `q` (x_scale, x_zero_point, M weight scales) and `bias` ([M] float32 or null).
  Int8ConvNeon(const Tensor& weights, int64_t group, const int8::QdqScales& q, const float* bias);

  /// y (float32 NHWC [N, OH, OW, M]) = conv(x) for geometry `g` (conv_geometry() has checked it
  /// against the weights), x uint8 NHWC [N, H, W, C] quantized with x_scale and x_zero_point, on
  /// `threads` OpenMP threads.
  void run(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const;

  /// Bytes of the packed weights and their per-channel terms.
  int64_t packed_bytes() const;

 private:
  void run_depthwise(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const;
  void run_gemm(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const;

  int64_t out_channels_, in_per_group_, kh_, kw_;
  int32_t zero_point_;
  bool depthwise_;
  std::vector<int8_neon::Int8Gemm> gemms_;  // one per group, B [kh · kw · C/group, M/group]
  // Depthwise: weights as int16 [kh · kw][C rounded up to 16], scales and bias padded alike.
  std::vector<int16_t> dw_weights_;
  std::vector<float> dw_scales_, dw_bias_;
};

#endif

}  // namespace edgemm::kernels
