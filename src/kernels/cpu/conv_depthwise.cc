/// \file conv_depthwise.cc
/// The NEON depthwise convolution (see conv_depthwise.h). Per output row of one channel block,
/// out[ow][8] = bias[8] + sum over the kernel taps inside the input of in[ih][iw][8] * w[kh][kw][8]:
/// two float32x4_t accumulators per pixel, fused multiply-adds in tap order. Kernel rows
/// outside the input are skipped once per row; columns are split into the edge pixels (each tap
/// checked) and the interior, where every tap is inside the input and 4 pixels share each
/// weight load.

#include "kernels/cpu/conv_depthwise.h"

#include "kernels/cpu_features.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/onednn.h"
#endif

namespace edgemm::kernels {

bool conv_depthwise_neon_available() {
#if defined(__aarch64__)
  return cpu_features().asimd && !cpu_features().sve;
#else
  return false;
#endif
}

#if defined(__aarch64__)

namespace {

constexpr int64_t kB = kChannelBlock;

// One run's extents, and the interior columns [ow_lo, ow_hi) whose taps all lie inside the input.
struct Dims {
  int64_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  int64_t ow_lo = 0, ow_hi = 0;
};

Dims make_dims(const ConvGeometry& g) {
  Dims d{.h = g.in_spatial[0],
         .w = g.in_spatial[1],
         .oh = g.out_spatial[0],
         .ow = g.out_spatial[1],
         .kh = g.kernel[0],
         .kw = g.kernel[1],
         .sh = g.strides[0],
         .sw = g.strides[1],
         .dh = g.dilations[0],
         .dw = g.dilations[1],
         .pt = g.pad_begin[0],
         .pl = g.pad_begin[1]};
  // First ow with ow * sw - pl >= 0; last with ow * sw - pl + (kw - 1) * dw <= w - 1.
  d.ow_lo = std::min((d.pl + d.sw - 1) / d.sw, d.ow);
  const int64_t last = d.w - 1 + d.pl - (d.kw - 1) * d.dw;
  d.ow_hi = last < 0 ? d.ow_lo : std::clamp(last / d.sw + 1, d.ow_lo, d.ow);
  return d;
}

// One output pixel at column `ow` over kernel rows [kh0, kh1); `kCheck` skips columns outside
// the input (edge pixels). x: the block's input plane [H][W][8]; w: its weights [KH][KW][8].
template <bool kCheck>
inline void pixel(const Dims& d, const float* x, const float* w, float32x4_t b0, float32x4_t b1, int64_t ih0,
                  int64_t kh0, int64_t kh1, int64_t ow, float* y) {
  float32x4_t a0 = b0, a1 = b1;
  const int64_t iw0 = ow * d.sw - d.pl;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const float* xr = x + (ih0 + kh * d.dh) * d.w * kB;
    const float* wr = w + kh * d.kw * kB;
    for (int64_t kw = 0; kw < d.kw; ++kw) {
      const int64_t iw = iw0 + kw * d.dw;
      if (kCheck && (iw < 0 || iw >= d.w)) continue;
      const float* p = xr + iw * kB;
      a0 = vfmaq_f32(a0, vld1q_f32(p), vld1q_f32(wr + kw * kB));
      a1 = vfmaq_f32(a1, vld1q_f32(p + 4), vld1q_f32(wr + kw * kB + 4));
    }
  }
  vst1q_f32(y + ow * kB, a0);
  vst1q_f32(y + ow * kB + 4, a1);
}

// Four interior pixels ow .. ow + 3 (no checks): each tap's weights are loaded once.
inline void pixels4(const Dims& d, const float* x, const float* w, float32x4_t b0, float32x4_t b1, int64_t ih0,
                    int64_t kh0, int64_t kh1, int64_t ow, float* y) {
  float32x4_t a[4][2] = {{b0, b1}, {b0, b1}, {b0, b1}, {b0, b1}};
  const int64_t step = d.sw * kB;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const float* xr = x + ((ih0 + kh * d.dh) * d.w + ow * d.sw - d.pl) * kB;
    const float* wr = w + kh * d.kw * kB;
    for (int64_t kw = 0; kw < d.kw; ++kw) {
      const float32x4_t w0 = vld1q_f32(wr + kw * kB), w1 = vld1q_f32(wr + kw * kB + 4);
      const float* p = xr + kw * d.dw * kB;
      for (int j = 0; j < 4; ++j) {
        a[j][0] = vfmaq_f32(a[j][0], vld1q_f32(p + j * step), w0);
        a[j][1] = vfmaq_f32(a[j][1], vld1q_f32(p + j * step + 4), w1);
      }
    }
  }
  for (int j = 0; j < 4; ++j) {
    vst1q_f32(y + (ow + j) * kB, a[j][0]);
    vst1q_f32(y + (ow + j) * kB + 4, a[j][1]);
  }
}

// Output row `oh` [OW][8] of one channel block; `b` is the block's bias [8].
void row(const Dims& d, const float* x, const float* w, const float* b, int64_t oh, float* y) {
  const int64_t ih0 = oh * d.sh - d.pt;
  int64_t kh0 = 0, kh1 = d.kh;
  while (kh0 < kh1 && ih0 + kh0 * d.dh < 0) ++kh0;
  while (kh1 > kh0 && ih0 + (kh1 - 1) * d.dh >= d.h) --kh1;
  const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
  int64_t ow = 0;
  for (; ow < d.ow_lo; ++ow) pixel<true>(d, x, w, b0, b1, ih0, kh0, kh1, ow, y);
  for (; ow + 4 <= d.ow_hi; ow += 4) pixels4(d, x, w, b0, b1, ih0, kh0, kh1, ow, y);
  for (; ow < d.ow_hi; ++ow) pixel<false>(d, x, w, b0, b1, ih0, kh0, kh1, ow, y);
  for (; ow < d.ow; ++ow) pixel<true>(d, x, w, b0, b1, ih0, kh0, kh1, ow, y);
}

// NCHW [N, C, H, W] into blocked [N, ceil(C/8), H, W, 8], channels past C zero.
void to_padded_blocked(const float* src, float* dst, int64_t n, int64_t c, int64_t hw, int threads) {
  const int64_t blocks = (c + kB - 1) / kB;
  parallel_for(threads, n * blocks, hw * kB, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const int64_t c0 = nb % blocks * kB, valid = std::min(kB, c - c0);
      const float* s = src + (nb / blocks * c + c0) * hw;
      float* o = dst + nb * hw * kB;
      if (valid < kB) std::memset(o, 0, sizeof(float) * hw * kB);
      for (int64_t i = 0; i < valid; ++i) {
        for (int64_t p = 0; p < hw; ++p) o[p * kB + i] = s[i * hw + p];
      }
    }
  });
}

// Blocked [N, ceil(C/8), H, W, 8] back into NCHW [N, C, H, W], dropping the padding channels.
void from_padded_blocked(const float* src, float* dst, int64_t n, int64_t c, int64_t hw, int threads) {
  const int64_t blocks = (c + kB - 1) / kB;
  parallel_for(threads, n * blocks, hw * kB, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const int64_t c0 = nb % blocks * kB, valid = std::min(kB, c - c0);
      const float* s = src + nb * hw * kB;
      float* o = dst + (nb / blocks * c + c0) * hw;
      for (int64_t i = 0; i < valid; ++i) {
        for (int64_t p = 0; p < hw; ++p) o[i * hw + p] = s[p * kB + i];
      }
    }
  });
}

}  // namespace

DepthwiseConvNeon::DepthwiseConvNeon(const float* w, int64_t channels, int64_t kh, int64_t kw)
    : channels_(channels), kh_(kh), kw_(kw) {
  const int64_t taps = kh * kw;
  packed_.assign(static_cast<size_t>((channels + kB - 1) / kB * taps * kB), 0.0f);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < taps; ++t) packed_[(c / kB * taps + t) * kB + c % kB] = w[c * taps + t];
  }
}

void DepthwiseConvNeon::run(const ConvGeometry& g, const float* x, bool x_blocked, const float* bias, float* y,
                            bool y_blocked, int threads) const {
  const Dims d = make_dims(g);
  const int64_t blocks = (channels_ + kB - 1) / kB, n = g.batch;
  const int64_t in_plane = d.h * d.w * kB, out_plane = d.oh * d.ow * kB;
  const float* xb = x;
  if (!x_blocked) {
    float* buf = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kSrc, sizeof(float) * n * blocks * in_plane));
    to_padded_blocked(x, buf, n, channels_, d.h * d.w, threads);
    xb = buf;
  }
  float* yb =
      y_blocked
          ? y
          : static_cast<float*>(onednn::thread_buffer(onednn::Slot::kDst, sizeof(float) * n * blocks * out_plane));
  float* b8 = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kBias, sizeof(float) * blocks * kB));
  std::fill(b8, b8 + blocks * kB, 0.0f);
  if (bias != nullptr) std::copy(bias, bias + channels_, b8);
  const int64_t taps = kh_ * kw_;
  parallel_for(threads, n * blocks * d.oh, d.ow * taps * kB, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t nb = r / d.oh, cb = nb % blocks;
      row(d, xb + nb * in_plane, packed_.data() + cb * taps * kB, b8 + cb * kB, r % d.oh, yb + r * d.ow * kB);
    }
  });
  if (!y_blocked) from_padded_blocked(yb, y, n, channels_, d.oh * d.ow, threads);
}

#endif

}  // namespace edgemm::kernels
