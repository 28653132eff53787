/// \file pad_tile_expand.cc
/// Size-growing copies, default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Expand-8/13 (bidirectional numpy broadcast of the input to the `shape` input),
/// Tile-6/13 (`repeats` input, one per axis), Pad-2 (pads/mode/value attributes) and
/// Pad-11/13 (pads and optional constant_value inputs; the optional `axes` input of Pad-18 is
/// accepted too). Pad modes: constant, reflect (mirror without repeating the edge), edge
/// (repeat the edge), and wrap (Pad-19) — negative pads crop. Sizes read from data are
/// validated (negative → InvalidArgument, overflowing or over kMaxTensorBytes → OutOfMemory)
/// before anything is allocated. All dtypes, copied as bytes.

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
               broadcast_strides(in->shape(), out_shape), out_shape, dtype_size(in->dtype()),
               ctx.threads());
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
                      "input 'repeats' has " + std::to_string(repeats.size()) +
                          " entries but the input has rank " + std::to_string(rank));
  }
  Shape out_shape(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    if (repeats[k] < 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "input 'repeats' has negative value " + std::to_string(repeats[k]) +
                            " at axis " + std::to_string(k));
    }
    if (__builtin_mul_overflow(in->shape()[k], repeats[k], &out_shape[k])) {
      return node_error(node, StatusCode::kOutOfMemory,
                        "tiling extent " + std::to_string(in->shape()[k]) + " by " +
                            std::to_string(repeats[k]) + " overflows int64");
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
  strided_copy(out->raw_data(), contiguous_strides(view), in->raw_data(), src_strides, view,
               dtype_size(in->dtype()), ctx.threads());
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
    return node_error(
        node, StatusCode::kInvalidArgument,
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
                          "input 'constant_value' has dtype " +
                              std::string(dtype_name(cv->dtype())) + " but 'data' has " +
                              dtype_name(dtype));
      }
      copy_bytes(value.data(), cv->raw_data(), elem);
    }
    const Tensor* axes_t = ctx.input(3);
    if (axes_t != nullptr && axes_t->defined()) {
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
                      "'pads' has " + std::to_string(pads.size()) + " entries, expected " +
                          std::to_string(2 * na) + " for input of shape " +
                          shape_to_string(in->shape()));
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < na; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axes[i], rank));
    begin[a] = pads[i];
    end[a] = pads[i + na];
  }
  Shape out_shape(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    int64_t s = 0;
    if (__builtin_add_overflow(in->shape()[k], begin[k], &s) ||
        __builtin_add_overflow(s, end[k], &out_shape[k])) {
      return node_error(node, StatusCode::kOutOfMemory,
                        "padded extent of axis " + std::to_string(k) + " overflows int64");
    }
    if (out_shape[k] < 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "pads " + std::to_string(begin[k]) + " and " + std::to_string(end[k]) +
                            " give negative extent " + std::to_string(out_shape[k]) + " for axis " +
                            std::to_string(k) + " of size " + std::to_string(in->shape()[k]));
    }
    if (mode != PadMode::kConstant && in->shape()[k] == 0 && out_shape[k] > 0) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "cannot " + mode_name + "-pad axis " + std::to_string(k) + " of extent 0");
    }
  }
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, dtype, "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, out_shape));
  if (out->element_count() == 0) return Status::ok();
  const std::vector<int64_t> in_strides = contiguous_strides(in->shape());
  const std::vector<int64_t> out_strides = contiguous_strides(out_shape);

  if (mode == PadMode::kConstant) {
    fill_elements(out->raw_data(), out->element_count(), elem, value.data());
    Shape region(static_cast<size_t>(rank));
    int64_t in_off = 0, out_off = 0;
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t in_start = std::max<int64_t>(0, -begin[k]);
      const int64_t out_start = std::max<int64_t>(0, begin[k]);
      region[k] =
          std::max<int64_t>(0, std::min(in->shape()[k] - in_start, out_shape[k] - out_start));
      in_off += in_start * in_strides[k];
      out_off += out_start * out_strides[k];
    }
    strided_copy(out->data<char>() + out_off * static_cast<int64_t>(elem), out_strides,
                 in->data<char>() + in_off * static_cast<int64_t>(elem), in_strides, region, elem, ctx.threads());
    return Status::ok();
  }

  // reflect / edge / wrap: per-axis maps from output to input positions.
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    map[k].resize(static_cast<size_t>(out_shape[k]));
    for (int64_t o = 0; o < out_shape[k]; ++o) {
      map[k][o] = pad_source_index(o - begin[k], in->shape()[k], mode);
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

}  // namespace

void register_pad_tile_expand_kernels(KernelRegistry& registry) {
  registry.add("", "Expand", 8, simple_kernel(run_expand));
  registry.add("", "Tile", 6, simple_kernel(run_tile));
  registry.add("", "Pad", 2, versioned_kernel(run_pad));
}

}  // namespace edgemm::kernels
