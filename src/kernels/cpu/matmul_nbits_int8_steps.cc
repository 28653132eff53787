/// \file matmul_nbits_int8_steps.cc
/// The arrangement of A's rows and the shared parameters for matmul_nbits_int8_steps.h.

#include "kernels/cpu/matmul_nbits_int8_steps.h"

#include <algorithm>

#include "kernels/cpu/onednn.h"

#if defined(__x86_64__)

namespace edgemm::kernels::int8_steps {

StepRows::StepRows(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t m, int64_t first_byte)
    : first_step(first_byte / kStepBytes),
      steps((s.k_blocks() * s.blob_size() + kStepBytes - 1) / kStepBytes - first_byte / kStepBytes) {
  const size_t act_bytes = static_cast<size_t>(m * steps * 2 * kStepBytes);
  const size_t floats = static_cast<size_t>(m * steps * 32);
  auto* base = static_cast<uint8_t*>(onednn::thread_buffer(onednn::Slot::kDst, act_bytes + floats * sizeof(float)));
  act = reinterpret_cast<int8_t*>(base);
  lane_floats = reinterpret_cast<float*>(base + act_bytes);
  for (int64_t r = 0; r < m; ++r) arrange_row(s, rows, r);
}

void StepRows::arrange_row(const MatMulNBitsShape& s, const QuantizedRows& rows, int64_t r) {
  if (!rows.finite[r]) {
    // Its codes were never written (the caller computes the row in float32): zeros.
    std::fill(act + at(r, first_step) * 2 * kStepBytes, act + at(r, first_step + steps) * 2 * kStepBytes, int8_t{0});
    std::fill(lane_floats + at(r, first_step) * 32, lane_floats + at(r, first_step + steps) * 32, 0.0f);
    return;
  }
  const int8_t* q = rows.q + r * rows.k_pad;
  for (int64_t step = first_step; step < first_step + steps; ++step) {
    int8_t* even = act + at(r, step) * 2 * kStepBytes;
    int8_t* odd = even + kStepBytes;
    float* lane_scales = lane_floats + at(r, step) * 32;
    float* lane_sums = lane_scales + 16;
    for (int64_t lane = 0; lane < 16; ++lane) {
      const int64_t k0 = step * kStepCodes + 8 * lane;
      int32_t sum = 0;
      for (int64_t b = 0; b < 4; ++b) {
        const int64_t k = k0 + 2 * b;
        even[4 * lane + b] = k < rows.k_pad ? q[k] : 0;
        odd[4 * lane + b] = k + 1 < rows.k_pad ? q[k + 1] : 0;
        sum += even[4 * lane + b] + odd[4 * lane + b];
      }
      lane_scales[lane] = k0 < rows.k_pad ? rows.scales[r * rows.kb + k0 / s.block_size] : 0.0f;
      lane_sums[lane] = static_cast<float>(sum);
    }
  }
}

StepJob::StepJob(const MatMulNBitsShape& s, const MatMulNBitsWeights& w, const StepRows& rows)
    : w(w),
      rows(rows),
      kb(s.k_blocks()),
      col_bytes(s.k_blocks() * s.blob_size()),
      zp_row(s.zero_point_row_bytes()),
      block_shift(__builtin_ctzll(static_cast<unsigned long long>(s.block_size))),
      step_blocks(std::max<int64_t>(1, kStepCodes / s.block_size)),
      whole_end(col_bytes / kStepBytes),
      tail_bytes(col_bytes % kStepBytes == 0 ? __mmask64{0}
                                             : static_cast<__mmask64>((uint64_t{1} << (col_bytes % kStepBytes)) - 1)),
      lane_block{},
      zp_shift{} {
  for (int lane = 0; lane < 16; ++lane) {
    lane_block[lane] = static_cast<int32_t>(8 * lane / s.block_size);
    zp_shift[0][lane] = 4 * lane_block[lane];
    zp_shift[1][lane] = 4 * (lane_block[lane] + 1);
  }
}

}  // namespace edgemm::kernels::int8_steps

#endif  // __x86_64__
