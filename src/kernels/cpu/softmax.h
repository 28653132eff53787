#pragma once
/// \file softmax.h
/// The row softmax of softmax.cc, for kernels that fuse it (attention.h).

#include <cstdint>

namespace edgemm::kernels {

/// y = Softmax(x) over one contiguous row of n float32 values (y may be x): exp(x - max) with
/// vector_math.h's exponential, sums in double; a row whose maximum is not finite (all -inf,
/// or +inf/NaN present) follows the plain definition element by element, as ONNX Softmax does.
void softmax_row(const float* x, float* y, int64_t n);

}  // namespace edgemm::kernels
