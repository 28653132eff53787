/// \file conv_transpose_strided.cc
/// The non-overlapping ConvTranspose (see conv_transpose_strided.h). Portable loops that GCC
/// vectorizes at -O3 (AVX2 clones on x86, NEON on aarch64). Blocked y keeps 8 pixels x 8
/// channels of accumulators in registers over the C loop (8-lane vector extensions); plain y
/// accumulates one input-row-wide vector per (channel, tap) and scatters it to every kw-th
/// output column.

#include "kernels/cpu/conv_transpose_strided.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise_chain.h"
#include "kernels/cpu/layout.h"
#include "kernels/cpu/vector_math.h"

namespace edgemm::kernels {
namespace {

constexpr int64_t kB = kChannelBlock;

// One run's extents; `wp` is the input width rounded up to a multiple of 8.
struct Dims {
  int64_t c, m, h, w, wp, kh, kw, oh, ow;
};

/// One input row as the kernels read it: value (pixel j, channel c) at x[j * pixel + c * channel].
struct Row {
  const float* x;
  int64_t pixel, channel;
};

/// 8-lane float vectors (GCC/Clang vector extensions: one AVX2 register in the AVX2 clone, two
/// SSE2 or NEON registers elsewhere), so that the accumulators stay in registers.
typedef float F8 __attribute__((vector_size(32)));

/// 8 pixels × 8 channels (pixel p's channels at src + p * pixel_stride) transposed into 8
/// channel rows of 8 pixels (channel c's at dst + c * channel_stride): three rounds of shuffles.
EDGEMM_AVX2_CLONES void transpose8x8(const float* src, int64_t pixel_stride, float* dst, int64_t channel_stride) {
  F8 r[8], t[8], u[8];
  for (int p = 0; p < 8; ++p) std::memcpy(&r[p], src + p * pixel_stride, sizeof(F8));
  for (int k = 0; k < 8; k += 2) {  // pairs of pixels interleaved: (p0 c0, p1 c0, p0 c1, p1 c1, ...)
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4) {  // quads of pixels: (p0..p3 c, p0..p3 c + 4)
    u[k] = __builtin_shufflevector(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 1] = __builtin_shufflevector(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[k + 2] = __builtin_shufflevector(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 3] = __builtin_shufflevector(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int c = 0; c < 4; ++c) {  // u[c] holds channels c and c + 4 of pixels 0-3, u[c + 4] of 4-7
    const F8 lo = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const F8 hi = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(dst + c * channel_stride, &lo, sizeof(F8));
    std::memcpy(dst + (c + 4) * channel_stride, &hi, sizeof(F8));
  }
}

/// Channels [c0, c0 + 8) of a row of w pixels (pixel j's at src + j * pixel_stride) into xr rows
/// c0.. of stride wp: 8×8 blocks, then the last w % 8 pixels one by one.
void transpose_channels(const Dims& d, const float* src, int64_t pixel_stride, int64_t c0, float* xr) {
  int64_t j = 0;
  for (; j + kB <= d.w; j += kB) transpose8x8(src + j * pixel_stride, pixel_stride, xr + c0 * d.wp + j, d.wp);
  for (; j < d.w; ++j) {
    for (int64_t l = 0; l < kB; ++l) xr[(c0 + l) * d.wp + j] = src[j * pixel_stride + l];
  }
}

// Input row `i` of image `n` into xr [C][wp] (columns past w zero).
void gather_row(const Dims& d, const float* x, ActivationLayout layout, int64_t n, int64_t i, float* xr) {
  if (layout == ActivationLayout::kNhwc) {
    const float* s = x + (n * d.h + i) * d.w * d.c;
    const int64_t whole = d.c / kB * kB;  // channels moved by 8x8 blocks
    for (int64_t c = 0; c < whole; c += kB) transpose_channels(d, s + c, d.c, c, xr);
    for (int64_t j = 0; j < d.w; ++j) {
      for (int64_t c = whole; c < d.c; ++c) xr[c * d.wp + j] = s[j * d.c + c];
    }
  } else if (layout == ActivationLayout::kNChw8c) {
    const int64_t blocks = d.c / kB;
    for (int64_t cb = 0; cb < blocks; ++cb) {
      transpose_channels(d, x + ((n * blocks + cb) * d.h + i) * d.w * kB, kB, cb * kB, xr);
    }
  } else {
    for (int64_t c = 0; c < d.c; ++c) std::copy_n(x + ((n * d.c + c) * d.h + i) * d.w, d.w, xr + c * d.wp);
  }
  for (int64_t c = 0; c < d.c; ++c) std::fill(xr + c * d.wp + d.w, xr + (c + 1) * d.wp, 0.0f);
}

// The kh output rows of input row `i` of image `n`, y blocked [N, M/8, OH, OW, 8] or NHWC
// [N, OH, OW, M] (`nhwc`; both with M a multiple of 8): for 8 input pixels at a time and each
// channel block and tap, acc[pixel] += x[pixel][c] * w[c][8 lanes].
EDGEMM_AVX2_CLONES void rows_blocked(const Dims& d, Row xr, const float* packed, const float* bias, int64_t n,
                                     int64_t i, bool nhwc, float* y) {
  const int64_t blocks = d.m / kB;
  for (int64_t j0 = 0; j0 < d.w; j0 += kB) {
    const int64_t pixels = std::min(kB, d.w - j0);
    for (int64_t mb = 0; mb < blocks; ++mb) {
      F8 b8 = {};
      if (bias != nullptr) std::memcpy(&b8, bias + mb * kB, sizeof b8);
      for (int64_t a = 0; a < d.kh; ++a) {
        // Output pixel q of this row's block mb is at yr + q * step.
        const int64_t row = i * d.kh + a, step = nhwc ? d.m : kB;
        float* yr =
            nhwc ? y + (n * d.oh + row) * d.ow * d.m + mb * kB : y + ((n * blocks + mb) * d.oh + row) * d.ow * kB;
        for (int64_t b = 0; b < d.kw; ++b) {
          const float* wt = packed + ((mb * d.kh + a) * d.kw + b) * d.c * kB;
          F8 acc[kB];
          for (int64_t p = 0; p < kB; ++p) acc[p] = b8;
          const float* x0 = xr.x + j0 * xr.pixel;
          if (pixels == kB) {
            for (int64_t c = 0; c < d.c; ++c) {
              F8 wv;
              std::memcpy(&wv, wt + c * kB, sizeof wv);
              const float* xp = x0 + c * xr.channel;
              for (int64_t p = 0; p < kB; ++p) acc[p] += xp[p * xr.pixel] * wv;
            }
          } else {
            for (int64_t c = 0; c < d.c; ++c) {
              F8 wv;
              std::memcpy(&wv, wt + c * kB, sizeof wv);
              const float* xp = x0 + c * xr.channel;
              for (int64_t p = 0; p < pixels; ++p) acc[p] += xp[p * xr.pixel] * wv;
            }
          }
          for (int64_t p = 0; p < pixels; ++p) std::memcpy(yr + ((j0 + p) * d.kw + b) * step, &acc[p], sizeof(F8));
        }
      }
    }
  }
}

// The kh output rows of input row `i` of image `n`, y plain [N, M, OH, OW]: per channel and
// tap, acc[j] = bias + sum_c w * x[c][j] over the row (acc holds wp floats), then every kw-th
// output column.
EDGEMM_AVX2_CLONES void rows_plain(const Dims& d, const float* xr, const float* packed, const float* bias, int64_t n,
                                   int64_t i, float* acc, float* y) {
  for (int64_t m = 0; m < d.m; ++m) {
    for (int64_t a = 0; a < d.kh; ++a) {
      float* yr = y + ((n * d.m + m) * d.oh + i * d.kh + a) * d.ow;
      for (int64_t b = 0; b < d.kw; ++b) {
        const float* wt = packed + ((m / kB * d.kh + a) * d.kw + b) * d.c * kB + m % kB;
        std::fill(acc, acc + d.wp, bias != nullptr ? bias[m] : 0.0f);
        for (int64_t c = 0; c < d.c; ++c) {
          const float wv = wt[c * kB];
          const float* xp = xr + c * d.wp;
          for (int64_t j = 0; j < d.wp; ++j) acc[j] += wv * xp[j];
        }
        for (int64_t j = 0; j < d.w; ++j) yr[j * d.kw + b] = acc[j];
      }
    }
  }
}

// The epilogue's unary steps on the kh output rows of input row `i` of image `n`.
void finish_rows(const Dims& d, const std::vector<ir::Step>& steps, int64_t n, int64_t i, ActivationLayout layout,
                 float* y) {
  if (steps.empty()) return;
  const int64_t rows = d.kh * d.ow;  // output pixels of one channel (block) in these rows
  if (layout == ActivationLayout::kNhwc) {
    apply_unary_steps(steps, y + (n * d.oh + i * d.kh) * d.ow * d.m, rows * d.m);
  } else if (layout == ActivationLayout::kNChw8c) {
    for (int64_t mb = 0; mb < d.m / kB; ++mb) {
      apply_unary_steps(steps, y + ((n * (d.m / kB) + mb) * d.oh + i * d.kh) * d.ow * kB, rows * kB);
    }
  } else {
    for (int64_t m = 0; m < d.m; ++m) apply_unary_steps(steps, y + ((n * d.m + m) * d.oh + i * d.kh) * d.ow, rows);
  }
}

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  return std::all_of(v.begin(), v.end(), [value](int64_t e) { return e == value; });
}

}  // namespace

bool ConvTransposeStrided::applies(const ConvAttrs& attrs, const Tensor& w) {
  if (w.dtype() != DataType::kFloat32 || w.rank() != 4 || attrs.group != 1) return false;
  const Shape& s = w.shape();
  const std::vector<int64_t> kernel = {s[2], s[3]};
  const bool no_pads =
      attrs.auto_pad == AutoPad::kValid || (attrs.auto_pad == AutoPad::kNotSet && all_equal(attrs.pads, 0));
  return s[0] > 0 && s[1] > 0 && s[2] > 0 && s[3] > 0 && attrs.strides == kernel &&
         (attrs.kernel_shape.empty() || attrs.kernel_shape == kernel) && all_equal(attrs.dilations, 1) && no_pads &&
         all_equal(attrs.output_padding, 0) && attrs.output_shape.empty();
}

bool ConvTransposeStrided::fits(const ConvGeometry& g) {
  if (g.spatial_rank() != 2 || g.group != 1) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (g.kernel[i] != g.strides[i] || g.dilations[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0 ||
        g.out_spatial[i] != g.in_spatial[i] * g.strides[i]) {
      return false;
    }
  }
  return true;
}

ConvTransposeStrided::ConvTransposeStrided(const float* w, int64_t in_channels, int64_t out_channels, int64_t kh,
                                           int64_t kw)
    : in_channels_(in_channels), out_channels_(out_channels), kh_(kh), kw_(kw) {
  const int64_t blocks = (out_channels + kB - 1) / kB, taps = kh * kw;
  packed_.assign(static_cast<size_t>(blocks * taps * in_channels * kB), 0.0f);
  for (int64_t c = 0; c < in_channels; ++c) {
    for (int64_t m = 0; m < out_channels; ++m) {
      for (int64_t t = 0; t < taps; ++t) {
        packed_[((m / kB * taps + t) * in_channels + c) * kB + m % kB] = w[(c * out_channels + m) * taps + t];
      }
    }
  }
}

void ConvTransposeStrided::run(const ConvGeometry& g, const float* x, ActivationLayout x_layout, const float* bias,
                               float* y, ActivationLayout y_layout, const std::vector<ir::Step>& unary_steps,
                               int threads) const {
  const bool y_plain = y_layout == ActivationLayout::kNchw;
  const Dims d{.c = in_channels_,
               .m = out_channels_,
               .h = g.in_spatial[0],
               .w = g.in_spatial[1],
               .wp = (g.in_spatial[1] + kB - 1) / kB * kB,
               .kh = kh_,
               .kw = kw_,
               .oh = g.out_spatial[0],
               .ow = g.out_spatial[1]};
  parallel_for(threads, g.batch * d.h, d.c * d.m * d.kh * d.kw * d.w, [&](int64_t begin, int64_t end) {
    std::vector<float> xr(static_cast<size_t>(d.c * d.wp)), acc(y_plain ? static_cast<size_t>(d.wp) : 0);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / d.h, i = r % d.h;
      // NHWC rows are read in place by the blocked kernel; the others are gathered first.
      const bool in_place = x_layout == ActivationLayout::kNhwc && !y_plain;
      if (!in_place) gather_row(d, x, x_layout, n, i, xr.data());
      const Row row = in_place ? Row{x + (n * d.h + i) * d.w * d.c, d.c, 1} : Row{xr.data(), 1, d.wp};
      if (y_plain) {
        rows_plain(d, xr.data(), packed_.data(), bias, n, i, acc.data(), y);
      } else {
        rows_blocked(d, row, packed_.data(), bias, n, i, y_layout == ActivationLayout::kNhwc, y);
      }
      finish_rows(d, unary_steps, n, i, y_layout, y);
    }
  });
}

}  // namespace edgemm::kernels
