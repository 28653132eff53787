/// \file matmul_nbits_avx512.cc
/// MatMulNBits' float32 product on AVX-512 for 4-bit codes in blocks of a multiple of 32
/// (matmul_nbits_avx512.h). Every weight is dequantized as (q - zero_point) * scale, exactly as
/// the reference kernel does (0 where q equals the zero point, so an infinity in A gives NaN
/// there), and multiplied in float32.
///
/// - Up to 16 rows (decode, short prompts): register tiles of up to 4 rows x 4 columns (8
///   columns for one row) walk B in its own layout. Per block and column, the 16 possible
///   weights form a one-register lookup table; 16 code bytes are widened to 32-bit lanes and
///   looked up with vpermps (which reads only a lane's low 4 bits, so the low nibble needs no
///   mask) as the 16 even and the 16 odd K indices of 32 codes, and multiplied into the tile's
///   rows of A, which are read with every group of 32 K indices in [even k, odd k] order (a dot
///   product does not depend on the order of its terms). So each code is decoded once per 4
///   rows, never stored, and the tile keeps 8 or more accumulators (two per row and column
///   below that) to cover the FMA latency; 4 rows of A (8 KiB each at K = 2048) stay in L1; the
///   codes are prefetched 4 KB ahead.
/// - More rows (prefill): 32 columns at a time, 256 K steps at a time (32 KiB, in L1), are
///   dequantized into a per-thread float32 slice in the panel layout of matmul_panels.h and
///   matmul_panel() runs the float GEMM's register tiles (up to 14 rows x 32 columns) over it,
///   so each code is decoded once per call. The codes of 16 columns are transposed as dwords in
///   registers (8 codes a lane), then 8 shifts give 8 K steps of 16 columns; the blocks' zero
///   points and scales are transposed the same way once per panel.
/// A is zero-padded to whole blocks, so the padding codes of a last partial block multiply
/// zeros.

#include "kernels/cpu/matmul_nbits_avx512.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>

#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {

bool matmul_nbits_f32_avx512_supported(const MatMulNBitsShape& shape) {
  return shape.bits == 4 && shape.block_size % 32 == 0;
}

#if defined(__x86_64__)

namespace {

#define EDGEMM_AVX512 __attribute__((target("avx512f,avx2,fma")))

constexpr int64_t kGroup = 32;            // K indices per [even, odd] group
constexpr int64_t kChunk = 32;            // columns per scheduling unit of the register-tile path
constexpr int64_t kTileRows = 4;          // rows of a register tile (8 rows with 2 columns ran slower)

// Where the zero points come from (a template parameter, so the inner loops do not branch on it).
enum class Zp { kDefault, kPacked, kFloat };

// The weights with per-column strides computed once.
struct Codes {
  Codes(const MatMulNBitsShape& s, const MatMulNBitsWeights& w)
      : w(w), kb(s.k_blocks()), bs(s.block_size), blob(s.blob_size()), zp_row(s.zero_point_row_bytes()), n(s.n) {}
  MatMulNBitsWeights w;
  int64_t kb, bs, blob, zp_row, n;

  const uint8_t* codes(int64_t col, int64_t j) const { return w.b + (col * kb + j) * blob; }

  template <Zp Z>
  float zero_point(int64_t col, int64_t j) const {
    if constexpr (Z == Zp::kFloat) return w.float_zero_points[col * kb + j];
    if constexpr (Z == Zp::kPacked)
      return static_cast<float>((w.zero_points[col * zp_row + j / 2] >> ((j & 1) * 4)) & 15);
    return 8.0f;
  }
};

// The 32 weights of 16 code bytes: even K indices (low nibbles) in `even`, odd ones in `odd`.
EDGEMM_AVX512 inline void lookup32(const uint8_t* bytes16, __m512 table, __m512& even, __m512& odd) {
  const __m512i lanes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes16)));
  even = _mm512_permutexvar_ps(lanes, table);
  odd = _mm512_permutexvar_ps(_mm512_srli_epi32(lanes, 4), table);
}

// ---------------------------------------------------------------------------------------------
// Register tiles (few rows)

// y[r, col + c] for r < MR, c < NC (without bias): per block, one table per column; per 32
// codes, the looked-up weights are multiplied into the MR rows of A (lda = K_pad). `zq`: the
// columns' zero points as floats, kb per column from column `col` (unused for Zp::kDefault).
template <Zp Z, int MR, int NC>
EDGEMM_AVX512 void gemv_tile(const Codes& p, const float* zq, const float* a, int64_t lda, int64_t col, float* y) {
  constexpr bool kTwo = MR * NC < 8;  // a second accumulator per row and column covers FMA latency
  __m512 acc0[MR][NC], acc1[MR][NC];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) acc0[r][c] = acc1[r][c] = _mm512_setzero_ps();
  }
  const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 iota8 = _mm512_sub_ps(iota, _mm512_set1_ps(8.0f));
  const int64_t prefetch_mask = std::max<int64_t>(1, 64 / p.blob) - 1;  // one prefetch per cache line
  for (int64_t j = 0; j < p.kb; ++j) {
    __m512 table[NC];
    const uint8_t* codes[NC];
    const float* scales = p.w.scales + col * p.kb + j;
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const __m512 sc = _mm512_set1_ps(scales[c * p.kb]);
      if constexpr (Z == Zp::kDefault) {
        table[c] = _mm512_mul_ps(iota8, sc);
      } else {
        table[c] = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps(zq[c * p.kb + j])), sc);
      }
      codes[c] = p.codes(col + c, j);
    }
    if ((j & prefetch_mask) == 0) {
#pragma GCC unroll 8
      for (int c = 0; c < NC; ++c)
        _mm_prefetch(reinterpret_cast<const char*>(codes[c]) + nbits::kPrefetchBytes, _MM_HINT_T0);
    }
    const float* ak = a + j * p.bs;
    for (int64_t i = 0; i < p.bs; i += kGroup) {
      __m512 even[NC], odd[NC];
#pragma GCC unroll 8
      for (int c = 0; c < NC; ++c) lookup32(codes[c] + i / 2, table[c], even[c], odd[c]);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512 a0 = _mm512_loadu_ps(ak + r * lda + i), a1 = _mm512_loadu_ps(ak + r * lda + i + 16);
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) {
          acc0[r][c] = _mm512_fmadd_ps(a0, even[c], acc0[r][c]);
          if constexpr (kTwo) {
            acc1[r][c] = _mm512_fmadd_ps(a1, odd[c], acc1[r][c]);
          } else {
            acc0[r][c] = _mm512_fmadd_ps(a1, odd[c], acc0[r][c]);
          }
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const __m512 sum = kTwo ? _mm512_add_ps(acc0[r][c], acc1[r][c]) : acc0[r][c];
      y[r * p.n + col + c] = _mm512_reduce_add_ps(sum);
    }
  }
}

// Columns per register tile for MR rows: at least 8 accumulators, at most 16, within 32 registers.
constexpr int columns_for(int mr) { return mr == 1 ? 8 : 4; }

// Columns [n0, n1) of MR rows; `zq` as for gemv_tile(), from column n0.
template <Zp Z, int MR>
EDGEMM_AVX512 void gemv_columns(const Codes& p, const float* zq, const float* a, int64_t lda, int64_t n0, int64_t n1,
                                float* y) {
  constexpr int kCols = columns_for(MR);
  int64_t n = n0;
  for (; n + kCols <= n1; n += kCols) gemv_tile<Z, MR, kCols>(p, zq + (n - n0) * p.kb, a, lda, n, y);
  for (; n < n1; ++n) gemv_tile<Z, MR, 1>(p, zq + (n - n0) * p.kb, a, lda, n, y);
}

using GemvFn = void (*)(const Codes&, const float*, const float*, int64_t, int64_t, int64_t, float*);

template <Zp Z>
constexpr GemvFn kGemv[kTileRows] = {gemv_columns<Z, 1>, gemv_columns<Z, 2>, gemv_columns<Z, 3>, gemv_columns<Z, 4>};

// ---------------------------------------------------------------------------------------------
// Float32 panels (more rows)

// Transposes 16 rows of 16 floats in place (r[i] lane c becomes r[c] lane i).
EDGEMM_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + q], 128-bit lane L: rows 4i..4i+3 of column 4L + q.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d t0 = _mm512_castps_pd(t[4 * i]), t1 = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * i + 2]), t3 = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  __m512 out[16];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512 u0 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88), u1 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xDD);
    const __m512 u2 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88);
    const __m512 u3 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xDD);
    out[q] = _mm512_shuffle_f32x4(u0, u2, 0x88);
    out[8 + q] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
    out[4 + q] = _mm512_shuffle_f32x4(u1, u3, 0x88);
    out[12 + q] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = out[i];
}

// K steps of a panel dequantized and multiplied at a time: 256 steps of 32 floats are 32 KiB,
// in L1 (a whole panel would be written to and read back from L2).
constexpr int64_t kSliceSteps = 256;

// Floats of per-thread workspace next to a panel slice: per block, 16 columns' zero points and
// scales, for both halves of the panel.
int64_t panel_params(const Codes& p) { return 2 * 2 * 16 * p.kb; }

// Zero points of blocks [j0, j0 + 16) of column `col` (all 16 must exist) as floats.
template <Zp Z>
EDGEMM_AVX512 __m512 zero_points16(const Codes& p, int64_t col, int64_t j0) {
  if constexpr (Z == Zp::kFloat) return _mm512_loadu_ps(p.w.float_zero_points + col * p.kb + j0);
  if constexpr (Z == Zp::kPacked) {
    // 8 bytes, each duplicated, widened to lanes [b0, b0, b1, b1, ..]; even lanes keep the low
    // nibble (the lower block), odd lanes the high one.
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p.w.zero_points + col * p.zp_row + j0 / 2));
    const __m512i lanes = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(bytes, bytes));
    const __m512i shifts = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
    return _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srlv_epi32(lanes, shifts), _mm512_set1_epi32(15)));
  }
  return _mm512_set1_ps(8.0f);
}

// Zero points and scales of columns [col0, col0 + cols) (cols <= 32) into `params`: for half h
// (16 columns) and block j, 16 zero points at (2h * kb + j) * 16 and 16 scales at
// ((2h + 1) * kb + j) * 16; zero past `cols`. Whole groups of 16 blocks are read per column
// and transposed in registers.
template <Zp Z>
EDGEMM_AVX512 void gather_panel_params(const Codes& p, int64_t col0, int64_t cols, float* params) {
  for (int64_t half = 0; half < 2; ++half) {
    const int64_t c0 = col0 + 16 * half, count = std::clamp<int64_t>(cols - 16 * half, 0, 16);
    float* zq = params + 2 * half * p.kb * 16;
    float* sc = zq + p.kb * 16;
    for (int64_t j0 = 0; j0 < p.kb; j0 += 16) {
      const int64_t nb = std::min<int64_t>(16, p.kb - j0);
      __m512 z[16], s[16];
      for (int64_t c = 0; c < 16; ++c) {
        if (c < count && nb == 16) {
          z[c] = zero_points16<Z>(p, c0 + c, j0);
          s[c] = _mm512_loadu_ps(p.w.scales + (c0 + c) * p.kb + j0);
          continue;
        }
        alignas(64) float zt[16] = {}, st[16] = {};
        for (int64_t j = 0; c < count && j < nb; ++j) {
          zt[j] = p.zero_point<Z>(c0 + c, j0 + j);
          st[j] = p.w.scales[(c0 + c) * p.kb + j0 + j];
        }
        z[c] = _mm512_load_ps(zt);
        s[c] = _mm512_load_ps(st);
      }
      transpose16(z);
      transpose16(s);
      for (int64_t j = 0; j < nb; ++j) {
        _mm512_storeu_ps(zq + (j0 + j) * 16, z[j]);
        _mm512_storeu_ps(sc + (j0 + j) * 16, s[j]);
      }
    }
  }
}

// K steps [k0, k1) (k0 a multiple of 128) of columns [col0, col0 + cols) (cols <= 32)
// dequantized into `slice`: step k - k0 holds K index k of 32 columns, zero past `cols`. Per 16
// columns, their codes are read 16 dwords (128 codes) a column at a time and transposed as
// dwords, so that a register holds one dword of each column; 8 shifts of it give 8 K steps of
// 16 columns, dequantized as (q - zero_point) * scale with the block's per-column parameters
// (gather_panel_params()).
EDGEMM_AVX512 void dequantize_slice(const Codes& p, int64_t col0, int64_t cols, int64_t k0, int64_t k1,
                                    const float* params, float* slice) {
  const int64_t d_begin = k0 / 8, d_end = k1 / 8;  // dwords of a column's codes
  const __m512i low4 = _mm512_set1_epi32(15);
  for (int64_t half = 0; half < 2; ++half) {
    const int64_t c0 = col0 + 16 * half, count = std::clamp<int64_t>(cols - 16 * half, 0, 16);
    const float* zq = params + 2 * half * p.kb * 16;
    const float* sc = zq + p.kb * 16;
    float* out = slice + 16 * half;
    if (count == 0) {
      for (int64_t k = k0; k < k1; ++k) _mm512_store_ps(out + (k - k0) * kPanelColumns, _mm512_setzero_ps());
      continue;
    }
    for (int64_t d0 = d_begin; d0 < d_end; d0 += 16) {
      const int64_t nd = std::min<int64_t>(16, d_end - d0);
      const __mmask16 mask = static_cast<__mmask16>((1u << nd) - 1);
      __m512 v[16];
      for (int64_t c = 0; c < 16; ++c) {
        v[c] = c < count ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(mask, p.codes(c0 + c, 0) + 4 * d0))
                         : _mm512_setzero_ps();
      }
      transpose16(v);
      for (int64_t d = 0; d < nd; ++d) {
        const int64_t k = (d0 + d) * 8, j = k / p.bs;
        const __m512i codes = _mm512_castps_si512(v[d]);
        const __m512 zv = _mm512_loadu_ps(zq + j * 16), sv = _mm512_loadu_ps(sc + j * 16);
        float* step = out + (k - k0) * kPanelColumns;
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          const __m512 q = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(codes, 4 * i), low4));
          _mm512_store_ps(step + i * kPanelColumns, _mm512_mul_ps(_mm512_sub_ps(q, zv), sv));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

// Zero points of columns [n0, n1) as floats, kb per column: the float zero points themselves,
// packed ones unpacked 16 blocks at a time into the calling thread's kWeights buffer; null for
// the default zero point.
template <Zp Z>
EDGEMM_AVX512 const float* column_zero_points(const Codes& p, int64_t n0, int64_t n1) {
  if constexpr (Z == Zp::kFloat) return p.w.float_zero_points + n0 * p.kb;
  if constexpr (Z == Zp::kDefault) return nullptr;
  float* out = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kWeights, (n1 - n0) * p.kb * sizeof(float)));
  for (int64_t col = n0; col < n1; ++col) {
    float* row = out + (col - n0) * p.kb;
    int64_t j = 0;
    for (; j + 16 <= p.kb; j += 16) _mm512_storeu_ps(row + j, zero_points16<Z>(p, col, j));
    for (; j < p.kb; ++j) row[j] = p.zero_point<Z>(col, j);
  }
  return out;
}

// A's rows zero-padded past K up to k_pad and, with `even_odd`, every group of 32 K indices in
// [even k, odd k] order: `a` itself when that changes nothing, else the calling thread's kSrc
// buffer.
const float* prepare_a(const float* a, int64_t m, int64_t k, int64_t k_pad, bool even_odd) {
  if (!even_odd && k == k_pad) return a;
  float* out = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kSrc, m * k_pad * sizeof(float)));
  for (int64_t r = 0; r < m; ++r) {
    const float* src = a + r * k;
    float* dst = out + r * k_pad;
    if (!even_odd) {
      std::memcpy(dst, src, static_cast<size_t>(k) * sizeof(float));
      std::fill(dst + k, dst + k_pad, 0.0f);
      continue;
    }
    for (int64_t g = 0; g < k_pad; g += kGroup) {
      if (g + kGroup <= k) {
        for (int64_t i = 0; i < kGroup / 2; ++i) {
          dst[g + i] = src[g + 2 * i];
          dst[g + kGroup / 2 + i] = src[g + 2 * i + 1];
        }
        continue;
      }
      for (int64_t i = 0; i < kGroup / 2; ++i) {
        const int64_t even = g + 2 * i, odd = even + 1;
        dst[g + i] = even < k ? src[even] : 0.0f;
        dst[g + kGroup / 2 + i] = odd < k ? src[odd] : 0.0f;
      }
    }
  }
  return out;
}

template <Zp Z>
void run(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const float* a, int64_t m, float* y, int threads) {
  const Codes p(s, w);
  const int64_t k_pad = p.kb * p.bs, n_total = s.n;
  const int t = nbits::threads_for(threads, m * k_pad * n_total);
  if (m <= kAvx512GemvMaxRows) {
    const float* ap = prepare_a(a, m, s.k, k_pad, true);
    const int64_t chunks = (n_total + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(t) schedule(static)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t n0 = ch * kChunk, n1 = std::min(n_total, n0 + kChunk);
      const float* zq = column_zero_points<Z>(p, n0, n1);
      for (int64_t r0 = 0; r0 < m; r0 += kTileRows) {
        kGemv<Z>[std::min(kTileRows, m - r0) - 1](p, zq, ap + r0 * k_pad, k_pad, n0, n1, y + r0 * n_total);
      }
    }
    if (w.bias != nullptr) {
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t c = 0; c < n_total; ++c) y[r * n_total + c] += w.bias[c];
      }
    }
    return;
  }
  const float* ap = prepare_a(a, m, s.k, k_pad, false);
  float* packed_a = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kDst, m * k_pad * sizeof(float)));
  pack_panel_rows(ap, k_pad, m, k_pad, packed_a);
  const int64_t panels = (n_total + kPanelColumns - 1) / kPanelColumns;
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t pi = 0; pi < panels; ++pi) {
    float* slice = static_cast<float*>(onednn::thread_buffer(
        onednn::Slot::kWeights, static_cast<size_t>(kSliceSteps * kPanelColumns + panel_params(p)) * sizeof(float)));
    float* params = slice + kSliceSteps * kPanelColumns;
    const int64_t col0 = pi * kPanelColumns, cols = std::min(kPanelColumns, n_total - col0);
    gather_panel_params<Z>(p, col0, cols, params);
    for (int64_t k0 = 0; k0 < k_pad; k0 += kSliceSteps) {
      const int64_t depth = std::min(kSliceSteps, k_pad - k0);
      dequantize_slice(p, col0, cols, k0, k0 + depth, params, slice);
      matmul_panel(slice, k_pad, k0, depth, cols, packed_a, m, w.bias != nullptr ? w.bias + col0 : nullptr, y + col0,
                   n_total);
    }
  }
}

#undef EDGEMM_AVX512

}  // namespace

void matmul_nbits_f32_avx512(const MatMulNBitsShape& shape, const MatMulNBitsWeights& w, const float* a, int64_t m,
                             float* y, int threads) {
  if (m <= 0) return;
  if (w.float_zero_points != nullptr) {
    run<Zp::kFloat>(shape, w, a, m, y, threads);
  } else if (w.zero_points != nullptr) {
    run<Zp::kPacked>(shape, w, a, m, y, threads);
  } else {
    run<Zp::kDefault>(shape, w, a, m, y, threads);
  }
}

#else

void matmul_nbits_f32_avx512(const MatMulNBitsShape&, const MatMulNBitsWeights&, const float*, int64_t, float*, int) {}

#endif

}  // namespace edgemm::kernels
