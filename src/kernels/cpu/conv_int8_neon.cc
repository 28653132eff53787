/// \file conv_int8_neon.cc
/// Int8Conv on Arm with dot product (conv_int8_neon.h): the depthwise loop, and the gathering of
/// output pixels into the SDOT product.

#include "kernels/cpu/conv_int8_neon.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

namespace edgemm::kernels {
namespace {

constexpr int64_t kDwBlock = 16;  // channels of one depthwise step (two int16x8 vectors)

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// x − zero_point as int16, NHWC with the channel axis padded to `cp` (padding 0).
void widen(const uint8_t* x, int64_t pixels, int64_t c, int64_t cp, int32_t zero_point, int16_t* out, int threads) {
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(zero_point));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* src = x + p * c;
    int16_t* dst = out + p * cp;
    int64_t i = 0;
    for (; i + 8 <= c; i += 8) vst1q_s16(dst + i, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(src + i))), zp));
    for (; i < c; ++i) dst[i] = static_cast<int16_t>(src[i] - zero_point);
    for (; i < cp; ++i) dst[i] = 0;
  }
}

/// The taps of one axis that read inside the input: [begin, end) for the output index `o`.
void taps_in_bounds(int64_t o, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t in,
                    int64_t* begin, int64_t* end) {
  const int64_t first = o * stride - pad;  // input index of tap 0
  *begin = 0;
  while (*begin < kernel && first + *begin * dilation < 0) ++*begin;
  *end = kernel;
  while (*end > *begin && first + (*end - 1) * dilation >= in) --*end;
}

/// Copies n bytes; short runs (a few channels per tap) inline instead of a call into libc.
inline void copy_bytes(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n >= 32) {
    std::memcpy(dst, src, static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

inline void fill_bytes(uint8_t* dst, uint8_t value, int64_t n) {
  if (n >= 32) {
    std::memset(dst, value, static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

/// Dequantizes 16 sums into y[0..n): sum · scale + bias.
inline void store16(const int32x4_t acc[4], const float* scale, const float* bias, float* y, int64_t n) {
  float tmp[kDwBlock];
  float* out = n == kDwBlock ? y : tmp;
  for (int j = 0; j < 4; ++j) {
    vst1q_f32(out + 4 * j, vfmaq_f32(vld1q_f32(bias + 4 * j), vcvtq_f32_s32(acc[j]), vld1q_f32(scale + 4 * j)));
  }
  if (out == tmp) std::memcpy(y, tmp, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace

bool Int8ConvNeon::applies(const Tensor& weights) {
  return weights.rank() == 4 && weights.dim(1) * weights.dim(2) * weights.dim(3) <= int8_neon::kMaxDepth;
}

Int8ConvNeon::Int8ConvNeon(const Tensor& weights, int64_t group, const int8::QdqScales& q, const float* bias)
    : out_channels_(weights.dim(0)),
      in_per_group_(weights.dim(1)),
      kh_(weights.dim(2)),
      kw_(weights.dim(3)),
      zero_point_(q.x_zero_point),
      depthwise_(group > 1 && group == out_channels_ && in_per_group_ == 1) {
  const int8_t* w = weights.data<int8_t>();
  const int64_t taps = kh_ * kw_;
  if (depthwise_) {
    const int64_t cp = round_up(out_channels_, kDwBlock);
    dw_weights_.assign(static_cast<size_t>(taps * cp), 0);
    dw_scales_.assign(static_cast<size_t>(cp), 0.0f);
    dw_bias_.assign(static_cast<size_t>(cp), 0.0f);
    for (int64_t c = 0; c < out_channels_; ++c) {
      for (int64_t t = 0; t < taps; ++t) dw_weights_[t * cp + c] = w[c * taps + t];
      dw_scales_[c] = q.x_scale * q.w_scales[c];
      if (bias != nullptr) dw_bias_[c] = bias[c];
    }
    return;
  }
  // Per group: B [K = taps · C/group, M/group] with k = tap · C/group + c, as im2col gathers.
  const int64_t out_per_group = out_channels_ / group, depth = taps * in_per_group_;
  std::vector<int8_t> b(static_cast<size_t>(depth * out_per_group));
  gemms_.reserve(static_cast<size_t>(group));
  for (int64_t gi = 0; gi < group; ++gi) {
    for (int64_t n = 0; n < out_per_group; ++n) {
      const int8_t* wm = w + (gi * out_per_group + n) * in_per_group_ * taps;
      for (int64_t c = 0; c < in_per_group_; ++c) {
        for (int64_t t = 0; t < taps; ++t) b[(t * in_per_group_ + c) * out_per_group + n] = wm[c * taps + t];
      }
    }
    const int64_t m0 = gi * out_per_group;
    gemms_.emplace_back(b.data(), depth, out_per_group, out_per_group, 1, q.w_scales.data() + m0, q.x_scale,
                        q.x_zero_point, bias != nullptr ? bias + m0 : nullptr);
  }
}

int64_t Int8ConvNeon::packed_bytes() const {
  int64_t bytes = static_cast<int64_t>(2 * dw_weights_.size() + 4 * (dw_scales_.size() + dw_bias_.size()));
  for (const auto& gemm : gemms_) bytes += gemm.packed_bytes();
  return bytes;
}

void Int8ConvNeon::run(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const {
  if (depthwise_) return run_depthwise(g, x, y, threads);
  run_gemm(g, x, y, threads);
}

void Int8ConvNeon::run_depthwise(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const {
  const int64_t c = g.in_channels, cp = round_up(c, kDwBlock);
  const int64_t ih = g.in_spatial[0], iw = g.in_spatial[1], oh = g.out_spatial[0], ow = g.out_spatial[1];
  thread_local std::vector<int16_t> wide;
  wide.resize(static_cast<size_t>(g.batch * ih * iw * cp));
  widen(x, g.batch * ih * iw, c, cp, zero_point_, wide.data(), threads);
  const int16_t* xs = wide.data();
  const int64_t rows = g.batch * oh, sh = g.strides[0], sw = g.strides[1], pt = g.pad_begin[0], pl = g.pad_begin[1];
  const int64_t row_step = g.dilations[0] * iw * cp, col_step = g.dilations[1] * cp, kw = kw_;
  const int16_t* weights = dw_weights_.data();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / oh, r = row % oh;
    int64_t kh0, kh1;
    taps_in_bounds(r, sh, pt, g.dilations[0], kh_, ih, &kh0, &kh1);
    for (int64_t col = 0; col < ow; ++col) {
      int64_t kw0, kw1;
      taps_in_bounds(col, sw, pl, g.dilations[1], kw, iw, &kw0, &kw1);
      // The input of tap (0, 0) (it may lie in the padding: only taps in bounds are read).
      const int64_t origin = ((b * ih + r * sh - pt) * iw + col * sw - pl) * cp;
      float* out = y + (row * ow + col) * c;
      for (int64_t c0 = 0; c0 < c; c0 += kDwBlock) {
        int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
        for (int64_t i = kh0; i < kh1; ++i) {
          const int16_t* in = xs + origin + i * row_step + kw0 * col_step + c0;
          const int16_t* w = weights + (i * kw + kw0) * cp + c0;
          for (int64_t j = kw0; j < kw1; ++j, in += col_step, w += cp) {
            const int16x8_t x0 = vld1q_s16(in), x1 = vld1q_s16(in + 8);
            const int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8);
            acc[0] = vmlal_s16(acc[0], vget_low_s16(x0), vget_low_s16(w0));
            acc[1] = vmlal_high_s16(acc[1], x0, w0);
            acc[2] = vmlal_s16(acc[2], vget_low_s16(x1), vget_low_s16(w1));
            acc[3] = vmlal_high_s16(acc[3], x1, w1);
          }
        }
        store16(acc, dw_scales_.data() + c0, dw_bias_.data() + c0, out + c0, std::min(kDwBlock, c - c0));
      }
    }
  }
}

void Int8ConvNeon::run_gemm(const ConvGeometry& g, const uint8_t* x, float* y, int threads) const {
  const int64_t c = g.in_channels, ih = g.in_spatial[0], iw = g.in_spatial[1];
  const int64_t oh = g.out_spatial[0], ow = g.out_spatial[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t pt = g.pad_begin[0], pl = g.pad_begin[1];
  const int64_t cg = in_per_group_, depth = kh_ * kw_ * cg, out_per_group = out_channels_ / g.group;
  const bool in_place = kh_ == 1 && kw_ == 1 && pt == 0 && pl == 0;
  const int64_t pixels = g.batch * oh * ow, blocks = (pixels + int8_neon::kBlockRows - 1) / int8_neon::kBlockRows;
  const auto zp = static_cast<uint8_t>(zero_point_);
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    thread_local std::vector<uint8_t> gathered;
    gathered.resize(static_cast<size_t>(in_place ? 0 : int8_neon::kBlockRows * depth));
    const int64_t p0 = blk * int8_neon::kBlockRows;
    const int count = static_cast<int>(std::min<int64_t>(int8_neon::kBlockRows, pixels - p0));
    // Each pixel's first input value (channel 0 of group 0; may lie in the padding) and its top-left.
    int64_t top[int8_neon::kBlockRows], left[int8_neon::kBlockRows], base[int8_neon::kBlockRows];
    int64_t b = p0 / (oh * ow), r = p0 / ow % oh, col = p0 % ow;
    for (int i = 0; i < count; ++i) {
      top[i] = r * sh - pt;
      left[i] = col * sw - pl;
      base[i] = ((b * ih + top[i]) * iw + left[i]) * c;
      if (++col == ow) {
        col = 0;
        if (++r == oh) r = 0, ++b;
      }
    }
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const uint8_t* rows[int8_neon::kBlockRows];
      const uint8_t* channels = x + gi * cg;
      for (int i = 0; i < count; ++i) {
        if (in_place) {
          rows[i] = channels + base[i];
          continue;
        }
        uint8_t* dst = gathered.data() + i * depth;
        for (int64_t u = 0; u < kh_; ++u) {
          const int64_t yy = top[i] + u * dh;
          for (int64_t v = 0; v < kw_; ++v, dst += cg) {
            const int64_t xx = left[i] + v * dw;
            if (yy < 0 || yy >= ih || xx < 0 || xx >= iw) {
              fill_bytes(dst, zp, cg);
            } else {
              copy_bytes(dst, channels + (base[i] + (u * dh * iw + v * dw) * c), cg);
            }
          }
        }
        rows[i] = gathered.data() + i * depth;
      }
      gemms_[static_cast<size_t>(gi)].gemm_rows(rows, count, y + p0 * out_channels_ + gi * out_per_group,
                                                out_channels_);
    }
  }
}

}  // namespace edgemm::kernels

#endif
