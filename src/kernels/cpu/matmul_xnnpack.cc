/// \file matmul_xnnpack.cc
/// MatMul on XNNPACK's fully_connected_nc_f32: the operator's life cycle.

#include "kernels/cpu/matmul_xnnpack.h"

#include <limits>

#include "kernels/cpu/common.h"

#if defined(__aarch64__)

namespace edgemm::kernels {

XnnpackFullyConnected::XnnpackFullyConnected(const float* b, int64_t k, int64_t n, const float* bias, bool fp16)
    : k_(k), n_(n), fp16_(fp16) {
  const auto uk = static_cast<size_t>(k), un = static_cast<size_t>(n);
  const float inf = std::numeric_limits<float>::infinity();
  // XNN_FLAG_TRANSPOSE_WEIGHTS: the kernel is [input_channels, output_channels], i.e. B [K, N];
  // XNN_FLAG_FP32_STATIC_WEIGHTS: the half-precision operator rounds float32 weights itself.
  const xnn_status status =
      fp16 ? xnn_create_fully_connected_nc_f16(uk, un, uk, un, b, bias, -inf, inf,
                                               XNN_FLAG_TRANSPOSE_WEIGHTS | XNN_FLAG_FP32_STATIC_WEIGHTS, &op_)
           : xnn_create_fully_connected_nc_f32(uk, un, uk, un, b, bias, -inf, inf, XNN_FLAG_TRANSPOSE_WEIGHTS, &op_);
  if (status != xnn_status_success) op_ = nullptr;
}

XnnpackFullyConnected::~XnnpackFullyConnected() {
  if (op_ != nullptr) xnn_delete_operator(op_);
}

Status XnnpackFullyConnected::run(const ir::Node& node, const float* a, int64_t rows, float* y, int threads) const {
  std::lock_guard<std::mutex> lock(mutex_);
  pthreadpool_t pool = xnnpack::threadpool(threads);
  if (!fp16_) {
    xnn_status status = xnn_setup_fully_connected_nc_f32(op_, static_cast<size_t>(rows), a, y, pool);
    if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
    return xnnpack::check(node, status, "fully connected");
  }
  uint16_t* a_half = xnnpack::half_buffer(0, rows * k_);
  uint16_t* y_half = xnnpack::half_buffer(1, rows * n_);
  xnnpack::to_half(a, a_half, rows * k_);
  xnn_status status = xnn_setup_fully_connected_nc_f16(op_, static_cast<size_t>(rows), a_half, y_half, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  EDGEMM_RETURN_IF_ERROR(xnnpack::check(node, status, "fully connected"));
  xnnpack::from_half(y_half, y, rows * n_);
  return Status::ok();
}

}  // namespace edgemm::kernels

#endif
