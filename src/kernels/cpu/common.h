#pragma once
/// \file common.h
/// Small helpers shared by the CPU kernels: axis normalization, broadcasting (ONNX
/// "Broadcasting in ONNX", numpy rules), parallel loops on OpenMP, dtype dispatch.

#include <omp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Maps a possibly negative axis into [0, rank); error naming the node when out of range.
Expected<int64_t> normalize_axis(const ir::Node& node, int64_t axis, int64_t rank);

/// Numpy-style broadcast of two shapes; InvalidArgument naming the node when incompatible.
Expected<Shape> broadcast_shapes(const ir::Node& node, const Shape& a, const Shape& b);

/// Row-major strides of `shape` in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// Strides for reading a tensor of shape `in` as if broadcast to `out` (0 on broadcast axes).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

/// Runs fn(begin, end) over [0, n) split across `threads` OpenMP threads; runs inline when
/// the work is small (n * cost_per_item < 128k) or threads == 1.
template <typename Fn>
void parallel_for(int threads, int64_t n, int64_t cost_per_item, Fn&& fn) {
  if (n <= 0) return;
  int64_t work = n * (cost_per_item > 0 ? cost_per_item : 1);
  int t = threads;
  if (work < 131072 || t <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  if (t > n) t = static_cast<int>(n);
#pragma omp parallel num_threads(t)
  {
    int id = omp_get_thread_num();
    int count = omp_get_num_threads();
    int64_t chunk = (n + count - 1) / count;
    int64_t begin = id * chunk;
    int64_t end = begin + chunk < n ? begin + chunk : n;
    if (begin < end) fn(begin, end);
  }
}

/// Name of an ONNX TensorProto data type that edgemm's Tensor cannot hold (complex, float8,
/// 4-bit integers, float4), for errors about attributes such as Cast's `to`; nullptr for others.
const char* onnx_only_type_name(int64_t onnx_type);

/// Error for a dtype a kernel does not implement: "<Op> '<name>': input 'x' has dtype
/// int8, which this op does not support here".
Status unsupported_dtype(const ir::Node& node, int input_index, DataType dtype);

/// Reads an integer tensor (int32 or int64) into int64 values; error naming the node/input
/// for other dtypes.
Expected<std::vector<int64_t>> read_int_values(const ir::Node& node, int input_index, const Tensor& tensor);

}  // namespace edgemm::kernels
