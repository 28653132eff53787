/// \file matmul_nbits.cc
/// The math of com.microsoft MatMulNBits-1 (ONNX Runtime docs/ContribOperators.md; layouts in
/// matmul_nbits.h; the kernel that checks a node's inputs is matmul_nbits_kernel.cc): a float32
/// A [..., K] times a weight [N, K] quantized block-wise along K to 4 or 8 bits, plus an optional
/// bias [N]. With accuracy_level 4 (and uint8 or default zero points) A is quantized to int8 per
/// block and matmul_nbits_int8.cc computes the product; otherwise it is float32 throughout. The
/// deprecated g_idx input is refused.
///
/// Paths (chosen when the kernel is created; EDGEMM_ONEDNN=0, the switch that selects every
/// reference kernel, selects the reference here too):
/// - reference: the formula per element, fp32 accumulation in K order.
/// - avx2 (AVX2 + FMA): for 1-2 rows (decode), codes are unpacked to fp32 in registers 16 at a
///   time, dequantized as (q - zero_point) * scale and multiplied into per-row accumulators (two
///   columns at a time), so the weights are read once and never stored as fp32 (the same with
///   3-4 rows and one column at a time was slower than the tiles below). For more rows
///   (prefill, sequence models), tiles of 8 columns are dequantized into a per-thread fp32 panel
///   ([8, K_pad], in L1) and a 3x4 register tile of dot products runs over it, so each weight is
///   dequantized once per run. With 4 bits, each group of 16 K indices is taken in the order
///   [even k, odd k] (one shuffle per 16 codes instead of four), A's rows are copied in that
///   order, and the dot products are unchanged by it.
/// - avx512 (AVX-512F; 4 bits with blocks of a multiple of 32, otherwise the avx2 path):
///   matmul_nbits_avx512.cc (per-block lookup tables in registers for up to 16 rows, float32
///   panels for the float GEMM's register tiles above).
/// - neon (aarch64): for up to 4 rows, 16 codes at a time are unpacked (4 bits: nibbles split and
///   zipped back into K order), widened to fp32, dequantized as above and multiplied into the
///   row accumulators; more rows take the portable tiled path.
/// - portable (other CPUs): the tiled path in plain loops the compiler vectorizes.
/// A is zero-padded to whole blocks (K_pad = k_blocks * block_size) when K is not a multiple of
/// block_size, so the padding codes of the last block multiply zeros. All paths split N over
/// OpenMP threads. Every path dequantizes as (q - zero_point) * scale, which is exactly 0 where
/// q equals the zero point (q * scale - zero_point * scale, one FMA, left ~1e-9 there, which
/// turned an infinity in A into +-Inf where the formula gives NaN).

#include "kernels/cpu/matmul_nbits.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "kernels/cpu/common.h"
#include "kernels/cpu/matmul_nbits_avx512.h"
#include "kernels/cpu/matmul_nbits_int8.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/quant_common.h"
#include "kernels/cpu_features.h"

namespace edgemm::kernels {
namespace {

constexpr int64_t kTileCols = 8;  // columns dequantized into one panel
constexpr int kMr = 3;            // rows of a register tile
constexpr int kNr = 4;            // columns of a register tile
constexpr int kGemvMaxRows = 4;   // up to this many rows can take an in-register path (FastOps::gemv)

// One call's shape and weights with the per-column strides computed once (no division per block).
struct Problem {
  Problem(const MatMulNBitsShape& shape, const MatMulNBitsWeights& weights)
      : s(shape),
        w(weights),
        kb(shape.k_blocks()),
        blob(shape.blob_size()),
        zp_row(shape.zero_point_row_bytes()),
        default_zp(static_cast<float>(int64_t{1} << (shape.bits - 1))) {}

  // Zero point of block j of column n.
  float zero_point(int64_t n, int64_t j) const {
    if (w.float_zero_points != nullptr) return w.float_zero_points[n * kb + j];
    if (w.zero_points != nullptr) return static_cast<float>(nbits::code_at(w.zero_points + n * zp_row, j, s.bits));
    return default_zp;
  }
  // Codes of block j of column n.
  const uint8_t* codes(int64_t n, int64_t j) const { return w.b + (n * kb + j) * blob; }

  MatMulNBitsShape s;
  MatMulNBitsWeights w;
  int64_t kb, blob, zp_row;
  float default_zp;
};

void run_reference(const Problem& p, const float* a, int64_t m, float* y, int threads) {
  const int64_t k = p.s.k, n_total = p.s.n, bs = p.s.block_size;
  const int t = nbits::threads_for(threads, m * k * n_total);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t n = 0; n < n_total; ++n) {
    for (int64_t r = 0; r < m; ++r) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t j = kk / bs;
        const int q = nbits::code_at(p.codes(n, j), kk % bs, p.s.bits);
        const float weight = (static_cast<float>(q) - p.zero_point(n, j)) * p.w.scales[n * p.kb + j];
        acc += a[r * k + kk] * weight;
      }
      y[r * n_total + n] = p.w.bias != nullptr ? acc + p.w.bias[n] : acc;
    }
  }
}

// Function tables of one fast variant for one bit width.
struct FastOps {
  // Dequantizes columns [n0, n0 + count) (count <= kTileCols) into panel rows of k_pad floats;
  // rows count .. round_up(count, kNr) are zeroed.
  void (*dequantize_tile)(const Problem&, int64_t n0, int64_t count, float* panel, int64_t k_pad);
  // out[r * kNr + c] = dot(a row r, panel row c) over k_pad, for 1..kMr rows (index rows - 1).
  void (*dot_tile[kMr])(const float* a, int64_t lda, const float* panel, int64_t k_pad, float* out);
  // Columns [n0, n1) of y for 1..kGemvMaxRows rows (index rows - 1), without bias; null where
  // the variant has no in-register path for that many rows (the tiles run instead).
  void (*gemv[kGemvMaxRows])(const Problem&, const float* a, int64_t lda, int64_t n0, int64_t n1, float* y);
  // 0, or the size of the groups of K indices reordered to [even k, odd k] in A and in the
  // panels (a dot product does not depend on the order of its terms).
  int even_odd_group;
};

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// ---------------------------------------------------------------------------------------------
// portable

template <int kBits>
void dequantize_tile_portable(const Problem& p, int64_t n0, int64_t count, float* panel, int64_t k_pad) {
  const int64_t bs = p.s.block_size;
  for (int64_t c = 0; c < count; ++c) {
    const int64_t n = n0 + c;
    for (int64_t j = 0; j < p.kb; ++j) {
      const float scale = p.w.scales[n * p.kb + j];
      const float zp = p.zero_point(n, j);
      const uint8_t* codes = p.codes(n, j);
      float* out = panel + c * k_pad + j * bs;
      if constexpr (kBits == 4) {
        for (int64_t i = 0; i < bs / 2; ++i) {
          out[2 * i] = (static_cast<float>(codes[i] & 0x0F) - zp) * scale;
          out[2 * i + 1] = (static_cast<float>(codes[i] >> 4) - zp) * scale;
        }
      } else {
        for (int64_t i = 0; i < bs; ++i) out[i] = (static_cast<float>(codes[i]) - zp) * scale;
      }
    }
  }
  const int64_t padded = round_up(count, kNr);
  if (padded > count) std::memset(panel + count * k_pad, 0, static_cast<size_t>((padded - count) * k_pad) * 4);
}

template <int MR>
void dot_tile_portable(const float* a, int64_t lda, const float* panel, int64_t k_pad, float* out) {
  constexpr int kLanes = 8;
  float acc[MR][kNr][kLanes] = {};
  for (int64_t k0 = 0; k0 < k_pad; k0 += kLanes) {
    for (int r = 0; r < MR; ++r) {
      for (int c = 0; c < kNr; ++c) {
        for (int l = 0; l < kLanes; ++l) acc[r][c][l] += a[r * lda + k0 + l] * panel[c * k_pad + k0 + l];
      }
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < kNr; ++c) {
      float sum = 0.0f;
      for (int l = 0; l < kLanes; ++l) sum += acc[r][c][l];
      out[r * kNr + c] = sum;
    }
  }
}

template <int kBits>
constexpr FastOps kPortableOps = {dequantize_tile_portable<kBits>,
                                  {dot_tile_portable<1>, dot_tile_portable<2>, dot_tile_portable<3>},
                                  {nullptr, nullptr, nullptr, nullptr},
                                  0};

// ---------------------------------------------------------------------------------------------
// avx2 + fma

#if defined(__x86_64__)
#define EDGEMM_AVX2 __attribute__((target("avx2,fma")))

// Codes of a 16-code group starting at `p` as two vectors of 8 floats. 8 bits: codes 0..7 and
// 8..15. 4 bits: the 8 bytes widened to 32-bit lanes give the even codes (low nibbles) and the
// odd codes (high nibbles) with one shuffle, so the group comes out as [0, 2, .., 14] and
// [1, 3, .., 15]; A and the panels use that order too (FastOps::even_odd_groups).
template <int kBits>
EDGEMM_AVX2 inline void load16_avx2(const uint8_t* p, __m256& lo, __m256& hi) {
  if constexpr (kBits == 4) {
    const __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    lo = _mm256_cvtepi32_ps(_mm256_and_si256(bytes, _mm256_set1_epi32(0x0F)));
    hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4));
  } else {
    const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    lo = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes));
    hi = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(codes, codes)));
  }
}

// [sum(a0), sum(a1), sum(a2), sum(a3)].
EDGEMM_AVX2 inline __m128 reduce4_avx2(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

template <int kBits>
EDGEMM_AVX2 void dequantize_tile_avx2(const Problem& p, int64_t n0, int64_t count, float* panel, int64_t k_pad) {
  const int64_t bs = p.s.block_size;
  for (int64_t c = 0; c < count; ++c) {
    const int64_t n = n0 + c;
    for (int64_t j = 0; j < p.kb; ++j) {
      const float scale = p.w.scales[n * p.kb + j];
      const __m256 vs = _mm256_set1_ps(scale);
      const __m256 vz = _mm256_set1_ps(p.zero_point(n, j));
      const uint8_t* codes = p.codes(n, j);
      float* out = panel + c * k_pad + j * bs;
      for (int64_t i = 0; i < bs; i += 16) {
        __m256 lo, hi;
        load16_avx2<kBits>(codes + i * kBits / 8, lo, hi);
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_sub_ps(lo, vz), vs));
        _mm256_storeu_ps(out + i + 8, _mm256_mul_ps(_mm256_sub_ps(hi, vz), vs));
      }
    }
  }
  const int64_t padded = round_up(count, kNr);
  if (padded > count) std::memset(panel + count * k_pad, 0, static_cast<size_t>((padded - count) * k_pad) * 4);
}

template <int MR>
EDGEMM_AVX2 void dot_tile_avx2(const float* a, int64_t lda, const float* panel, int64_t k_pad, float* out) {
  __m256 acc[MR][kNr];
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < kNr; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < k_pad; k += 8) {
    __m256 av[MR];
    for (int r = 0; r < MR; ++r) av[r] = _mm256_loadu_ps(a + r * lda + k);
    for (int c = 0; c < kNr; ++c) {
      const __m256 wv = _mm256_loadu_ps(panel + c * k_pad + k);
      for (int r = 0; r < MR; ++r) acc[r][c] = _mm256_fmadd_ps(av[r], wv, acc[r][c]);
    }
  }
  for (int r = 0; r < MR; ++r) _mm_storeu_ps(out + r * kNr, reduce4_avx2(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
}

// Columns [n, n + NC) for MR rows: codes unpacked and dequantized in registers, 16 at a time,
// each multiplied into the MR rows of A (two accumulators per row and column to hide FMA
// latency; the A loads are shared by the NC columns).
template <int kBits, int MR, int NC>
EDGEMM_AVX2 inline void gemv_columns_avx2(const Problem& p, const float* a, int64_t lda, int64_t n, float* y) {
  const int64_t bs = p.s.block_size, ldy = p.s.n;
  __m256 acc0[MR][NC], acc1[MR][NC];
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NC; ++c) acc0[r][c] = acc1[r][c] = _mm256_setzero_ps();
  }
  for (int64_t j = 0; j < p.kb; ++j) {
    __m256 vs[NC], vz[NC];
    const uint8_t* codes[NC];
    for (int c = 0; c < NC; ++c) {
      const float scale = p.w.scales[(n + c) * p.kb + j];
      vs[c] = _mm256_set1_ps(scale);
      vz[c] = _mm256_set1_ps(p.zero_point(n + c, j));
      codes[c] = p.codes(n + c, j);
      _mm_prefetch(reinterpret_cast<const char*>(codes[c]) + nbits::kPrefetchBytes, _MM_HINT_T0);
    }
    const float* ak = a + j * bs;
    for (int64_t i = 0; i < bs; i += 16) {
      __m256 lo[NC], hi[NC];
      for (int c = 0; c < NC; ++c) {
        load16_avx2<kBits>(codes[c] + i * kBits / 8, lo[c], hi[c]);
        lo[c] = _mm256_mul_ps(_mm256_sub_ps(lo[c], vz[c]), vs[c]);
        hi[c] = _mm256_mul_ps(_mm256_sub_ps(hi[c], vz[c]), vs[c]);
      }
      for (int r = 0; r < MR; ++r) {
        const __m256 a0 = _mm256_loadu_ps(ak + r * lda + i), a1 = _mm256_loadu_ps(ak + r * lda + i + 8);
        for (int c = 0; c < NC; ++c) {
          acc0[r][c] = _mm256_fmadd_ps(a0, lo[c], acc0[r][c]);
          acc1[r][c] = _mm256_fmadd_ps(a1, hi[c], acc1[r][c]);
        }
      }
    }
  }
  for (int c = 0; c < NC; ++c) {
    __m256 sums[kGemvMaxRows];
    for (int r = 0; r < kGemvMaxRows; ++r) {
      sums[r] = r < MR ? _mm256_add_ps(acc0[r][c], acc1[r][c]) : _mm256_setzero_ps();
    }
    alignas(16) float out[4];
    _mm_store_ps(out, reduce4_avx2(sums[0], sums[1], sums[2], sums[3]));
    for (int r = 0; r < MR; ++r) y[r * ldy + n + c] = out[r];
  }
}

// Columns [n0, n1) for MR rows, two columns at a time where the registers allow (MR <= 2).
template <int kBits, int MR>
EDGEMM_AVX2 void gemv_avx2(const Problem& p, const float* a, int64_t lda, int64_t n0, int64_t n1, float* y) {
  constexpr int kCols = MR <= 2 ? 2 : 1;
  int64_t n = n0;
  for (; n + kCols <= n1; n += kCols) gemv_columns_avx2<kBits, MR, kCols>(p, a, lda, n, y);
  for (; n < n1; ++n) gemv_columns_avx2<kBits, MR, 1>(p, a, lda, n, y);
}

template <int kBits>
constexpr FastOps kAvx2Ops = {dequantize_tile_avx2<kBits>,
                              {dot_tile_avx2<1>, dot_tile_avx2<2>, dot_tile_avx2<3>},
                              {gemv_avx2<kBits, 1>, gemv_avx2<kBits, 2>, nullptr, nullptr},
                              kBits == 4 ? 16 : 0};

#undef EDGEMM_AVX2
#endif

// ---------------------------------------------------------------------------------------------
// neon (aarch64: Advanced SIMD is part of the base architecture)

#if defined(__aarch64__)

// Codes of a 16-code group starting at `p` as four vectors of 4 floats, in K order. 4 bits: the
// low and high nibbles of the 8 bytes, interleaved back with vzip; 8 bits: the 16 bytes.
template <int kBits>
inline void load16_neon(const uint8_t* p, float32x4_t q[4]) {
  uint8x16_t bytes;
  if constexpr (kBits == 4) {
    const uint8x8_t packed = vld1_u8(p);
    const uint8x8x2_t codes = vzip_u8(vand_u8(packed, vdup_n_u8(0x0F)), vshr_n_u8(packed, 4));
    bytes = vcombine_u8(codes.val[0], codes.val[1]);
  } else {
    bytes = vld1q_u8(p);
  }
  const uint16x8_t lo = vmovl_u8(vget_low_u8(bytes)), hi = vmovl_u8(vget_high_u8(bytes));
  q[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo)));
  q[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo)));
  q[2] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi)));
  q[3] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)));
}

// Columns [n, n + NC) for MR rows: codes dequantized in registers, 16 at a time, and multiplied
// into the MR rows of A (four accumulators per row and column; the A loads are shared).
template <int kBits, int MR, int NC>
inline void gemv_columns_neon(const Problem& p, const float* a, int64_t lda, int64_t n, float* y) {
  const int64_t bs = p.s.block_size, ldy = p.s.n;
  float32x4_t acc[MR][NC][4];
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NC; ++c) {
      for (int v = 0; v < 4; ++v) acc[r][c][v] = vdupq_n_f32(0.0f);
    }
  }
  for (int64_t j = 0; j < p.kb; ++j) {
    float32x4_t vs[NC], vz[NC];
    const uint8_t* codes[NC];
    for (int c = 0; c < NC; ++c) {
      const float scale = p.w.scales[(n + c) * p.kb + j];
      vs[c] = vdupq_n_f32(scale);
      vz[c] = vdupq_n_f32(p.zero_point(n + c, j));
      codes[c] = p.codes(n + c, j);
      __builtin_prefetch(codes[c] + nbits::kPrefetchBytes);
    }
    const float* ak = a + j * bs;
    for (int64_t i = 0; i < bs; i += 16) {
      float32x4_t w[NC][4];
      for (int c = 0; c < NC; ++c) {
        load16_neon<kBits>(codes[c] + i * kBits / 8, w[c]);
        for (int v = 0; v < 4; ++v) w[c][v] = vmulq_f32(vsubq_f32(w[c][v], vz[c]), vs[c]);
      }
      for (int r = 0; r < MR; ++r) {
        for (int v = 0; v < 4; ++v) {
          const float32x4_t av = vld1q_f32(ak + r * lda + i + 4 * v);
          for (int c = 0; c < NC; ++c) acc[r][c][v] = vfmaq_f32(acc[r][c][v], av, w[c][v]);
        }
      }
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NC; ++c) {
      y[r * ldy + n + c] =
          vaddvq_f32(vaddq_f32(vaddq_f32(acc[r][c][0], acc[r][c][1]), vaddq_f32(acc[r][c][2], acc[r][c][3])));
    }
  }
}

// Columns [n0, n1) for MR rows, two columns at a time where the registers allow (MR <= 2).
template <int kBits, int MR>
void gemv_neon(const Problem& p, const float* a, int64_t lda, int64_t n0, int64_t n1, float* y) {
  constexpr int kCols = MR <= 2 ? 2 : 1;
  int64_t n = n0;
  for (; n + kCols <= n1; n += kCols) gemv_columns_neon<kBits, MR, kCols>(p, a, lda, n, y);
  for (; n < n1; ++n) gemv_columns_neon<kBits, MR, 1>(p, a, lda, n, y);
}

template <int kBits>
constexpr FastOps kNeonOps = {dequantize_tile_portable<kBits>,
                              {dot_tile_portable<1>, dot_tile_portable<2>, dot_tile_portable<3>},
                              {gemv_neon<kBits, 1>, gemv_neon<kBits, 2>, gemv_neon<kBits, 3>, gemv_neon<kBits, 4>},
                              0};
#endif

const FastOps& fast_ops(MatMulNBitsVariant variant, const MatMulNBitsShape& shape) {
#if defined(__x86_64__)
  if (variant == MatMulNBitsVariant::kAvx512 || variant == MatMulNBitsVariant::kAvx2) {
    return shape.bits == 8 ? kAvx2Ops<8> : kAvx2Ops<4>;
  }
#endif
#if defined(__aarch64__)
  if (variant == MatMulNBitsVariant::kNeon) return shape.bits == 8 ? kNeonOps<8> : kNeonOps<4>;
#endif
  return shape.bits == 8 ? kPortableOps<8> : kPortableOps<4>;
}

// A's rows as the fast paths read them: k_pad floats each, zero past K, with every group of
// `group` (0: none) in [even k, odd k] order. Returns `a` itself when nothing changes; otherwise
// a per-thread buffer (slot kSrc) of the calling thread.
const float* prepare_a(const float* a, int64_t m, int64_t k, int64_t k_pad, int group) {
  if (k_pad == k && group == 0) return a;
  float* out = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kSrc, m * k_pad * sizeof(float)));
  for (int64_t r = 0; r < m; ++r) {
    const float* src = a + r * k;
    float* dst = out + r * k_pad;
    if (group == 0) {
      std::memcpy(dst, src, static_cast<size_t>(k) * sizeof(float));
      std::fill(dst + k, dst + k_pad, 0.0f);
      continue;
    }
    const int half = group / 2;
    for (int64_t g = 0; g < k_pad; g += group) {
      for (int64_t i = 0; i < half; ++i) {
        const int64_t even = g + 2 * i, odd = even + 1;
        dst[g + i] = even < k ? src[even] : 0.0f;
        dst[g + half + i] = odd < k ? src[odd] : 0.0f;
      }
    }
  }
  return out;
}

void run_fast(const FastOps& ops, const Problem& p, const float* a, int64_t m, float* y, int threads) {
  const int64_t k_pad = p.kb * p.s.block_size, n_total = p.s.n;
  const float* ap = prepare_a(a, m, p.s.k, k_pad, ops.even_odd_group);
  const int t = nbits::threads_for(threads, m * k_pad * n_total);
  if (m <= kGemvMaxRows && ops.gemv[m - 1] != nullptr) {
    const auto gemv = ops.gemv[m - 1];
    constexpr int64_t kChunk = 16;  // columns per scheduling unit
    const int64_t chunks = (n_total + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(t) schedule(static)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      gemv(p, ap, k_pad, ch * kChunk, std::min(n_total, (ch + 1) * kChunk), y);
    }
    nbits::add_bias(p.w.bias, m, n_total, y);
    return;
  }
  const int64_t tiles = (n_total + kTileCols - 1) / kTileCols;
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t tile = 0; tile < tiles; ++tile) {
    float* panel = static_cast<float*>(
        onednn::thread_buffer(onednn::Slot::kWeights, static_cast<size_t>(kTileCols * k_pad) * sizeof(float)));
    const int64_t n0 = tile * kTileCols, count = std::min(kTileCols, n_total - n0);
    ops.dequantize_tile(p, n0, count, panel, k_pad);
    for (int64_t r0 = 0; r0 < m; r0 += kMr) {
      const int rows = static_cast<int>(std::min<int64_t>(kMr, m - r0));
      for (int64_t c0 = 0; c0 < count; c0 += kNr) {
        float out[kMr * kNr];
        ops.dot_tile[rows - 1](ap + r0 * k_pad, k_pad, panel + c0 * k_pad, k_pad, out);
        const int64_t cols = std::min<int64_t>(kNr, count - c0);
        for (int r = 0; r < rows; ++r) {
          float* yrow = y + (r0 + r) * n_total + n0 + c0;
          for (int64_t c = 0; c < cols; ++c)
            yrow[c] = out[r * kNr + c] + (p.w.bias != nullptr ? p.w.bias[n0 + c0 + c] : 0.0f);
        }
      }
    }
  }
}

}  // namespace

bool matmul_nbits_available(MatMulNBitsVariant variant) {
#if defined(__x86_64__)
  const bool avx2 = cpu_features().avx2 && cpu_features().fma;
  if (variant == MatMulNBitsVariant::kAvx2) return avx2;
  if (variant == MatMulNBitsVariant::kAvx512) return avx2 && cpu_features().avx512f;
  return variant != MatMulNBitsVariant::kNeon;
#elif defined(__aarch64__)
  if (variant == MatMulNBitsVariant::kNeon) return cpu_features().asimd;
  return variant != MatMulNBitsVariant::kAvx2 && variant != MatMulNBitsVariant::kAvx512;
#else
  return variant != MatMulNBitsVariant::kAvx2 && variant != MatMulNBitsVariant::kAvx512 &&
         variant != MatMulNBitsVariant::kNeon;
#endif
}

MatMulNBitsVariant matmul_nbits_best_variant() {
  for (MatMulNBitsVariant v : {MatMulNBitsVariant::kAvx512, MatMulNBitsVariant::kAvx2, MatMulNBitsVariant::kNeon}) {
    if (matmul_nbits_available(v)) return v;
  }
  return MatMulNBitsVariant::kPortable;
}

const char* matmul_nbits_variant_name(MatMulNBitsVariant variant) {
  switch (variant) {
    case MatMulNBitsVariant::kAvx512:
      return "f32_matmul_nbits__avx512";
    case MatMulNBitsVariant::kNeon:
      return "f32_matmul_nbits__neon";
    case MatMulNBitsVariant::kAvx2:
      return "f32_matmul_nbits__avx2";
    case MatMulNBitsVariant::kPortable:
      return "f32_matmul_nbits__portable";
    case MatMulNBitsVariant::kReference:
      break;
  }
  return "f32_matmul_nbits__reference";
}

const char* matmul_nbits_kernel_name(MatMulNBitsVariant variant, const MatMulNBitsShape& shape) {
  if (!shape.int8_activations()) return matmul_nbits_variant_name(variant);
  switch (matmul_nbits_int8_path(variant, shape)) {
    case Int8Path::kAvx512Vnni:
      return "i8_matmul_nbits__avx512_vnni";
    case Int8Path::kAvx2:
      return "i8_matmul_nbits__avx2";
    case Int8Path::kNeonDot:
      return "i8_matmul_nbits__neon_dot";
    case Int8Path::kReference:
      break;
  }
  return "i8_matmul_nbits__reference";
}

void matmul_nbits(MatMulNBitsVariant variant, const MatMulNBitsShape& shape, const MatMulNBitsWeights& w,
                  const float* a, int64_t m, float* y, int threads) {
  if (m <= 0 || shape.n <= 0) return;
  if (shape.int8_activations() && w.float_zero_points == nullptr) {
    matmul_nbits_int8(variant, shape, w, a, m, y, threads);
    return;
  }
  if (variant == MatMulNBitsVariant::kReference) {
    run_reference(Problem(shape, w), a, m, y, threads);
    return;
  }
  if (variant == MatMulNBitsVariant::kAvx512 && matmul_nbits_f32_avx512_supported(shape)) {
    matmul_nbits_f32_avx512(shape, w, a, m, y, threads);
    return;
  }
  run_fast(fast_ops(variant, shape), Problem(shape, w), a, m, y, threads);
}

Expected<PackedNBits> pack_matmul_nbits(const float* weight, int64_t k, int64_t n, int64_t block_size) {
  if (k < 1 || n < 1) {
    return Status(StatusCode::kInvalidArgument, "pack_matmul_nbits: weight [K, N] = [" + std::to_string(k) + ", " +
                                                    std::to_string(n) + "] must have K >= 1 and N >= 1");
  }
  if (block_size < 16 || (block_size & (block_size - 1)) != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "pack_matmul_nbits: block_size " + std::to_string(block_size) + " is not a power of two >= 16");
  }
  PackedNBits p;
  p.shape = MatMulNBitsShape{k, n, 4, block_size};
  const int64_t kb = p.shape.k_blocks(), blob = p.shape.blob_size(), zp_row = p.shape.zero_point_row_bytes();
  p.b.assign(static_cast<size_t>(n * kb * blob), 0);
  p.scales.assign(static_cast<size_t>(n * kb), 0.0f);
  p.zero_points.assign(static_cast<size_t>(n * zp_row), 0);
  const quant::QRange range{0, 15};
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t j = 0; j < kb; ++j) {
      const int64_t k0 = j * block_size, k1 = std::min(k, k0 + block_size);
      float lo = 0.0f, hi = 0.0f;  // the range always holds 0 (so does the grid)
      for (int64_t kk = k0; kk < k1; ++kk) {
        const float v = weight[kk * n + col];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      float scale = (hi - lo) / 15.0f;
      int32_t zp = 0;
      if (scale > 0.0f) {
        zp = quant::quantize_value(-lo / scale, 0, range);
      } else {
        scale = 1.0f;
      }
      p.scales[static_cast<size_t>(col * kb + j)] = scale;
      p.zero_points[static_cast<size_t>(col * zp_row + j / 2)] |= static_cast<uint8_t>(zp << ((j & 1) * 4));
      uint8_t* codes = p.b.data() + (col * kb + j) * blob;
      for (int64_t i = 0; i < block_size; ++i) {
        const int64_t kk = k0 + i;
        const int32_t q = kk < k ? quant::quantize_value(weight[kk * n + col] / scale, zp, range) : zp;
        codes[i / 2] |= static_cast<uint8_t>(q << ((i & 1) * 4));
      }
    }
  }
  return p;
}

}  // namespace edgemm::kernels
