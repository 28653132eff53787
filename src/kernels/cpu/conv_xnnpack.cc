/// \file conv_xnnpack.cc
/// Conv and ConvTranspose on XNNPACK's convolution2d_nhwc_f32 / deconvolution2d_nhwc_f32: weight
/// repacking, the operator's life cycle.

#include "kernels/cpu/conv_xnnpack.h"

#include <limits>

#if defined(__aarch64__)

namespace edgemm::kernels {

bool XnnpackConv::applies(const Shape& w_shape) { return w_shape.size() == 4; }

XnnpackConv::XnnpackConv(const float* w, const Shape& w_shape, const float* bias, bool fp16)
    : out_channels_(w_shape[0]), in_per_group_(w_shape[1]), kh_(w_shape[2]), kw_(w_shape[3]), fp16_(fp16) {
  // ONNX [M, C/g, kh, kw] -> XNNPACK [M, kh, kw, C/g] (the group axis leads M in both).
  const int64_t taps = kh_ * kw_;
  weights_.resize(static_cast<size_t>(out_channels_ * in_per_group_ * taps));
  for (int64_t m = 0; m < out_channels_; ++m) {
    for (int64_t c = 0; c < in_per_group_; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        weights_[(m * taps + t) * in_per_group_ + c] = w[(m * in_per_group_ + c) * taps + t];
      }
    }
  }
  if (bias != nullptr) bias_.assign(bias, bias + out_channels_);
}

XnnpackConv::XnnpackConv(const float* w, const Shape& w_shape, const float* bias, int64_t group)
    : out_channels_(w_shape[1] * group),
      in_per_group_(w_shape[0] / group),
      kh_(w_shape[2]),
      kw_(w_shape[3]),
      fp16_(false),
      transpose_(true) {
  // ONNX [C, M/g, kh, kw] (C = g · C/g) -> XNNPACK [g, M/g, kh, kw, C/g].
  const int64_t taps = kh_ * kw_, out_per_group = w_shape[1];
  weights_.resize(static_cast<size_t>(out_channels_ * in_per_group_ * taps));
  for (int64_t gi = 0; gi < group; ++gi) {
    for (int64_t o = 0; o < out_per_group; ++o) {
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t c = 0; c < in_per_group_; ++c) {
          weights_[((gi * out_per_group + o) * taps + t) * in_per_group_ + c] =
              w[((gi * in_per_group_ + c) * out_per_group + o) * taps + t];
        }
      }
    }
  }
  if (bias != nullptr) bias_.assign(bias, bias + out_channels_);
}

int64_t XnnpackConv::adjustment(const ConvGeometry& g, int axis) const {
  const int64_t eff = (g.kernel[axis] - 1) * g.dilations[axis] + 1;
  return g.out_spatial[axis] -
         (g.strides[axis] * (g.in_spatial[axis] - 1) + eff - g.pad_begin[axis] - g.pad_end[axis]);
}

bool XnnpackConv::fits(const ConvGeometry& g) const {
  if (!transpose_) return true;
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t adjust = adjustment(g, axis);
    if (g.pad_begin[axis] < 0 || g.pad_end[axis] < 0 || adjust < 0 || adjust >= g.strides[axis]) return false;
  }
  return g.in_channels / g.group == in_per_group_;
}

int64_t XnnpackConv::packed_bytes() const {
  const int64_t own = static_cast<int64_t>((weights_.size() + bias_.size()) * sizeof(float));
  std::lock_guard<std::mutex> lock(mutex_);
  return own + (op_ != nullptr ? static_cast<int64_t>(weights_.size()) * (fp16_ ? 2 : 4) : 0);
}

XnnpackConv::~XnnpackConv() {
  if (op_ != nullptr) xnn_delete_operator(op_);
}

Status XnnpackConv::prepare(const ir::Node& node, const ConvGeometry& g) const {
  std::vector<int64_t> key = {g.group};
  for (const auto* v : {&g.strides, &g.dilations, &g.pad_begin, &g.pad_end})
    key.insert(key.end(), v->begin(), v->end());
  if (op_ != nullptr && key == op_key_) return Status::ok();
  for (size_t i = 0; i < 2; ++i) {
    if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) {
      return ir::node_error(node, StatusCode::kUnsupported, "XNNPACK convolution with negative pads");
    }
  }
  if (op_ != nullptr) {
    xnn_delete_operator(op_);
    op_ = nullptr;
  }
  const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  const size_t out_per_group = static_cast<size_t>(out_channels_ / g.group);
  const float inf = std::numeric_limits<float>::infinity();
  const float* bias = bias_.empty() ? nullptr : bias_.data();
  const uint32_t top = u32(g.pad_begin[0]), right = u32(g.pad_end[1]), bottom = u32(g.pad_end[0]),
                 left = u32(g.pad_begin[1]), sh = u32(g.strides[0]), sw = u32(g.strides[1]),
                 dh = u32(g.dilations[0]), dw = u32(g.dilations[1]), groups = u32(g.group);
  const auto in_per_group = static_cast<size_t>(in_per_group_), in_stride = static_cast<size_t>(g.in_channels),
             out_stride = static_cast<size_t>(out_channels_);
  xnn_status status;
  if (transpose_) {
    // Deconvolution's "output padding" is ONNX ConvTranspose's pads (what is cropped).
    status = xnn_create_deconvolution2d_nhwc_f32(top, right, bottom, left, u32(kh_), u32(kw_), sh, sw, dh, dw, groups,
                                                 in_per_group, out_per_group, in_stride, out_stride, weights_.data(),
                                                 bias, -inf, inf, 0, &op_);
  } else if (fp16_) {
    // The half-precision operator takes float32 weights and rounds them (XNN_FLAG_FP32_STATIC_WEIGHTS).
    status = xnn_create_convolution2d_nhwc_f16(top, right, bottom, left, u32(kh_), u32(kw_), sh, sw, dh, dw, groups,
                                               in_per_group, out_per_group, in_stride, out_stride, weights_.data(),
                                               bias, -inf, inf, XNN_FLAG_FP32_STATIC_WEIGHTS, &op_);
  } else {
    status = xnn_create_convolution2d_nhwc_f32(top, right, bottom, left, u32(kh_), u32(kw_), sh, sw, dh, dw, groups,
                                               in_per_group, out_per_group, in_stride, out_stride, weights_.data(),
                                               bias, -inf, inf, 0, &op_);
  }
  if (status != xnn_status_success) op_ = nullptr;
  EDGEMM_RETURN_IF_ERROR(xnnpack::check(node, status, transpose_ ? "deconvolution" : "convolution"));
  op_key_ = std::move(key);
  return Status::ok();
}

Status XnnpackConv::run(const ir::Node& node, const ConvGeometry& g, const float* x, float* y, int threads) const {
  std::lock_guard<std::mutex> lock(mutex_);
  EDGEMM_RETURN_IF_ERROR(prepare(node, g));
  pthreadpool_t pool = xnnpack::threadpool(threads);
  const auto n = static_cast<size_t>(g.batch), h = static_cast<size_t>(g.in_spatial[0]),
             w = static_cast<size_t>(g.in_spatial[1]);
  if (transpose_) {
    xnn_status status = xnn_setup_deconvolution2d_nhwc_f32(op_, n, h, w, static_cast<uint32_t>(adjustment(g, 0)),
                                                           static_cast<uint32_t>(adjustment(g, 1)), x, y, pool);
    if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
    return xnnpack::check(node, status, "deconvolution");
  }
  if (!fp16_) {
    xnn_status status = xnn_setup_convolution2d_nhwc_f32(op_, n, h, w, x, y, pool);
    if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
    return xnnpack::check(node, status, "convolution");
  }
  const int64_t x_count = g.batch * g.in_spatial[0] * g.in_spatial[1] * g.in_channels;
  const int64_t y_count = g.batch * g.out_spatial[0] * g.out_spatial[1] * out_channels_;
  uint16_t* x_half = xnnpack::half_buffer(0, x_count);
  uint16_t* y_half = xnnpack::half_buffer(1, y_count);
  xnnpack::to_half(x, x_half, x_count);
  xnn_status status = xnn_setup_convolution2d_nhwc_f16(op_, n, h, w, x_half, y_half, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  EDGEMM_RETURN_IF_ERROR(xnnpack::check(node, status, "convolution"));
  xnnpack::from_half(y_half, y, y_count);
  return Status::ok();
}

}  // namespace edgemm::kernels

#endif
