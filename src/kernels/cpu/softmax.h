#pragma once
/// \file softmax.h
/// Softmax pieces of softmax.cc for kernels that fuse it (attention.h).

#include <cstdint>

namespace edgemm::kernels {

/// y = Softmax(x) over one contiguous row of n float32 values (y may be x): exp(x - max) with
/// vector_math.h's exponential, sums in double; a row whose maximum is not finite (all -inf,
/// or +inf/NaN present) follows the plain definition element by element, as ONNX Softmax does.
void softmax_row(const float* x, float* y, int64_t n);

/// The numerators of a softmax down each of the 32 columns of s ([n][32] float32, row stride 32),
/// in place: s[t][j] = e^(s[t][j] - max over t of s[·][j]), and sums[j] = their sum, in float32;
/// the caller divides. A column whose maximum is not finite comes out NaN, as the plain
/// definition gives. Vectorized across the 32 columns.
void exp_columns32(float* s, int64_t n, float* sums);

}  // namespace edgemm::kernels
