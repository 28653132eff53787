#pragma once
/// \file matmul_nbits_int8.h
/// MatMulNBits with accuracy_level 4 (ONNX Runtime docs/ContribOperators.md: "4 (int8)", the
/// minimum accuracy of input A): A quantized to int8 per block of K, integer dot products with
/// the codes, as ONNX Runtime's CompInt8 kernels compute it. Called by matmul_nbits()
/// (matmul_nbits.h) when MatMulNBitsShape::int8_activations() holds.

#include <cstdint>

#include "kernels/cpu/matmul_nbits.h"

namespace edgemm::kernels {

/// Quantizes one row of A (`k` float32 values) to int8 per block of `block_size` as ONNX
/// Runtime 1.30 does (checked against it to 9e-7 relative): scale = max|a| / 127, code =
/// round-half-even(a · (127 / max|a|)) (0 for an all-zero block), zero past `k` up to whole
/// blocks. Writes `q` [k_blocks · block_size], `scales` [k_blocks] and the code sums `sums`
/// [k_blocks]. Returns false, leaving the outputs unspecified, when the row holds a NaN or an
/// infinity (their products cannot be formed from int8 codes; the caller computes such rows in
/// float32).
bool quantize_row_int8(const float* a, int64_t k, int64_t block_size, int8_t* q, float* scales, int32_t* sums);

/// Rows of A quantized per block (K order, quantize_row_int8()), with per-block scales and code
/// sums; finite[r] is false for a row that holds NaN or an infinity (its codes are then
/// unspecified). Views of a per-thread workspace (slot kExtra of the calling thread), valid
/// until that slot is requested again on the thread.
struct QuantizedRows {
  QuantizedRows(const MatMulNBitsShape& s, const float* a, int64_t m);
  int64_t kb, k_pad;  ///< blocks per row; k_blocks · block_size
  int8_t* q;          ///< [m, k_pad], zero past K
  float* scales;      ///< [m, kb]
  int32_t* sums;      ///< [m, kb]
  uint8_t* finite;    ///< [m]
};

/// The code paths of matmul_nbits_int8().
enum class Int8Path { kReference, kAvx2, kAvx512Vnni, kNeonDot };

/// The path matmul_nbits_int8() takes for `variant` and `shape` on this CPU: kAvx512Vnni for
/// kAvx512 with AVX-512 BW and VNNI, kAvx2 for kAvx2 (and kAvx512 without VNNI), kNeonDot for kNeon
/// on an Arm CPU with the dot-product instructions (asimddp), kReference for the other variants
/// and for 4-bit codes in blocks of 16.
Int8Path matmul_nbits_int8_path(MatMulNBitsVariant variant, const MatMulNBitsShape& shape);

/// y = quantized A × dequantize(B)^T (+ bias) for `m` rows (layouts of matmul_nbits.h; uint8
/// or default zero points: `w.float_zero_points` must be null, matmul_nbits() computes float
/// zero points in float32 as ONNX Runtime 1.30 does): per
/// block, (Σ q_a · q_w − zero_point · Σ q_a) · scale_a · scale_w, the integer part exact, summed
/// over the blocks in float32. Rows with NaN or infinities are computed in float32 instead
/// (NaN and infinities then propagate as in the float product; ONNX Runtime's CompInt8 gives
/// finite values or NaN for them). Variants: kReference evaluates the formula block by block;
/// kAvx512 (with AVX-512 BW and VNNI) and kAvx2 run VPDPBUSD / VPMADDUBSW dot products with 16 /
/// 8 blocks of one column in the lanes of a register, codes read in B's own layout (AVX-512 with
/// 4-bit codes: a column's end short of a whole register chunk in 64-byte steps); kNeon (with
/// dot product) runs SDOT per block of one column, up to 4 rows at a time; 4-bit codes
/// with block_size 16, and the other variants, take the reference path. Parallel over N on
/// `threads` OpenMP threads. Thread-safe.
void matmul_nbits_int8(MatMulNBitsVariant variant, const MatMulNBitsShape& shape, const MatMulNBitsWeights& w,
                       const float* a, int64_t m, float* y, int threads);

}  // namespace edgemm::kernels
