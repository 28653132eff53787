/// \file conv_reference.cc
/// Shape rules and plain loops for ONNX Conv / ConvTranspose (see conv_reference.h). The loops
/// accumulate floating-point types in double so they serve as the oracle for the oneDNN paths,
/// and int32 (ConvInteger, QLinearConv) in int64, wrapped to int32 on store.

#include "kernels/cpu/conv_reference.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/common.h"

namespace edgemm::kernels {
namespace {

std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(v[i]);
  }
  s += ']';
  return s;
}

Status bad(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidArgument, message);
}

std::string input_name(const ir::Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : std::string("?");
}

// Checks that an attribute list has `want` entries (or is absent) and fills `out`, defaulting
// every entry to `fallback`.
Status expand_attr(const ir::Node& node, const char* name, const std::vector<int64_t>& values, size_t want,
                   int64_t fallback, std::vector<int64_t>* out) {
  if (values.empty()) {
    out->assign(want, fallback);
    return Status::ok();
  }
  if (values.size() != want) {
    return bad(node, std::string("attribute '") + name + "' " + list_to_string(values) + " has " +
                         std::to_string(values.size()) + " values; the input has " +
                         std::to_string(want / (std::string(name) == "pads" ? 2 : 1)) + " spatial axes");
  }
  *out = values;
  return Status::ok();
}

// Common validation for Conv / ConvTranspose: ranks, kernel_shape, strides, dilations.
Status check_common(const ir::Node& node, const ConvAttrs& attrs, const Shape& x, const Shape& w, ConvGeometry* g) {
  if (x.size() < 3 || x.size() > 5) {
    return ir::node_error(node, x.size() < 3 ? StatusCode::kInvalidArgument : StatusCode::kUnsupported,
                          "input '" + input_name(node, 0) + "' has shape " + shape_to_string(x) +
                              "; expected [N, C, D1, ...] with 1 to 3 spatial axes");
  }
  if (w.size() != x.size()) {
    return bad(node, "weight '" + input_name(node, 1) + "' has shape " + shape_to_string(w) + " but input '" +
                         input_name(node, 0) + "' has rank " + std::to_string(x.size()) + "; the ranks must match");
  }
  const size_t k = x.size() - 2;
  g->batch = x[0];
  g->in_channels = x[1];
  g->group = attrs.group;
  g->in_spatial.assign(x.begin() + 2, x.end());
  g->kernel.assign(w.begin() + 2, w.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != g->kernel) {
    return bad(node, "attribute kernel_shape " + list_to_string(attrs.kernel_shape) + " does not match weight '" +
                         input_name(node, 1) + "' of shape " + shape_to_string(w));
  }
  EDGEMM_RETURN_IF_ERROR(expand_attr(node, "strides", attrs.strides, k, 1, &g->strides));
  EDGEMM_RETURN_IF_ERROR(expand_attr(node, "dilations", attrs.dilations, k, 1, &g->dilations));
  for (size_t i = 0; i < k; ++i) {
    if (g->strides[i] < 1 || g->dilations[i] < 1) {
      return bad(node, "strides " + list_to_string(g->strides) + " and dilations " + list_to_string(g->dilations) +
                           " must be positive");
    }
  }
  return Status::ok();
}

}  // namespace

Status check_attr_bounds(const ir::Node& node, const char* name, const std::vector<int64_t>& values) {
  for (int64_t v : values) {
    if (v > kMaxSpatialAttr || v < -kMaxSpatialAttr) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            std::string("attribute ") + name + " " + list_to_string(values) + " has a value beyond " +
                                std::to_string(kMaxSpatialAttr));
    }
  }
  return Status::ok();
}

Expected<AutoPad> parse_auto_pad(const ir::Node& node) {
  EDGEMM_ASSIGN_OR_RETURN(std::string s, node.attr_string("auto_pad", "NOTSET"));
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return ir::node_error(node, StatusCode::kInvalidModel,
                        "attribute auto_pad is '" + s + "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

Expected<ConvAttrs> parse_conv_attrs(const ir::Node& node, bool transpose) {
  ConvAttrs a;
  EDGEMM_ASSIGN_OR_RETURN(a.auto_pad, parse_auto_pad(node));
  EDGEMM_ASSIGN_OR_RETURN(a.kernel_shape, node.attr_ints("kernel_shape"));
  EDGEMM_ASSIGN_OR_RETURN(a.strides, node.attr_ints("strides"));
  EDGEMM_ASSIGN_OR_RETURN(a.dilations, node.attr_ints("dilations"));
  EDGEMM_ASSIGN_OR_RETURN(a.pads, node.attr_ints("pads"));
  EDGEMM_ASSIGN_OR_RETURN(a.group, node.attr_int("group", 1));
  if (transpose) {
    EDGEMM_ASSIGN_OR_RETURN(a.output_padding, node.attr_ints("output_padding"));
    EDGEMM_ASSIGN_OR_RETURN(a.output_shape, node.attr_ints("output_shape"));
  }
  if (a.group < 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute group is " + std::to_string(a.group) + "; it must be >= 1");
  }
  for (int64_t p : a.pads) {
    if (p < 0) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute pads " + list_to_string(a.pads) + " has a negative value");
    }
  }
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "kernel_shape", a.kernel_shape));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "strides", a.strides));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "dilations", a.dilations));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "pads", a.pads));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "output_padding", a.output_padding));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "output_shape", a.output_shape));
  return a;
}

Shape ConvGeometry::output_shape() const {
  Shape s = {batch, out_channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

bool resolve_spatial_axis(AutoPad auto_pad, int64_t in, int64_t effective_kernel, int64_t stride,
                          int64_t pad_begin_attr, int64_t pad_end_attr, bool ceil_mode, int64_t* out,
                          int64_t* pad_begin, int64_t* pad_end) {
  switch (auto_pad) {
    case AutoPad::kSameUpper:
    case AutoPad::kSameLower: {
      *out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (*out - 1) * stride + effective_kernel - in);
      const int64_t small = total / 2;
      *pad_begin = auto_pad == AutoPad::kSameUpper ? small : total - small;
      *pad_end = total - *pad_begin;
      return true;
    }
    case AutoPad::kValid:
      *pad_begin = *pad_end = 0;
      break;
    case AutoPad::kNotSet:
      *pad_begin = pad_begin_attr;
      *pad_end = pad_end_attr;
      break;
  }
  const int64_t span = in + *pad_begin + *pad_end - effective_kernel;
  if (span < 0) return false;
  *out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // A last window that would start inside the end padding is dropped (PyTorch / ORT rule).
  if (ceil_mode && (*out - 1) * stride >= in + *pad_begin) --*out;
  return true;
}

Expected<ConvGeometry> conv_geometry(const ir::Node& node, const ConvAttrs& attrs, const Shape& x, const Shape& w,
                                     const Shape* b) {
  ConvGeometry g;
  EDGEMM_RETURN_IF_ERROR(check_common(node, attrs, x, w, &g));
  const size_t k = x.size() - 2;
  if (x[1] != w[1] * attrs.group) {
    return bad(node, "input '" + input_name(node, 0) + "' has " + std::to_string(x[1]) + " channels, weight expects " +
                         std::to_string(w[1] * attrs.group) + " (group " + std::to_string(attrs.group) + ")");
  }
  if (w[0] % attrs.group != 0) {
    return bad(node, "weight '" + input_name(node, 1) + "' has " + std::to_string(w[0]) +
                         " output channels, which is not a multiple of group " + std::to_string(attrs.group));
  }
  g.out_channels = w[0];
  if (b != nullptr && (b->size() != 1 || (*b)[0] != w[0])) {
    return bad(node, "bias '" + input_name(node, 2) + "' has shape " + shape_to_string(*b) + "; expected [" +
                         std::to_string(w[0]) + "]");
  }
  std::vector<int64_t> pads;
  EDGEMM_RETURN_IF_ERROR(expand_attr(node, "pads", attrs.pads, 2 * k, 0, &pads));
  g.out_spatial.resize(k);
  g.pad_begin.resize(k);
  g.pad_end.resize(k);
  for (size_t i = 0; i < k; ++i) {
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (!resolve_spatial_axis(attrs.auto_pad, x[i + 2], eff, g.strides[i], pads[i], pads[i + k], false,
                              &g.out_spatial[i], &g.pad_begin[i], &g.pad_end[i])) {
      return bad(node, "on spatial axis " + std::to_string(i) + " the dilated kernel (" + std::to_string(eff) +
                           ") is larger than the padded input '" + input_name(node, 0) + "' " + shape_to_string(x));
    }
  }
  return g;
}

Expected<ConvGeometry> conv_transpose_geometry(const ir::Node& node, const ConvAttrs& attrs, const Shape& x,
                                               const Shape& w, const Shape* b) {
  ConvGeometry g;
  EDGEMM_RETURN_IF_ERROR(check_common(node, attrs, x, w, &g));
  const size_t k = x.size() - 2;
  if (x[1] != w[0]) {
    return bad(node, "input '" + input_name(node, 0) + "' has " + std::to_string(x[1]) + " channels, weight expects " +
                         std::to_string(w[0]) + " (group " + std::to_string(attrs.group) + ")");
  }
  if (x[1] % attrs.group != 0) {
    return bad(node, "input '" + input_name(node, 0) + "' has " + std::to_string(x[1]) +
                         " channels, which is not a multiple of group " + std::to_string(attrs.group));
  }
  g.out_channels = w[1] * attrs.group;
  if (b != nullptr && (b->size() != 1 || (*b)[0] != g.out_channels)) {
    return bad(node, "bias '" + input_name(node, 2) + "' has shape " + shape_to_string(*b) + "; expected [" +
                         std::to_string(g.out_channels) + "]");
  }
  std::vector<int64_t> pads, out_pad, out_shape = attrs.output_shape;
  EDGEMM_RETURN_IF_ERROR(expand_attr(node, "pads", attrs.pads, 2 * k, 0, &pads));
  EDGEMM_RETURN_IF_ERROR(expand_attr(node, "output_padding", attrs.output_padding, k, 0, &out_pad));
  // Some exporters write output_shape with the N and C axes; keep the spatial part.
  if (out_shape.size() == k + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != k) {
    return bad(node, "attribute output_shape " + list_to_string(attrs.output_shape) +
                         " does not have one value per spatial axis (" + std::to_string(k) + ")");
  }
  g.out_spatial.resize(k);
  g.pad_begin.resize(k);
  g.pad_end.resize(k);
  auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  for (size_t i = 0; i < k; ++i) {
    if (out_pad[i] < 0) {
      return bad(node, "attribute output_padding " + list_to_string(out_pad) + " has a negative value");
    }
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t full = g.strides[i] * (x[i + 2] - 1) + out_pad[i] + eff;
    const bool same = attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower;
    if (!out_shape.empty() || same) {
      const int64_t out = !out_shape.empty() ? out_shape[i] : x[i + 2] * g.strides[i];
      const int64_t total = full - out;
      const int64_t half = floor_half(total);
      g.pad_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? half : total - half;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out_spatial[i] = out;
    } else {
      const bool valid = attrs.auto_pad == AutoPad::kValid;
      g.pad_begin[i] = valid ? 0 : pads[i];
      g.pad_end[i] = valid ? 0 : pads[i + k];
      g.out_spatial[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.out_spatial[i] < 0 || (x[i + 2] > 0 && g.out_spatial[i] == 0 && out_shape.empty())) {
      return bad(node, "the output of input '" + input_name(node, 0) + "' " + shape_to_string(x) +
                           " would have extent " + std::to_string(g.out_spatial[i]) + " on spatial axis " +
                           std::to_string(i) + " (pads too large)");
    }
  }
  return g;
}

template <typename T>
void conv_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int threads) {
  // int32: exact in int64; the store wraps modulo 2^32 (C++20), like a 32-bit accumulator.
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  const Geometry3d r = to_3d(g);
  const int64_t m_total = g.out_channels, mg = m_total / g.group, cg = g.in_channels / g.group;
  parallel_for(threads, g.batch * m_total, r.out_size * cg * r.k_size, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t n = idx / m_total, m = idx % m_total, grp = m / mg;
      const T* wm = w + m * cg * r.k_size;
      T* yo = y + idx * r.out_size;
      for (int64_t od = 0; od < r.out[0]; ++od) {
        for (int64_t oh = 0; oh < r.out[1]; ++oh) {
          for (int64_t ow = 0; ow < r.out[2]; ++ow) {
            Acc acc = bias != nullptr ? static_cast<Acc>(bias[m]) : Acc(0);
            for (int64_t c = 0; c < cg; ++c) {
              const T* xc = x + (n * g.in_channels + grp * cg + c) * r.in_size;
              const T* wc = wm + c * r.k_size;
              for (int64_t kd = 0; kd < r.k[0]; ++kd) {
                const int64_t id = od * r.s[0] - r.pb[0] + kd * r.d[0];
                if (id < 0 || id >= r.in[0]) continue;
                for (int64_t kh = 0; kh < r.k[1]; ++kh) {
                  const int64_t ih = oh * r.s[1] - r.pb[1] + kh * r.d[1];
                  if (ih < 0 || ih >= r.in[1]) continue;
                  const T* xrow = xc + (id * r.in[1] + ih) * r.in[2];
                  const T* wrow = wc + (kd * r.k[1] + kh) * r.k[2];
                  for (int64_t kw = 0; kw < r.k[2]; ++kw) {
                    const int64_t iw = ow * r.s[2] - r.pb[2] + kw * r.d[2];
                    if (iw < 0 || iw >= r.in[2]) continue;
                    acc += static_cast<Acc>(xrow[iw]) * static_cast<Acc>(wrow[kw]);
                  }
                }
              }
            }
            yo[(od * r.out[1] + oh) * r.out[2] + ow] = static_cast<T>(acc);
          }
        }
      }
    }
  });
}

template <typename T>
void conv_transpose_reference(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y, int threads) {
  const Geometry3d r = to_3d(g);
  const int64_t m_total = g.out_channels, mg = m_total / g.group, cg = g.in_channels / g.group;
  parallel_for(threads, g.batch * m_total, r.in_size * cg * r.k_size, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(static_cast<size_t>(r.out_size));
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t n = idx / m_total, m = idx % m_total, grp = m / mg, mm = m % mg;
      std::fill(acc.begin(), acc.end(), bias != nullptr ? static_cast<double>(bias[m]) : 0.0);
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t cc = grp * cg + c;
        const T* xc = x + (n * g.in_channels + cc) * r.in_size;
        const T* wc = w + (cc * mg + mm) * r.k_size;
        for (int64_t id = 0; id < r.in[0]; ++id) {
          for (int64_t ih = 0; ih < r.in[1]; ++ih) {
            for (int64_t iw = 0; iw < r.in[2]; ++iw) {
              const double v = static_cast<double>(xc[(id * r.in[1] + ih) * r.in[2] + iw]);
              for (int64_t kd = 0; kd < r.k[0]; ++kd) {
                const int64_t od = id * r.s[0] - r.pb[0] + kd * r.d[0];
                if (od < 0 || od >= r.out[0]) continue;
                for (int64_t kh = 0; kh < r.k[1]; ++kh) {
                  const int64_t oh = ih * r.s[1] - r.pb[1] + kh * r.d[1];
                  if (oh < 0 || oh >= r.out[1]) continue;
                  double* arow = acc.data() + (od * r.out[1] + oh) * r.out[2];
                  const T* wrow = wc + (kd * r.k[1] + kh) * r.k[2];
                  for (int64_t kw = 0; kw < r.k[2]; ++kw) {
                    const int64_t ow = iw * r.s[2] - r.pb[2] + kw * r.d[2];
                    if (ow < 0 || ow >= r.out[2]) continue;
                    arow[ow] += v * static_cast<double>(wrow[kw]);
                  }
                }
              }
            }
          }
        }
      }
      T* yo = y + idx * r.out_size;
      for (int64_t i = 0; i < r.out_size; ++i) yo[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
    }
  });
}

template void conv_reference<float>(const ConvGeometry&, const float*, const float*, const float*, float*, int);
template void conv_reference<double>(const ConvGeometry&, const double*, const double*, const double*, double*, int);
template void conv_reference<int32_t>(const ConvGeometry&, const int32_t*, const int32_t*, const int32_t*, int32_t*,
                                      int);
template void conv_transpose_reference<float>(const ConvGeometry&, const float*, const float*, const float*, float*,
                                              int);
template void conv_transpose_reference<double>(const ConvGeometry&, const double*, const double*, const double*,
                                               double*, int);

Geometry3d to_3d(const ConvGeometry& g) {
  Geometry3d r{};
  const int64_t lead = 3 - g.spatial_rank();
  for (int64_t i = 0; i < 3; ++i) {
    const bool real = i >= lead;
    const int64_t j = i - lead;
    r.in[i] = real ? g.in_spatial[j] : 1;
    r.out[i] = real ? g.out_spatial[j] : 1;
    r.k[i] = real ? g.kernel[j] : 1;
    r.s[i] = real ? g.strides[j] : 1;
    r.d[i] = real ? g.dilations[j] : 1;
    r.pb[i] = real ? g.pad_begin[j] : 0;
    r.pe[i] = real ? g.pad_end[j] : 0;
  }
  r.in_size = r.in[0] * r.in[1] * r.in[2];
  r.out_size = r.out[0] * r.out[1] * r.out[2];
  r.k_size = r.k[0] * r.k[1] * r.k[2];
  return r;
}

}  // namespace edgemm::kernels
