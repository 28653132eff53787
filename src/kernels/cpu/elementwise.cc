#include "kernels/cpu/elementwise.h"

#include <string>
#include <vector>

namespace edgemm::kernels::elementwise {

std::string input_name(const ir::Node& node, int i) {
  return i >= 0 && i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : std::string();
}

Expected<const Tensor*> need_input(const KernelContext& ctx, int i) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || !t->defined()) {
    return ir::node_error(ctx.node(), StatusCode::kInvalidModel,
                          "required input #" + std::to_string(i) + " is missing");
  }
  return t;
}

Status check_same_dtype(const ir::Node& node, const Tensor& a, int i, const Tensor& b, int j) {
  if (a.dtype() == b.dtype()) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "input '" + input_name(node, j) + "' has dtype " + dtype_name(b.dtype()) + " but input '" +
                            input_name(node, i) + "' has dtype " + dtype_name(a.dtype()) +
                            "; the op needs both of the same type");
}

Expected<Tensor> to_float32(const ir::Node& node, const Tensor& src, int threads) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(DataType::kFloat32, src.shape()));
  EDGEMM_RETURN_IF_ERROR(convert_tensor(node, src, out, threads));
  return out;
}

BroadcastPlan make_broadcast_plan(const Shape& out, const std::vector<const Shape*>& inputs) {
  const int n = static_cast<int>(inputs.size());
  const size_t rank = out.size();
  // Per input, strides aligned to the output axes (0 where the input is broadcast).
  std::vector<std::vector<int64_t>> full(n, std::vector<int64_t>(rank, 0));
  for (int k = 0; k < n; ++k) {
    const Shape& s = *inputs[k];
    const size_t shift = rank - s.size();
    int64_t stride = 1;
    for (size_t j = s.size(); j-- > 0;) {
      full[k][j + shift] = s[j] == 1 ? 0 : stride;
      stride *= s[j];
    }
  }
  // Drop unit output axes, then merge neighbours with compatible strides.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(n);
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (int k = 0; k < n && merge; ++k) merge = st[k].back() == full[k][d] * out[d];
    if (merge) {
      dims.back() *= out[d];
      for (int k = 0; k < n; ++k) st[k].back() = full[k][d];
    } else {
      dims.push_back(out[d]);
      for (int k = 0; k < n; ++k) st[k].push_back(full[k][d]);
    }
  }
  BroadcastPlan p;
  p.n = n;
  p.inner_stride.assign(n, 0);
  if (!dims.empty()) {
    p.inner = dims.back();
    for (int k = 0; k < n; ++k) p.inner_stride[k] = st[k].back();
    dims.pop_back();
    for (int k = 0; k < n; ++k) st[k].pop_back();
  }
  for (int64_t d : dims) p.outer *= d;
  // An empty output has no elements to visit.
  for (int64_t d : out) {
    if (d == 0) {
      p.outer = 0;
      p.inner = 0;
    }
  }
  p.outer_dims = dims;
  p.strides.reserve(static_cast<size_t>(n) * dims.size());
  for (int k = 0; k < n; ++k) p.strides.insert(p.strides.end(), st[k].begin(), st[k].end());
  return p;
}

Expected<Shape> broadcast_all(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  Shape out;
  for (const Tensor* t : inputs) {
    EDGEMM_ASSIGN_OR_RETURN(out, broadcast_shapes(node, out, t->shape()));
  }
  return out;
}

}  // namespace edgemm::kernels::elementwise
