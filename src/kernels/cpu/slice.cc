/// \file slice.cc
/// Sub-tensor selection, default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Slice-1 (starts/ends/axes attributes) and Slice-10/11/13 (inputs starts, ends, axes,
/// steps; negative steps; starts/ends clamped to [0, dim] for positive steps and to
/// [-1, dim-1] for negative ones), Compress-9/11 (bool condition, optional axis, flattened
/// without one; entries past the axis extent are ignored as in ONNX Runtime),
/// ReverseSequence-10 (per-batch reversal of the first sequence_lens[b] time steps).
/// All dtypes, as bytes.

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false, have_steps = false;
};

Expected<SliceParams> read_slice_params(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  SliceParams p;
  if (opset < 10) {
    if (!node.has_attr("starts") || !node.has_attr("ends")) {
      return node_error(node, StatusCode::kInvalidModel, "requires attributes 'starts' and 'ends'");
    }
    EDGEMM_ASSIGN_OR_RETURN(p.starts, node.attr_ints("starts"));
    EDGEMM_ASSIGN_OR_RETURN(p.ends, node.attr_ints("ends"));
    p.have_axes = node.has_attr("axes");
    EDGEMM_ASSIGN_OR_RETURN(p.axes, node.attr_ints("axes"));
    return p;
  }
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* starts, required_input(ctx, 1, "starts"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* ends, required_input(ctx, 2, "ends"));
  EDGEMM_ASSIGN_OR_RETURN(p.starts, read_int_list(node, *starts, "starts"));
  EDGEMM_ASSIGN_OR_RETURN(p.ends, read_int_list(node, *ends, "ends"));
  const Tensor* axes = ctx.input(3);
  if (axes != nullptr && axes->defined()) {
    EDGEMM_ASSIGN_OR_RETURN(p.axes, read_int_list(node, *axes, "axes"));
    p.have_axes = true;
  }
  const Tensor* steps = ctx.input(4);
  if (steps != nullptr && steps->defined()) {
    EDGEMM_ASSIGN_OR_RETURN(p.steps, read_int_list(node, *steps, "steps"));
    p.have_steps = true;
  }
  return p;
}

Status run_slice(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(SliceParams p, read_slice_params(ctx, opset));
  const size_t n = p.starts.size();
  if (p.ends.size() != n || (p.have_axes && p.axes.size() != n) ||
      (p.have_steps && p.steps.size() != n)) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "'starts', 'ends', 'axes' and 'steps' must have the same length (got " +
                          std::to_string(n) + ", " + std::to_string(p.ends.size()) + ", " +
                          std::to_string(p.axes.size()) + ", " + std::to_string(p.steps.size()) +
                          ")");
  }
  const int64_t rank = in->rank();
  if (!p.have_axes) {
    if (static_cast<int64_t>(n) > rank) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "'starts' has " + std::to_string(n) + " entries for an input of rank " +
                            std::to_string(rank));
    }
    for (size_t i = 0; i < n; ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (!p.have_steps) p.steps.assign(n, 1);

  const Shape& shape = in->shape();
  std::vector<int64_t> start(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
  Shape out_shape = shape;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < n; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, p.axes[i], rank));
    if (seen[a]) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "axis " + std::to_string(p.axes[i]) + " appears twice in 'axes'");
    }
    seen[a] = true;
    const int64_t dim = shape[a];
    int64_t st = p.starts[i], en = p.ends[i], sp = p.steps[i];
    if (sp == 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "'steps' has 0 for axis " + std::to_string(a));
    }
    if (st < 0) st += dim;
    if (en < 0) en += dim;
    int64_t count = 0;
    // A step larger than the extent selects at most one element; clamping it keeps the
    // arithmetic below free of overflow.
    const int64_t max_step = std::max<int64_t>(dim, 1);
    if (dim == 0) {
      count = 0;
    } else if (sp > 0) {
      sp = std::min(sp, max_step);
      st = std::clamp<int64_t>(st, 0, dim);
      en = std::clamp<int64_t>(en, 0, dim);
      count = en > st ? (en - st - 1) / sp + 1 : 0;
    } else {
      sp = std::max(sp, -max_step);
      st = std::clamp<int64_t>(st, 0, dim - 1);
      en = std::clamp<int64_t>(en, -1, dim - 1);
      count = st > en ? (st - en - 1) / -sp + 1 : 0;
    }
    start[a] = count > 0 ? st : 0;
    step[a] = sp;
    out_shape[a] = count;
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  if (out->element_count() == 0) return Status::ok();
  const std::vector<int64_t> strides = contiguous_strides(shape);
  std::vector<int64_t> src_strides(static_cast<size_t>(rank));
  int64_t base = 0;
  for (int64_t k = 0; k < rank; ++k) {
    base += start[k] * strides[k];
    src_strides[k] = step[k] * strides[k];
  }
  const size_t elem = dtype_size(in->dtype());
  strided_copy(out->raw_data(), contiguous_strides(out_shape), in->data<char>() + base * static_cast<int64_t>(elem),
               src_strides, out_shape, elem, ctx.threads());
  return Status::ok();
}

Status run_compress(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* cond, required_input(ctx, 1, "condition"));
  if (cond->dtype() != DataType::kBool || cond->rank() != 1) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'condition' must be a 1-D bool tensor, got " +
                          std::string(dtype_name(cond->dtype())) + " " +
                          shape_to_string(cond->shape()));
  }
  int64_t outer = 1, dim = in->element_count(), inner = 1;
  Shape out_shape;
  int64_t axis = -1;
  if (node.has_attr("axis")) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, node.attr_int("axis", 0));
    EDGEMM_ASSIGN_OR_RETURN(axis, normalize_axis(node, a, in->rank()));
    dim = in->shape()[axis];
    for (int64_t k = 0; k < in->rank(); ++k) {
      if (k < axis) outer *= in->shape()[k];
      if (k > axis) inner *= in->shape()[k];
    }
  }
  const int64_t usable = std::min(dim, cond->element_count());
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < usable; ++i) {
    if (cond->data<bool>()[i]) picked.push_back(i);
  }
  if (axis < 0) {
    out_shape = {static_cast<int64_t>(picked.size())};
  } else {
    out_shape = in->shape();
    out_shape[axis] = static_cast<int64_t>(picked.size());
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  const size_t block = static_cast<size_t>(inner) * dtype_size(in->dtype());
  const auto* src = in->data<char>();
  auto* dst = out->data<char>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : picked) {
      copy_bytes(dst, src + (o * dim + i) * block, block);
      dst += block;
    }
  }
  return Status::ok();
}

Status run_reverse_sequence(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* lens_t, required_input(ctx, 1, "sequence_lens"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t batch_axis, node.attr_int("batch_axis", 1));
  EDGEMM_ASSIGN_OR_RETURN(int64_t time_axis, node.attr_int("time_axis", 0));
  if (in->rank() < 2) {
    return node_error(
        node, StatusCode::kInvalidArgument,
        "input 'input' must have rank >= 2, got shape " + shape_to_string(in->shape()));
  }
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "'batch_axis' and 'time_axis' must be 0 and 1 in some order, got " +
                          std::to_string(batch_axis) + " and " + std::to_string(time_axis));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> lens, read_int_list(node, *lens_t, "sequence_lens"));
  const int64_t batch = in->shape()[batch_axis], steps = in->shape()[time_axis];
  if (static_cast<int64_t>(lens.size()) != batch) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'sequence_lens' has " + std::to_string(lens.size()) +
                          " entries for a batch of " + std::to_string(batch));
  }
  for (int64_t len : lens) {
    if (len < 0 || len > steps) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "sequence length " + std::to_string(len) + " is out of range [0, " +
                            std::to_string(steps) + "] (input 'sequence_lens')");
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), in->shape()));
  int64_t inner = 1;
  for (int64_t k = 2; k < in->rank(); ++k) inner *= in->shape()[k];
  const size_t block = static_cast<size_t>(inner) * dtype_size(in->dtype());
  auto offset = [&](int64_t t, int64_t b) {
    return static_cast<size_t>(time_axis == 0 ? t * batch + b : b * steps + t) * block;
  };
  const auto* src = in->data<char>();
  auto* dst = out->data<char>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      copy_bytes(dst + offset(t, b), src + offset(from, b), block);
    }
  }
  return Status::ok();
}

}  // namespace

void register_slice_kernels(KernelRegistry& registry) {
  registry.add("", "Slice", 1, versioned_kernel(run_slice));
  registry.add("", "Compress", 9, simple_kernel(run_compress));
  registry.add("", "ReverseSequence", 10, simple_kernel(run_reverse_sequence));
}

}  // namespace edgemm::kernels
