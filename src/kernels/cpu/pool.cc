/// \file pool.cc
/// Pooling of the default ONNX domain, plain loops over NCHW-style [N, C, D1, ..., Dk] (k = 1..3):
/// - MaxPool (Operators.md "MaxPool" 1/8/10/11/12): auto_pad, pads, strides, dilations (10+),
///   ceil_mode (10+), optional Indices output (8+) as flat int64 indices into X, row-major
///   (storage_order 0) or with the spatial axes in column-major order (storage_order 1).
/// - AveragePool ("AveragePool" 1/7/10/11/19): count_include_pad divides by the number of window
///   positions inside the padded input, otherwise by the number of input elements in the window;
///   ceil_mode (10+), dilations (19+).
/// - LpPool ("LpPool" 2/11/18): (sum |x|^p)^(1/p) over the window, padding counts as zero;
///   ceil_mode and dilations (18+).
/// - GlobalAveragePool, GlobalMaxPool (1), GlobalLpPool (2): over all spatial axes, output
///   [N, C, 1, ..., 1].
/// - MaxUnpool ("MaxUnpool" 9/11): zeros of output_shape (default (in - 1) * stride + kernel -
///   pads) with X scattered to the positions of the flat indices I (which index the default
///   shape); an index outside the output is an error.
/// ceil_mode follows PyTorch / ONNX Runtime: the last window must start inside the input or the
/// begin padding; a window larger than the padded input follows oversized_window_extent().
/// auto_pad SAME_* with dilations follows the spec: ceil(in / stride) outputs, padded for the
/// dilated window. ONNX Runtime 1.30 pads for the undilated kernel there and gives fewer outputs
/// (MaxPool, AveragePool-19 and LpPool-18 alike).
/// dtypes: float32, float64; MaxPool also int8, uint8.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/conv_reference.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/layout.h"

namespace edgemm::kernels {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolAttrs {
  PoolKind kind = PoolKind::kMax;
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  bool ceil_mode = false;
  bool count_include_pad = false;
  int64_t storage_order = 0;
  int64_t p = 2;
};

std::string list_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(v[i]);
  }
  s += ']';
  return s;
}

Status check_input(const ir::Node& node, const Tensor* x) {
  if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input X is missing");
  if (x->rank() < 3) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input '" + node.inputs[0] + "' has shape " + shape_to_string(x->shape()) +
                              "; expected [N, C, D1, ...] with at least one spatial axis");
  }
  return Status::ok();
}

// Output extent of an axis whose dilated window is larger than the padded input by
// `-span` elements (span = padded input - window < 0). The MaxPool / AveragePool spec gives
// floor(span / stride + 1), or ceil(span / stride + 1) with ceil_mode, and keeps a window
// that starts inside the input (here the first one does). ONNX Runtime 1.30 computes the same
// except that in floor mode it truncates span / stride towards zero. Hence:
// - span < -stride: the formula is negative; ONNX Runtime refuses too.
// - span == -stride: 0 outputs (an empty Y), in both modes and in ONNX Runtime.
// - -stride < span < 0, ceil_mode: 1 output, the window clipped to the input, as in ONNX Runtime.
// - -stride < span < 0, floor mode: the spec gives 0 outputs but ONNX Runtime 1, so either
//   answer disagrees with one of them; refused.
Expected<int64_t> oversized_window_extent(int64_t span, int64_t stride, bool ceil_mode) {
  const std::string sizes = "the window is larger than the padded input by " + std::to_string(-span) + " (stride " +
                            std::to_string(stride) + ")";
  if (span < -stride) {
    return make_error(StatusCode::kInvalidArgument,
                      sizes + ", so the ONNX output shape formula gives a negative extent");
  }
  if (span == -stride) return 0;
  if (ceil_mode) return 1;
  return make_error(StatusCode::kInvalidArgument,
                    sizes +
                        ": the ONNX output shape formula gives 0 outputs but ONNX Runtime 1 (with ceil_mode=1 "
                        "both give 1)");
}

// Window geometry for one input shape (reuses ConvGeometry; channels are not mixed).
Expected<ConvGeometry> pool_geometry(const ir::Node& node, const PoolAttrs& a, const Shape& x) {
  const size_t k = x.size() - 2;
  if (k > 3) {
    return ir::node_error(
        node, StatusCode::kUnsupported,
        "input '" + node.inputs[0] + "' has " + std::to_string(k) + " spatial axes; pooling supports 1 to 3");
  }
  auto check_len = [&](const char* name, const std::vector<int64_t>& v, size_t want) -> Status {
    if (!v.empty() && v.size() != want) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("attribute ") + name + " " + list_to_string(v) + " does not match input '" +
                                node.inputs[0] + "' with " + std::to_string(k) + " spatial axes");
    }
    return Status::ok();
  };
  if (a.kernel_shape.size() != k) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "attribute kernel_shape " + list_to_string(a.kernel_shape) +
                              " needs one value per spatial axis of input '" + node.inputs[0] + "' " +
                              shape_to_string(x));
  }
  EDGEMM_RETURN_IF_ERROR(check_len("strides", a.strides, k));
  EDGEMM_RETURN_IF_ERROR(check_len("dilations", a.dilations, k));
  EDGEMM_RETURN_IF_ERROR(check_len("pads", a.pads, 2 * k));
  ConvGeometry g;
  g.batch = x[0];
  g.in_channels = g.out_channels = g.group = x[1];
  g.in_spatial.assign(x.begin() + 2, x.end());
  g.kernel = a.kernel_shape;
  g.strides = a.strides.empty() ? std::vector<int64_t>(k, 1) : a.strides;
  g.dilations = a.dilations.empty() ? std::vector<int64_t>(k, 1) : a.dilations;
  g.out_spatial.resize(k);
  g.pad_begin.resize(k);
  g.pad_end.resize(k);
  for (size_t i = 0; i < k; ++i) {
    if (g.kernel[i] < 1 || g.strides[i] < 1 || g.dilations[i] < 1) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "kernel_shape, strides and dilations must be positive (kernel_shape " + list_to_string(g.kernel) + ")");
    }
    const int64_t pb = a.pads.empty() ? 0 : a.pads[i], pe = a.pads.empty() ? 0 : a.pads[i + k];
    if (pb < 0 || pe < 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "attribute pads " + list_to_string(a.pads) + " has a negative value");
    }
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (!resolve_spatial_axis(a.auto_pad, x[i + 2], eff, g.strides[i], pb, pe, a.ceil_mode, &g.out_spatial[i],
                              &g.pad_begin[i], &g.pad_end[i])) {
      const int64_t span = x[i + 2] + g.pad_begin[i] + g.pad_end[i] - eff;
      auto extent = oversized_window_extent(span, g.strides[i], a.ceil_mode);
      if (!extent) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "on spatial axis " + std::to_string(i) + " of input '" + node.inputs[0] + "' " +
                                  shape_to_string(x) + " " + extent.status().message());
      }
      g.out_spatial[i] = *extent;
    }
  }
  return g;
}

// Pools one [in] plane of X into one [out] plane of Y; `indices` (MaxPool) may be null.
template <typename T>
void pool_plane(const PoolAttrs& a, const Geometry3d& w, int64_t spatial_rank, const T* x, T* y, int64_t* indices,
                int64_t index_base) {
  const int64_t lead = 3 - spatial_rank;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow) {
        const int64_t start[3] = {od * w.s[0] - w.pb[0], oh * w.s[1] - w.pb[1], ow * w.s[2] - w.pb[2]};
        double acc = a.kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t best[3] = {-1, -1, -1};
        int64_t count = 0, padded_count = 1;
        for (int64_t i = 0; i < 3; ++i) {
          // Window positions inside [-pad_begin, in + pad_end) for count_include_pad.
          const int64_t lo = std::max<int64_t>(start[i], -w.pb[i]);
          const int64_t hi = std::min<int64_t>(start[i] + (w.k[i] - 1) * w.d[i] + 1, w.in[i] + w.pe[i]);
          padded_count *= std::max<int64_t>(0, (hi - lo + w.d[i] - 1) / w.d[i]);
        }
        for (int64_t kd = 0; kd < w.k[0]; ++kd) {
          const int64_t id = start[0] + kd * w.d[0];
          if (id < 0 || id >= w.in[0]) continue;
          for (int64_t kh = 0; kh < w.k[1]; ++kh) {
            const int64_t ih = start[1] + kh * w.d[1];
            if (ih < 0 || ih >= w.in[1]) continue;
            const T* row = x + (id * w.in[1] + ih) * w.in[2];
            for (int64_t kw = 0; kw < w.k[2]; ++kw) {
              const int64_t iw = start[2] + kw * w.d[2];
              if (iw < 0 || iw >= w.in[2]) continue;
              const double v = static_cast<double>(row[iw]);
              ++count;
              if (a.kind == PoolKind::kMax) {
                if (v > acc || best[0] < 0) {
                  acc = v;
                  best[0] = id;
                  best[1] = ih;
                  best[2] = iw;
                }
              } else if (a.kind == PoolKind::kAverage) {
                acc += v;
              } else {
                acc += a.p == 1 ? std::abs(v) : a.p == 2 ? v * v : std::pow(std::abs(v), double(a.p));
              }
            }
          }
        }
        const int64_t o = (od * w.out[1] + oh) * w.out[2] + ow;
        if (a.kind == PoolKind::kMax) {
          y[o] = static_cast<T>(acc);
          if (indices != nullptr) {
            int64_t flat;
            if (a.storage_order == 0) {
              flat = (best[0] * w.in[1] + best[1]) * w.in[2] + best[2];
            } else {
              // Column-major over the real spatial axes: the first axis varies fastest.
              flat = 0;
              int64_t stride = 1;
              for (int64_t i = lead; i < 3; ++i) {
                flat += best[i] * stride;
                stride *= w.in[i];
              }
            }
            indices[o] = best[0] < 0 ? -1 : index_base + flat;
          }
        } else if (a.kind == PoolKind::kAverage) {
          const int64_t div = a.count_include_pad ? padded_count : count;
          y[o] = static_cast<T>(div > 0 ? acc / static_cast<double>(div) : 0.0);
        } else {
          y[o] = static_cast<T>(a.p == 1 ? acc : a.p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / double(a.p)));
        }
      }
    }
  }
}

// True for a 2-D max/average pool whose windows all lie inside the input (no padding, no
// dilation, no ceil-mode overhang): pool_plane_inside() then computes the same values faster.
bool windows_inside(const PoolAttrs& a, const Geometry3d& w, int64_t spatial_rank) {
  if (spatial_rank != 2 || (a.kind != PoolKind::kMax && a.kind != PoolKind::kAverage)) return false;
  for (int i = 1; i < 3; ++i) {
    if (w.d[i] != 1 || w.pb[i] != 0 || (w.out[i] - 1) * w.s[i] + w.k[i] > w.in[i]) return false;
  }
  return true;
}

// pool_plane() for windows_inside() geometries, float32, without indices: the same arithmetic
// (max by strict comparison in window order; average summed in double, divided by the window
// size) without the per-window bounds and padding bookkeeping (PP-OCR cls MaxPool: 0.43 ms to
// a few microseconds).
void pool_plane_inside(PoolKind kind, const Geometry3d& w, const float* x, float* y) {
  const int64_t kh = w.k[1], kw = w.k[2], in_w = w.in[2];
  for (int64_t oh = 0; oh < w.out[1]; ++oh) {
    for (int64_t ow = 0; ow < w.out[2]; ++ow) {
      const float* win = x + oh * w.s[1] * in_w + ow * w.s[2];
      if (kind == PoolKind::kMax) {
        float m = win[0];
        for (int64_t i = 0; i < kh; ++i) {
          for (int64_t j = 0; j < kw; ++j) m = win[i * in_w + j] > m ? win[i * in_w + j] : m;
        }
        y[oh * w.out[2] + ow] = m;
      } else {
        double acc = 0;
        for (int64_t i = 0; i < kh; ++i) {
          for (int64_t j = 0; j < kw; ++j) acc += static_cast<double>(win[i * in_w + j]);
        }
        y[oh * w.out[2] + ow] = static_cast<float>(acc / static_cast<double>(kh * kw));
      }
    }
  }
}

class PoolKernel final : public Kernel {
 public:
  explicit PoolKernel(PoolAttrs attrs) : a_(std::move(attrs)) {}
  const char* name() const override {
    return a_.kind == PoolKind::kMax       ? "maxpool__reference"
           : a_.kind == PoolKind::kAverage ? "averagepool__reference"
                                           : "lppool__reference";
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    EDGEMM_RETURN_IF_ERROR(check_input(node, x));
    const DataType dt = x->dtype();
    const bool int_ok = a_.kind == PoolKind::kMax && (dt == DataType::kInt8 || dt == DataType::kUInt8);
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64 && !int_ok) {
      return unsupported_dtype(node, 0, dt);
    }
    EDGEMM_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(node, a_, x->shape()));
    const Shape out_shape = g.output_shape();
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    int64_t* indices = nullptr;
    if (a_.kind == PoolKind::kMax && ctx.output_count() > 1 && ctx.output_wanted(1)) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor * ind, ctx.allocate_output(1, DataType::kInt64, out_shape));
      indices = ind->data<int64_t>();
    }
    if (y->element_count() == 0) return Status::ok();
    const Geometry3d w = to_3d(g);
    const int64_t planes = g.batch * g.in_channels;
    if (dt == DataType::kFloat32 && indices == nullptr && windows_inside(a_, w, g.spatial_rank())) {
      const float* xv = x->data<float>();
      float* yv = y->data<float>();
      parallel_for(ctx.threads(), planes, w.out_size * w.k[1] * w.k[2], [&](int64_t begin, int64_t end) {
        for (int64_t pl = begin; pl < end; ++pl)
          pool_plane_inside(a_.kind, w, xv + pl * w.in_size, yv + pl * w.out_size);
      });
      return Status::ok();
    }
    auto body = [&](auto zero) {
      using T = decltype(zero);
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      parallel_for(ctx.threads(), planes, w.out_size * w.k[0] * w.k[1] * w.k[2], [&](int64_t begin, int64_t end) {
        for (int64_t pl = begin; pl < end; ++pl) {
          pool_plane<T>(a_, w, g.spatial_rank(), xv + pl * w.in_size, yv + pl * w.out_size,
                        indices ? indices + pl * w.out_size : nullptr, pl * w.in_size);
        }
      });
    };
    switch (dt) {
      case DataType::kFloat32:
        body(float{});
        break;
      case DataType::kFloat64:
        body(double{});
        break;
      case DataType::kInt8:
        body(int8_t{});
        break;
      default:
        body(uint8_t{});
        break;
    }
    return Status::ok();
  }

 private:
  PoolAttrs a_;
};

Expected<std::unique_ptr<Kernel>> make_pool(const KernelInfo& info, PoolKind kind) {
  const ir::Node& node = info.node;
  PoolAttrs a;
  a.kind = kind;
  EDGEMM_ASSIGN_OR_RETURN(a.auto_pad, parse_auto_pad(node));
  EDGEMM_ASSIGN_OR_RETURN(a.kernel_shape, node.attr_ints("kernel_shape"));
  EDGEMM_ASSIGN_OR_RETURN(a.strides, node.attr_ints("strides"));
  EDGEMM_ASSIGN_OR_RETURN(a.pads, node.attr_ints("pads"));
  // dilations: MaxPool-10, AveragePool-19, LpPool-18; ceil_mode: MaxPool / AveragePool-10,
  // LpPool-18. Attributes a version does not have are ignored, as before.
  const bool lp18 = kind == PoolKind::kLp && info.opset >= 18;
  if (kind == PoolKind::kMax || (kind == PoolKind::kAverage && info.opset >= 19) || lp18) {
    EDGEMM_ASSIGN_OR_RETURN(a.dilations, node.attr_ints("dilations"));
  }
  if (kind == PoolKind::kMax) {
    EDGEMM_ASSIGN_OR_RETURN(a.storage_order, node.attr_int("storage_order", 0));
  }
  if (kind != PoolKind::kLp || lp18) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t ceil, node.attr_int("ceil_mode", 0));
    a.ceil_mode = ceil != 0;
  }
  if (kind == PoolKind::kAverage) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t cip, node.attr_int("count_include_pad", 0));
    a.count_include_pad = cip != 0;
  }
  if (kind == PoolKind::kLp) {
    EDGEMM_ASSIGN_OR_RETURN(a.p, node.attr_int("p", 2));
  }
  if (a.kernel_shape.empty()) {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute kernel_shape is required");
  }
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "kernel_shape", a.kernel_shape));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "strides", a.strides));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "dilations", a.dilations));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(node, "pads", a.pads));
  if (a.p < 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute p is " + std::to_string(a.p) + "; it must be >= 1");
  }
  if (a.storage_order != 0 && a.storage_order != 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute storage_order is " + std::to_string(a.storage_order) +
                              "; expected 0 (row major) or 1 (column major)");
  }
  return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(std::move(a)));
}

// Sum and maximum of a plane (elements kStride apart) with 16 independent lanes, so the loops
// vectorize without reassociation; lanes are combined in double. The blocked layout's planes
// (stride 8) are summed in exactly the order of the NCHW ones, so both give the same bits.
template <typename T, int64_t kStride = 1>
double plane_sum(const T* x, int64_t n) {
  T lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lanes[l] += x[(i + l) * kStride];
  }
  double s = 0;
  for (int l = 0; l < 16; ++l) s += static_cast<double>(lanes[l]);
  for (; i < n; ++i) s += static_cast<double>(x[i * kStride]);
  return s;
}

template <typename T>
T plane_max(const T* x, int64_t n) {
  if (n < 16) {
    T m = x[0];
    for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    return m;
  }
  T lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = x[l];
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lanes[l] = std::max(lanes[l], x[i + l]);
  }
  T m = lanes[0];
  for (int l = 1; l < 16; ++l) m = std::max(m, lanes[l]);
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// Global pooling: one value per (n, c) plane.
class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(PoolKind kind, int64_t p) : kind_(kind), p_(p) {}
  const char* name() const override { return "global_pool__reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    EDGEMM_RETURN_IF_ERROR(check_input(node, x));
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    Shape out = x->shape();
    int64_t plane = 1;
    for (size_t i = 2; i < out.size(); ++i) {
      plane *= out[i];
      out[i] = 1;
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out));
    const int64_t planes = out[0] * out[1];
    auto body = [&](auto zero) {
      using T = decltype(zero);
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      parallel_for(ctx.threads(), planes, plane, [&](int64_t begin, int64_t end) {
        for (int64_t pl = begin; pl < end; ++pl) {
          const T* src = xv + pl * plane;
          if (plane == 0) {
            yv[pl] = T(0);
          } else if (kind_ == PoolKind::kMax) {
            yv[pl] = plane_max(src, plane);
          } else if (kind_ == PoolKind::kAverage) {
            yv[pl] = static_cast<T>(plane_sum(src, plane) / static_cast<double>(plane));
          } else {
            double s = 0;
            for (int64_t i = 0; i < plane; ++i) {
              const double v = std::abs(static_cast<double>(src[i]));
              s += p_ == 1 ? v : p_ == 2 ? v * v : std::pow(v, double(p_));
            }
            yv[pl] = static_cast<T>(p_ == 1 ? s : p_ == 2 ? std::sqrt(s) : std::pow(s, 1.0 / double(p_)));
          }
        }
      });
    };
    if (dt == DataType::kFloat32) {
      body(float{});
    } else {
      body(double{});
    }
    return Status::ok();
  }

 private:
  PoolKind kind_;
  int64_t p_;
};

// Per-channel sums of an NHWC image [S, C] (S = H * W pixels) into `sums` [C], adding in the
// order plane_sum adds an NCHW plane (16 float lanes, combined in double, then the tail), so
// that both layouts give the same bits. `lanes` is scratch of 16 * C floats.
void channels_last_sums(const float* x, int64_t pixels, int64_t c, float* lanes, double* sums) {
  std::fill(lanes, lanes + 16 * c, 0.f);
  int64_t i = 0;
  for (; i + 16 <= pixels; i += 16) {
    for (int64_t l = 0; l < 16; ++l) {
      const float* row = x + (i + l) * c;
      float* lane = lanes + l * c;
      for (int64_t ch = 0; ch < c; ++ch) lane[ch] += row[ch];
    }
  }
  std::fill(sums, sums + c, 0.0);
  for (int64_t l = 0; l < 16; ++l) {
    for (int64_t ch = 0; ch < c; ++ch) sums[ch] += static_cast<double>(lanes[l * c + ch]);
  }
  for (; i < pixels; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) sums[ch] += static_cast<double>(x[i * c + ch]);
  }
}

// com.edgemm GlobalAveragePool-1: GlobalAveragePool on a float32 value stored nChw8c
// [N, C/8, H, W, 8] (giving [N, C/8, 1, 1, 8]) or, with attribute layout "NHWC", [N, H, W, C]
// (giving [N, 1, 1, C]); kernels/cpu/layout.h.
class ChainGlobalAveragePoolKernel final : public Kernel {
 public:
  explicit ChainGlobalAveragePoolKernel(ActivationLayout layout) : layout_(layout) {}
  const char* name() const override {
    return layout_ == ActivationLayout::kNhwc ? "f32_global_average_pool_nhwc" : "f32_global_average_pool_nChw8c";
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    EDGEMM_RETURN_IF_ERROR(check_input(node, x));
    if (x->dtype() != DataType::kFloat32) return unsupported_dtype(node, 0, x->dtype());
    const Shape& s = x->shape();
    if (!is_physical(s, layout_)) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + node.inputs[0] + "' has shape " + shape_to_string(s) + "; expected an " +
                                layout_name(layout_) + " value " +
                                (layout_ == ActivationLayout::kNhwc ? "[N, H, W, C]" : "[N, C/8, H, W, 8]"));
    }
    if (layout_ == ActivationLayout::kNhwc) return run_nhwc(ctx, s);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {s[0], s[1], 1, 1, s[4]}));
    const int64_t plane = s[2] * s[3];
    const float* xv = x->data<float>();
    float* yv = y->data<float>();
    parallel_for(ctx.threads(), s[0] * s[1], plane * kChannelBlock, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < kChannelBlock; ++j) {
          const float* src = xv + b * plane * kChannelBlock + j;
          yv[b * kChannelBlock + j] =
              plane == 0 ? 0.f
                         : static_cast<float>(plane_sum<float, kChannelBlock>(src, plane) / static_cast<double>(plane));
        }
      }
    });
    return Status::ok();
  }

 private:
  Status run_nhwc(KernelContext& ctx, const Shape& s) const {
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {s[0], 1, 1, s[3]}));
    const int64_t pixels = s[1] * s[2], c = s[3];
    const float* xv = ctx.input(0)->data<float>();
    float* yv = y->data<float>();
    parallel_for(ctx.threads(), s[0], pixels * c, [&](int64_t begin, int64_t end) {
      std::vector<float> lanes(static_cast<size_t>(16 * c));
      std::vector<double> sums(static_cast<size_t>(c));
      for (int64_t n = begin; n < end; ++n) {
        channels_last_sums(xv + n * pixels * c, pixels, c, lanes.data(), sums.data());
        for (int64_t ch = 0; ch < c; ++ch) {
          yv[n * c + ch] = pixels == 0 ? 0.f : static_cast<float>(sums[ch] / static_cast<double>(pixels));
        }
      }
    });
    return Status::ok();
  }

  ActivationLayout layout_;
};

Expected<std::unique_ptr<Kernel>> make_global_pool(const KernelInfo& info, PoolKind kind) {
  int64_t p = 2;
  if (kind == PoolKind::kLp) {
    EDGEMM_ASSIGN_OR_RETURN(p, info.node.attr_int("p", 2));
    if (p < 1) {
      return ir::node_error(info.node, StatusCode::kInvalidModel,
                            "attribute p is " + std::to_string(p) + "; it must be >= 1");
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<GlobalPoolKernel>(kind, p));
}

// MaxUnpool: scatters X into zeros at the flat indices I that MaxPool produced.
class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(std::vector<int64_t> kernel_shape, std::vector<int64_t> strides, std::vector<int64_t> pads)
      : kernel_(std::move(kernel_shape)), strides_(std::move(strides)), pads_(std::move(pads)) {}
  const char* name() const override { return "maxunpool__reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    EDGEMM_RETURN_IF_ERROR(check_input(node, x));
    if (ind == nullptr || ind->dtype() != DataType::kInt64 || ind->shape() != x->shape()) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input I must be int64 indices of the same shape as input '" + node.inputs[0] + "' " +
                                shape_to_string(x->shape()));
    }
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    // I holds flat indices into the shape MaxPool's input had, inferred from the attributes:
    // (in - 1) * stride + kernel - pads. An explicit output_shape may be larger; each index is
    // then moved to the same (n, c, spatial) position of that shape (ONNX test data semantics).
    const size_t k = static_cast<size_t>(x->rank() - 2);
    if (kernel_.size() != k || (!strides_.empty() && strides_.size() != k) ||
        (!pads_.empty() && pads_.size() != 2 * k)) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "kernel_shape " + list_to_string(kernel_) + ", strides " + list_to_string(strides_) +
                                " or pads " + list_to_string(pads_) + " do not match input '" + node.inputs[0] + "' " +
                                shape_to_string(x->shape()));
    }
    Shape inferred = {x->shape()[0], x->shape()[1]};
    for (size_t i = 0; i < k; ++i) {
      const int64_t st = strides_.empty() ? 1 : strides_[i];
      const int64_t p = pads_.empty() ? 0 : pads_[i] + pads_[i + k];
      inferred.push_back((x->shape()[i + 2] - 1) * st + kernel_[i] - p);
    }
    Shape out = inferred;
    const Tensor* shape_in = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (shape_in != nullptr) {
      EDGEMM_ASSIGN_OR_RETURN(out, read_int_values(node, 2, *shape_in));
      if (out.size() != inferred.size() || out[0] != inferred[0] || out[1] != inferred[1]) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "output_shape " + list_to_string(out) + " does not match input '" + node.inputs[0] +
                                  "' " + shape_to_string(x->shape()));
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out));
    std::memset(y->raw_data(), 0, y->byte_size());
    const int64_t* iv = ind->data<int64_t>();
    int64_t inferred_total = 1;
    for (int64_t d : inferred) inferred_total *= d;
    const size_t elem = dtype_size(dt);
    for (int64_t i = 0; i < x->element_count(); ++i) {
      int64_t rem = iv[i], target = 0, stride = 1;
      bool inside = rem >= 0 && rem < inferred_total;
      for (int64_t a = static_cast<int64_t>(out.size()) - 1; a >= 0 && inside; --a) {
        const int64_t coord = rem % inferred[a];
        rem /= inferred[a];
        if (coord >= out[a]) inside = false;
        target += coord * stride;
        stride *= out[a];
      }
      if (!inside) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "index " + std::to_string(iv[i]) + " at position " + std::to_string(i) +
                                  " of input I is outside the output " + list_to_string(out));
      }
      std::memcpy(static_cast<char*>(y->raw_data()) + target * elem, static_cast<const char*>(x->raw_data()) + i * elem,
                  elem);
    }
    return Status::ok();
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

Expected<std::unique_ptr<Kernel>> make_max_unpool(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, info.node.attr_ints("kernel_shape"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> strides, info.node.attr_ints("strides"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> pads, info.node.attr_ints("pads"));
  if (kernel.empty()) {
    return ir::node_error(info.node, StatusCode::kInvalidModel, "attribute kernel_shape is required");
  }
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(info.node, "kernel_shape", kernel));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(info.node, "strides", strides));
  EDGEMM_RETURN_IF_ERROR(check_attr_bounds(info.node, "pads", pads));
  return std::unique_ptr<Kernel>(std::make_unique<MaxUnpoolKernel>(kernel, strides, pads));
}

}  // namespace

void register_pool_kernels(KernelRegistry& registry) {
  auto max = [](const KernelInfo& i) { return make_pool(i, PoolKind::kMax); };
  auto avg = [](const KernelInfo& i) { return make_pool(i, PoolKind::kAverage); };
  auto lp = [](const KernelInfo& i) { return make_pool(i, PoolKind::kLp); };
  for (int since : {1, 8, 10, 11, 12}) registry.add("", "MaxPool", since, max);
  for (int since : {1, 7, 10, 11, 19}) registry.add("", "AveragePool", since, avg);  // 19: dilations
  for (int since : {2, 11, 18}) registry.add("", "LpPool", since, lp);               // 18: ceil_mode, dilations
  registry.add("", "GlobalAveragePool", 1, [](const KernelInfo& i) { return make_global_pool(i, PoolKind::kAverage); });
  registry.add(ir::kEdgemmDomain, "GlobalAveragePool", 1, [](const KernelInfo& i) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(const std::string layout, i.node.attr_string("layout", "nChw8c"));
    if (layout != "nChw8c" && layout != "NHWC") {
      return ir::node_error(i.node, StatusCode::kInvalidModel,
                            "attribute layout must be \"nChw8c\" or \"NHWC\", got \"" + layout + "\"");
    }
    return std::unique_ptr<Kernel>(std::make_unique<ChainGlobalAveragePoolKernel>(
        layout == "NHWC" ? ActivationLayout::kNhwc : ActivationLayout::kNChw8c));
  });
  registry.add("", "GlobalMaxPool", 1, [](const KernelInfo& i) { return make_global_pool(i, PoolKind::kMax); });
  for (int since : {9, 11}) registry.add("", "MaxUnpool", since, make_max_unpool);
  registry.add("", "GlobalLpPool", 2, [](const KernelInfo& i) { return make_global_pool(i, PoolKind::kLp); });
}

}  // namespace edgemm::kernels
