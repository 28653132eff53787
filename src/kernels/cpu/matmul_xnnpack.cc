/// \file matmul_xnnpack.cc
/// MatMul on XNNPACK's fully_connected_nc_f32: the operator's life cycle.

#include "kernels/cpu/matmul_xnnpack.h"

#include <limits>
#include <string>

#if defined(__aarch64__)

namespace edgemm::kernels {

XnnpackFullyConnected::XnnpackFullyConnected(const float* b, int64_t k, int64_t n, const float* bias) {
  const auto uk = static_cast<size_t>(k), un = static_cast<size_t>(n);
  // XNN_FLAG_TRANSPOSE_WEIGHTS: the kernel is [input_channels, output_channels], i.e. B [K, N].
  if (xnn_create_fully_connected_nc_f32(uk, un, uk, un, b, bias, -std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::infinity(), XNN_FLAG_TRANSPOSE_WEIGHTS,
                                        &op_) != xnn_status_success) {
    op_ = nullptr;
  }
}

XnnpackFullyConnected::~XnnpackFullyConnected() {
  if (op_ != nullptr) xnn_delete_operator(op_);
}

Status XnnpackFullyConnected::run(const ir::Node& node, const float* a, int64_t rows, float* y, int threads) const {
  std::lock_guard<std::mutex> lock(mutex_);
  pthreadpool_t pool = xnnpack::threadpool(threads);
  xnn_status status = xnn_setup_fully_connected_nc_f32(op_, static_cast<size_t>(rows), a, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  if (status != xnn_status_success) {
    return ir::node_error(node, StatusCode::kInternal,
                          std::string("XNNPACK fully connected failed: ") + xnnpack::status_name(status));
  }
  return Status::ok();
}

namespace {

// Offset of the matrix of `operand` (shape [batch..., rows, cols]) that output batch index `flat`
// (over `batch`, numpy broadcasting) reads.
int64_t matrix_offset(const Shape& operand, const Shape& batch, int64_t flat) {
  const size_t rank = operand.size() - 2, out_rank = batch.size();
  const int64_t matrix = operand[rank] * operand[rank + 1];
  int64_t offset = 0, stride = matrix;
  for (size_t i = 0; i < out_rank; ++i) {
    const size_t axis = out_rank - 1 - i;
    const int64_t index = flat % batch[axis];
    flat /= batch[axis];
    if (i < rank) {
      const int64_t extent = operand[rank - 1 - i];
      if (extent != 1) offset += index * stride;
      stride *= extent;
    }
  }
  return offset;
}

}  // namespace

Status xnnpack_matmul(const ir::Node& node, const MatMulShape& s, const float* a, const float* b, float* y,
                      int threads) {
  int64_t batches = 1;
  for (int64_t d : s.batch) batches *= d;
  pthreadpool_t pool = xnnpack::threadpool(threads);
  const auto k = static_cast<size_t>(s.k), n = static_cast<size_t>(s.n);
  for (int64_t i = 0; i < batches; ++i) {
    xnn_operator_t op = nullptr;
    xnn_status status = xnn_create_fully_connected_nc_f32(
        k, n, k, n, b + matrix_offset(s.b, s.batch, i), nullptr, -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::infinity(), XNN_FLAG_TRANSPOSE_WEIGHTS, &op);
    if (status == xnn_status_success) {
      status = xnn_setup_fully_connected_nc_f32(op, static_cast<size_t>(s.m), a + matrix_offset(s.a, s.batch, i),
                                                y + i * s.m * s.n, pool);
    }
    if (status == xnn_status_success) status = xnn_run_operator(op, pool);
    if (op != nullptr) xnn_delete_operator(op);
    if (status != xnn_status_success) {
      return ir::node_error(node, StatusCode::kInternal,
                            std::string("XNNPACK fully connected failed: ") + xnnpack::status_name(status));
    }
  }
  return Status::ok();
}

}  // namespace edgemm::kernels

#endif
