/// \file pad_tile_expand.cc
/// Size-growing copies, default ONNX domain, opsets 7–21 (ONNX Operators.md):
/// Expand-8/13 (bidirectional numpy broadcast of the input to the `shape` input),
/// Tile-6/13 (`repeats` input, one per axis), Pad-2 (pads/mode/value attributes),
/// Pad-11/13 (pads and optional constant_value inputs), Pad-18 (optional 4th input `axes`,
/// int32 or int64, negative counts from the back, no repeats; `pads` then holds 2·len(axes)
/// values: all begins, then all ends), Pad-19 (mode wrap) and Pad-21 (more dtypes only).
/// Pad modes: constant, reflect (mirror without repeating the edge), edge (repeat the edge),
/// wrap (periodic; Pad-19, accepted at every opset), reflect and wrap repeating as far as the
/// pads reach. Negative pads crop; reflect, edge and wrap then pad the cropped input (as ONNX
/// Runtime does).
/// CenterCropPad-18 (input_data, int32/int64 `shape` input; optional `axes` attribute): each
/// listed axis is center-cropped or zero-padded to its target extent (an odd difference puts
/// the extra element at the end).
/// Sizes read from data are validated (negative → InvalidArgument, overflowing or over
/// kMaxTensorBytes → OutOfMemory) before anything is allocated. All dtypes, copied as bytes.

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

Status run_expand(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* shape_t, required_input(ctx, 1, "shape"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_int_list(node, *shape_t, "shape"));
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, shape, in->dtype(), "input 'shape'"));
  EDGEMM_ASSIGN_OR_RETURN(Shape out_shape, broadcast_shapes(node, in->shape(), shape));
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, in->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  strided_copy(out->raw_data(), contiguous_strides(out_shape), in->raw_data(),
               broadcast_strides(in->shape(), out_shape), out_shape, dtype_size(in->dtype()), ctx.threads());
  return Status::ok();
}

/// Tile as a strided copy: the output viewed as [r0, d0, r1, d1, ...] reads the input with
/// stride 0 on every repeat axis.
Status run_tile(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* rep_t, required_input(ctx, 1, "repeats"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, read_int_list(node, *rep_t, "repeats"));
  const int64_t rank = in->rank();
  if (static_cast<int64_t>(repeats.size()) != rank) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'repeats' has " + std::to_string(repeats.size()) + " entries but the input has rank " +
                          std::to_string(rank));
  }
  Shape out_shape(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    if (repeats[k] < 0) {
      return node_error(
          node, StatusCode::kInvalidArgument,
          "input 'repeats' has negative value " + std::to_string(repeats[k]) + " at axis " + std::to_string(k));
    }
    if (__builtin_mul_overflow(in->shape()[k], repeats[k], &out_shape[k])) {
      return node_error(
          node, StatusCode::kOutOfMemory,
          "tiling extent " + std::to_string(in->shape()[k]) + " by " + std::to_string(repeats[k]) + " overflows int64");
    }
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, in->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  const std::vector<int64_t> in_strides = contiguous_strides(in->shape());
  Shape view;
  std::vector<int64_t> src_strides;
  for (int64_t k = 0; k < rank; ++k) {
    view.push_back(repeats[k]);
    src_strides.push_back(0);
    view.push_back(in->shape()[k]);
    src_strides.push_back(in_strides[k]);
  }
  strided_copy(out->raw_data(), contiguous_strides(view), in->raw_data(), src_strides, view, dtype_size(in->dtype()),
               ctx.threads());
  return Status::ok();
}

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

/// Source index along an axis of extent n for the (unpadded) position i, n >= 1.
int64_t pad_source_index(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kEdge:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kWrap:
      return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t j = ((i % period) + period) % period;
      return j < n ? j : period - j;
    }
    case PadMode::kConstant:
      break;
  }
  return 0;
}

/// Constant padding: fills `out` with the element at `value`, then copies `in` into it shifted by
/// `begin` per axis (a negative begin crops; whatever does not fit in `out` is dropped).
void pad_constant_copy(const Tensor& in, const std::vector<int64_t>& begin, const void* value, Tensor& out,
                       int threads) {
  const size_t elem = dtype_size(in.dtype());
  const int64_t rank = in.rank();
  const std::vector<int64_t> in_strides = contiguous_strides(in.shape());
  const std::vector<int64_t> out_strides = contiguous_strides(out.shape());
  fill_elements(out.raw_data(), out.element_count(), elem, value);
  Shape region(static_cast<size_t>(rank));
  int64_t in_off = 0, out_off = 0;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t in_start = std::max<int64_t>(0, -begin[k]);
    const int64_t out_start = std::max<int64_t>(0, begin[k]);
    region[k] = std::max<int64_t>(0, std::min(in.shape()[k] - in_start, out.shape()[k] - out_start));
    if (region[k] == 0) return;
    in_off += in_start * in_strides[k];
    out_off += out_start * out_strides[k];
  }
  strided_copy(out.data<char>() + out_off * static_cast<int64_t>(elem), out_strides,
               in.data<char>() + in_off * static_cast<int64_t>(elem), in_strides, region, elem, threads);
}

Status run_pad(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  const int64_t rank = in->rank();
  const DataType dtype = in->dtype();
  const size_t elem = dtype_size(dtype);
  EDGEMM_ASSIGN_OR_RETURN(std::string mode_name, node.attr_string("mode", "constant"));
  PadMode mode;
  if (mode_name == "constant") {
    mode = PadMode::kConstant;
  } else if (mode_name == "reflect") {
    mode = PadMode::kReflect;
  } else if (mode_name == "edge") {
    mode = PadMode::kEdge;
  } else if (mode_name == "wrap") {
    mode = PadMode::kWrap;
  } else {
    return node_error(node, StatusCode::kInvalidArgument,
                      "attribute 'mode' must be constant, reflect, edge or wrap, got '" + mode_name + "'");
  }

  std::vector<int64_t> pads;
  std::vector<unsigned char> value(elem, 0);
  std::vector<int64_t> axes;
  bool have_axes = false;
  if (opset < 11) {
    if (!node.has_attr("pads")) {
      return node_error(node, StatusCode::kInvalidModel, "requires attribute 'pads'");
    }
    EDGEMM_ASSIGN_OR_RETURN(pads, node.attr_ints("pads"));
    EDGEMM_ASSIGN_OR_RETURN(float v, node.attr_float("value", 0.0f));
    if (!is_numeric_or_bool(dtype)) return unsupported_dtype(node, 0, dtype);
    store_from_double(dtype, value.data(), 0, v);
  } else {
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* pads_t, required_input(ctx, 1, "pads"));
    EDGEMM_ASSIGN_OR_RETURN(pads, read_int_list(node, *pads_t, "pads"));
    const Tensor* cv = ctx.input(2);
    if (cv != nullptr && cv->defined() && cv->element_count() > 0) {
      if (cv->dtype() != dtype) {
        return node_error(node, StatusCode::kInvalidArgument,
                          "input 'constant_value' has dtype " + std::string(dtype_name(cv->dtype())) +
                              " but 'data' has " + dtype_name(dtype));
      }
      copy_bytes(value.data(), cv->raw_data(), elem);
    }
    const Tensor* axes_t = ctx.input(3);
    if (axes_t != nullptr && axes_t->defined()) {
      if (opset < 18) {
        return node_error(
            node, StatusCode::kInvalidModel,
            "has input 'axes', which Pad takes from opset 18 (the model has opset " + std::to_string(opset) + ")");
      }
      EDGEMM_ASSIGN_OR_RETURN(axes, read_int_list(node, *axes_t, "axes"));
      have_axes = true;
    }
  }
  if (!have_axes) {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  const size_t na = axes.size();
  if (pads.size() != 2 * na) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "'pads' has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * na) +
                          " for input of shape " + shape_to_string(in->shape()));
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < na; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axes[i], rank));
    if (seen[a]) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input 'axes' " + shape_to_string(axes) + " names axis " + std::to_string(a) + " twice");
    }
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[i + na];
  }
  Shape out_shape(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    int64_t s = 0;
    if (__builtin_add_overflow(in->shape()[k], begin[k], &s) || __builtin_add_overflow(s, end[k], &out_shape[k])) {
      return node_error(node, StatusCode::kOutOfMemory,
                        "padded extent of axis " + std::to_string(k) + " overflows int64");
    }
    if (out_shape[k] < 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "pads " + std::to_string(begin[k]) + " and " + std::to_string(end[k]) +
                            " give negative extent " + std::to_string(out_shape[k]) + " for axis " + std::to_string(k) +
                            " of size " + std::to_string(in->shape()[k]));
    }
    // reflect / edge / wrap pad what is left after cropping.
    const int64_t kept = in->shape()[k] + std::min<int64_t>(0, begin[k]) + std::min<int64_t>(0, end[k]);
    if (mode != PadMode::kConstant && kept <= 0 && out_shape[k] > 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "cannot " + mode_name + "-pad axis " + std::to_string(k) + " of extent " +
                            std::to_string(in->shape()[k]) + " cropped to " + std::to_string(kept) + " by pads " +
                            std::to_string(begin[k]) + " and " + std::to_string(end[k]));
    }
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, dtype, "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, out_shape));
  if (out->element_count() == 0) return Status::ok();
  const std::vector<int64_t> in_strides = contiguous_strides(in->shape());

  if (mode == PadMode::kConstant) {
    pad_constant_copy(*in, begin, value.data(), *out, ctx.threads());
    return Status::ok();
  }

  // reflect / edge / wrap: per-axis maps from output to input positions. Negative pads crop
  // first ([crop, crop + kept) of the input); the rest pads that cropped range, as ONNX Runtime
  // does (the spec's numpy reference has no negative pads).
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t crop = std::max<int64_t>(0, -begin[k]);
    const int64_t kept = in->shape()[k] - crop - std::max<int64_t>(0, -end[k]);
    const int64_t pad = std::max<int64_t>(0, begin[k]);
    map[k].resize(static_cast<size_t>(out_shape[k]));
    for (int64_t o = 0; o < out_shape[k]; ++o) {
      map[k][o] = crop + pad_source_index(o - pad, kept, mode);
    }
  }
  if (rank == 0) {
    copy_tensor_bytes(*out, *in);
    return Status::ok();
  }
  const int64_t last = rank - 1;
  const int64_t row_len = out_shape[last];
  const int64_t rows = out->element_count() / row_len;
  dispatch_by_size(elem, [&]<typename U>() {
    const U* src = in->data<U>();
    U* dst = out->data<U>();
    const std::vector<int64_t>& lmap = map[last];
    parallel_for(ctx.threads(), rows, row_len, [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        int64_t rem = row, src_off = 0;
        for (int64_t k = last - 1; k >= 0; --k) {
          const int64_t o = rem % out_shape[k];
          rem /= out_shape[k];
          src_off += map[k][o] * in_strides[k];
        }
        const U* in_row = src + src_off;
        U* out_row = dst + row * row_len;
        for (int64_t j = 0; j < row_len; ++j) out_row[j] = in_row[lmap[j]];
      }
    });
  });
  return Status::ok();
}

/// CenterCropPad-18: every listed axis (attribute `axes`, default all; negative counts from the
/// back, no repeats) is cropped around its center or zero-padded evenly to the extent in the
/// `shape` input (one value per listed axis); with an odd difference the extra element is cut
/// from or added at the end.
Status run_center_crop_pad(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input_data"));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* shape_t, required_input(ctx, 1, "shape"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> target, read_int_list(node, *shape_t, "shape"));
  const int64_t rank = in->rank();
  std::vector<int64_t> axes;
  if (node.has_attr("axes")) {
    EDGEMM_ASSIGN_OR_RETURN(axes, node.attr_ints("axes"));
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  if (target.size() != axes.size()) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "input 'shape' has " + std::to_string(target.size()) + " values but there are " +
                          std::to_string(axes.size()) + " axes to crop or pad (input of shape " +
                          shape_to_string(in->shape()) + ")");
  }
  Shape out_shape = in->shape();
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axes[i], rank));
    if (seen[a]) {
      return node_error(node, StatusCode::kInvalidModel,
                        "attribute 'axes' " + shape_to_string(axes) + " names axis " + std::to_string(a) + " twice");
    }
    seen[a] = true;
    if (target[i] < 0) {
      return node_error(
          node, StatusCode::kInvalidArgument,
          "input 'shape' has negative extent " + std::to_string(target[i]) + " for axis " + std::to_string(a));
    }
    const int64_t dim = in->shape()[a];
    // Padding: floor(diff / 2) before; cropping: floor(-diff / 2) cut from the start.
    begin[a] = target[i] >= dim ? (target[i] - dim) / 2 : -((dim - target[i]) / 2);
    out_shape[a] = target[i];
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, in->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  if (out->element_count() == 0) return Status::ok();
  const std::vector<unsigned char> zero(dtype_size(in->dtype()), 0);
  pad_constant_copy(*in, begin, zero.data(), *out, ctx.threads());
  return Status::ok();
}

}  // namespace

void register_pad_tile_expand_kernels(KernelRegistry& registry) {
  registry.add("", "Expand", 8, simple_kernel(run_expand));
  registry.add("", "Tile", 6, simple_kernel(run_tile));
  registry.add("", "Pad", 2, versioned_kernel(run_pad));
  registry.add("", "CenterCropPad", 18, simple_kernel(run_center_crop_pad));
}

}  // namespace edgemm::kernels
