/// \file grid_sample.cc
/// GridSample and AffineGrid of the default ONNX domain.
/// GridSample (Operators.md "GridSample" 16, 20): X [N, C, H, W] sampled
/// at the locations of grid [N, H_out, W_out, 2] (x then y, normalized to [-1, 1]) gives
/// Y [N, C, H_out, W_out]. float32 and float64.
///
/// Follows the spec's reference (ONNX Runtime's kernel, itself matching PyTorch's grid_sample):
/// - align_corners 1: -1 and 1 are the centers of the corner pixels (x = (g + 1) / 2 * (W - 1));
///   0: their outer edges (x = ((g + 1) * W - 1) / 2).
/// - nearest rounds the location half to even; bilinear weighs the 2x2 neighbours; bicubic is
///   Keys' cubic convolution (a = -0.75) over the 4x4 neighbours, rows first.
/// - Padding applies to the neighbours (not to the location, as in PyTorch and ONNX Runtime
///   1.30): zeros reads 0 outside the input, border clamps them into the input, reflection
///   mirrors them at the sampling area's edges ([0, L-1] with align_corners, else [-0.5, L-0.5])
///   until they lie inside.
/// - A NaN grid coordinate gives NaN in every channel (so does an infinite one with reflection,
///   which has no reflected location); nothing is read for it. Infinite coordinates with zeros
///   padding read 0, with border the edge.
/// GridSample-20 renames the modes "linear" and "cubic" (accepted from opset 20 on; the old
/// names stay accepted) and adds N-D inputs: here also 5-D X [N, C, D, H, W] with grid
/// [N, D_out, H_out, W_out, 3] (x, y, z) for "linear" (trilinear) and "nearest"; 5-D "cubic" and
/// other ranks are Unsupported.
///
/// AffineGrid (Operators.md "AffineGrid" 20): theta [N, 2, 3] and size (N, C, H, W) give grid
/// [N, H, W, 2]; theta [N, 3, 4] and size (N, C, D, H, W) give [N, D, H, W, 3]:
/// grid[n, ..., :] = theta[n] · (x, y(, z), 1) with the normalized pixel-center coordinates of
/// align_corners (as above). float32, float64; size is int64. A spatial extent of 1 with
/// align_corners=1 is refused (its coordinate differs between ONNX's reference, ONNX Runtime and
/// PyTorch).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace grid_sample_impl {
namespace {

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridSampleAttrs {
  Mode mode = Mode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// Up to four neighbours along one axis: flat offsets (-1: reads 0) and weights.
template <typename T>
struct AxisTaps {
  int count = 0;
  int64_t index[4];
  T weight[4];
};

// Reflects x at lo and hi until it lies in [lo, hi] (the input range is never empty here).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double d = x < lo ? lo - x : x - hi;
  const double m = std::fmod(d, 2 * range);  // even number of reflections when m < range
  const double r = m < range ? m : m - range;
  if (x < lo) return m < range ? lo + r : hi - r;
  return m < range ? hi - r : lo + r;
}

// Integer neighbour index i along an axis of extent L, after padding: -1 when it reads 0.
int64_t resolve(int64_t i, int64_t extent, Padding padding, bool align_corners) {
  if (i >= 0 && i < extent) return i;
  switch (padding) {
    case Padding::kZeros:
      return -1;
    case Padding::kBorder:
      return i < 0 ? 0 : extent - 1;
    case Padding::kReflection:
      break;
  }
  if (align_corners) {  // mirror at the centers of the edge pixels: period 2 (L - 1)
    if (extent == 1) return 0;
    const int64_t period = 2 * (extent - 1);
    int64_t m = i % period;
    if (m < 0) m += period;
    return m <= extent - 1 ? m : period - m;
  }
  const int64_t period = 2 * extent;  // mirror at the outer edges: period 2 L
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < extent ? m : period - 1 - m;
}

// Keys' cubic convolution weights of the four neighbours floor(x) - 1 .. floor(x) + 2 for
// t = x - floor(x).
template <typename T>
void cubic_weights(T t, T w[4]) {
  constexpr T a = T(-0.75);
  const T d0 = t + 1, d1 = t, d2 = 1 - t, d3 = 2 - t;
  w[0] = ((a * d0 - 5 * a) * d0 + 8 * a) * d0 - 4 * a;
  w[1] = ((a + 2) * d1 - (a + 3)) * d1 * d1 + 1;
  w[2] = ((a + 2) * d2 - (a + 3)) * d2 * d2 + 1;
  w[3] = ((a * d3 - 5 * a) * d3 + 8 * a) * d3 - 4 * a;
}

// Neighbours and weights along one axis for the normalized coordinate g. False when the output
// is NaN (NaN coordinate, or an infinite one under reflection).
template <typename T>
bool axis_taps(const GridSampleAttrs& at, T g, int64_t extent, AxisTaps<T>& taps) {
  if (std::isnan(g)) return false;
  const T len = static_cast<T>(extent);
  T x = at.align_corners ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
  if (std::isnan(x)) return false;  // an infinite g on an extent-1 axis with align_corners
  if (at.mode == Mode::kNearest) x = std::nearbyint(x);
  const T lo = at.align_corners ? T(0) : T(-0.5);
  const T hi = at.align_corners ? len - 1 : len - T(0.5);
  // Reflection: a location outside the sampling area moves inside (the same value: the
  // neighbours are reflected at the same edges, so the padded signal is symmetric about them).
  if (at.padding == Padding::kReflection && !(x >= lo && x <= hi)) {
    if (!std::isfinite(x)) return false;
    x = static_cast<T>(reflect(static_cast<double>(x), static_cast<double>(lo), static_cast<double>(hi)));
  }
  // Every neighbour lies in [floor(x) - 1, floor(x) + 2]. Far outside (infinite included), with
  // zeros padding none reads the input; with border all read the same edge pixel, as they do
  // from x = -4 or x = L + 3 (so the integer conversion below stays in range).
  if (!(x > T(-4) && x < len + 3)) {
    if (at.padding != Padding::kBorder) {
      taps.count = 1;
      taps.index[0] = -1;
      taps.weight[0] = 0;
      return true;
    }
    x = x < 0 ? T(-4) : len + 3;
  }
  const T fl = std::floor(x);
  const int64_t base = static_cast<int64_t>(fl);
  const T t = x - fl;
  switch (at.mode) {
    case Mode::kNearest:
      taps.count = 1;
      taps.index[0] = base;
      taps.weight[0] = 1;
      break;
    case Mode::kBilinear:
      taps.count = 2;
      taps.index[0] = base;
      taps.index[1] = base + 1;
      taps.weight[0] = 1 - t;
      taps.weight[1] = t;
      break;
    case Mode::kBicubic:
      taps.count = 4;
      for (int k = 0; k < 4; ++k) taps.index[k] = base - 1 + k;
      cubic_weights(t, taps.weight);
      break;
  }
  for (int k = 0; k < taps.count; ++k) taps.index[k] = resolve(taps.index[k], extent, at.padding, at.align_corners);
  return true;
}

template <typename T>
void grid_sample(const GridSampleAttrs& at, const Tensor& xt, const Tensor& gt, Tensor& yt, int threads) {
  const int64_t n = xt.shape()[0], c = xt.shape()[1], h = xt.shape()[2], w = xt.shape()[3];
  const int64_t ho = gt.shape()[1], wo = gt.shape()[2];
  const T* x = xt.data<T>();
  const T* grid = gt.data<T>();
  T* y = yt.data<T>();
  const int64_t plane_in = h * w, plane_out = ho * wo;
  const int taps_per_axis = at.mode == Mode::kNearest ? 1 : at.mode == Mode::kBilinear ? 2 : 4;
  parallel_for(threads, n * ho, wo * c * taps_per_axis * taps_per_axis, [&](int64_t begin, int64_t end) {
    AxisTaps<T> tx, ty;
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / ho, oy = row % ho;
      const T* img = x + b * c * plane_in;
      for (int64_t ox = 0; ox < wo; ++ox) {
        const T* gp = grid + ((b * ho + oy) * wo + ox) * 2;
        T* out = y + b * c * plane_out + oy * wo + ox;
        const bool ok_x = axis_taps(at, gp[0], w, tx);
        const bool ok_y = axis_taps(at, gp[1], h, ty);
        if (!ok_x || !ok_y) {
          for (int64_t ch = 0; ch < c; ++ch) out[ch * plane_out] = std::numeric_limits<T>::quiet_NaN();
          continue;
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* p = img + ch * plane_in;
          T v = 0;
          for (int i = 0; i < ty.count; ++i) {
            const int64_t yi = ty.index[i];
            T row_sum = 0;
            if (yi >= 0) {
              for (int j = 0; j < tx.count; ++j) {
                const int64_t xi = tx.index[j];
                if (xi >= 0) row_sum += tx.weight[j] * p[yi * w + xi];
              }
            }
            v += ty.weight[i] * row_sum;
          }
          out[ch * plane_out] = v;
        }
      }
    }
  });
}

// Volumetric (opset 20) GridSample: X [N, C, D, H, W], grid [N, D_out, H_out, W_out, 3] holding
// (x, y, z) for (W, H, D); trilinear ("linear") or nearest, depth axis outermost.
template <typename T>
void grid_sample_3d(const GridSampleAttrs& at, const Tensor& xt, const Tensor& gt, Tensor& yt, int threads) {
  const Shape& xs = xt.shape();
  const int64_t n = xs[0], c = xs[1], d = xs[2], h = xs[3], w = xs[4];
  const int64_t dout = gt.shape()[1], hout = gt.shape()[2], wout = gt.shape()[3];
  const T* x = xt.data<T>();
  const T* grid = gt.data<T>();
  T* y = yt.data<T>();
  const int64_t vol_in = d * h * w, vol_out = dout * hout * wout;
  const int taps = at.mode == Mode::kNearest ? 1 : 8;
  parallel_for(threads, n * dout * hout, wout * c * taps, [&](int64_t begin, int64_t end) {
    AxisTaps<T> tx, ty, tz;
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (dout * hout);
      const T* img = x + b * c * vol_in;
      for (int64_t ox = 0; ox < wout; ++ox) {
        const int64_t o = (row % (dout * hout)) * wout + ox;  // flat output position in the volume
        const T* gp = grid + (row * wout + ox) * 3;
        T* out = y + b * c * vol_out + o;
        const bool ok_x = axis_taps(at, gp[0], w, tx);
        const bool ok_y = axis_taps(at, gp[1], h, ty);
        const bool ok_z = axis_taps(at, gp[2], d, tz);
        if (!ok_x || !ok_y || !ok_z) {
          for (int64_t ch = 0; ch < c; ++ch) out[ch * vol_out] = std::numeric_limits<T>::quiet_NaN();
          continue;
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* p = img + ch * vol_in;
          T v = 0;
          for (int k = 0; k < tz.count; ++k) {
            const int64_t zi = tz.index[k];
            if (zi < 0) continue;
            T plane_sum = 0;
            for (int i = 0; i < ty.count; ++i) {
              const int64_t yi = ty.index[i];
              if (yi < 0) continue;
              T row_sum = 0;
              for (int j = 0; j < tx.count; ++j) {
                const int64_t xi = tx.index[j];
                if (xi >= 0) row_sum += tx.weight[j] * p[(zi * h + yi) * w + xi];
              }
              plane_sum += ty.weight[i] * row_sum;
            }
            v += tz.weight[k] * plane_sum;
          }
          out[ch * vol_out] = v;
        }
      }
    }
  });
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridSampleAttrs at, bool volumetric_ok) : at_(at), volumetric_ok_(volumetric_ok) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (x == nullptr || grid == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'X' and 'grid' are required");
    }
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    if (grid->dtype() != dt) {
      return ir::node_error(node, StatusCode::kUnsupported,
                            std::string("input 'grid' has dtype ") + dtype_name(grid->dtype()) +
                                "; this kernel needs the dtype of 'X' (" + dtype_name(dt) + ")");
    }
    const Shape& xs = x->shape();
    const bool volumetric = xs.size() == 5 && volumetric_ok_;
    if (xs.size() != 4 && !volumetric) {
      return ir::node_error(node, StatusCode::kUnsupported,
                            "input 'X' has shape " + shape_to_string(xs) +
                                (volumetric_ok_ ? "; supported are 4-D [N, C, H, W] and 5-D [N, C, D, H, W]"
                                                : "; supported is 4-D [N, C, H, W] (5-D needs opset 20)"));
    }
    if (volumetric && at_.mode == Mode::kBicubic) {
      return ir::node_error(node, StatusCode::kUnsupported,
                            "mode 'cubic' on the 5-D input 'X' " + shape_to_string(xs) +
                                " is not supported (only 'linear' and 'nearest' are)");
    }
    const size_t spatial = xs.size() - 2;
    const Shape& gs = grid->shape();
    if (gs.size() != xs.size() || gs[0] != xs[0] || gs.back() != static_cast<int64_t>(spatial)) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("expected grid ") +
                                (volumetric ? "[N, D_out, H_out, W_out, 3]" : "[N, H_out, W_out, 2]") +
                                " with N = " + std::to_string(xs[0]) + " for 'X' " + shape_to_string(xs) + ", got " +
                                shape_to_string(gs));
    }
    Shape out_shape{xs[0], xs[1]};
    out_shape.insert(out_shape.end(), gs.begin() + 1, gs.end() - 1);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    if (std::any_of(xs.begin() + 2, xs.end(), [](int64_t e) { return e == 0; }) && at_.padding != Padding::kZeros) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' of shape " + shape_to_string(xs) +
                                " has no pixel to pad with (padding_mode border or reflection)");
    }
    if (volumetric) {
      if (dt == DataType::kFloat32) {
        grid_sample_3d<float>(at_, *x, *grid, *y, ctx.threads());
      } else {
        grid_sample_3d<double>(at_, *x, *grid, *y, ctx.threads());
      }
    } else if (dt == DataType::kFloat32) {
      grid_sample<float>(at_, *x, *grid, *y, ctx.threads());
    } else {
      grid_sample<double>(at_, *x, *grid, *y, ctx.threads());
    }
    return Status::ok();
  }

 private:
  GridSampleAttrs at_;
  bool volumetric_ok_;  // opset 20+: 5-D inputs
};

// Mode from its name; opset 20's names "linear" and "cubic" count from opset 20 on.
bool parse_mode(std::string_view name, int64_t opset, Mode& mode) {
  const bool opset20 = opset >= 20;
  if (name == "bilinear" || (opset20 && name == "linear")) {
    mode = Mode::kBilinear;
  } else if (name == "nearest") {
    mode = Mode::kNearest;
  } else if (name == "bicubic" || (opset20 && name == "cubic")) {
    mode = Mode::kBicubic;
  } else {
    return false;
  }
  return true;
}

bool parse_padding(std::string_view name, Padding& padding) {
  if (name == "zeros") {
    padding = Padding::kZeros;
  } else if (name == "border") {
    padding = Padding::kBorder;
  } else if (name == "reflection") {
    padding = Padding::kReflection;
  } else {
    return false;
  }
  return true;
}

Expected<std::unique_ptr<Kernel>> make_grid_sample(const KernelInfo& info) {
  const ir::Node& node = info.node;
  GridSampleAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(std::string mode, node.attr_string("mode", "bilinear"));  // "linear" at 20: the same
  if (!parse_mode(mode, info.opset, at.mode)) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute mode '" + mode + "' is not valid at opset " + std::to_string(info.opset));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string padding, node.attr_string("padding_mode", "zeros"));
  if (!parse_padding(padding, at.padding)) {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute padding_mode '" + padding + "' is unknown");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t align, node.attr_int("align_corners", 0));
  at.align_corners = align != 0;
  return std::unique_ptr<Kernel>(std::make_unique<GridSampleKernel>(at, info.opset >= 20));
}

// ---- AffineGrid ----------------------------------------------------------------------------

// Normalized coordinate of pixel i of an axis of extent L (L > 1 with align_corners): the
// centers of the first and last pixels are -1 and 1 with align_corners, else
// (2 i + 1) / L - 1, the pixel centers with -1 and 1 on the outer edges.
double affine_base(int64_t i, int64_t extent, bool align_corners) {
  if (align_corners) return -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(extent - 1);
  return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(extent) - 1.0;
}

// grid[n, (d,) h, w, :] = theta[n] · (x_w, y_h, (z_d,) 1), `spatial` = 2 or 3 axes, in double.
template <typename T>
void affine_grid(const Tensor& theta_t, const Shape& size, bool align_corners, Tensor& grid_t) {
  const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
  const int64_t n = size[0];
  const int64_t d = spatial == 3 ? size[2] : 1, h = size[size.size() - 2], w = size.back();
  const T* theta = theta_t.data<T>();
  T* out = grid_t.data<T>();
  const int64_t cols = spatial + 1;  // theta is [N, spatial, spatial + 1]
  for (int64_t b = 0; b < n; ++b) {
    const T* th = theta + b * spatial * cols;
    for (int64_t k = 0; k < d; ++k) {
      const double z = spatial == 3 ? affine_base(k, d, align_corners) : 0.0;
      for (int64_t i = 0; i < h; ++i) {
        const double yv = affine_base(i, h, align_corners);
        for (int64_t j = 0; j < w; ++j) {
          const double base[4] = {affine_base(j, w, align_corners), yv, z, 1.0};
          for (int64_t r = 0; r < spatial; ++r) {
            double acc = static_cast<double>(th[r * cols + spatial]);  // the translation column
            for (int64_t c = 0; c < spatial; ++c) acc += static_cast<double>(th[r * cols + c]) * base[c];
            *out++ = static_cast<T>(acc);
          }
        }
      }
    }
  }
}

/// AffineGrid-20: theta [N, 2, 3] with size (N, C, H, W) gives grid [N, H, W, 2]; theta
/// [N, 3, 4] with size (N, C, D, H, W) gives grid [N, D, H, W, 3] (x, y(, z) for W, H(, D)).
class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(bool align_corners) : align_corners_(align_corners) {}
  const char* name() const override { return "affine_grid__reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* theta = ctx.input(0);
    const Tensor* size_in = ctx.input(1);
    if (theta == nullptr || size_in == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'theta' and 'size' are required");
    }
    const DataType dt = theta->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    if (size_in->dtype() != DataType::kInt64 || size_in->rank() != 1) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'size' must be a 1-D int64 tensor, got " +
                                std::string(dtype_name(size_in->dtype())) + " " + shape_to_string(size_in->shape()));
    }
    const std::vector<int64_t> size(size_in->data<int64_t>(), size_in->data<int64_t>() + size_in->element_count());
    if (size.size() != 4 && size.size() != 5) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'size' " + shape_to_string(size) + " must be (N, C, H, W) or (N, C, D, H, W)");
    }
    const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
    const Shape want_theta{size[0], spatial, spatial + 1};
    if (theta->shape() != want_theta) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'theta' has shape " + shape_to_string(theta->shape()) + "; 'size' " +
                                shape_to_string(size) + " needs " + shape_to_string(want_theta));
    }
    for (size_t i = 1; i < size.size(); ++i) {
      if (size[i] < 0) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input 'size' " + shape_to_string(size) + " has a negative extent");
      }
      // One pixel with align_corners: ONNX's reference puts it at -1, ONNX Runtime at 1 and
      // PyTorch at 0; no answer agrees with all of them.
      if (i >= 2 && size[i] == 1 && align_corners_) {
        return ir::node_error(node, StatusCode::kUnsupported,
                              "input 'size' " + shape_to_string(size) +
                                  " has a spatial extent of 1 with align_corners=1, whose coordinate is undefined "
                                  "(-1 in ONNX's reference, 1 in ONNX Runtime, 0 in PyTorch)");
      }
    }
    Shape out_shape{size[0]};
    out_shape.insert(out_shape.end(), size.begin() + 2, size.end());
    out_shape.push_back(spatial);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * grid, ctx.allocate_output(0, dt, out_shape));
    if (grid->element_count() == 0) return Status::ok();
    if (dt == DataType::kFloat32) {
      affine_grid<float>(*theta, size, align_corners_, *grid);
    } else {
      affine_grid<double>(*theta, size, align_corners_, *grid);
    }
    return Status::ok();
  }

 private:
  bool align_corners_;
};

Expected<std::unique_ptr<Kernel>> make_affine_grid(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t align, info.node.attr_int("align_corners", 0));
  if (align != 0 && align != 1) {
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute align_corners is " + std::to_string(align) + "; expected 0 or 1");
  }
  return std::unique_ptr<Kernel>(std::make_unique<AffineGridKernel>(align != 0));
}

}  // namespace
}  // namespace grid_sample_impl

/// Registers GridSample (opset 16: 4-D; opset 20: also 5-D and the mode names "linear" /
/// "cubic", one factory branching on the opset) and AffineGrid (opset 20) in `registry`.
void register_grid_sample_kernels(KernelRegistry& registry) {
  registry.add("", "GridSample", 16, grid_sample_impl::make_grid_sample);
  registry.add("", "GridSample", 20, grid_sample_impl::make_grid_sample);
  registry.add("", "AffineGrid", 20, grid_sample_impl::make_affine_grid);
}

}  // namespace edgemm::kernels
