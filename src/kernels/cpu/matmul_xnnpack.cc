/// \file matmul_xnnpack.cc
/// MatMul on XNNPACK's fully_connected_nc_f32: the operator's life cycle.

#include "kernels/cpu/matmul_xnnpack.h"

#include <limits>
#include <vector>

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

Status xnnpack_matmul(const ir::Node& node, const MatMulShape& s, const float* a, const float* b, float* y,
                      int threads) {
  // Batch-matrix strides of A and B read as broadcast to the output's batch axes.
  const std::vector<int64_t> sa = broadcast_strides(Shape(s.a.begin(), s.a.end() - 2), s.batch);
  const std::vector<int64_t> sb = broadcast_strides(Shape(s.b.begin(), s.b.end() - 2), s.batch);
  int64_t batches = 1;
  for (int64_t d : s.batch) batches *= d;
  pthreadpool_t pool = xnnpack::threadpool(threads);
  const auto k = static_cast<size_t>(s.k), n = static_cast<size_t>(s.n);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, a_matrix = 0, b_matrix = 0;
    for (int64_t d = static_cast<int64_t>(s.batch.size()) - 1; d >= 0; --d) {
      a_matrix += rem % s.batch[d] * sa[d];
      b_matrix += rem % s.batch[d] * sb[d];
      rem /= s.batch[d];
    }
    xnn_operator_t op = nullptr;
    xnn_status status = xnn_create_fully_connected_nc_f32(
        k, n, k, n, b + b_matrix * s.k * s.n, nullptr, -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::infinity(), XNN_FLAG_TRANSPOSE_WEIGHTS, &op);
    if (status == xnn_status_success) {
      status = xnn_setup_fully_connected_nc_f32(op, static_cast<size_t>(s.m), a + a_matrix * s.m * s.k,
                                                y + i * s.m * s.n, pool);
    }
    if (status == xnn_status_success) status = xnn_run_operator(op, pool);
    if (op != nullptr) xnn_delete_operator(op);
    EDGEMM_RETURN_IF_ERROR(xnnpack::check(node, status, "fully connected"));
  }
  return Status::ok();
}

}  // namespace edgemm::kernels

#endif
