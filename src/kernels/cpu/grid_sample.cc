/// \file grid_sample.cc
/// GridSample of the default ONNX domain (Operators.md "GridSample" 16): X [N, C, H, W] sampled
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
/// Opset 20's names "linear" and "cubic" are accepted at opset 20 and later (4-D only).

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

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(GridSampleAttrs at) : at_(at) {}

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
    if (x->rank() != 4) {
      return ir::node_error(
          node, StatusCode::kUnsupported,
          "only 4-D inputs [N, C, H, W] are supported, got 'X' of shape " + shape_to_string(x->shape()));
    }
    const Shape& gs = grid->shape();
    if (gs.size() != 4 || gs[0] != x->shape()[0] || gs[3] != 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "expected grid [N, H_out, W_out, 2] with N = " + std::to_string(x->shape()[0]) + ", got " +
                                shape_to_string(gs));
    }
    const Shape out_shape{x->shape()[0], x->shape()[1], gs[1], gs[2]};
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    if ((x->shape()[2] == 0 || x->shape()[3] == 0) && at_.padding != Padding::kZeros) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' of shape " + shape_to_string(x->shape()) +
                                " has no pixel to pad with (padding_mode border or reflection)");
    }
    if (dt == DataType::kFloat32) {
      grid_sample<float>(at_, *x, *grid, *y, ctx.threads());
    } else {
      grid_sample<double>(at_, *x, *grid, *y, ctx.threads());
    }
    return Status::ok();
  }

 private:
  GridSampleAttrs at_;
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
  return std::unique_ptr<Kernel>(std::make_unique<GridSampleKernel>(at));
}

}  // namespace
}  // namespace grid_sample_impl

/// Registers GridSample (opset 16, also serving later opsets' 4-D models) in `registry`.
void register_grid_sample_kernels(KernelRegistry& registry) {
  registry.add("", "GridSample", 16, grid_sample_impl::make_grid_sample);
}

}  // namespace edgemm::kernels
