/// \file matmul_nbits_int8.cc
/// com.microsoft MatMulNBits with accuracy_level 4: A quantized to int8 per block, integer dot
/// products with the codes (matmul_nbits_int8.h; ONNX Runtime's CompInt8 does the same).
///
/// Fast paths (AVX-512 VNNI, AVX2): B's codes are read in their own layout. Every column's
/// codes are cut into units of 16 bytes (32 4-bit or 16 8-bit codes, within one block), and a
/// chunk of 16 units (AVX-512; 8 with AVX2) is loaded in 4 registers and transposed as 4x4
/// dwords inside each 128-bit lane, so that lane L holds unit perm(L) (perm(L) = 4(L mod 4) +
/// L / 4; with AVX2 2(L mod 4) + L / 4). Each dword holds 8 4-bit codes (split by nibble into
/// the even and odd K indices) or 4 8-bit codes; A's quantized rows are stored once per call in
/// the matching order, so that VPDPBUSD (AVX2: VPMADDUBSW + VPMADDWD, exact since |code| · |a|
/// · 2 < 2^15 for 4-bit codes; 8-bit codes are split into nibbles) leaves each unit's whole
/// dot product in one lane. A lane then takes (dot − zero_point · Σ q_a) · scale_w · scale_a with
/// its block's scales and zero point, gathered by one permute from B's contiguous scales, and
/// the 16 lanes are summed at the end of the column. Up to 8 rows (AVX2: 4) share one pass
/// over the codes; more rows repeat it over columns still in cache. A column whose codes end
/// inside a chunk has that chunk zero-padded through a copy, except with AVX-512 and 4-bit codes,
/// where its end is read in 64-byte steps (matmul_nbits_int8_steps.h; K = 576 is one chunk and
/// 32 bytes, not two chunks).
///
/// Arm with the dot-product instructions (kNeon): per column and block, SDOT over units of 16
/// code bytes against A's codes reordered once per call (4-bit: even and odd K indices apart, to
/// meet the low and high nibbles), up to 4 rows per pass over the codes; one row (decode) takes
/// four columns per pass over A's codes instead.

#include "kernels/cpu/matmul_nbits_int8.h"

#if defined(__x86_64__)
// GCC 12 reports false -Wmaybe-uninitialized inside the AVX-512 intrinsics that start from
// _mm512_undefined_*() (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/cpu/matmul_nbits_int8_steps.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cpu_features.h"

namespace edgemm::kernels {
namespace {

constexpr int64_t kUnitBytes = 16;   // code bytes a lane covers per chunk (one block or less)
constexpr int64_t kColumnTask = 16;  // columns per OpenMP scheduling unit

// Zero point of block j of column n as a float (the default 2^(bits - 1) when absent).
float zero_point(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, int64_t n, int64_t j) {
  if (w.zero_points != nullptr) {
    return static_cast<float>(nbits::code_at(w.zero_points + n * s.zero_point_row_bytes(), j, s.bits));
  }
  return static_cast<float>(int64_t{1} << (s.bits - 1));
}

}  // namespace

QuantizedRows::QuantizedRows(const MatMulNBitsShape& s, const float* a, int64_t m)
    : kb(s.k_blocks()), k_pad(kb * s.block_size) {
  const size_t q_bytes = static_cast<size_t>(m * k_pad + 63) / 64 * 64;
  auto* base = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kExtra, q_bytes + m * kb * 8 + m));
  q = reinterpret_cast<int8_t*>(base);
  scales = reinterpret_cast<float*>(base + q_bytes);
  sums = reinterpret_cast<int32_t*>(scales + m * kb);
  finite = reinterpret_cast<uint8_t*>(sums + m * kb);
  for (int64_t r = 0; r < m; ++r) {
    finite[r] = quantize_row_int8(a + r * s.k, s.k, s.block_size, q + r * k_pad, scales + r * kb, sums + r * kb);
  }
}

namespace {

void run_reference(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const QuantizedRows& rows, int64_t m,
                   float* y, int threads) {
  const int64_t kb = s.k_blocks(), bs = s.block_size, blob = s.blob_size();
  const int t = nbits::threads_for(threads, m * rows.k_pad * s.n);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t r = 0; r < m; ++r) {
      const int8_t* q = rows.q + r * rows.k_pad;
      float acc = 0.0f;
      for (int64_t j = 0; j < kb; ++j) {
        const uint8_t* codes = w.b + (n * kb + j) * blob;
        int32_t dot = 0;
        for (int64_t i = 0; i < bs; ++i) dot += nbits::code_at(codes, i, s.bits) * q[j * bs + i];
        const float zp = zero_point(s, w, n, j);
        const float sum = static_cast<float>(rows.sums[r * kb + j]);
        acc += (static_cast<float>(dot) - zp * sum) * (w.scales[n * kb + j] * rows.scales[r * kb + j]);
      }
      y[r * s.n + n] = acc;
    }
  }
}

#if defined(__x86_64__)

/// How a fast variant walks one column: units of kUnitBytes, chunks of `lanes` units.
struct Walk {
  Walk(const MatMulNBitsShape& shape, int lane_count)
      : s(shape),
        lanes(lane_count),
        kb(shape.k_blocks()),
        col_bytes(kb * shape.blob_size()),
        unit_codes(kUnitBytes * 8 / shape.bits),
        units(col_bytes / kUnitBytes),
        chunks((units + lane_count - 1) / lane_count),
        vectors(shape.bits == 4 ? 8 : 4),
        chunk_blocks(std::max<int64_t>(1, lane_count * unit_codes / shape.block_size)),
        block_shift(__builtin_ctzll(static_cast<unsigned long long>(shape.block_size))) {}

  /// The unit within a chunk that lane `lane` holds after the in-lane transpose.
  int64_t unit_of_lane(int64_t lane) const {
    return lanes == 16 ? 4 * (lane % 4) + lane / 4 : 2 * (lane % 4) + lane / 4;
  }
  /// First block of chunk c (block sizes are powers of two).
  int64_t first_block(int64_t c) const { return (c * lanes * unit_codes) >> block_shift; }

  MatMulNBitsShape s;
  int64_t lanes, kb, col_bytes, unit_codes, units, chunks, vectors, chunk_blocks;
  int block_shift;  // log2(block_size)
};

// Writes the codes of one unit (32 4-bit or 16 8-bit codes of A, K order) as its lane's dwords
// of a chunk's vectors, `stride` bytes apart: 4 bits, dword 2t + h = codes 8t + 2b + h (b = 0..3);
// 8 bits, dword t = codes 4t .. 4t + 3. Returns the sum of the codes.
__attribute__((target("avx2"))) inline int32_t spread_unit(const int8_t* codes, int64_t bits, int64_t stride,
                                                           int8_t* out) {
  const __m128i ones = _mm_set1_epi8(1);
  __m128i halves[2];
  const int count = bits == 4 ? 2 : 1;
  int32_t sum = 0;
  for (int half = 0; half < count; ++half) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + 16 * half));
    const __m128i pairs = _mm_madd_epi16(_mm_maddubs_epi16(ones, v), _mm_set1_epi16(1));
    const __m128i s2 = _mm_add_epi32(pairs, _mm_shuffle_epi32(pairs, 0x4E));
    sum += _mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 0xB1)));
    if (bits == 4) v = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15));
    halves[half] = v;
  }
  alignas(16) int32_t dwords[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(dwords), halves[0]);
  if (count == 2) _mm_store_si128(reinterpret_cast<__m128i*>(dwords + 4), halves[1]);
  for (int d = 0; d < 4 * count; ++d) std::memcpy(out + d * stride, &dwords[d], 4);
  return sum;
}

/// A's rows in the lane order of a Walk: per row and chunk, `vectors` vectors of lanes × 4 code
/// bytes (vector 2t + h of a 4-bit chunk: codes 8t + 2b + h of each lane's unit, b = 0..3;
/// vector t of an 8-bit chunk: codes 4t + b), then the lanes' code sums and A scales as floats.
/// Views of a per-thread workspace (slot kSrc of the calling thread).
struct LaneRows {
  LaneRows(const Walk& walk, const QuantizedRows& rows, int64_t m)
      : chunk_bytes(walk.vectors * walk.lanes * 4), chunk_lanes(walk.chunks * walk.lanes) {
    const size_t act_bytes = static_cast<size_t>(m * walk.chunks * chunk_bytes);
    auto* base = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, act_bytes + m * chunk_lanes * 8));
    act = reinterpret_cast<int8_t*>(base);
    sums = reinterpret_cast<float*>(base + act_bytes);
    scales = sums + m * chunk_lanes;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < walk.chunks; ++c) {
        int8_t* out = act + (r * walk.chunks + c) * chunk_bytes;
        float* lane_sums = sums + r * chunk_lanes + c * walk.lanes;
        float* lane_scales = scales + r * chunk_lanes + c * walk.lanes;
        for (int64_t lane = 0; lane < walk.lanes; ++lane) {
          const int64_t unit = c * walk.lanes + walk.unit_of_lane(lane);
          if (!rows.finite[r] || unit >= walk.units) {
            for (int64_t v = 0; v < walk.vectors; ++v) std::memset(out + (v * walk.lanes + lane) * 4, 0, 4);
            lane_sums[lane] = lane_scales[lane] = 0.0f;
            continue;
          }
          const int8_t* codes = rows.q + r * rows.k_pad + unit * walk.unit_codes;
          lane_sums[lane] = static_cast<float>(spread_unit(codes, walk.s.bits, walk.lanes * 4, out + lane * 4));
          lane_scales[lane] = rows.scales[r * rows.kb + ((unit * walk.unit_codes) >> walk.block_shift)];
        }
      }
    }
  }
  int64_t chunk_bytes, chunk_lanes;
  int8_t* act;
  float* sums;
  float* scales;
};

/// One call's inputs for the column kernels.
struct Job {
  const Walk& walk;
  const MatMulNBitsWeights& w;
  const LaneRows& rows;
  int64_t zp_row;
  const uint8_t* zp_end;  // end of the packed zero points (null when there are none)
  float default_zp;
  int32_t lane_block[16];  // block of each lane's unit, relative to its chunk's first block
  // AVX-512, 4-bit codes: the column's end past its whole chunks, in steps (null when the
  // chunks are whole, and for 8-bit codes and AVX2, which pad the last chunk instead).
  const int8_steps::StepJob* steps;
  int64_t chunks;  // chunks read as chunks
};

// The chunk's code bytes: 64 · (lanes / 4) bytes at `at`, zeros past the column's end.
inline const uint8_t* chunk_codes(const Job& job, const uint8_t* col, int64_t c, uint8_t* spare) {
  const int64_t bytes = job.walk.lanes * kUnitBytes, off = c * bytes;
  if (off + bytes <= job.walk.col_bytes) return col + off;
  std::memset(spare, 0, static_cast<size_t>(bytes));
  std::memcpy(spare, col + off, static_cast<size_t>(job.walk.col_bytes - off));
  return spare;
}

// The 16 zero point bytes at `p` (bytes past the column's, which only feed lanes without codes,
// are whatever follows; zeros past the end of the array).
inline __m128i zero_point_bytes(const Job& job, const uint8_t* p) {
  if (p + 16 <= job.zp_end) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  alignas(16) uint8_t bytes[16] = {};
  std::memcpy(bytes, p, static_cast<size_t>(job.zp_end - p));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
}

#define EDGEMM_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define EDGEMM_AVX2_INT8 __attribute__((target("avx2,fma")))

// ---------------------------------------------------------------------------------------------
// AVX-512 VNNI: 16 lanes

// Zero points of the chunk's lanes for column n.
template <int kBits>
EDGEMM_AVX512_VNNI inline __m512 lane_zero_points512(const Job& job, int64_t n, int64_t first, __m512i index) {
  if (job.w.zero_points == nullptr) return _mm512_set1_ps(job.default_zp);
  const uint8_t* row = job.w.zero_points + n * job.zp_row;
  __m128i codes;
  if constexpr (kBits == 8) {
    codes = zero_point_bytes(job, row + first);
  } else {
    // Two blocks a byte, the lower block in the low nibble.
    const __m128i packed = zero_point_bytes(job, row + first / 2);
    const __m128i low = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
    codes = _mm_unpacklo_epi8(low, high);
    if (first & 1) codes = _mm_srli_si128(codes, 1);
  }
  return _mm512_permutexvar_ps(index, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(codes)));
}

// Columns [n0, n1) for rows [r0, r0 + MR).
template <int kBits, int MR>
EDGEMM_AVX512_VNNI void columns512(const Job& job, int64_t r0, int64_t n0, int64_t n1, float* y) {
  const Walk& wk = job.walk;
  const __m512i index = _mm512_loadu_si512(job.lane_block);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const int64_t chunk_act = wk.vectors * 64;
  alignas(64) uint8_t spare[256];
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* col = job.w.b + n * wk.col_bytes;
    __m512 acc[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < job.chunks; ++c) {
      const uint8_t* p = chunk_codes(job, col, c, spare);
      _mm_prefetch(reinterpret_cast<const char*>(p) + nbits::kPrefetchBytes, _MM_HINT_T0);
      const __m512i z0 = _mm512_loadu_si512(p), z1 = _mm512_loadu_si512(p + 64);
      const __m512i z2 = _mm512_loadu_si512(p + 128), z3 = _mm512_loadu_si512(p + 192);
      const __m512i t0 = _mm512_unpacklo_epi32(z0, z1), t1 = _mm512_unpackhi_epi32(z0, z1);
      const __m512i t2 = _mm512_unpacklo_epi32(z2, z3), t3 = _mm512_unpackhi_epi32(z2, z3);
      const __m512i d[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2), _mm512_unpacklo_epi64(t1, t3),
                            _mm512_unpackhi_epi64(t1, t3)};
      __m512i codes[8];
#pragma GCC unroll 8
      for (int t = 0; t < 4; ++t) {
        if constexpr (kBits == 4) {
          codes[2 * t] = _mm512_and_si512(d[t], nibble);
          codes[2 * t + 1] = _mm512_and_si512(_mm512_srli_epi16(d[t], 4), nibble);
        } else {
          codes[t] = d[t];
        }
      }
      const int64_t first = wk.first_block(c), count = std::min(wk.chunk_blocks, wk.kb - first);
      const __m512 scale_w = int8_steps::lane_floats512(job.w.scales + n * wk.kb, first, count, index);
      const __m512 zp = lane_zero_points512<kBits>(job, n, first, index);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const int64_t at = (r0 + r) * wk.chunks + c;
        const int8_t* act = job.rows.act + at * chunk_act;
        // Independent partial sums: one chain of 8 VPDPBUSD (latency 4-5 each) bounded the loop
        // for one row; with more rows, two chains leave registers for the rows.
        constexpr int kParts = MR == 1 ? 4 : 2;
        constexpr int kVectors = kBits == 4 ? 8 : 4;
        __m512i part[kParts];
#pragma GCC unroll 8
        for (int i = 0; i < kParts; ++i) part[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int v = 0; v < kVectors; ++v) {
          part[v % kParts] = _mm512_dpbusd_epi32(part[v % kParts], codes[v], _mm512_loadu_si512(act + 64 * v));
        }
        __m512i dot = part[0];
#pragma GCC unroll 8
        for (int i = 1; i < kParts; ++i) dot = _mm512_add_epi32(dot, part[i]);
        const __m512 sum = _mm512_loadu_ps(job.rows.sums + at * 16);
        const __m512 scale_a = _mm512_loadu_ps(job.rows.scales + at * 16);
        const __m512 exact = _mm512_fnmadd_ps(zp, sum, _mm512_cvtepi32_ps(dot));
        acc[r] = _mm512_fmadd_ps(exact, _mm512_mul_ps(scale_w, scale_a), acc[r]);
      }
    }
    if (job.steps != nullptr) int8_steps::add_steps<MR>(*job.steps, n, r0, acc);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) y[(r0 + r) * wk.s.n + n] = _mm512_reduce_add_ps(acc[r]);
  }
}

// ---------------------------------------------------------------------------------------------
// AVX2: 8 lanes

EDGEMM_AVX2_INT8 inline __m256 lane_floats256(const float* col, int64_t first, int64_t count, __m256i index) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(count, 8))), lane);
  return _mm256_permutevar8x32_ps(_mm256_maskload_ps(col + first, mask), index);
}

template <int kBits>
EDGEMM_AVX2_INT8 inline __m256 lane_zero_points256(const Job& job, int64_t n, int64_t first, __m256i index) {
  if (job.w.zero_points == nullptr) return _mm256_set1_ps(job.default_zp);
  const uint8_t* row = job.w.zero_points + n * job.zp_row;
  __m128i codes;
  if constexpr (kBits == 8) {
    codes = zero_point_bytes(job, row + first);
  } else {
    // Two blocks a byte, the lower block in the low nibble.
    const __m128i packed = zero_point_bytes(job, row + first / 2);
    const __m128i low = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
    codes = _mm_unpacklo_epi8(low, high);
    if (first & 1) codes = _mm_srli_si128(codes, 1);
  }
  return _mm256_permutevar8x32_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes)), index);
}

// Σ over each lane's 4 byte pairs of u8 `codes` × s8 `act`, added to `dot` (exact: the int16
// pair sums stay below 2^15 for codes below 16).
EDGEMM_AVX2_INT8 inline __m256i dot4_avx2(__m256i dot, __m256i codes, __m256i act) {
  return _mm256_add_epi32(dot, _mm256_madd_epi16(_mm256_maddubs_epi16(codes, act), _mm256_set1_epi16(1)));
}

template <int kBits, int MR>
EDGEMM_AVX2_INT8 void columns256(const Job& job, int64_t r0, int64_t n0, int64_t n1, float* y) {
  const Walk& wk = job.walk;
  const __m256i index = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(job.lane_block));
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const int64_t chunk_act = wk.vectors * 32;
  alignas(32) uint8_t spare[128];
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* col = job.w.b + n * wk.col_bytes;
    __m256 acc[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t c = 0; c < wk.chunks; ++c) {
      const uint8_t* p = chunk_codes(job, col, c, spare);
      _mm_prefetch(reinterpret_cast<const char*>(p) + nbits::kPrefetchBytes, _MM_HINT_T0);
      const __m256i z0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      const __m256i z1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
      const __m256i z2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64));
      const __m256i z3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 96));
      const __m256i t0 = _mm256_unpacklo_epi32(z0, z1), t1 = _mm256_unpackhi_epi32(z0, z1);
      const __m256i t2 = _mm256_unpacklo_epi32(z2, z3), t3 = _mm256_unpackhi_epi32(z2, z3);
      const __m256i d[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2), _mm256_unpacklo_epi64(t1, t3),
                            _mm256_unpackhi_epi64(t1, t3)};
      __m256i low[4], high[4];
#pragma GCC unroll 8
      for (int t = 0; t < 4; ++t) {
        low[t] = _mm256_and_si256(d[t], nibble);
        high[t] = _mm256_and_si256(_mm256_srli_epi16(d[t], 4), nibble);
      }
      const int64_t first = wk.first_block(c), count = std::min(wk.chunk_blocks, wk.kb - first);
      const __m256 scale_w = lane_floats256(job.w.scales + n * wk.kb, first, count, index);
      const __m256 zp = lane_zero_points256<kBits>(job, n, first, index);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const int64_t at = (r0 + r) * wk.chunks + c;
        const int8_t* act = job.rows.act + at * chunk_act;
        __m256i part[4];
#pragma GCC unroll 8
        for (int t = 0; t < 4; ++t) {
          if constexpr (kBits == 4) {
            part[t] = dot4_avx2(_mm256_setzero_si256(), low[t],
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 64 * t)));
            part[t] =
                dot4_avx2(part[t], high[t], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 64 * t + 32)));
          } else {
            // 8-bit codes as 16 · high nibble + low nibble.
            const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 32 * t));
            const __m256i hi = dot4_avx2(_mm256_setzero_si256(), high[t], a);
            part[t] = dot4_avx2(_mm256_slli_epi32(hi, 4), low[t], a);
          }
        }
        const __m256i dot = _mm256_add_epi32(_mm256_add_epi32(part[0], part[1]), _mm256_add_epi32(part[2], part[3]));
        const __m256 sum = _mm256_loadu_ps(job.rows.sums + at * 8);
        const __m256 scale_a = _mm256_loadu_ps(job.rows.scales + at * 8);
        const __m256 exact = _mm256_fnmadd_ps(zp, sum, _mm256_cvtepi32_ps(dot));
        acc[r] = _mm256_fmadd_ps(exact, _mm256_mul_ps(scale_w, scale_a), acc[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc[r]), _mm256_extractf128_ps(acc[r], 1));
      const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
      y[(r0 + r) * wk.s.n + n] = _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
    }
  }
}

#undef EDGEMM_AVX512_VNNI
#undef EDGEMM_AVX2_INT8

/// The column kernel for `rows` rows (1..max_rows) of a variant and bit width.
using ColumnsFn = void (*)(const Job&, int64_t, int64_t, int64_t, float*);

template <int kBits, int... MR>
ColumnsFn pick512(int rows, std::integer_sequence<int, MR...>) {
  ColumnsFn fns[] = {columns512<kBits, MR + 1>...};
  return fns[rows - 1];
}

template <int kBits, int... MR>
ColumnsFn pick256(int rows, std::integer_sequence<int, MR...>) {
  ColumnsFn fns[] = {columns256<kBits, MR + 1>...};
  return fns[rows - 1];
}

void run_fast(bool avx512, const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const QuantizedRows& rows, int64_t m,
              float* y, int threads) {
  const Walk walk(s, avx512 ? 16 : 8);
  const LaneRows lanes(walk, rows, m);
  const uint8_t* zp_end = w.zero_points != nullptr ? w.zero_points + s.n * s.zero_point_row_bytes() : nullptr;
  Job job{walk, w,       lanes,      s.zero_point_row_bytes(), zp_end, static_cast<float>(int64_t{1} << (s.bits - 1)),
          {},   nullptr, walk.chunks};
  // AVX-512 with 4-bit codes: a column's end that does not fill a chunk goes in 64-byte steps.
  std::optional<int8_steps::StepRows> step_rows;
  std::optional<int8_steps::StepJob> step_job;
  const int64_t chunk_bytes = walk.lanes * kUnitBytes;
  if (avx512 && s.bits == 4 && walk.col_bytes % chunk_bytes != 0) {
    job.chunks = walk.col_bytes / chunk_bytes;
    step_rows.emplace(s, rows, m, job.chunks * chunk_bytes);
    step_job.emplace(s, w, *step_rows);
    job.steps = &*step_job;
  }
  for (int64_t lane = 0; lane < walk.lanes; ++lane) {
    job.lane_block[lane] = static_cast<int32_t>(walk.unit_of_lane(lane) * walk.unit_codes / s.block_size);
  }
  const int max_rows = avx512 ? 8 : 4;
  const int64_t tasks = (s.n + kColumnTask - 1) / kColumnTask;
  const int t = nbits::threads_for(threads, m * walk.col_bytes * s.n);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n0 = task * kColumnTask, n1 = std::min(s.n, n0 + kColumnTask);
    for (int64_t r0 = 0; r0 < m; r0 += max_rows) {
      const int rows_now = static_cast<int>(std::min<int64_t>(max_rows, m - r0));
      ColumnsFn fn;
      if (avx512) {
        fn = s.bits == 4 ? pick512<4>(rows_now, std::make_integer_sequence<int, 8>())
                         : pick512<8>(rows_now, std::make_integer_sequence<int, 8>());
      } else {
        fn = s.bits == 4 ? pick256<4>(rows_now, std::make_integer_sequence<int, 4>())
                         : pick256<8>(rows_now, std::make_integer_sequence<int, 4>());
      }
      fn(job, r0, n0, n1, y);
    }
  }
}

#endif  // __x86_64__

#if defined(__aarch64__)

// The dot-product intrinsics need Armv8.2-A with the DotProd extension (matmul_nbits_int8_path
// checks the CPU).
#define EDGEMM_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

/// A's quantized rows as the SDOT path reads them: for 4-bit codes each group of 32 codes is
/// stored as its 16 even-index codes, then its 16 odd-index ones (the low and high nibbles of 16
/// code bytes); 8-bit codes keep K order. A view of a per-thread workspace (slot kSrc of the
/// calling thread) for 4 bits, of `rows` itself for 8.
const int8_t* sdot_rows(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t m) {
  if (s.bits == 8) return rows.q;
  auto* out = static_cast<int8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, static_cast<size_t>(m * rows.k_pad)));
  for (int64_t i = 0; i < m * rows.k_pad; i += 32) {
    const int8x16x2_t pairs = vld2q_s8(rows.q + i);
    vst1q_s8(out + i, pairs.val[0]);
    vst1q_s8(out + i + 16, pairs.val[1]);
  }
  return out;
}

/// dot[r] += the SDOT lanes of Σ code · q_a over one block (`units` units of 16 code bytes at
/// `codes`) for R rows of A's reordered codes at act[r] + at (4-bit: low nibbles with the even
/// codes of A, high with the odd; 8-bit: codes − 128, which the caller corrects by 128 · Σ q_a).
template <int kBits, int R>
EDGEMM_DOTPROD inline void block_dot(const uint8_t* codes, int64_t units, const int8_t* const (&act)[R], int64_t at,
                                     int32x4_t (&dot)[R]) {
  for (int64_t u = 0; u < units; ++u) {
    const uint8x16_t c = vld1q_u8(codes + u * kUnitBytes);
    if constexpr (kBits == 4) {
      const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(c, vdupq_n_u8(0x0F)));
      const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(c, 4));
      for (int r = 0; r < R; ++r) {
        const int8_t* a = act[r] + at + 32 * u;
        dot[r] = vdotq_s32(vdotq_s32(dot[r], lo, vld1q_s8(a)), hi, vld1q_s8(a + 16));
      }
    } else {
      const int8x16_t centered = vreinterpretq_s8_u8(veorq_u8(c, vdupq_n_u8(0x80)));
      for (int r = 0; r < R; ++r) dot[r] = vdotq_s32(dot[r], centered, vld1q_s8(act[r] + at + 16 * u));
    }
  }
}

/// The zero points of blocks j .. j + 3 of column n as floats (kept out of line: the packed
/// ones take scalar work the loop over blocks should not carry when there are none).
[[gnu::noinline]] float32x4_t zero_points4(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, int64_t n,
                                           int64_t j) {
  const float z[4] = {zero_point(s, w, n, j), zero_point(s, w, n, j + 1), zero_point(s, w, n, j + 2),
                      zero_point(s, w, n, j + 3)};
  return vld1q_f32(z);
}

/// Columns [n0, n1) of R rows from r0: the reference formula per block, (Σ code · q_a − zero point
/// · Σ q_a) · scale_w · scale_a, with the integer part exact; four blocks at a time in the lanes
/// of a vector (their SDOT sums reduced by pairwise adds), the blocks' float32 terms summed in
/// four lanes, the last kb mod 4 blocks one at a time. kUnits: units per block (the block's
/// code bytes / 16) when fixed at compile time, so the loops unroll; 0 reads it from `s`.
template <int kBits, int R, int kUnits>
EDGEMM_DOTPROD void columns_sdot(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const QuantizedRows& rows,
                                 const int8_t* act, int64_t r0, int64_t n0, int64_t n1, float* y) {
  constexpr int64_t kUnitCodes = kUnitBytes * 8 / kBits;
  const int64_t kb = s.k_blocks();
  const int64_t units = kUnits > 0 ? kUnits : s.blob_size() / kUnitBytes;
  const int64_t bs = units * kUnitCodes, blob = units * kUnitBytes;  // block_size, blob_size()
  const float32x4_t default_zp = vdupq_n_f32(static_cast<float>(int64_t{1} << (kBits - 1)));
  const int8_t* a[R];
  const int32_t* a_sums[R];
  const float* a_scales[R];
  for (int r = 0; r < R; ++r) {
    a[r] = act + (r0 + r) * rows.k_pad;
    a_sums[r] = rows.sums + (r0 + r) * kb;
    a_scales[r] = rows.scales + (r0 + r) * kb;
  }
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* col = w.b + n * kb * blob;
    const float* w_scales = w.scales + n * kb;
    float32x4_t acc[R];
    float tail[R];
    for (int r = 0; r < R; ++r) acc[r] = vdupq_n_f32(0.f), tail[r] = 0.f;
    int64_t j = 0;
    for (; j + 4 <= kb; j += 4) {
      int32x4_t lanes[4][R];
#pragma GCC unroll 4
      for (int b = 0; b < 4; ++b) {
        for (int r = 0; r < R; ++r) lanes[b][r] = vdupq_n_s32(0);
        block_dot<kBits, R>(col + (j + b) * blob, units, a, (j + b) * bs, lanes[b]);
      }
      const float32x4_t zp = w.zero_points != nullptr ? zero_points4(s, w, n, j) : default_zp;
      const float32x4_t ws = vld1q_f32(w_scales + j);
      for (int r = 0; r < R; ++r) {
        int32x4_t total = vpaddq_s32(vpaddq_s32(lanes[0][r], lanes[1][r]), vpaddq_s32(lanes[2][r], lanes[3][r]));
        const int32x4_t sums = vld1q_s32(a_sums[r] + j);
        if constexpr (kBits == 8) total = vmlaq_n_s32(total, sums, 128);
        const float32x4_t term = vfmsq_f32(vcvtq_f32_s32(total), zp, vcvtq_f32_s32(sums));
        acc[r] = vfmaq_f32(acc[r], term, vmulq_f32(ws, vld1q_f32(a_scales[r] + j)));
      }
    }
    for (; j < kb; ++j) {
      int32x4_t lanes[R];
      for (int r = 0; r < R; ++r) lanes[r] = vdupq_n_s32(0);
      block_dot<kBits, R>(col + j * blob, units, a, j * bs, lanes);
      const float zp = zero_point(s, w, n, j);
      for (int r = 0; r < R; ++r) {
        const int32_t sum = a_sums[r][j];
        const int32_t total = vaddvq_s32(lanes[r]) + (kBits == 8 ? 128 * sum : 0);
        tail[r] += (static_cast<float>(total) - zp * static_cast<float>(sum)) * (w_scales[j] * a_scales[r][j]);
      }
    }
    for (int r = 0; r < R; ++r) y[(r0 + r) * s.n + n] = vaddvq_f32(acc[r]) + tail[r];
  }
}

/// One row (r0) of columns [n0, n1), four columns at a time (a decode step's gemv): A's codes are
/// loaded once for the four columns' SDOTs, and the 16 lane vectors of four blocks × four columns
/// reduce by pairwise adds into one vector per column before columns_sdot's float32 step. Columns
/// past the last multiple of 4 and the last kb mod 4 blocks go through columns_sdot.
template <int kBits, int kUnits>
EDGEMM_DOTPROD void columns4_sdot(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const QuantizedRows& rows,
                                  const int8_t* act, int64_t r0, int64_t n0, int64_t n1, float* y) {
  constexpr int64_t kUnitCodes = kUnitBytes * 8 / kBits;
  const int64_t kb = s.k_blocks();
  const int64_t units = kUnits > 0 ? kUnits : s.blob_size() / kUnitBytes;
  const int64_t bs = units * kUnitCodes, blob = units * kUnitBytes;
  const int64_t kb4 = kb / 4 * 4;
  const float32x4_t default_zp = vdupq_n_f32(static_cast<float>(int64_t{1} << (kBits - 1)));
  const int8_t* a = act + r0 * rows.k_pad;
  const int32_t* a_sums = rows.sums + r0 * kb;
  const float* a_scales = rows.scales + r0 * kb;
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) {
    float32x4_t acc[4];
    for (int c = 0; c < 4; ++c) acc[c] = vdupq_n_f32(0.f);
    for (int64_t j = 0; j < kb4; j += 4) {
      int32x4_t lanes[4][4];  // [column][block]
      for (int c = 0; c < 4; ++c) {
        for (int b = 0; b < 4; ++b) lanes[c][b] = vdupq_n_s32(0);
      }
#pragma GCC unroll 4
      for (int b = 0; b < 4; ++b) {
        for (int64_t u = 0; u < units; ++u) {
          const int8_t* ap = a + (j + b) * bs + u * kUnitCodes;
          const int64_t at = (j + b) * blob + u * kUnitBytes;
          if constexpr (kBits == 4) {
            const int8x16_t even = vld1q_s8(ap), odd = vld1q_s8(ap + 16);
            for (int c = 0; c < 4; ++c) {
              const uint8x16_t codes = vld1q_u8(w.b + (n + c) * kb * blob + at);
              const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(codes, vdupq_n_u8(0x0F)));
              const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(codes, 4));
              lanes[c][b] = vdotq_s32(vdotq_s32(lanes[c][b], lo, even), hi, odd);
            }
          } else {
            const int8x16_t q = vld1q_s8(ap);
            for (int c = 0; c < 4; ++c) {
              const uint8x16_t codes = vld1q_u8(w.b + (n + c) * kb * blob + at);
              lanes[c][b] = vdotq_s32(lanes[c][b], vreinterpretq_s8_u8(veorq_u8(codes, vdupq_n_u8(0x80))), q);
            }
          }
        }
      }
      const int32x4_t sums = vld1q_s32(a_sums + j);
      const float32x4_t sums_f = vcvtq_f32_s32(sums), scales = vld1q_f32(a_scales + j);
      for (int c = 0; c < 4; ++c) {
        int32x4_t total = vpaddq_s32(vpaddq_s32(lanes[c][0], lanes[c][1]), vpaddq_s32(lanes[c][2], lanes[c][3]));
        if constexpr (kBits == 8) total = vmlaq_n_s32(total, sums, 128);
        const float32x4_t zp = w.zero_points != nullptr ? zero_points4(s, w, n + c, j) : default_zp;
        const float32x4_t term = vfmsq_f32(vcvtq_f32_s32(total), zp, sums_f);
        acc[c] = vfmaq_f32(acc[c], term, vmulq_f32(vld1q_f32(w.scales + (n + c) * kb + j), scales));
      }
    }
    float tail[4] = {};
    if (kb4 < kb) {
      // The last blocks: columns_sdot on a view of them (one column at a time).
      for (int c = 0; c < 4; ++c) {
        for (int64_t j = kb4; j < kb; ++j) {
          const int8_t* rows_a[1] = {a};
          int32x4_t lane[1] = {vdupq_n_s32(0)};
          block_dot<kBits, 1>(w.b + ((n + c) * kb + j) * blob, units, rows_a, j * bs, lane);
          const int32_t sum = a_sums[j];
          const int32_t total = vaddvq_s32(lane[0]) + (kBits == 8 ? 128 * sum : 0);
          tail[c] += (static_cast<float>(total) - zero_point(s, w, n + c, j) * static_cast<float>(sum)) *
                     (w.scales[(n + c) * kb + j] * a_scales[j]);
        }
      }
    }
    for (int c = 0; c < 4; ++c) y[r0 * s.n + n + c] = vaddvq_f32(acc[c]) + tail[c];
  }
  if (n < n1) columns_sdot<kBits, 1, kUnits>(s, w, rows, act, r0, n, n1, y);
}

using SdotFn = void (*)(const MatMulNBitsShape&, const MatMulNBitsWeights&, const QuantizedRows&, const int8_t*,
                        int64_t, int64_t, int64_t, float*);

template <int kBits, int kUnits>
SdotFn pick_sdot_rows(int rows) {
  constexpr SdotFn fns[] = {columns4_sdot<kBits, kUnits>, columns_sdot<kBits, 2, kUnits>,
                            columns_sdot<kBits, 3, kUnits>, columns_sdot<kBits, 4, kUnits>};
  return fns[rows - 1];
}

/// The kernel for `rows` rows (1..4) and blocks of `units` units (1, 2 and 4 unrolled).
template <int kBits>
SdotFn pick_sdot(int rows, int64_t units) {
  switch (units) {
    case 1:
      return pick_sdot_rows<kBits, 1>(rows);
    case 2:
      return pick_sdot_rows<kBits, 2>(rows);
    case 4:
      return pick_sdot_rows<kBits, 4>(rows);
    default:
      return pick_sdot_rows<kBits, 0>(rows);
  }
}

void run_sdot(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const QuantizedRows& rows, int64_t m, float* y,
              int threads) {
  constexpr int kMaxRows = 4;
  const int8_t* act = sdot_rows(s, rows, m);
  const int64_t units = s.blob_size() / kUnitBytes;
  const int64_t tasks = (s.n + kColumnTask - 1) / kColumnTask;
  const int t = nbits::threads_for(threads, m * rows.k_pad * s.n);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t n0 = task * kColumnTask, n1 = std::min(s.n, n0 + kColumnTask);
    for (int64_t r0 = 0; r0 < m; r0 += kMaxRows) {
      const int rows_now = static_cast<int>(std::min<int64_t>(kMaxRows, m - r0));
      (s.bits == 4 ? pick_sdot<4>(rows_now, units) : pick_sdot<8>(rows_now, units))(s, w, rows, act, r0, n0, n1, y);
    }
  }
}

#undef EDGEMM_DOTPROD

#endif  // __aarch64__

}  // namespace

Int8Path matmul_nbits_int8_path(MatMulNBitsVariant variant, const MatMulNBitsShape& shape) {
  const bool fast_layout = shape.bits == 8 || shape.block_size >= 32;  // 16 code bytes within one block
#if defined(__x86_64__)
  if (!fast_layout || !matmul_nbits_available(variant)) return Int8Path::kReference;
  if (variant == MatMulNBitsVariant::kAvx512 && cpu_features().avx512bw && cpu_features().avx512_vnni) {
    return Int8Path::kAvx512Vnni;
  }
  if (variant == MatMulNBitsVariant::kAvx512 || variant == MatMulNBitsVariant::kAvx2) return Int8Path::kAvx2;
#elif defined(__aarch64__)
  if (fast_layout && variant == MatMulNBitsVariant::kNeon && matmul_nbits_available(variant) &&
      cpu_features().asimddp) {
    return Int8Path::kNeonDot;
  }
#else
  (void)variant;
  (void)fast_layout;
#endif
  return Int8Path::kReference;
}

EDGEMM_AVX512_CLONES bool quantize_row_int8(const float* a, int64_t k, int64_t block_size, int8_t* q, float* scales,
                                            int32_t* sums) {
  constexpr float kRound = 12582912.f;  // 1.5 · 2^23: adding it rounds to an integer, ties to even
  const int64_t kb = (k + block_size - 1) / block_size;
  for (int64_t j = 0; j < kb; ++j) {
    const int64_t k0 = j * block_size, valid = std::min(block_size, k - k0);
    // max |a| on the bit patterns (integer order is float order for |a|; NaN and infinities
    // have the largest patterns), so that the loop vectorizes.
    uint32_t amax_bits = 0;
    for (int64_t i = 0; i < valid; ++i)
      amax_bits = std::max(amax_bits, std::bit_cast<uint32_t>(a[k0 + i]) & 0x7FFFFFFFu);
    if (amax_bits >= 0x7F800000u) return false;
    const float amax = std::bit_cast<float>(amax_bits);
    const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < block_size; ++i) {
      const float scaled = i < valid ? a[k0 + i] * inverse : 0.0f;
      const auto code = static_cast<int32_t>((scaled + kRound) - kRound);
      q[k0 + i] = static_cast<int8_t>(std::clamp(code, -127, 127));
      sum += q[k0 + i];
    }
    scales[j] = amax / 127.0f;
    sums[j] = sum;
  }
  return true;
}

void matmul_nbits_int8(MatMulNBitsVariant variant, const MatMulNBitsShape& shape, const MatMulNBitsWeights& w,
                       const float* a, int64_t m, float* y, int threads) {
  if (m <= 0 || shape.n <= 0) return;
  const QuantizedRows rows(shape, a, m);
  MatMulNBitsWeights no_bias = w;
  no_bias.bias = nullptr;
  const Int8Path path = matmul_nbits_int8_path(variant, shape);
#if defined(__x86_64__)
  if (path != Int8Path::kReference) {
    run_fast(path == Int8Path::kAvx512Vnni, shape, no_bias, rows, m, y, threads);
  } else {
    run_reference(shape, no_bias, rows, m, y, threads);
  }
#elif defined(__aarch64__)
  if (path == Int8Path::kNeonDot) {
    run_sdot(shape, no_bias, rows, m, y, threads);
  } else {
    run_reference(shape, no_bias, rows, m, y, threads);
  }
#else
  (void)path;
  run_reference(shape, no_bias, rows, m, y, threads);
#endif
  nbits::add_bias(w.bias, m, shape.n, y);
  // Rows with NaN or infinities: the float32 product (the reference formula of matmul_nbits).
  MatMulNBitsShape float_shape = shape;
  float_shape.accuracy_level = 0;
  for (int64_t r = 0; r < m; ++r) {
    if (!rows.finite[r]) {
      matmul_nbits(MatMulNBitsVariant::kReference, float_shape, w, a + r * shape.k, 1, y + r * shape.n, threads);
    }
  }
}

}  // namespace edgemm::kernels
