#pragma once
/// \file matmul_nbits_avx512.h
/// The AVX-512 float32 product of MatMulNBits (matmul_nbits.h) for 4-bit codes in blocks of a
/// multiple of 32: what matmul_nbits() runs for MatMulNBitsVariant::kAvx512 when A stays float32.

#include <cstdint>

#include "kernels/cpu/matmul_nbits.h"

namespace edgemm::kernels {

/// Whether matmul_nbits_f32_avx512() computes `shape`: 4 bits, block_size a multiple of 32.
/// (The CPU must also have AVX-512F and FMA: matmul_nbits_available(kAvx512).)
bool matmul_nbits_f32_avx512_supported(const MatMulNBitsShape& shape);

/// y[m, n] = sum_k a[m, k] * weight(n, k) (+ bias[n]) in float32 (layouts of matmul_nbits.h;
/// a is [m, K], y [m, N], row-major), each weight dequantized exactly as (q - zero_point) *
/// scale. Up to kAvx512GemvMaxRows rows: register tiles of up to 4 rows x 4-8 columns over B's
/// own layout, the 16 weights of a block in one register looked up 32 codes at a time, each code
/// decoded once per 4 rows. More rows: panels of 32 columns dequantized into a per-thread float32 buffer
/// ([K, 32], L2-resident) and multiplied by matmul_panels.h's register tiles. Parallel over N on
/// up to `threads` OpenMP threads; per-thread workspaces (onednn::thread_buffer slots kSrc, kDst,
/// kWeights). Needs matmul_nbits_available(kAvx512) and matmul_nbits_f32_avx512_supported(shape).
void matmul_nbits_f32_avx512(const MatMulNBitsShape& shape, const MatMulNBitsWeights& w, const float* a, int64_t m,
                             float* y, int threads);

/// Rows up to which matmul_nbits_f32_avx512() uses its register tiles (above: float32 panels).
inline constexpr int64_t kAvx512GemvMaxRows = 16;

}  // namespace edgemm::kernels
