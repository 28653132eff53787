#pragma once
/// \file conv_reference.h
/// Shapes and plain reference kernels for the ONNX Conv and ConvTranspose operators (ONNX
/// Operators.md "Conv" versions 1/11 and "ConvTranspose" versions 1/11), shared by conv.cc
/// (which adds the oneDNN paths), pool.cc (auto_pad rules) and the unit tests, which compare
/// the oneDNN paths against these loops.
///
/// Layout: NCHW-style, [N, C, D1, ..., Dk] with 1 <= k <= 3 spatial axes. Conv weights are
/// [M, C/group, k1, ..., kk]; ConvTranspose weights are [C, M/group, k1, ..., kk].

#include <cstdint>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::kernels {

/// ONNX `auto_pad` values (Conv, ConvTranspose, pooling).
enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

/// Largest |value| accepted in kernel_shape, strides, dilations, pads and output sizes; larger
/// values (which could overflow the shape arithmetic) are refused as InvalidModel.
inline constexpr int64_t kMaxSpatialAttr = int64_t{1} << 31;

/// InvalidModel naming the node and attribute when a value exceeds kMaxSpatialAttr.
Status check_attr_bounds(const ir::Node& node, const char* name, const std::vector<int64_t>& values);

/// Reads `auto_pad` (default NOTSET); InvalidModel for unknown strings, naming the node.
Expected<AutoPad> parse_auto_pad(const ir::Node& node);

/// Attributes of Conv / ConvTranspose as written on the node (empty vectors = absent).
struct ConvAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  std::vector<int64_t> output_padding, output_shape;  ///< ConvTranspose only
  int64_t group = 1;
};

/// Parses the attributes; `transpose` also reads output_padding / output_shape.
/// Errors: InvalidModel for wrongly typed attributes, group < 1.
Expected<ConvAttrs> parse_conv_attrs(const ir::Node& node, bool transpose);

/// Everything a convolution kernel needs, resolved for one input shape.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;   ///< C of X
  int64_t out_channels = 0;  ///< M of Y
  int64_t group = 1;
  std::vector<int64_t> in_spatial, out_spatial, kernel, strides, dilations;
  std::vector<int64_t> pad_begin, pad_end;  ///< may be negative for ConvTranspose only
  int64_t spatial_rank() const { return static_cast<int64_t>(in_spatial.size()); }
  Shape output_shape() const;
  /// True for depthwise convolution: one input channel per group (group == C).
  bool depthwise() const { return group > 1 && group == in_channels; }
};

/// A ConvGeometry's spatial axes lifted to 3-D (leading axes of extent 1, stride 1, pad 0), so
/// that the reference loops for 1-D, 2-D and 3-D convolution and pooling are one loop nest.
struct Geometry3d {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int64_t in_size, out_size, k_size;  ///< products of in, out and k
};
Geometry3d to_3d(const ConvGeometry& g);

/// Output extent and pads of one spatial axis under ONNX `auto_pad` rules for Conv/pooling:
/// NOTSET uses `pads`, VALID none, SAME_UPPER/SAME_LOWER pad to ceil(in / stride) outputs with
/// the odd padding at the end / at the beginning. `ceil_mode` (pooling) rounds the NOTSET
/// output up, dropping a last window that would start in the end padding. Returns false when
/// the dilated kernel does not fit the padded input.
bool resolve_spatial_axis(AutoPad auto_pad, int64_t in, int64_t effective_kernel, int64_t stride,
                          int64_t pad_begin_attr, int64_t pad_end_attr, bool ceil_mode, int64_t* out,
                          int64_t* pad_begin, int64_t* pad_end);

/// Validates X / W / B shapes against the attributes and resolves the output geometry of a
/// Conv. Errors (InvalidArgument, naming the node and input): rank mismatch, channel mismatch
/// ("input 'X' has 3 channels, weight expects 4 (group 1)"), bias length, attribute lengths,
/// kernel larger than the padded input.
Expected<ConvGeometry> conv_geometry(const ir::Node& node, const ConvAttrs& attrs, const Shape& x, const Shape& w,
                                     const Shape* b);

/// Same for ConvTranspose: output = stride * (in - 1) + output_padding + dilated kernel - pads,
/// or `output_shape` with the total padding split per the spec (SAME_UPPER: begin = total / 2,
/// otherwise end = total / 2, floor division, as the ONNX test data computes it).
Expected<ConvGeometry> conv_transpose_geometry(const ir::Node& node, const ConvAttrs& attrs, const Shape& x,
                                               const Shape& w, const Shape* b);

/// Plain Conv: y[n, m, o] = b[m] + sum_{c in group(m), k} x[n, c, o*s - pad + k*d] * w[m, c, k].
/// `bias` may be null. T = float or double (double accumulation), or int32_t (int64
/// accumulation, stored modulo 2^32 as a 32-bit accumulator would wrap: ConvInteger and
/// QLinearConv, which pass operands with their zero points already subtracted, so padding
/// reads as the zero point). Parallel over (n, m) on `threads` OpenMP threads.
template <typename T>
void conv_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int threads);

/// Plain ConvTranspose (the adjoint of Conv, scattering each input into the output).
template <typename T>
void conv_transpose_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int threads);

}  // namespace edgemm::kernels
