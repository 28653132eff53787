/// \file deform_conv.cc
/// DeformConv of the default ONNX domain (Operators.md "DeformConv" 19): a plain reference kernel
/// for 2-D inputs.
///
/// Inputs: X [N, C, H, W]; W [oC, C / group, kH, kW]; offset [N, offset_group · kH · kW · 2, oH,
/// oW]; optional B [oC]; optional mask [N, offset_group · kH · kW, oH, oW] (absent = all ones).
/// Attributes: dilations [2] (1s), group (1), kernel_shape (W's, checked when given),
/// offset_group (1), pads [4] as [top, left, bottom, right] (0s), strides [2] (1s).
/// oH = (H + top + bottom - (dilation_h · (kH - 1) + 1)) / stride_h + 1 (oW likewise), and offset
/// and mask must have that extent. Offset channel ((g · kH + i) · kW + j) · 2 holds the row shift
/// and the next channel the column shift of kernel tap (i, j) for input channels of offset group g
/// (C / offset_group consecutive channels); mask channel (g · kH + i) · kW + j its weight. Then
///   Y[n, o, y, x] = B[o] + sum over c in o's group, i, j of W[o, c', i, j] · mask · X~(n, c, p, q)
/// with p = y · stride_h - top + i · dilation_h + row shift, q = x · stride_w - left + j ·
/// dilation_w + column shift, and X~ the bilinear interpolation of X at (p, q) reading 0 outside
/// the image (as the spec's reference, GridSample with align_corners=1 and zeros padding; a NaN
/// position reads 0).
/// dtypes: float32, float64 (float16 through float32, rounded once); all inputs of X's dtype.
/// Errors name the node and the value: rank other than 4 (kUnsupported for N-D, else
/// kInvalidArgument), shapes that disagree with group / offset_group / kernel / output extent,
/// attributes of the wrong length or out of range (kInvalidModel), mixed dtypes.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace deform_conv_impl {
namespace {

struct DeformAttrs {
  int64_t group = 1, offset_group = 1;
  std::vector<int64_t> dilations, pads, strides, kernel_shape;  // checked lengths; empty = default
};

/// Extents of one run, checked against each other.
struct DeformGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t dil_h = 1, dil_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

Status bad_shape(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidArgument, message);
}

std::string value(const ir::Node& node, int i) { return "'" + elementwise::input_name(node, i) + "'"; }

Expected<DeformGeometry> make_geometry(const ir::Node& node, const DeformAttrs& at, const Tensor& x, const Tensor& w,
                                       const Tensor& offset, const Tensor* bias, const Tensor* mask) {
  if (x.rank() != 4) {
    return ir::node_error(node, x.rank() > 4 ? StatusCode::kUnsupported : StatusCode::kInvalidArgument,
                          "input X " + value(node, 0) + " must be 4-D [N, C, H, W] (only 2-D DeformConv is " +
                              "implemented), got " + shape_to_string(x.shape()));
  }
  DeformGeometry g;
  g.n = x.dim(0), g.c = x.dim(1), g.h = x.dim(2), g.w = x.dim(3);
  if (w.rank() != 4 || w.dim(1) * at.group != g.c || w.dim(0) % at.group != 0) {
    return bad_shape(node, "weight W " + value(node, 1) + " of shape " + shape_to_string(w.shape()) +
                               " must be [oC, C / group, kH, kW] with oC divisible by group " +
                               std::to_string(at.group) + " for X " + shape_to_string(x.shape()));
  }
  g.oc = w.dim(0), g.kh = w.dim(2), g.kw = w.dim(3);
  if (!at.kernel_shape.empty() && (at.kernel_shape[0] != g.kh || at.kernel_shape[1] != g.kw)) {
    return bad_shape(node, "attribute kernel_shape [" + std::to_string(at.kernel_shape[0]) + "," +
                               std::to_string(at.kernel_shape[1]) + "] does not match W " + shape_to_string(w.shape()));
  }
  if (g.c % at.offset_group != 0) {
    return bad_shape(node, "offset_group " + std::to_string(at.offset_group) + " does not divide the " +
                               std::to_string(g.c) + " channels of X " + value(node, 0));
  }
  if (!at.dilations.empty()) g.dil_h = at.dilations[0], g.dil_w = at.dilations[1];
  if (!at.strides.empty()) g.stride_h = at.strides[0], g.stride_w = at.strides[1];
  int64_t pad_bottom = 0, pad_right = 0;
  if (!at.pads.empty())
    g.pad_top = at.pads[0], g.pad_left = at.pads[1], pad_bottom = at.pads[2], pad_right = at.pads[3];
  if (g.kh > INT32_MAX || g.kw > INT32_MAX) {
    return bad_shape(node, "weight W " + value(node, 1) + " has an absurd kernel " + shape_to_string(w.shape()));
  }
  // Attribute values and kernel extents are below 2^31, X's extents bounded by its size: no overflow.
  const int64_t span_h = g.dil_h * (g.kh - 1) + 1, span_w = g.dil_w * (g.kw - 1) + 1;
  const int64_t padded_h = g.h + g.pad_top + pad_bottom, padded_w = g.w + g.pad_left + pad_right;
  g.oh = padded_h < span_h ? 0 : (padded_h - span_h) / g.stride_h + 1;
  g.ow = padded_w < span_w ? 0 : (padded_w - span_w) / g.stride_w + 1;
  if (g.kh < 1 || g.kw < 1 || g.oh < 1 || g.ow < 1) {
    return bad_shape(node, "kernel " + shape_to_string(w.shape()) + " with the dilations and pads does not fit X " +
                               shape_to_string(x.shape()) + " (output extent " + std::to_string(g.oh) + " x " +
                               std::to_string(g.ow) + ")");
  }
  const int64_t taps = at.offset_group * g.kh * g.kw;
  const Shape want_offset{g.n, taps * 2, g.oh, g.ow};
  if (offset.shape() != want_offset) {
    return bad_shape(node, "offset " + value(node, 2) + " must have shape " + shape_to_string(want_offset) +
                               " [N, offset_group * kH * kW * 2, oH, oW], got " + shape_to_string(offset.shape()));
  }
  if (bias != nullptr && bias->shape() != Shape{g.oc}) {
    return bad_shape(node, "bias B " + value(node, 3) + " must have shape [" + std::to_string(g.oc) + "], got " +
                               shape_to_string(bias->shape()));
  }
  const Shape want_mask{g.n, taps, g.oh, g.ow};
  if (mask != nullptr && mask->shape() != want_mask) {
    return bad_shape(node, "mask " + value(node, 4) + " must have shape " + shape_to_string(want_mask) +
                               " [N, offset_group * kH * kW, oH, oW], got " + shape_to_string(mask->shape()));
  }
  return g;
}

/// Bilinear sample of an H x W plane at (p, q), reading 0 outside.
template <typename T>
T bilinear(const T* plane, int64_t height, int64_t width, T p, T q) {
  if (!(p > T(-1) && p < static_cast<T>(height) && q > T(-1) && q < static_cast<T>(width))) return T(0);
  const T fp = std::floor(p), fq = std::floor(q);
  const int64_t r0 = static_cast<int64_t>(fp), c0 = static_cast<int64_t>(fq);
  const T dr = p - fp, dc = q - fq;
  auto at = [&](int64_t r, int64_t c) {
    return r >= 0 && r < height && c >= 0 && c < width ? plane[r * width + c] : T(0);
  };
  return (T(1) - dr) * ((T(1) - dc) * at(r0, c0) + dc * at(r0, c0 + 1)) +
         dr * ((T(1) - dc) * at(r0 + 1, c0) + dc * at(r0 + 1, c0 + 1));
}

/// Y for float or double storage. `col` is scratch of C · kH · kW · oH · oW values.
template <typename T>
void deform_conv(const DeformAttrs& at, const DeformGeometry& g, const T* x, const T* w, const T* offset, const T* bias,
                 const T* mask, T* y, T* col, int threads) {
  const int64_t taps = g.kh * g.kw, outs = g.oh * g.ow;
  const int64_t c_per_offset = g.c / at.offset_group;
  const int64_t c_per_group = g.c / at.group, oc_per_group = g.oc / at.group;
  const int64_t rows = c_per_group * taps;  // reduction length of one output channel
  for (int64_t b = 0; b < g.n; ++b) {
    // Columns: col[(c · kH + i) · kW + j][y · oW + x] = mask · X~ at the shifted tap.
    parallel_for(threads, g.c * taps, outs * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t c = row / taps, tap = row % taps, i = tap / g.kw, j = tap % g.kw;
        const int64_t og = c / c_per_offset;
        const T* plane = x + (b * g.c + c) * g.h * g.w;
        const T* off_h = offset + ((b * at.offset_group + og) * taps + tap) * 2 * outs;
        const T* off_w = off_h + outs;
        const T* m = mask != nullptr ? mask + ((b * at.offset_group + og) * taps + tap) * outs : nullptr;
        T* out = col + row * outs;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t o = oy * g.ow + ox;
            const T p = static_cast<T>(oy * g.stride_h - g.pad_top + i * g.dil_h) + off_h[o];
            const T q = static_cast<T>(ox * g.stride_w - g.pad_left + j * g.dil_w) + off_w[o];
            const T v = bilinear(plane, g.h, g.w, p, q);
            out[o] = m != nullptr ? v * m[o] : v;
          }
        }
      }
    });
    // Y[b, o] = B[o] + W[o] · col rows of o's group.
    parallel_for(threads, g.oc, rows * outs, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        T* yo = y + (b * g.oc + o) * outs;
        std::fill(yo, yo + outs, bias != nullptr ? bias[o] : T(0));
        const T* wo = w + o * rows;
        const T* cg = col + (o / oc_per_group) * rows * outs;
        for (int64_t r = 0; r < rows; ++r) {
          const T wv = wo[r];
          const T* cr = cg + r * outs;
          for (int64_t k = 0; k < outs; ++k) yo[k] += wv * cr[k];
        }
      }
    });
  }
}

class DeformConvKernel final : public Kernel {
 public:
  explicit DeformConvKernel(DeformAttrs at) : at_(std::move(at)) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, elementwise::need_input(ctx, 0));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* w, elementwise::need_input(ctx, 1));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* offset, elementwise::need_input(ctx, 2));
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64 && dt != DataType::kFloat16) {
      return unsupported_dtype(node, 0, dt);
    }
    const Tensor* all[] = {x, w, offset, bias, mask};
    for (int i = 1; i < 5; ++i) {
      if (all[i] != nullptr && all[i]->dtype() != dt) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input " + value(node, i) + " has dtype " + dtype_name(all[i]->dtype()) + ", expected " +
                                  dtype_name(dt) + " as X");
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(DeformGeometry g, make_geometry(node, at_, *x, *w, *offset, bias, mask));
    const Shape out_shape{g.n, g.oc, g.oh, g.ow};
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    const int threads = ctx.threads();
    const DataType compute = dt == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
    // The column scratch is a tensor so that an absurd size is a clear error, not a crash.
    EDGEMM_ASSIGN_OR_RETURN(Tensor col, Tensor::create(compute, Shape{g.c * g.kh * g.kw, g.oh * g.ow}));
    if (dt == DataType::kFloat64) {
      deform_conv<double>(at_, g, x->data<double>(), w->data<double>(), offset->data<double>(),
                          bias ? bias->data<double>() : nullptr, mask ? mask->data<double>() : nullptr,
                          y->data<double>(), col.data<double>(), threads);
      return Status::ok();
    }
    if (dt == DataType::kFloat32) {
      deform_conv<float>(at_, g, x->data<float>(), w->data<float>(), offset->data<float>(),
                         bias ? bias->data<float>() : nullptr, mask ? mask->data<float>() : nullptr, y->data<float>(),
                         col.data<float>(), threads);
      return Status::ok();
    }
    // float16: every input through float32, the output rounded once.
    std::vector<Tensor> f32(5);
    for (int i = 0; i < 5; ++i) {
      if (all[i] == nullptr) continue;
      EDGEMM_ASSIGN_OR_RETURN(f32[i], elementwise::to_float32(node, *all[i], threads));
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, out_shape));
    deform_conv<float>(at_, g, f32[0].data<float>(), f32[1].data<float>(), f32[2].data<float>(),
                       bias ? f32[3].data<float>() : nullptr, mask ? f32[4].data<float>() : nullptr, y32.data<float>(),
                       col.data<float>(), threads);
    return elementwise::convert_tensor(node, y32, *y, threads);
  }

 private:
  DeformAttrs at_;
};

/// Reads ints attribute `key`: absent = empty; else exactly `want` values in [lo, 2^31 - 1].
Expected<std::vector<int64_t>> read_ints(const ir::Node& node, const char* key, size_t want, int64_t lo) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> v, node.attr_ints(key));
  if (!node.has_attr(key)) return v;
  bool ok = v.size() == want;
  for (int64_t e : v) ok = ok && e >= lo && e <= INT32_MAX;
  if (!ok) {
    std::string got;
    for (size_t i = 0; i < v.size(); ++i) got += (i ? "," : "") + std::to_string(v[i]);
    return ir::node_error(node, StatusCode::kInvalidModel,
                          std::string("attribute ") + key + " [" + got + "] must hold " + std::to_string(want) +
                              " values >= " + std::to_string(lo) + " (2-D DeformConv)");
  }
  return v;
}

Expected<std::unique_ptr<Kernel>> make_deform_conv(const KernelInfo& info) {
  const ir::Node& node = info.node;
  DeformAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(at.group, node.attr_int("group", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.offset_group, node.attr_int("offset_group", 1));
  if (at.group < 1 || at.offset_group < 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attributes group and offset_group must be >= 1, got " + std::to_string(at.group) + " and " +
                              std::to_string(at.offset_group));
  }
  EDGEMM_ASSIGN_OR_RETURN(at.dilations, read_ints(node, "dilations", 2, 1));
  EDGEMM_ASSIGN_OR_RETURN(at.pads, read_ints(node, "pads", 4, 0));
  EDGEMM_ASSIGN_OR_RETURN(at.strides, read_ints(node, "strides", 2, 1));
  EDGEMM_ASSIGN_OR_RETURN(at.kernel_shape, read_ints(node, "kernel_shape", 2, 1));
  return std::unique_ptr<Kernel>(std::make_unique<DeformConvKernel>(std::move(at)));
}

}  // namespace
}  // namespace deform_conv_impl

/// Registers DeformConv (opset 19) in `registry`.
void register_deform_conv_kernels(KernelRegistry& registry) {
  registry.add("", "DeformConv", 19, deform_conv_impl::make_deform_conv);
}

}  // namespace edgemm::kernels
