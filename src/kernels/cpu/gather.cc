/// \file gather.cc
/// Index-driven reads, default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Gather-1/11/13 (out = data[:axis] + indices.shape + data[axis+1:]),
/// GatherElements-11/13 (out shape = indices shape, same rank as data),
/// GatherND-11/12/13 (batch_dims from 12; out = indices.shape[:-1] + data.shape[b+m:]).
/// Indices are int32 or int64; negative values count from the end of their axis; any value
/// outside [-size, size) is an InvalidArgument error naming the node, input and value.
/// All data dtypes, copied as bytes. Also registers com.edgemm TokenPrune (token_prune.h), a
/// scored gather of transformer tokens.

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/token_prune.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

Status run_gather(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1, "indices"));
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, *indices, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, data->rank()));
  const int64_t dim = data->shape()[axis];
  const int64_t count = indices->element_count();
  std::vector<int64_t> idx(static_cast<size_t>(count));
  IndexView view(*indices);
  for (int64_t j = 0; j < count; ++j) {
    int64_t v = view[j];
    if (!wrap_index(v, dim)) return index_out_of_range(node, view[j], axis, dim, "indices");
    idx[j] = v;
  }
  Shape out_shape(data->shape().begin(), data->shape().begin() + axis);
  out_shape.insert(out_shape.end(), indices->shape().begin(), indices->shape().end());
  out_shape.insert(out_shape.end(), data->shape().begin() + axis + 1, data->shape().end());
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, data->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), out_shape));
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < data->rank(); ++k) {
    if (k < axis) outer *= data->shape()[k];
    if (k > axis) inner *= data->shape()[k];
  }
  const size_t elem = dtype_size(data->dtype());
  dispatch_by_size(elem, [&]<typename U>() {
    const U* src = data->data<U>();
    U* dst = out->data<U>();
    parallel_for(ctx.threads(), outer * count, inner, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t o = item / count, j = item % count;
        const U* from = src + (o * dim + idx[j]) * inner;
        U* to = dst + item * inner;
        if (inner == 1) {
          *to = *from;
        } else {
          std::memcpy(to, from, static_cast<size_t>(inner) * sizeof(U));
        }
      }
    });
  });
  return Status::ok();
}

/// Shared checks of GatherElements / ScatterElements: same rank, and `indices` no larger
/// than `data` on every axis but `axis`.
Status check_elements_shapes(const ir::Node& node, const Tensor& data, const Tensor& indices, int64_t axis) {
  bool ok = indices.rank() == data.rank();
  for (int64_t k = 0; ok && k < data.rank(); ++k) {
    ok = k == axis || indices.shape()[k] <= data.shape()[k];
  }
  if (ok) return Status::ok();
  return node_error(node, StatusCode::kInvalidArgument,
                    "input 'indices' of shape " + shape_to_string(indices.shape()) +
                        " does not fit input 'data' of shape " + shape_to_string(data.shape()) +
                        " (same rank, and no larger on axes other than " + std::to_string(axis) + ")");
}

Status run_gather_elements(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1, "indices"));
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, *indices, "indices"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, data->rank()));
  EDGEMM_RETURN_IF_ERROR(check_elements_shapes(node, *data, *indices, axis));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), indices->shape()));
  const int64_t count = indices->element_count();
  if (count == 0) return Status::ok();
  const int64_t rank = data->rank();
  const int64_t dim = data->shape()[axis];
  const std::vector<int64_t> dstride = contiguous_strides(data->shape());
  IndexView view(*indices);
  Status status;
  dispatch_by_size(dtype_size(data->dtype()), [&]<typename U>() {
    const U* src = data->data<U>();
    U* dst = out->data<U>();
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
    int64_t base = 0;  // data offset of `pos` without the axis term
    for (int64_t j = 0; j < count; ++j) {
      int64_t v = view[j];
      if (!wrap_index(v, dim)) {
        status = index_out_of_range(node, view[j], axis, dim, "indices");
        return;
      }
      dst[j] = src[base + v * dstride[axis]];
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (k != axis) base += dstride[k];
        if (++pos[k] < indices->shape()[k]) break;
        if (k != axis) base -= dstride[k] * pos[k];
        pos[k] = 0;
      }
    }
  });
  return status;
}

Status run_gather_nd(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1, "indices"));
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, *indices, "indices"));
  int64_t b = 0;
  if (opset >= 12) {
    EDGEMM_ASSIGN_OR_RETURN(b, node.attr_int("batch_dims", 0));
  }
  const int64_t r = data->rank(), q = indices->rank();
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q)) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "needs data and indices of rank >= 1 and 0 <= batch_dims < min(ranks); got "
                      "data " +
                          shape_to_string(data->shape()) + ", indices " + shape_to_string(indices->shape()) +
                          ", batch_dims " + std::to_string(b));
  }
  const int64_t m = indices->shape()[q - 1];
  if (m < 1 || m > r - b) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "last extent of 'indices' (" + std::to_string(m) + ") must be in [1, " + std::to_string(r - b) +
                          "] for data of rank " + std::to_string(r) + " and batch_dims " + std::to_string(b));
  }
  for (int64_t k = 0; k < b; ++k) {
    if (data->shape()[k] != indices->shape()[k]) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "batch axis " + std::to_string(k) + " differs between data " + shape_to_string(data->shape()) +
                            " and indices " + shape_to_string(indices->shape()));
    }
  }
  Shape out_shape(indices->shape().begin(), indices->shape().end() - 1);
  out_shape.insert(out_shape.end(), data->shape().begin() + b + m, data->shape().end());
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), out_shape));
  int64_t batches = 1, per_batch = 1, block = 1;
  for (int64_t k = 0; k < b; ++k) batches *= data->shape()[k];
  for (int64_t k = b; k < q - 1; ++k) per_batch *= indices->shape()[k];
  for (int64_t k = b + m; k < r; ++k) block *= data->shape()[k];
  // Strides of the indexed axes b..b+m-1, in elements, and the size of one batch slice.
  std::vector<int64_t> stride(static_cast<size_t>(m));
  int64_t s = block;
  for (int64_t j = m - 1; j >= 0; --j) {
    stride[j] = s;
    s *= data->shape()[b + j];
  }
  const int64_t batch_size = s;
  const size_t elem = dtype_size(data->dtype());
  const auto* src = data->data<char>();
  auto* dst = out->data<char>();
  IndexView view(*indices);
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t n = 0; n < per_batch; ++n) {
      const int64_t row = bi * per_batch + n;
      int64_t offset = bi * batch_size;
      for (int64_t j = 0; j < m; ++j) {
        int64_t v = view[row * m + j];
        const int64_t dim = data->shape()[b + j];
        if (!wrap_index(v, dim)) return index_out_of_range(node, view[row * m + j], b + j, dim, "indices");
        offset += v * stride[j];
      }
      copy_bytes(dst + row * block * elem, src + offset * elem, static_cast<size_t>(block) * elem);
    }
  }
  return Status::ok();
}

}  // namespace

void register_gather_kernels(KernelRegistry& registry) {
  registry.add("", "Gather", 1, simple_kernel(run_gather));
  registry.add("", "GatherElements", 11, simple_kernel(run_gather_elements));
  registry.add("", "GatherND", 11, versioned_kernel(run_gather_nd));
  registry.add(ir::kEdgemmDomain, "TokenPrune", 1, make_token_prune);
}

}  // namespace edgemm::kernels
