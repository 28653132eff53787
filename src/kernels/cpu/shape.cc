/// \file shape.cc
/// Shape-only and copy-only ops of the default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Shape (start/end from 15), Size, Reshape (allowzero from 14), Flatten, Squeeze and
/// Unsqueeze (axes as an attribute before 13, as an input from 13), Identity, Dropout (the
/// inference behaviour: output = input, optional mask of ones / true; training_mode from 12).
/// All but training-mode Dropout are dtype-agnostic: data moves as bytes.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

/// Allocates output 0 with `shape` and the input's dtype and copies the input bytes.
Status copy_with_shape(KernelContext& ctx, const Tensor& in, const Shape& shape) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), shape));
  copy_tensor_bytes(*out, in);
  return Status::ok();
}

/// Shape-1/13/15: the input's shape as int64, sliced by start/end (opset 15) with negative
/// values counted from the end and both clamped to [0, rank].
Status run_shape(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  const int64_t rank = in->rank();
  int64_t start = 0, end = rank;
  if (opset >= 15) {
    EDGEMM_ASSIGN_OR_RETURN(start, node.attr_int("start", 0));
    EDGEMM_ASSIGN_OR_RETURN(end, node.attr_int("end", rank));
  }
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  start = clamp(start);
  end = std::max(clamp(end), start);
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, {end - start}));
  for (int64_t i = start; i < end; ++i) out->data<int64_t>()[i - start] = in->shape()[i];
  return Status::ok();
}

/// Size-1/13: number of elements as an int64 scalar.
Status run_size(KernelContext& ctx) {
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, {}));
  *out->data<int64_t>() = in->element_count();
  return Status::ok();
}

/// Reshape-5/13/14: `shape` input; 0 copies the input extent at that position (unless
/// allowzero=1, opset 14, where 0 is a zero extent); one -1 is inferred from the remaining
/// element count.
Status run_reshape(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* shape_t, required_input(ctx, 1, "shape"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_int_list(node, *shape_t, "shape"));
  int64_t allowzero = 0;
  if (opset >= 14) {
    EDGEMM_ASSIGN_OR_RETURN(allowzero, node.attr_int("allowzero", 0));
  }
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t v = shape[i];
    if (v == -1) {
      if (infer_at >= 0) {
        return node_error(node, StatusCode::kInvalidArgument,
                          "input 'shape' " + shape_to_string(shape) + " has more than one -1");
      }
      infer_at = static_cast<int64_t>(i);
    } else if (v < -1) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input 'shape' has invalid extent " + std::to_string(v) + " at axis " + std::to_string(i));
    } else if (v == 0) {
      has_zero = true;
      if (allowzero == 0) {
        if (static_cast<int64_t>(i) >= in->rank()) {
          return node_error(node, StatusCode::kInvalidArgument,
                            "input 'shape' has 0 at axis " + std::to_string(i) + " but the input has only rank " +
                                std::to_string(in->rank()) + " to copy the extent from");
        }
        shape[i] = in->shape()[i];
      }
    }
  }
  if (allowzero != 0 && has_zero && infer_at >= 0) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'shape' " + shape_to_string(shape) + " has both 0 and -1, which allowzero=1 forbids");
  }
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) == infer_at) continue;
    if (__builtin_mul_overflow(known, shape[i], &known)) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input 'shape' " + shape_to_string(shape) + " overflows int64");
    }
  }
  const int64_t count = in->element_count();
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "cannot infer the -1 extent of shape " + shape_to_string(shape) + " for an input of shape " +
                            shape_to_string(in->shape()));
    }
    shape[infer_at] = count / known;
  } else if (known != count) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "cannot reshape input of shape " + shape_to_string(in->shape()) + " (" + std::to_string(count) +
                          " elements) to " + shape_to_string(shape));
  }
  return copy_with_shape(ctx, *in, shape);
}

/// Flatten-1/9/11/13: 2-D output [prod(d[0:axis]), prod(d[axis:])], axis in [-r, r].
Status run_flatten(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", 1));
  const int64_t rank = in->rank();
  if (axis < -rank || axis > rank) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                          " (expected " + std::to_string(-rank) + ".." + std::to_string(rank) + ")");
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k) (k < axis ? outer : inner) *= in->shape()[k];
  return copy_with_shape(ctx, *in, {outer, inner});
}

/// Reads axes from the attribute (opset < 13) or the optional input #1 (opset >= 13).
Expected<std::vector<int64_t>> read_axes(KernelContext& ctx, int64_t opset, bool* present) {
  const ir::Node& node = ctx.node();
  if (opset >= 13) {
    const Tensor* t = ctx.input(1);
    *present = t != nullptr && t->defined();
    if (!*present) return std::vector<int64_t>{};
    return read_int_list(node, *t, "axes");
  }
  *present = node.has_attr("axes");
  return node.attr_ints("axes");
}

/// Squeeze-1/11/13: removes the listed unit axes, or every unit axis when none are given.
/// An empty `axes` list acts like an absent one. Squeezing an axis whose extent is not 1 is
/// an error.
Status run_squeeze(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  bool present = false;
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, opset, &present));
  const int64_t rank = in->rank();
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  if (axes.empty()) {  // absent or empty: every unit axis, as ONNX Runtime does
    for (int64_t k = 0; k < rank; ++k) drop[k] = in->shape()[k] == 1;
  }
  for (int64_t a : axes) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t k, normalize_axis(node, a, rank));
    if (in->shape()[k] != 1) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(in->shape()[k]) +
                            " in input of shape " + shape_to_string(in->shape()));
    }
    drop[k] = true;
  }
  Shape out;
  for (int64_t k = 0; k < rank; ++k) {
    if (!drop[k]) out.push_back(in->shape()[k]);
  }
  return copy_with_shape(ctx, *in, out);
}

/// Unsqueeze-1/11/13: inserts unit axes at the listed positions of the output (negative
/// values count from the output's end); repeated axes are an error.
Status run_unsqueeze(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  bool present = false;
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_axes(ctx, opset, &present));
  if (!present) {
    return node_error(node, StatusCode::kInvalidModel, "requires 'axes'");
  }
  const int64_t out_rank = in->rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> unit(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t k, normalize_axis(node, a, out_rank));
    if (unit[k]) {
      return node_error(node, StatusCode::kInvalidArgument, "axis " + std::to_string(a) + " is repeated in 'axes'");
    }
    unit[k] = true;
  }
  Shape out;
  int64_t next = 0;
  for (int64_t k = 0; k < out_rank; ++k) out.push_back(unit[k] ? 1 : in->shape()[next++]);
  return copy_with_shape(ctx, *in, out);
}

/// Identity-1/13/14/16 on tensors: output = input.
Status run_identity(KernelContext& ctx) {
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  return copy_with_shape(ctx, *in, in->shape());
}

/// The mask of training-mode Dropout: element i is kept when u_i >= ratio, u_i the i-th
/// uniform draw in [0, 1) of a Mersenne Twister (MT19937) seeded with `seed`, each draw made of
/// two 32-bit outputs as NumPy's random_sample does ((a >> 5) * 2^26 + (b >> 6)) / 2^53. This
/// is the generator of ONNX's reference implementation (np.random.seed(seed) then
/// np.random.uniform), so a node's `seed` attribute reproduces its masks; the spec leaves the
/// generator to the runtime.
std::vector<bool> dropout_mask(int64_t count, double ratio, uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<bool> keep(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t a = engine() >> 5, b = engine() >> 6;
    const double u = (a * 67108864.0 + b) / 9007199254740992.0;
    keep[static_cast<size_t>(i)] = u >= ratio;
  }
  return keep;
}

/// Dropout-12/13 with training_mode=true: output = input · mask / (1 - ratio), with
/// dropout_mask's draws, seeded by the `seed` attribute or, without it, at random per run; the
/// optional bool mask output.
Status run_training_dropout(KernelContext& ctx, const Tensor& in, double ratio) {
  const ir::Node& node = ctx.node();
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'ratio' is " + std::to_string(ratio) + "; it must lie in [0, 1)");
  }
  const DataType t = in.dtype();
  if (t != DataType::kFloat32 && t != DataType::kFloat64 && t != DataType::kFloat16 && t != DataType::kBFloat16) {
    return unsupported_dtype(node, 0, t);
  }
  EDGEMM_ASSIGN_OR_RETURN(const int64_t seed, node.attr_int("seed", -1));
  const uint32_t start = node.has_attr("seed") ? static_cast<uint32_t>(seed) : std::random_device{}();
  const std::vector<bool> keep = dropout_mask(in.element_count(), ratio, start);
  const double scale = 1.0 / (1.0 - ratio);
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), in.shape()));
  for (int64_t i = 0; i < in.element_count(); ++i) {
    const double x = keep[static_cast<size_t>(i)] ? load_as_double(in.dtype(), in.raw_data(), i) * scale : 0.0;
    store_from_double(in.dtype(), out->raw_data(), i, x);
  }
  if (ctx.output_count() > 1 && ctx.output_wanted(1)) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, DataType::kBool, in.shape()));
    for (int64_t i = 0; i < in.element_count(); ++i) mask->data<bool>()[i] = keep[static_cast<size_t>(i)];
  }
  return Status::ok();
}

/// Dropout-7/10/12/13 in inference: output = input. The optional mask is all ones with the
/// input dtype before opset 10 and all true (bool) from opset 10. From opset 12,
/// training_mode=true with a non-zero ratio drops at random (run_training_dropout).
Status run_dropout(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  if (opset >= 12) {
    const Tensor* ratio_t = ctx.input(1);
    const Tensor* train_t = ctx.input(2);
    double ratio = 0.5;
    if (ratio_t != nullptr && ratio_t->defined()) {
      if (ratio_t->element_count() != 1 || !is_numeric_or_bool(ratio_t->dtype())) {
        return node_error(node, StatusCode::kInvalidArgument, "input 'ratio' must be a numeric scalar");
      }
      ratio = load_as_double(ratio_t->dtype(), ratio_t->raw_data(), 0);
    }
    bool training = false;
    if (train_t != nullptr && train_t->defined()) {
      if (train_t->element_count() != 1 || train_t->dtype() != DataType::kBool) {
        return node_error(node, StatusCode::kInvalidArgument, "input 'training_mode' must be a bool scalar");
      }
      training = *train_t->data<bool>();
    }
    if (training && ratio != 0.0) return run_training_dropout(ctx, *in, ratio);
  }
  EDGEMM_RETURN_IF_ERROR(copy_with_shape(ctx, *in, in->shape()));
  if (ctx.output_count() > 1 && ctx.output_wanted(1)) {
    const DataType mask_dtype = opset >= 10 ? DataType::kBool : in->dtype();
    if (!is_numeric_or_bool(mask_dtype)) return unsupported_dtype(node, 0, mask_dtype);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, mask_dtype, in->shape()));
    std::vector<unsigned char> one(dtype_size(mask_dtype));
    store_from_double(mask_dtype, one.data(), 0, 1.0);
    fill_elements(mask->raw_data(), mask->element_count(), one.size(), one.data());
  }
  return Status::ok();
}

}  // namespace

void register_shape_kernels(KernelRegistry& registry) {
  registry.add("", "Shape", 1, versioned_kernel(run_shape));
  registry.add("", "Size", 1, simple_kernel(run_size));
  registry.add("", "Reshape", 5, versioned_kernel(run_reshape));
  registry.add("", "Flatten", 1, simple_kernel(run_flatten));
  registry.add("", "Squeeze", 1, versioned_kernel(run_squeeze));
  registry.add("", "Unsqueeze", 1, versioned_kernel(run_unsqueeze));
  registry.add("", "Identity", 1, simple_kernel(run_identity));
  registry.add("", "Dropout", 7, versioned_kernel(run_dropout));
}

}  // namespace edgemm::kernels
