#pragma once
/// \file matmul_reference.h
/// numpy.matmul shapes and the plain MatMul loops (ONNX Operators.md "MatMul" 1/9/13), shared
/// by matmul.cc (MatMul, Gemm's reference path) and quant_matmul.cc (MatMulInteger,
/// QLinearMatMul), which run them on int32 operands with the zero points subtracted.

#include <cstdint>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::kernels {

/// Shapes of one numpy.matmul: a 1-D first operand [K] is read as [1, K] and a 1-D second
/// operand [K] as [K, 1]; the leading (batch) axes broadcast (numpy rules).
struct MatMulShape {
  Shape a, b;   ///< operands with 1-D operands promoted to 2-D: [..., M, K] and [..., K, N]
  Shape batch;  ///< broadcast batch axes
  Shape out;    ///< ONNX output shape (the axes added by the promotion removed)
  int64_t m = 0, k = 0, n = 0;
  bool b_is_matrix = false;  ///< every batch axis of B is 1: A's batch axes can fold into M
};

/// Resolves the shapes of node inputs 0 (`a`) and 1 (`b`). Errors (InvalidArgument, naming the
/// node and inputs): a scalar operand, mismatched inner dimensions, batch axes that do not
/// broadcast.
Expected<MatMulShape> matmul_shape(const ir::Node& node, const Shape& a, const Shape& b);

/// Plain loops: y[batch, i, j] = sum_k a[batch_a, i, k] * b[batch_b, k, j] over the promoted
/// shapes, y laid out as [batch..., M, N] (== s.out in memory). Accumulates floating types in
/// double and integers in 64 bits; the store converts to T (int32: modulo 2^32, the spec's
/// "accumulation may overflow if and only if in 32 bits"). Parallel over rows on `threads`.
/// Explicitly instantiated (for other files) for int32_t only; matmul.cc uses the others.
template <typename T>
void matmul_reference(const MatMulShape& s, const T* a, const T* b, T* y, int threads);

}  // namespace edgemm::kernels
