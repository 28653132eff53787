#pragma once
/// \file conv_int8.h
/// com.edgemm Int8Conv: a Conv whose QDQ-wrapped inputs (ONNX QuantizeLinear → DequantizeLinear
/// on X, DequantizeLinear on constant int8 W) run as one integer convolution. The QDQ fusion
/// pass (passes::fuse_qdq) creates it; it computes what the QDQ graph computes:
///   Y = Conv(dq(q(X; x_scale, x_zero_point)), W_int8 · w_scales[m]) + B, then the epilogue.
///
/// Node: inputs X (float32, NCHW, or nChw8c / NHWC with src_layout, kernels/cpu/layout.h), W
/// (int8 constant, ONNX Conv layout [M, C/group, k...]), B (float32 [M] constant, optional),
/// then epilogue operands as in FusedConv. Attributes: Conv's (auto_pad, dilations, group,
/// kernel_shape, pads, strides), x_scale (float > 0), x_zero_point (int, 0..255: X is quantized
/// to uint8), w_scales (floats, M per-output-channel scales), and FusedConv's steps / src_layout
/// / dst_layout. Optional y_scale (float > 0) and y_zero_point (0..255), set by
/// passes::chain_int8 with dst_layout NHWC: Y is then uint8 NHWC, QuantizeLinear(Y, y_scale,
/// y_zero_point) of the finished output (after the epilogue). X may be uint8 NHWC (src_layout
/// NHWC): values already quantized with x_scale and x_zero_point, used as they are.
///
/// Paths: oneDNN 2.6 u8s8 convolution (src zero point, per-channel output scales, float32 NHWC
/// destination, reordered only when dst_layout is not NHWC, post-ops; a uint8 Y with the
/// quantization as a last linear post-op, or quantized by our loop when oneDNN cannot take the
/// epilogue), float X quantized to uint8 NHWC by our loops (kernels/cpu/int8_common.h); or the reference path, the
/// float convolution of the dequantized values (the QDQ graph's arithmetic), used when oneDNN is off, refuses the
/// shape, or would saturate: on x86 without AVX-512 VNNI, weights beyond [−64, 64] overflow vpmaddubsw's int16 pair
/// sums (oneDNN "Nuances of int8 Computations"); and when some x_scale · w_scale is not a normal float (a denormal
/// weight scale: B / scale overflows).

#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Factory of com.edgemm Int8Conv kernels. Errors: kInvalidModel for a W that is not a constant
/// int8 tensor of rank 3–5, a B that is not a float32 constant [M], or missing / inconsistent
/// x_scale, x_zero_point or w_scales (naming the node and attribute).
Expected<std::unique_ptr<Kernel>> make_int8_conv(const KernelInfo& info);

}  // namespace edgemm::kernels
