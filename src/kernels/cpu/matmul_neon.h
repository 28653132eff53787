#pragma once
/// \file matmul_neon.h
/// float32 MatMul with a B computed at run time (attention's Q·Kᵀ and scores·V) or batched, on
/// aarch64 NEON (`f32_matmul__neon`), where XNNPACK runs the constant-weight products
/// (matmul_xnnpack.h). This XNNPACK snapshot has no operator with dynamic weights: a fully
/// connected operator made per batch matrix and run costs more than the product at attention's
/// sizes (one head of a ViT is [tokens, 64] · [64, tokens]), so B is read in place, unpacked.
///
/// Register tile: 4 rows × 16 columns (16 float32x4 accumulators); each step loads 4 values of
/// each row of A and 4 rows of B and multiplies by lane (FMLA by element). K runs in blocks of
/// kNeonDepthBlock so the rows of B a tile reads stay in L1; columns past the last multiple of 4
/// come from a zero-padded copy made once per run. Sums in float32, in K order within a block.

#include <cstdint>

#include "kernels/cpu/matmul_reference.h"

namespace edgemm::kernels {

#if defined(__aarch64__)

/// K values per block: blocks after the first add to the output.
inline constexpr int64_t kNeonDepthBlock = 256;

/// y [batch..., M, N] = a [batch_a..., M, K] · b [batch_b..., K, N] for the shapes `s`
/// (matmul_shape(); batch axes broadcast; K may be 0, giving zeros), float32 row-major, on
/// `threads` OpenMP threads over batch matrices and blocks of rows.
void neon_matmul(const MatMulShape& s, const float* a, const float* b, float* y, int threads);

#endif

}  // namespace edgemm::kernels
