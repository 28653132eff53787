/// \file col2im.cc
/// Col2Im of the default ONNX domain (Operators.md "Col2Im" 18): rearranges column blocks back
/// into a multidimensional image, summing where blocks overlap (the inverse of im2col, as
/// torch.nn.Fold).
///
/// Inputs: input [N, C * prod(block_shape), L]; image_shape and block_shape, 1-D int64 (int32
/// accepted) of one length n >= 1 (the spatial rank). Attributes: dilations [n] (default 1s),
/// pads [2n] as [x1_begin, ..., xn_begin, x1_end, ..., xn_end] (default 0s), strides [n]
/// (default 1s). With blocks_i = (image_i + begin_i + end_i - (dilation_i * (block_i - 1) + 1))
/// / stride_i + 1, L must equal prod(blocks_i). Output [N, C, image_shape...]:
///   Y[b, c, p] = sum of input[b, c * K + k, l] over kernel offsets k (row-major over
///                block_shape, K = prod(block_shape)) and block positions l (row-major over
///                blocks) with p_i = l_i * stride_i - begin_i + k_i * dilation_i inside the image.
/// dtypes: all integer and float types (float16/bfloat16 sum in float32 and round once;
/// integers wrap modulo 2^bits).
/// Errors (kInvalidArgument) name the node and the value: input not 3-D; image_shape and
/// block_shape not 1-D of one length; an image or block extent <= 0; an attribute of the wrong
/// length or out of range (dilations, strides <= 0, pads < 0); any extent, pad, dilation or
/// stride above 2^31 - 1; C * prod(block_shape) not matching input dim 1; no complete block
/// (some blocks_i < 1); L not equal to prod(blocks_i).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace col2im_impl {
namespace {

using elementwise::TypeList;

constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();

/// Shapes and attributes of one run, checked.
struct Col2ImGeometry {
  int64_t batch = 0, channels = 0, kernel_size = 1, block_count = 1, image_size = 1;
  std::vector<int64_t> image, block, dilations, pads_begin, strides, blocks;
};

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

struct Col2ImAttrs {
  std::vector<int64_t> dilations, pads, strides;  // empty = defaults
};

Status bad(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidArgument, message);
}

/// Reads `values` (an attribute of `want` entries, or `want` times `fallback` when absent) and
/// checks each lies in [lo, kMaxExtent].
Expected<std::vector<int64_t>> checked_attr(const ir::Node& node, const char* name, const std::vector<int64_t>& values,
                                            size_t want, int64_t fallback, int64_t lo) {
  if (values.empty()) return std::vector<int64_t>(want, fallback);
  if (values.size() != want) {
    return bad(node, std::string("attribute ") + name + " " + ints_to_string(values) + " must have " +
                         std::to_string(want) + " values for the spatial rank of image_shape");
  }
  for (int64_t v : values) {
    if (v < lo || v > kMaxExtent) {
      return bad(node, std::string("attribute ") + name + " " + ints_to_string(values) + " has a value outside [" +
                           std::to_string(lo) + ", " + std::to_string(kMaxExtent) + "]");
    }
  }
  return values;
}

Expected<Col2ImGeometry> make_geometry(const ir::Node& node, const Col2ImAttrs& at, const Tensor& x,
                                       const Tensor& image_t, const Tensor& block_t) {
  Col2ImGeometry g;
  if (x.rank() != 3) {
    return bad(node, "input '" + elementwise::input_name(node, 0) +
                         "' must be 3-D [N, C * prod(block_shape), L], got " + shape_to_string(x.shape()));
  }
  if (image_t.rank() != 1 || block_t.rank() != 1 || image_t.shape()[0] != block_t.shape()[0] ||
      image_t.shape()[0] < 1) {
    return bad(node, "image_shape '" + elementwise::input_name(node, 1) + "' and block_shape '" +
                         elementwise::input_name(node, 2) + "' must be 1-D of one length >= 1, got shapes " +
                         shape_to_string(image_t.shape()) + " and " + shape_to_string(block_t.shape()));
  }
  EDGEMM_ASSIGN_OR_RETURN(g.image, read_int_values(node, 1, image_t));
  EDGEMM_ASSIGN_OR_RETURN(g.block, read_int_values(node, 2, block_t));
  const size_t n = g.image.size();
  for (size_t i = 0; i < n; ++i) {
    if (g.image[i] < 1 || g.image[i] > kMaxExtent || g.block[i] < 1 || g.block[i] > kMaxExtent) {
      return bad(node, "image_shape " + ints_to_string(g.image) + " and block_shape " + ints_to_string(g.block) +
                           " must hold values in [1, " + std::to_string(kMaxExtent) + "]");
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(g.dilations, checked_attr(node, "dilations", at.dilations, n, 1, 1));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> pads, checked_attr(node, "pads", at.pads, 2 * n, 0, 0));
  EDGEMM_ASSIGN_OR_RETURN(g.strides, checked_attr(node, "strides", at.strides, n, 1, 1));
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(n));

  // K = prod(block_shape) must divide input dim 1 (no overflow: K <= dim 1 is checked as it grows).
  const int64_t rows = x.shape()[1];
  for (int64_t b : g.block) {
    if (g.kernel_size > (rows > 0 ? rows : 1) / b) {
      return bad(node, "block_shape " + ints_to_string(g.block) + " has more elements than dimension 1 (" +
                           std::to_string(rows) + ") of input '" + elementwise::input_name(node, 0) + "'");
    }
    g.kernel_size *= b;
  }
  if (rows % g.kernel_size != 0) {
    return bad(node, "dimension 1 (" + std::to_string(rows) + ") of input '" + elementwise::input_name(node, 0) +
                         "' is not a multiple of prod(block_shape " + ints_to_string(g.block) +
                         ") = " + std::to_string(g.kernel_size));
  }
  g.batch = x.shape()[0];
  g.channels = rows / g.kernel_size;

  const int64_t length = x.shape()[2];
  for (size_t i = 0; i < n; ++i) {
    const int64_t span = g.dilations[i] * (g.block[i] - 1) + 1;  // < 2^62
    const int64_t padded = g.image[i] + pads[i] + pads[i + n];   // < 2^33
    const int64_t blocks = padded < span ? 0 : (padded - span) / g.strides[i] + 1;
    if (blocks < 1) {
      return bad(node, "block_shape " + ints_to_string(g.block) + " with dilations " + ints_to_string(g.dilations) +
                           " does not fit in the padded image_shape " + ints_to_string(g.image) + " (pads " +
                           ints_to_string(pads) + ") along axis " + std::to_string(i));
    }
    g.blocks.push_back(blocks);
    if (g.block_count > (length > 0 ? length : 1) / blocks) {
      g.block_count = -1;
      break;
    }
    g.block_count *= blocks;
  }
  if (g.block_count != length) {
    return bad(node, "dimension 2 (" + std::to_string(length) + ") of input '" + elementwise::input_name(node, 0) +
                         "' must equal the number of blocks " + ints_to_string(g.blocks) +
                         " of image_shape, block_shape, dilations, pads and strides");
  }
  for (int64_t v : g.image) g.image_size *= v;  // bounded by the output tensor's allocation check
  return g;
}

/// Sums the columns of one (batch, channel) into its zeroed image plane.
template <typename T>
void fold_plane(const Col2ImGeometry& g, const T* cols, T* image) {
  const size_t n = g.image.size();
  std::vector<int64_t> k_idx(n, 0), l_idx(n, 0);
  std::vector<int64_t> image_strides(n, 1);
  for (size_t i = n - 1; i > 0; --i) image_strides[i - 1] = image_strides[i] * g.image[i];
  for (int64_t k = 0; k < g.kernel_size; ++k) {
    const T* row = cols + k * g.block_count;
    std::fill(l_idx.begin(), l_idx.end(), 0);
    for (int64_t l = 0; l < g.block_count; ++l) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t i = 0; i < n && inside; ++i) {
        const int64_t p = l_idx[i] * g.strides[i] - g.pads_begin[i] + k_idx[i] * g.dilations[i];
        inside = p >= 0 && p < g.image[i];
        offset += p * image_strides[i];
      }
      if (inside) {
        if constexpr (std::is_integral_v<T>) {
          image[offset] = elementwise::wrap_add(image[offset], row[l]);
        } else {
          image[offset] += row[l];
        }
      }
      for (size_t i = n; i-- > 0;) {  // next block position, row-major
        if (++l_idx[i] < g.blocks[i]) break;
        l_idx[i] = 0;
      }
    }
    for (size_t i = n; i-- > 0;) {  // next kernel offset, row-major
      if (++k_idx[i] < g.block[i]) break;
      k_idx[i] = 0;
    }
  }
}

template <typename T>
void col2im(const Col2ImGeometry& g, const T* x, T* y, int threads) {
  const int64_t plane_in = g.kernel_size * g.block_count;
  parallel_for(threads, g.batch * g.channels, plane_in, [&](int64_t begin, int64_t end) {
    for (int64_t bc = begin; bc < end; ++bc) fold_plane<T>(g, x + bc * plane_in, y + bc * g.image_size);
  });
}

class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(Col2ImAttrs at) : at_(std::move(at)) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, elementwise::need_input(ctx, 0));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* image, elementwise::need_input(ctx, 1));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* block, elementwise::need_input(ctx, 2));
    const DataType dt = x->dtype();
    if (!elementwise::dtype_in(elementwise::kNumericSet | elementwise::kBFloat16Set, dt)) {
      return unsupported_dtype(node, 0, dt);
    }
    EDGEMM_ASSIGN_OR_RETURN(Col2ImGeometry g, make_geometry(node, at_, *x, *image, *block));
    Shape out_shape{g.batch, g.channels};
    out_shape.insert(out_shape.end(), g.image.begin(), g.image.end());
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    std::memset(y->raw_data(), 0, y->byte_size());  // the columns are summed into it
    if (x->element_count() == 0) return Status::ok();
    const int threads = ctx.threads();
    if (elementwise::is_half(dt)) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor x32, elementwise::to_float32(node, *x, threads));
      EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, out_shape));
      std::memset(y32.raw_data(), 0, y32.byte_size());
      col2im<float>(g, x32.data<float>(), y32.data<float>(), threads);
      return elementwise::convert_tensor(node, y32, *y, threads);
    }
    elementwise::dispatch(elementwise::NumericTypes{}, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      col2im<T>(g, x->data<T>(), y->data<T>(), threads);
    });
    return Status::ok();
  }

 private:
  Col2ImAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_col2im(const KernelInfo& info) {
  Col2ImAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(at.dilations, info.node.attr_ints("dilations"));
  EDGEMM_ASSIGN_OR_RETURN(at.pads, info.node.attr_ints("pads"));
  EDGEMM_ASSIGN_OR_RETURN(at.strides, info.node.attr_ints("strides"));
  return std::unique_ptr<Kernel>(std::make_unique<Col2ImKernel>(std::move(at)));
}

}  // namespace
}  // namespace col2im_impl

/// Registers Col2Im (opset 18) in `registry`.
void register_col2im_kernels(KernelRegistry& registry) { registry.add("", "Col2Im", 18, col2im_impl::make_col2im); }

}  // namespace edgemm::kernels
