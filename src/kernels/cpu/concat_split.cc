/// \file concat_split.cc
/// Joining and splitting along one axis, default ONNX domain, opsets 7–21 (ONNX
/// Operators.md): Concat-4/11/13 (axis required, negative from 11) and Split-2/11/13/18
/// (`split` sizes as an attribute before 13, as an optional int64 input from 13; without
/// sizes the axis is split into equal parts, which must divide it). Split-18 adds the
/// attribute `num_outputs` (exclusive with the `split` input, equal to the number of outputs):
/// chunks of ceil(dim / num_outputs), the last one smaller; InvalidArgument when that last chunk
/// would be empty or negative (e.g. 9 or 5 into 4 parts; ONNX Runtime refuses these too).
/// All dtypes, as bytes.
/// com.edgemm Concat-1 is Concat-13 with optional y_scale / y_zero_point attributes
/// (passes::chain_int8): float32 inputs are then quantized into a uint8 output as they are
/// copied (QuantizeLinear, int8::quantize_u8).

#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/int8_common.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

/// The float32 `inputs` joined along `axis` and quantized into uint8 `out` ([outer, out_block]
/// rows; each input contributes its [outer, extent · inner] block at its offset).
void concat_quantized(const std::vector<const Tensor*>& inputs, int64_t axis, int64_t inner, int64_t outer,
                      int64_t out_block, const int8::OutputQuantization& q, uint8_t* out, int threads) {
  int64_t offset = 0;
  for (const Tensor* t : inputs) {
    const int64_t block = t->shape()[axis] * inner;
    const float* src = t->data<float>();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
      int8::quantize_u8(src + o * block, block, q.scale, q.zero_point, out + o * out_block + offset);
    }
    offset += block;
  }
}

/// Concat: all inputs share dtype, rank and every extent except `axis`. `quantizing`: the node is
/// com.edgemm Concat, whose y_scale / y_zero_point (when present) make the output uint8; the
/// standard op ignores attributes ONNX does not define.
Status concat(KernelContext& ctx, bool quantizing) {
  const ir::Node& node = ctx.node();
  if (ctx.input_count() == 0) {
    return node_error(node, StatusCode::kInvalidModel, "has no inputs");
  }
  std::vector<const Tensor*> inputs;
  for (int i = 0; i < ctx.input_count(); ++i) {
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i, "inputs"));
    inputs.push_back(t);
  }
  const Tensor& first = *inputs[0];
  if (!node.has_attr("axis")) {
    return node_error(node, StatusCode::kInvalidModel, "requires attribute 'axis'");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", 0));
  if (first.rank() == 0) {
    return node_error(node, StatusCode::kInvalidArgument, "cannot concatenate scalars");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, first.rank()));
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.dtype() != first.dtype()) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input #" + std::to_string(i) + " '" + input_value_name(node, i) + "' has dtype " +
                            dtype_name(t.dtype()) + " but input #0 has " + dtype_name(first.dtype()));
    }
    bool ok = t.rank() == first.rank();
    for (int64_t k = 0; ok && k < t.rank(); ++k) {
      ok = k == axis || t.shape()[k] == first.shape()[k];
    }
    if (!ok) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input #" + std::to_string(i) + " '" + input_value_name(node, i) + "' has shape " +
                            shape_to_string(t.shape()) + ", incompatible with input #0 of shape " +
                            shape_to_string(first.shape()) + " for concatenation on axis " + std::to_string(axis));
    }
    out_shape[axis] += t.shape()[axis];
  }
  std::optional<int8::OutputQuantization> quantized;
  if (quantizing) {
    EDGEMM_ASSIGN_OR_RETURN(quantized, int8::read_output_quantization(node));
  }
  if (quantized && first.dtype() != DataType::kFloat32) {
    return node_error(node, StatusCode::kInvalidArgument,
                      std::string("a uint8 output (y_scale) needs float32 inputs, got ") + dtype_name(first.dtype()));
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out,
                          ctx.allocate_output(0, quantized ? DataType::kUInt8 : first.dtype(), out_shape));
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < first.rank(); ++k) {
    if (k < axis) outer *= out_shape[k];
    if (k > axis) inner *= out_shape[k];
  }
  if (quantized) {
    concat_quantized(inputs, axis, inner, outer, out_shape[axis] * inner, *quantized, out->data<uint8_t>(),
                     ctx.threads());
    return Status::ok();
  }
  const size_t elem = dtype_size(first.dtype());
  const int64_t out_block = out_shape[axis] * inner;
  int64_t offset = 0;
  for (const Tensor* t : inputs) {
    const int64_t block = t->shape()[axis] * inner;
    if (block > 0 && outer > 0) {
      strided_copy(out->data<char>() + offset * elem, {out_block, 1}, t->raw_data(), {block, 1}, {outer, block}, elem,
                   ctx.threads());
    }
    offset += block;
  }
  return Status::ok();
}

Status run_concat(KernelContext& ctx) { return concat(ctx, false); }

Status run_edgemm_concat(KernelContext& ctx) { return concat(ctx, true); }

/// Split-18's sizes for attribute num_outputs = `parts` on axis `axis` of extent `dim`: chunks
/// of ceil(dim / parts), the last one what remains. Errors: the `split` input given too
/// (`have_split`), `parts` < 1 or not the node's output count, or a last chunk that would be
/// empty or negative.
Expected<std::vector<int64_t>> split18_chunks(const ir::Node& node, bool have_split, int64_t parts, int64_t outputs,
                                              int64_t dim, int64_t axis) {
  if (have_split) {
    return node_error(node, StatusCode::kInvalidModel,
                      "has both the 'split' input and attribute 'num_outputs'; Split-18 allows only one");
  }
  if (parts < 1 || parts != outputs) {
    return node_error(node, StatusCode::kInvalidModel,
                      "attribute 'num_outputs' is " + std::to_string(parts) + " but the node has " +
                          std::to_string(outputs) + " outputs");
  }
  const int64_t chunk = dim / parts + (dim % parts != 0 ? 1 : 0);
  const int64_t last = dim - chunk * (parts - 1);
  if (last <= 0) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "axis " + std::to_string(axis) + " of extent " + std::to_string(dim) + " cannot be split into " +
                          std::to_string(parts) + " chunks of " + std::to_string(chunk) +
                          " (num_outputs): the last chunk would have " + std::to_string(last) + " elements");
  }
  std::vector<int64_t> sizes(static_cast<size_t>(parts), chunk);
  sizes.back() = last;
  return sizes;
}

/// Split: outputs are consecutive pieces of `axis` with the given or equal sizes.
Status run_split(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis_attr, node.attr_int("axis", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_attr, in->rank()));
  const int64_t outputs = ctx.output_count();
  if (outputs <= 0) return node_error(node, StatusCode::kInvalidModel, "has no outputs");
  std::vector<int64_t> sizes;
  bool have_sizes = false;
  if (opset >= 13) {
    const Tensor* t = ctx.input(1);
    if (t != nullptr && t->defined()) {
      EDGEMM_ASSIGN_OR_RETURN(sizes, read_int_list(node, *t, "split"));
      have_sizes = true;
    }
  } else if (node.has_attr("split")) {
    EDGEMM_ASSIGN_OR_RETURN(sizes, node.attr_ints("split"));
    have_sizes = true;
  }
  const int64_t dim = in->shape()[axis];
  if (opset >= 18 && node.has_attr("num_outputs")) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t parts, node.attr_int("num_outputs", 0));
    EDGEMM_ASSIGN_OR_RETURN(sizes, split18_chunks(node, have_sizes, parts, outputs, dim, axis));
    have_sizes = true;
  }
  if (have_sizes) {
    if (static_cast<int64_t>(sizes.size()) != outputs) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "'split' has " + std::to_string(sizes.size()) + " sizes but the node has " +
                            std::to_string(outputs) + " outputs");
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) {
        return node_error(node, StatusCode::kInvalidArgument, "'split' has negative size " + std::to_string(s));
      }
      total += s;
      if (total > dim) break;
    }
    if (total != dim) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "'split' sizes " + shape_to_string(sizes) + " do not sum to " + std::to_string(dim) +
                            ", the extent of axis " + std::to_string(axis));
    }
  } else {
    if (dim % outputs != 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "axis " + std::to_string(axis) + " of extent " + std::to_string(dim) +
                            " cannot be split into " + std::to_string(outputs) + " equal parts");
    }
    sizes.assign(static_cast<size_t>(outputs), dim / outputs);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < in->rank(); ++k) {
    if (k < axis) outer *= in->shape()[k];
    if (k > axis) inner *= in->shape()[k];
  }
  const size_t elem = dtype_size(in->dtype());
  const int64_t in_block = dim * inner;
  int64_t offset = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    const int64_t block = sizes[i] * inner;
    if (ctx.output_wanted(static_cast<int>(i))) {
      Shape shape = in->shape();
      shape[axis] = sizes[i];
      EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(static_cast<int>(i), in->dtype(), shape));
      if (block > 0 && outer > 0) {
        strided_copy(out->raw_data(), {block, 1}, in->data<char>() + offset * elem, {in_block, 1}, {outer, block}, elem,
                     ctx.threads());
      }
    }
    offset += block;
  }
  return Status::ok();
}

}  // namespace

void register_concat_split_kernels(KernelRegistry& registry) {
  registry.add("", "Concat", 4, simple_kernel(run_concat));
  registry.add("com.edgemm", "Concat", 1, simple_kernel(run_edgemm_concat));
  registry.add("", "Split", 2, versioned_kernel(run_split));
}

}  // namespace edgemm::kernels
