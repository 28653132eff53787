#pragma once
/// \file conv_depthwise.h
/// edgemm's own float32 depthwise 2-D convolution for aarch64 (`f32_conv_depthwise__neon`):
/// ONNX Conv (Operators.md "Conv" 1/11) with group == C == M (channel multiplier 1), any
/// kernel size, strides, dilations and explicit (resolved) pads. oneDNN 2.6 has no JIT
/// depthwise kernel for aarch64 CPUs without SVE (the RK3588's Cortex-A76) and runs its
/// reference loops there (docs/aarch64.md); on SVE CPUs its `jit_dw:sve_*` kernels are kept.
///
/// Layout: the kernel computes in blocked nChw8c (kernels/cpu/layout.h), 8 channels of one
/// pixel in two float32x4_t, with the channel count rounded up to a multiple of 8 (the lanes
/// past C read zero weights and are dropped). Plain NCHW activations are reordered into a
/// per-thread buffer on the way in and out.

#include <cstdint>
#include <vector>

#include "kernels/cpu/conv_reference.h"

namespace edgemm::kernels {

/// Whether `f32_conv_depthwise__neon` runs on this CPU: aarch64 with Advanced SIMD (asimd) and
/// without SVE. Always false on other architectures.
bool conv_depthwise_neon_available();

#if defined(__aarch64__)

/// A depthwise convolution's constant weights, repacked once for the NEON kernel. Owns a copy;
/// immutable after construction, so runs on several threads at once are safe.
class DepthwiseConvNeon {
 public:
  /// Packs float32 weights `w` [C, 1, kh, kw] (ONNX layout, not retained) into
  /// [ceil(C/8), kh, kw, 8], channels past C zero.
  DepthwiseConvNeon(const float* w, int64_t channels, int64_t kh, int64_t kw);

  /// y = depthwise_conv(x) + bias for the geometry `g` of a Conv whose weights are the packed ones
  /// (2-D, g.group == g.in_channels == g.out_channels == C; conv_geometry() has checked x). `bias`
  /// is float32 [C] or null. `x_blocked`: x is nChw8c [N, C/8, H, W, 8] (C a multiple of 8),
  /// else NCHW [N, C, H, W]; likewise `y_blocked` for y [N, C, OH, OW]. Plain operands go through
  /// per-thread buffers (onednn::thread_buffer slots kSrc and kDst; kBias holds the padded bias).
  /// Parallel over (n, channel block, output row) on `threads` OpenMP threads (parallel_for).
  void run(const ConvGeometry& g, const float* x, bool x_blocked, const float* bias, float* y, bool y_blocked,
           int threads) const;

 private:
  int64_t channels_, kh_, kw_;
  std::vector<float> packed_;  // [ceil(C/8), kh, kw, 8]
};

#endif

}  // namespace edgemm::kernels
