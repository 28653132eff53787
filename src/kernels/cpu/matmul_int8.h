#pragma once
/// \file matmul_int8.h
/// com.edgemm Int8MatMul: a MatMul whose QDQ-wrapped inputs (ONNX QuantizeLinear →
/// DequantizeLinear on A, DequantizeLinear on a constant int8 B) run as one integer matrix
/// product. passes::fuse_qdq creates it and passes::fuse_matmul_add gives it a bias; it computes
/// what the QDQ graph computes:
///   Y = MatMul(dq(q(A; x_scale, x_zero_point)), B_int8 · w_scales[n]) + bias[n].
///
/// Node: inputs A (float32 [..., K], numpy MatMul semantics against a 2-D B: Y is [..., N]),
/// B (int8 constant [K, N]), bias (float32 constant [N], optional). Attributes: x_scale (float
/// > 0), x_zero_point (int, 0..255: A is quantized to uint8), w_scales (floats, N per-column
/// scales).
///
/// Paths: oneDNN 2.6 u8s8 matmul (src zero point, per-column output scales, float32 destination),
/// A quantized to uint8 by our loop; or the reference path, the float product of the dequantized
/// values (the QDQ graph's arithmetic), used when oneDNN is off, has only a reference
/// implementation, or would saturate (weights beyond [−64, 64] without AVX-512 VNNI, as for
/// Int8Conv: conv_int8.h), or when some x_scale · w_scale is not a normal float.

#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Factory of com.edgemm Int8MatMul kernels. Errors: kInvalidModel for a B that is not a
/// constant 2-D int8 tensor, a bias that is not a float32 constant [N], or missing / inconsistent
/// x_scale, x_zero_point or w_scales (naming the node and attribute).
Expected<std::unique_ptr<Kernel>> make_int8_matmul(const KernelInfo& info);

}  // namespace edgemm::kernels
