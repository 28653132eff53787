#pragma once
/// \file matmul_nbits_int8_steps.h
/// The end of a column that does not fill a whole 256-byte chunk in matmul_nbits_int8.cc's
/// AVX-512 VNNI path (4-bit codes, blocks of a multiple of 32: K = 576 is one chunk and 32
/// bytes), read 64 code bytes (128 K indices, one cache line) a step instead of being copied into
/// a zero-padded chunk.
///
/// Dword lane l of a step holds the codes of the step's K indices 8l .. 8l + 7, the even ones in
/// the low nibbles and the odd ones in the high nibbles. A's quantized rows are reordered once
/// per call to match (per step, the even then the odd codes of each lane), so two VPDPBUSD leave
/// in lane l the dot product of its 8 codes; lane l then takes (dot − zero_point · Σ q_a) ·
/// scale_w · scale_a with its block's values (4, 2 or 1 block a step), the integer part exact as
/// in the chunks. B's scales are gathered by one permute from their contiguous row, the packed
/// zero points by a variable shift of one broadcast word; a partial last step is read with a
/// masked load. The lanes are added to the chunks' accumulators: only the sum of all lanes counts.

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/matmul_nbits_int8.h"

#if defined(__x86_64__)
// GCC 12 reports false -Wmaybe-uninitialized inside the AVX-512 intrinsics that start from
// _mm512_undefined_*() (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace edgemm::kernels::int8_steps {

inline constexpr int64_t kStepBytes = 64;              ///< code bytes of a column per step
inline constexpr int64_t kStepCodes = 2 * kStepBytes;  ///< K indices per step

/// A's quantized rows arranged for the steps from code byte `first_byte` (a multiple of
/// kStepBytes) of a column to its end: per row and step, the 64 even-index codes (lane l, byte b:
/// the step's K index 8l + 2b), the 64 odd ones, the 16 lanes' scale_a and their code sums.
/// Views of the calling thread's kDst workspace.
struct StepRows {
  StepRows(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t m, int64_t first_byte);

  const int8_t* codes(int64_t r, int64_t step) const { return act + at(r, step) * 2 * kStepBytes; }
  const float* scales(int64_t r, int64_t step) const { return lane_floats + at(r, step) * 32; }
  const float* sums(int64_t r, int64_t step) const { return scales(r, step) + 16; }

  int64_t first_step;  ///< the first step arranged (byte first_byte / kStepBytes of a column)
  int64_t steps;       ///< steps arranged per row, to the column's end

 private:
  int64_t at(int64_t r, int64_t step) const { return r * steps + step - first_step; }
  void arrange_row(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t r);

  int8_t* act;
  float* lane_floats;
};

/// What the steps of every column share.
struct StepJob {
  StepJob(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const StepRows& rows);

  const MatMulNBitsWeights& w;
  const StepRows& rows;
  int64_t kb, col_bytes, zp_row;
  int block_shift;         ///< log2(block_size)
  int64_t step_blocks;     ///< blocks a whole step touches: 4, 2 or 1
  int64_t whole_end;       ///< steps [rows.first_step, whole_end) hold 64 code bytes
  __mmask64 tail_bytes;    ///< bytes of the partial last step (0 when there is none)
  int32_t lane_block[16];  ///< each lane's block relative to its step's first block
  /// Right shifts that bring each lane's zero point nibble down from the step's first zero point
  /// byte: [0] when its first block is even (low nibble), [1] when odd.
  int32_t zp_shift[2][16];
};

#define EDGEMM_VNNI_STEPS __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

/// Each lane's block value from a float array of a column (its scales), blocks [first, first +
/// count) read, zeros past `count`: lane l gets block first + index[l]. The chunks of
/// matmul_nbits_int8.cc gather their lanes' values the same way.
EDGEMM_VNNI_STEPS inline __m512 lane_floats512(const float* col, int64_t first, int64_t count, __m512i index) {
  const __mmask16 mask = static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1);
  return _mm512_permutexvar_ps(index, _mm512_maskz_loadu_ps(mask, col + first));
}

/// Zero points of a step's lanes (blocks [first, first + count)) of a column whose packed zero
/// points start at `zp`, as floats.
template <bool kPacked>
EDGEMM_VNNI_STEPS inline __m512 lane_zero_points(const StepJob& job, const uint8_t* zp, int64_t first, int64_t count) {
  if constexpr (!kPacked) return _mm512_set1_ps(8.0f);
  const int64_t bytes = ((first & 1) + count + 1) / 2;  // 1 or 2
  const __m128i word = _mm_maskz_loadu_epi8(static_cast<__mmask16>((1u << bytes) - 1), zp + first / 2);
  const __m512i shift = _mm512_loadu_si512(job.zp_shift[first & 1]);
  const __m512i nibbles = _mm512_srlv_epi32(_mm512_broadcastd_epi32(word), shift);
  return _mm512_cvtepi32_ps(_mm512_and_si512(nibbles, _mm512_set1_epi32(15)));
}

/// Step s of column `col` for rows [r0, r0 + MR), added to acc: codes loaded whole, or masked
/// (kTail).
template <bool kPacked, bool kTail, int MR>
EDGEMM_VNNI_STEPS inline void step(const StepJob& job, int64_t col, int64_t r0, int64_t s, __m512 (&acc)[MR]) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const uint8_t* codes = job.w.b + col * job.col_bytes + s * kStepBytes;
  const int64_t first = (s * kStepCodes) >> job.block_shift;
  const int64_t count = kTail ? std::min<int64_t>(job.kb - first, job.step_blocks) : job.step_blocks;
  const __m512i bytes = kTail ? _mm512_maskz_loadu_epi8(job.tail_bytes, codes) : _mm512_loadu_si512(codes);
  const __m512i lo = _mm512_and_si512(bytes, nibble);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), nibble);
  const __m512 scale_w =
      lane_floats512(job.w.scales + col * job.kb, first, count, _mm512_loadu_si512(job.lane_block));
  const __m512 zero_point =
      lane_zero_points<kPacked>(job, kPacked ? job.w.zero_points + col * job.zp_row : nullptr, first, count);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int8_t* act = job.rows.codes(r0 + r, s);
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(act)),
                                            hi, _mm512_loadu_si512(act + kStepBytes));
    const __m512 exact =
        _mm512_fnmadd_ps(zero_point, _mm512_loadu_ps(job.rows.sums(r0 + r, s)), _mm512_cvtepi32_ps(dot));
    acc[r] = _mm512_fmadd_ps(exact, _mm512_mul_ps(scale_w, _mm512_loadu_ps(job.rows.scales(r0 + r, s))), acc[r]);
  }
}

/// All the arranged steps of column `col` for rows [r0, r0 + MR), added to acc.
template <int MR>
EDGEMM_VNNI_STEPS inline void add_steps(const StepJob& job, int64_t col, int64_t r0, __m512 (&acc)[MR]) {
  const int64_t end = job.rows.first_step + job.rows.steps;
  if (job.w.zero_points != nullptr) {
    for (int64_t s = job.rows.first_step; s < job.whole_end; ++s) step<true, false, MR>(job, col, r0, s, acc);
    if (job.whole_end < end) step<true, true, MR>(job, col, r0, job.whole_end, acc);
  } else {
    for (int64_t s = job.rows.first_step; s < job.whole_end; ++s) step<false, false, MR>(job, col, r0, s, acc);
    if (job.whole_end < end) step<false, true, MR>(job, col, r0, job.whole_end, acc);
  }
}

#undef EDGEMM_VNNI_STEPS

}  // namespace edgemm::kernels::int8_steps

#endif  // __x86_64__
