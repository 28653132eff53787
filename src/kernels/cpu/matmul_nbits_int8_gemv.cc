/// \file matmul_nbits_int8_gemv.cc
/// The decode-sized MatMulNBits product with int8 activations (accuracy_level 4) on AVX-512
/// VNNI: up to kInt8GemvMaxRows rows, 4-bit codes, blocks of a multiple of 32
/// (matmul_nbits_int8.h).
///
/// A column's codes are read in B's own layout, 64 bytes (128 K indices, one cache line) a
/// step: dword lane l of a step holds the codes of K indices 8l .. 8l + 7 of the step, the even
/// ones in the low nibbles and the odd ones in the high nibbles. A's quantized rows are
/// reordered once per call to match (per step, the even then the odd codes of each lane), so two
/// VPDPBUSD leave in lane l the dot product of its 8 codes. Lane l then takes
/// (dot − zero_point · Σ q_a) · scale_w · scale_a with its block's values (4, 2 or 1 block a
/// step): the integer part exact, as in the other paths; B's scales are gathered by one permute
/// from their contiguous row, the packed zero points by a variable shift of one broadcast word.
/// So a step costs per column a load, three integer operations and a permute (and four more
/// for packed zero points), and per row two VPDPBUSD and three float operations, with no
/// transposes; a partial last step is
/// read with a masked load.

#include <algorithm>

#include "kernels/cpu/matmul_nbits_int8.h"
#include "kernels/cpu/onednn.h"

#if defined(__x86_64__)
// GCC 12 reports false -Wmaybe-uninitialized inside the AVX-512 intrinsics that start from
// _mm512_undefined_*() (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace edgemm::kernels {

bool matmul_nbits_int8_takes_gemv(const MatMulNBitsShape& shape, int64_t m) {
  constexpr int64_t kChunkBytes = 256;  // matmul_nbits_int8.cc's chunk: 16 units of 16 code bytes
  return shape.bits == 4 && shape.block_size % 32 == 0 && m >= 1 && m <= kInt8GemvMaxRows &&
         shape.k_blocks() * shape.blob_size() % kChunkBytes != 0;
}

#if defined(__x86_64__)

// A namespace of its own: unity builds compile this file with matmul_nbits_int8.cc.
namespace int8_gemv {
namespace {

#define EDGEMM_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

constexpr int64_t kStepBytes = 64;              // code bytes of a column per step
constexpr int64_t kStepCodes = 2 * kStepBytes;  // K indices per step
constexpr int64_t kColumnTask = 16;             // columns per OpenMP scheduling unit

/// A's quantized rows in the order of a step's codes, with each lane's scale_a and code sum.
/// Views of the calling thread's kSrc workspace.
struct StepRows {
  StepRows(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t m)
      : steps((s.k_blocks() * s.blob_size() + kStepBytes - 1) / kStepBytes) {
    const size_t act_bytes = static_cast<size_t>(m * steps * 2 * kStepBytes);
    const size_t floats = static_cast<size_t>(m * steps * 2 * 16);
    auto* base = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kSrc, act_bytes + floats * sizeof(float)));
    act = reinterpret_cast<int8_t*>(base);
    lane_floats = reinterpret_cast<float*>(base + act_bytes);
    for (int64_t r = 0; r < m; ++r) arrange_row(s, rows, r);
  }

  const int8_t* step_codes(int64_t r, int64_t step) const { return act + (r * steps + step) * 2 * kStepBytes; }
  const float* step_scales(int64_t r, int64_t step) const { return lane_floats + (r * steps + step) * 32; }
  const float* step_sums(int64_t r, int64_t step) const { return step_scales(r, step) + 16; }

  int64_t steps;
  int8_t* act;         // [m][steps]: 64 even-index codes (lane l, byte b: K index 8l + 2b), 64 odd
  float* lane_floats;  // [m][steps]: 16 lanes' scale_a (of their block), 16 lanes' code sums

 private:
  void arrange_row(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t r) {
    const int8_t* q = rows.q + r * rows.k_pad;
    for (int64_t step = 0; step < steps; ++step) {
      int8_t* even = act + (r * steps + step) * 2 * kStepBytes;
      int8_t* odd = even + kStepBytes;
      float* scales = lane_floats + (r * steps + step) * 32;
      float* sums = scales + 16;
      for (int64_t lane = 0; lane < 16; ++lane) {
        const int64_t k0 = step * kStepCodes + 8 * lane;
        int32_t sum = 0;
        for (int64_t b = 0; b < 4; ++b) {
          const int64_t k = k0 + 2 * b;
          even[4 * lane + b] = k < rows.k_pad ? q[k] : 0;
          odd[4 * lane + b] = k + 1 < rows.k_pad ? q[k + 1] : 0;
          sum += even[4 * lane + b] + odd[4 * lane + b];
        }
        scales[lane] = k0 < rows.k_pad ? rows.scales[r * rows.kb + k0 / s.block_size] : 0.0f;
        sums[lane] = static_cast<float>(sum);
      }
    }
  }
};

/// One call's inputs for the column tiles.
struct Job {
  const MatMulNBitsWeights& w;
  const StepRows& rows;
  int64_t n, kb, col_bytes, zp_row;
  int block_shift;         // log2(block_size)
  int64_t step_blocks;     // blocks a whole step touches: 4, 2 or 1
  int64_t full_steps;      // steps of 64 whole bytes
  __mmask64 tail_bytes;    // bytes of the partial last step (0 when there is none)
  int32_t lane_block[16];  // each lane's block relative to its step's first block
  // Right shifts that bring each lane's zero point nibble down, from the step's first zero
  // point byte: [0] when the first block is even (low nibble), [1] when odd.
  int32_t zp_shift[2][16];
};

// Zero points of a step's lanes (blocks [first, first + count)) of a column whose packed zero
// points start at `zp`, as floats.
template <bool kPacked>
EDGEMM_AVX512_VNNI inline __m512 lane_zero_points(const Job& job, const uint8_t* zp, int64_t first, int64_t count) {
  if constexpr (!kPacked) return _mm512_set1_ps(8.0f);
  const int64_t bytes = ((first & 1) + count + 1) / 2;  // 1 or 2
  const __m128i word = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << bytes) - 1), zp + first / 2);
  const __m512i shift = _mm512_loadu_si512(job.zp_shift[first & 1]);
  const __m512i nibbles = _mm512_srlv_epi32(_mm512_broadcastd_epi32(word), shift);
  return _mm512_cvtepi32_ps(_mm512_and_si512(nibbles, _mm512_set1_epi32(15)));
}

// Step s of one column (codes, scales and packed zero points from `codes`, `scales`, `zp`) for
// MR rows: codes loaded whole, or masked (kTail).
template <bool kPacked, bool kTail, int MR>
EDGEMM_AVX512_VNNI inline void step(const Job& job, const uint8_t* codes, const float* scales, const uint8_t* zp,
                                    int64_t s, __m512i index, __m512 (&acc)[MR]) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const int64_t first = (s * kStepCodes) >> job.block_shift;
  const int64_t count = kTail ? std::min<int64_t>(job.kb - first, job.step_blocks) : job.step_blocks;
  const __m512i bytes = kTail ? _mm512_maskz_loadu_epi8(job.tail_bytes, codes + s * kStepBytes)
                              : _mm512_loadu_si512(codes + s * kStepBytes);
  const __m512i lo = _mm512_and_si512(bytes, nibble);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
  const __m512 scale_w =
      _mm512_permutexvar_ps(index, _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), scales + first));
  const __m512 zero_point = lane_zero_points<kPacked>(job, zp, first, count);
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    const int8_t* act = job.rows.step_codes(r, s);
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(act)),
                                            hi, _mm512_loadu_si512(act + kStepBytes));
    const __m512 exact =
        _mm512_fnmadd_ps(zero_point, _mm512_loadu_ps(job.rows.step_sums(r, s)), _mm512_cvtepi32_ps(dot));
    acc[r] = _mm512_fmadd_ps(exact, _mm512_mul_ps(scale_w, _mm512_loadu_ps(job.rows.step_scales(r, s))), acc[r]);
  }
}

// The lane sums of v[0 .. 15], in order, by a tree of in-lane shuffles and adds (v is clobbered).
EDGEMM_AVX512_VNNI inline __m512 sum_lanes16(__m512 v[16]) {
  for (int j = 0; j < 8; ++j) {  // per 128-bit lane: [a0 + a2, b0 + b2, a1 + a3, b1 + b3]
    v[j] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * j], v[2 * j + 1]), _mm512_unpackhi_ps(v[2 * j], v[2 * j + 1]));
  }
  for (int j = 0; j < 4; ++j) {  // per 128-bit lane: that lane's sums of vectors 4j .. 4j + 3
    const __m512d c = _mm512_castps_pd(v[2 * j]), d = _mm512_castps_pd(v[2 * j + 1]);
    v[j] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(c, d)), _mm512_castpd_ps(_mm512_unpackhi_pd(c, d)));
  }
  for (int j = 0; j < 2; ++j) {  // 128-bit lanes 0 + 2 and 1 + 3 of vectors 8j .. 8j + 3, then 8j + 4 ..
    v[j] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0xEE));
  }
  return _mm512_add_ps(_mm512_shuffle_f32x4(v[0], v[1], 0x88), _mm512_shuffle_f32x4(v[0], v[1], 0xDD));
}

// Column `col` of MR rows into acc (zeroed first).
template <bool kPacked, int MR>
EDGEMM_AVX512_VNNI inline void column(const Job& job, int64_t col, __m512i index, __m512 (&acc)[MR]) {
  const uint8_t* codes = job.w.b + col * job.col_bytes;
  const float* scales = job.w.scales + col * job.kb;
  const uint8_t* zp = kPacked ? job.w.zero_points + col * job.zp_row : nullptr;
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t s = 0; s < job.full_steps; ++s) step<kPacked, false, MR>(job, codes, scales, zp, s, index, acc);
  if (job.tail_bytes != 0) step<kPacked, true, MR>(job, codes, scales, zp, job.full_steps, index, acc);
}

// Columns [n0, n1) of MR rows, one column after the other: each column's codes are one
// sequential read (interleaving several columns' reads halved the bandwidth from memory). One
// row sums 16 columns' lanes at a time.
template <bool kPacked, int MR>
EDGEMM_AVX512_VNNI void gemv_columns(const Job& job, int64_t n0, int64_t n1, float* y) {
  const __m512i index = _mm512_loadu_si512(job.lane_block);
  int64_t col = n0;
  if constexpr (MR == 1) {
    for (; col + 16 <= n1; col += 16) {
      __m512 sums[16];
      for (int c = 0; c < 16; ++c) {
        __m512 acc[1];
        column<kPacked, 1>(job, col + c, index, acc);
        sums[c] = acc[0];
      }
      _mm512_storeu_ps(y + col, sum_lanes16(sums));
    }
  }
  for (; col < n1; ++col) {
    __m512 acc[MR];
    column<kPacked, MR>(job, col, index, acc);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) y[r * job.n + col] = _mm512_reduce_add_ps(acc[r]);
  }
}

using ColumnsFn = void (*)(const Job&, int64_t, int64_t, float*);

template <bool kPacked>
constexpr ColumnsFn kColumns[kInt8GemvMaxRows] = {gemv_columns<kPacked, 1>, gemv_columns<kPacked, 2>,
                                                  gemv_columns<kPacked, 3>, gemv_columns<kPacked, 4>};

#undef EDGEMM_AVX512_VNNI

void run(const MatMulNBitsShape& shape, const MatMulNBitsWeights& w, const QuantizedRows& rows, int64_t m, float* y,
         int threads) {
  const StepRows steps(shape, rows, m);
  const int64_t col_bytes = shape.k_blocks() * shape.blob_size();
  const int64_t tail = col_bytes % kStepBytes;
  Job job{w,
          steps,
          shape.n,
          shape.k_blocks(),
          col_bytes,
          shape.zero_point_row_bytes(),
          __builtin_ctzll(static_cast<unsigned long long>(shape.block_size)),
          std::max<int64_t>(1, kStepCodes / shape.block_size),
          col_bytes / kStepBytes,
          tail == 0 ? __mmask64{0} : static_cast<__mmask64>((uint64_t{1} << tail) - 1),
          {},
          {}};
  for (int lane = 0; lane < 16; ++lane) {
    job.lane_block[lane] = static_cast<int32_t>(8 * lane / shape.block_size);
    job.zp_shift[0][lane] = 4 * job.lane_block[lane];
    job.zp_shift[1][lane] = 4 * (job.lane_block[lane] + 1);
  }
  const ColumnsFn fn = w.zero_points != nullptr ? kColumns<true>[m - 1] : kColumns<false>[m - 1];
  const int64_t tasks = (shape.n + kColumnTask - 1) / kColumnTask;
  const int t = nbits::threads_for(threads, m * col_bytes * shape.n);
#pragma omp parallel for num_threads(t) schedule(static)
  for (int64_t task = 0; task < tasks; ++task) {
    fn(job, task * kColumnTask, std::min(shape.n, (task + 1) * kColumnTask), y);
  }
}

}  // namespace
}  // namespace int8_gemv

void matmul_nbits_int8_gemv_avx512(const MatMulNBitsShape& shape, const MatMulNBitsWeights& w,
                                   const QuantizedRows& rows, int64_t m, float* y, int threads) {
  int8_gemv::run(shape, w, rows, m, y, threads);
}

#else

void matmul_nbits_int8_gemv_avx512(const MatMulNBitsShape&, const MatMulNBitsWeights&, const QuantizedRows&, int64_t,
                                   float*, int) {}

#endif

}  // namespace edgemm::kernels
