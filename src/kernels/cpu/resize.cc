/// \file resize.cc
/// Resize and Upsample of the default ONNX domain (Operators.md "Resize" 10/11/13/18/19,
/// "Upsample" 7/9). Every axis may be resized.
///
/// - Output extent: floor(in * scale) from `scales`, or `sizes` (then scale = out / in).
/// - Resize-18 attribute `axes` (negative counts from the back, no repeats): `scales`, `sizes`
///   and `roi` list only those axes (roi: their starts, then their ends); the others keep their
///   extent. Attribute `keep_aspect_ratio_policy` (with `sizes` only): stretch (default),
///   not_larger / not_smaller: one scale, the min / max of sizes / in over the resized axes, for
///   all of them, each output extent round(scale · in) (halves up).
/// - Coordinate transformation (11+; opset 10 and Upsample use asymmetric): half_pixel,
///   pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize
///   (with `roi`; samples outside [0, in - 1] take `extrapolation_value`), and from 19
///   half_pixel_symmetric (half_pixel shifted so that the centers of input and output match when
///   the output extent was rounded: offset = in / 2 · (1 - out / (in · scale))).
/// - nearest: nearest_mode round_prefer_floor / round_prefer_ceil / floor / ceil (11+); opset 10
///   and Upsample round down when upsampling and up when downsampling, as ONNX Runtime does.
///   Works for every dtype (elements are copied).
/// - linear: N-linear interpolation between the two neighbours (edge-clamped);
///   cubic: Keys cubic convolution with `cubic_coeff_a` over four neighbours, edge-clamped, or
///   with out-of-range taps dropped and the weights renormalized when `exclude_outside` is 1.
///   Both are separable and run one pass per resized axis; float32 and float64 only.
/// - Resize-18 `antialias` = 1 (linear and cubic; nearest refuses it, as ONNX Runtime does):
///   when downsampling an axis (scale < 1) the filter is stretched by 1 / scale, so that
///   ceil(2 / scale) (linear) or ceil(4 / scale) (cubic) inputs around each sample contribute,
///   weights normalized to sum 1; taps outside the input are clamped to the edge, or dropped
///   with `exclude_outside`. This is ONNX Runtime's window (upsample_antialias.h, after Pillow's
///   resampler); upsampling axes interpolate as without antialias.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };

struct ResizeAttrs {
  bool upsample = false;  // Upsample 7/9: scales only
  int64_t opset = 13;
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  std::vector<float> scales_attr;  // Upsample-7
  // Resize-18
  bool antialias = false;
  bool has_axes = false;
  std::vector<int64_t> axes;
  AspectPolicy policy = AspectPolicy::kStretch;
};

// Per-axis sampling: for each output index, `taps` input indices (clamped) and weights.
struct AxisPlan {
  int64_t in = 0, out = 0;
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: sample lies outside the input
  bool identity = false;
};

double cubic_weight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Antialias (downsampling by `scale` < 1): the filter's half-width in input elements.
double antialias_support(const ResizeAttrs& at, double scale) { return (at.mode == Mode::kCubic ? 2.0 : 1.0) / scale; }

// Taps an antialiased output element may have: 2 · ceil(support) + 1, at most `in` (taps clamped
// to the same edge element are merged).
int antialias_window(const ResizeAttrs& at, double scale, int64_t in) {
  const double window = 2 * std::ceil(antialias_support(at, scale)) + 1;
  return static_cast<int>(std::max<double>(1, std::min<double>(window, static_cast<double>(in))));
}

// Antialiased taps for the sample at input coordinate `xo` (ONNX Runtime's window): inputs
// floor(xo + 1 - support) .. floor(xo + 1 + support) - 1, weight filter((i - xo) · scale),
// normalized; outside taps clamp to the edge (their weights merged into the edge tap), or are
// dropped with exclude_outside. Unused taps of the `taps`-wide window get weight 0.
void antialias_taps(const ResizeAttrs& at, int64_t in, double xo, double scale, int taps, int64_t* idx, double* w) {
  const double support = antialias_support(at, scale);
  const int64_t lo = static_cast<int64_t>(std::floor(xo + 1 - support));
  const int64_t hi = static_cast<int64_t>(std::floor(xo + 1 + support));
  double sum = 0;
  int k = 0;
  for (int64_t i = lo; i < hi; ++i) {
    if (at.exclude_outside && (i < 0 || i >= in)) continue;
    const double d = std::abs((static_cast<double>(i) - xo) * scale);
    double wk = 0;
    if (at.mode == Mode::kLinear) {
      wk = d < 1 ? 1 - d : 0;
    } else {
      wk = d < 2 ? cubic_weight(d, at.cubic_a) : 0;
    }
    sum += wk;
    const int64_t j = std::clamp<int64_t>(i, 0, in - 1);
    if (k > 0 && idx[k - 1] == j) {
      w[k - 1] += wk;
    } else if (k < taps) {
      idx[k] = j;
      w[k] = wk;
      ++k;
    }
  }
  for (; k < taps; ++k) {
    idx[k] = 0;
    w[k] = 0;
  }
  if (sum != 0) {
    for (k = 0; k < taps; ++k) w[k] /= sum;
  }
}

AxisPlan plan_axis(const ResizeAttrs& at, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisPlan p;
  p.in = in;
  p.out = out;
  p.taps = at.mode == Mode::kNearest ? 1 : at.mode == Mode::kLinear ? 2 : 4;
  if (at.antialias && at.mode != Mode::kNearest && scale < 1) p.taps = antialias_window(at, scale, in);
  p.index.resize(static_cast<size_t>(out * p.taps));
  p.weight.resize(static_cast<size_t>(out * p.taps));
  p.outside.assign(static_cast<size_t>(out), 0);
  const bool legacy = at.upsample || at.opset < 11;
  const Coord coord = legacy ? Coord::kAsymmetric : at.coord;
  bool identity = in == out;
  // length_resized of the spec formulas: in * scale, which is not rounded to the output extent
  // (the ONNX reference implementation and its test data use it so for downsampling with
  // align_corners); with `sizes` it equals the output extent.
  const double length = static_cast<double>(in) * scale;
  for (int64_t o = 0; o < out; ++o) {
    const double x = static_cast<double>(o);
    double xo = 0;
    switch (coord) {
      case Coord::kHalfPixel:
        xo = (x + 0.5) / scale - 0.5;
        break;
      case Coord::kHalfPixelSymmetric: {
        const double offset = 0.5 * static_cast<double>(in) * (1 - static_cast<double>(out) / length);
        xo = offset + (x + 0.5) / scale - 0.5;
        break;
      }
      case Coord::kPytorchHalfPixel:
        xo = length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        break;
      case Coord::kAlignCorners:
        xo = length > 1 ? x * static_cast<double>(in - 1) / (length - 1) : 0.0;
        break;
      case Coord::kAsymmetric:
        xo = x / scale;
        break;
      case Coord::kTfHalfPixelForNn:
        xo = (x + 0.5) / scale;
        break;
      case Coord::kTfCropAndResize:
        xo = length > 1 ? roi_start * static_cast<double>(in - 1) +
                              x * (roi_end - roi_start) * static_cast<double>(in - 1) / (length - 1)
                        : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
        if (xo < 0 || xo > static_cast<double>(in - 1)) p.outside[o] = 1;
        break;
    }
    int64_t* idx = p.index.data() + o * p.taps;
    double* w = p.weight.data() + o * p.taps;
    if (at.mode == Mode::kNearest) {
      double r = 0;
      switch (legacy ? NearestMode::kLegacy : at.nearest) {
        case NearestMode::kRoundPreferFloor:
          r = std::ceil(xo - 0.5);
          break;
        case NearestMode::kRoundPreferCeil:
          r = std::floor(xo + 0.5);
          break;
        case NearestMode::kFloor:
          r = std::floor(xo);
          break;
        case NearestMode::kCeil:
          r = std::ceil(xo);
          break;
        case NearestMode::kLegacy:
          r = scale < 1 ? std::ceil(xo) : std::floor(xo);
          break;
      }
      idx[0] = std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
      w[0] = 1;
    } else if (at.antialias && scale < 1) {
      antialias_taps(at, in, xo, scale, p.taps, idx, w);
    } else {
      const double x0 = std::floor(xo), t = xo - x0;
      const int64_t base = static_cast<int64_t>(x0) - (p.taps == 4 ? 1 : 0);
      double sum = 0;
      for (int k = 0; k < p.taps; ++k) {
        const int64_t raw = base + k;
        double wk = p.taps == 2 ? (k == 0 ? 1 - t : t) : cubic_weight(t + 1 - k, at.cubic_a);
        if (at.exclude_outside && (raw < 0 || raw >= in)) wk = 0;
        idx[k] = std::clamp<int64_t>(raw, 0, in - 1);
        w[k] = wk;
        sum += wk;
      }
      if (at.exclude_outside && sum != 0) {
        for (int k = 0; k < p.taps; ++k) w[k] /= sum;
      }
    }
    if (identity) {
      // The sample is exactly input element o: all weight on o, none elsewhere.
      double on = 0, off = 0;
      for (int k = 0; k < p.taps; ++k) (idx[k] == o ? on : off) += std::abs(w[k]);
      if (on != 1.0 || off != 0.0 || p.outside[o]) identity = false;
    }
  }
  p.identity = identity;
  return p;
}

// True when the axis maps every output index to the same input index, inside the input.
bool is_identity_axis(const AxisPlan& a) {
  if (a.in != a.out) return false;
  for (int64_t o = 0; o < a.out; ++o) {
    if (a.index[o] != o || a.outside[o]) return false;
  }
  return true;
}

// Nearest: gathers elements (any dtype, by size) row by row along the last resized axis.
// Trailing axes that are not resized (e.g. the 8 channels of an nChw8c block, [N, C/8, H, W, 8])
// move as blocks of contiguous elements. An output row that reads the same input row as the
// previous one (upsampling) is a copy of it.
template <typename E>
void nearest_gather(const std::vector<AxisPlan>& axes, const Shape& in_shape, const E* x, E* y, E fill, int threads) {
  size_t rank = axes.size();
  int64_t block = 1;
  while (rank > 1 && is_identity_axis(axes[rank - 1])) block *= axes[--rank].out;
  const std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  const AxisPlan& last = axes[rank - 1];
  const int64_t width = last.out;
  const int64_t* idx = last.index.data();
  bool last_outside = false;
  for (uint8_t o : last.outside) last_outside = last_outside || o != 0;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= axes[i].out;
  const size_t row_bytes = sizeof(E) * static_cast<size_t>(width * block);
  parallel_for(threads, rows, width * block, [&](int64_t begin, int64_t end) {
    const E* prev = nullptr;
    int64_t prev_offset = -1;
    bool prev_outside = false;
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, offset = 0;
      bool outside = false;
      for (int64_t a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
        const AxisPlan& ap = axes[a];
        const int64_t o = rem % ap.out;
        rem /= ap.out;
        offset += ap.index[o] * in_strides[a];
        outside = outside || ap.outside[o];
      }
      E* dst = y + r * width * block;
      if (prev != nullptr && offset == prev_offset && outside == prev_outside) {
        std::memcpy(dst, prev, row_bytes);
      } else if (outside) {
        std::fill(dst, dst + width * block, fill);
      } else if (block > 1) {
        for (int64_t o = 0; o < width; ++o) {
          std::memcpy(dst + o * block, x + offset + idx[o] * block, sizeof(E) * static_cast<size_t>(block));
        }
      } else {
        const E* src = x + offset;
        if (!last_outside) {
          for (int64_t o = 0; o < width; ++o) dst[o] = src[idx[o]];
        } else {
          for (int64_t o = 0; o < width; ++o) dst[o] = last.outside[o] ? fill : src[idx[o]];
        }
      }
      prev = dst;
      prev_offset = offset;
      prev_outside = outside;
    }
  });
}

// One separable pass along `axis`: [outer, in, inner] -> [outer, out, inner].
template <typename T>
void interpolate_axis(const AxisPlan& p, int64_t outer, int64_t inner, const T* x, T* y, T fill, int threads) {
  const int taps = p.taps;
  std::vector<T> w(p.weight.begin(), p.weight.end());
  if (inner == 1) {
    // Last axis: a short dot product per output element, rows in parallel.
    parallel_for(threads, outer, p.out * taps, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* src = x + b * p.in;
        T* dst = y + b * p.out;
        for (int64_t o = 0; o < p.out; ++o) {
          const int64_t* idx = p.index.data() + o * taps;
          const T* wo = w.data() + o * taps;
          T acc = 0;
          for (int k = 0; k < taps; ++k) acc += wo[k] * src[idx[k]];
          dst[o] = p.outside[o] ? fill : acc;
        }
      }
    });
    return;
  }
  parallel_for(threads, outer * p.out, inner * taps, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / p.out, o = r % p.out;
      T* dst = y + r * inner;
      if (p.outside[o]) {
        std::fill(dst, dst + inner, fill);
        continue;
      }
      const T* src = x + b * p.in * inner;
      const int64_t* idx = p.index.data() + o * taps;
      const T* wo = w.data() + o * taps;
      const T* s0 = src + idx[0] * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = wo[0] * s0[i];
      for (int k = 1; k < taps; ++k) {
        const T* sk = src + idx[k] * inner;
        const T wk = wo[k];
        if (wk == 0) continue;
        for (int64_t i = 0; i < inner; ++i) dst[i] += wk * sk[i];
      }
    }
  });
}

template <typename T>
void interpolate(const std::vector<AxisPlan>& axes, const Shape& in_shape, const T* x, T* y, T fill, int threads) {
  const int64_t rank = static_cast<int64_t>(axes.size());
  std::vector<int64_t> todo;
  for (int64_t a = rank - 1; a >= 0; --a) {
    if (!axes[a].identity) todo.push_back(a);
  }
  Shape cur = in_shape;
  int64_t total = 1;
  for (int64_t d : cur) total *= d;
  if (todo.empty()) {
    std::copy(x, x + total, y);
    return;
  }
  std::vector<T> buf[2];
  const T* src = x;
  for (size_t step = 0; step < todo.size(); ++step) {
    const int64_t a = todo[step];
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < a; ++i) outer *= cur[i];
    for (int64_t i = a + 1; i < rank; ++i) inner *= cur[i];
    const bool last = step + 1 == todo.size();
    T* dst = y;
    if (!last) {
      buf[step % 2].resize(static_cast<size_t>(outer * axes[a].out * inner));
      dst = buf[step % 2].data();
    }
    interpolate_axis<T>(axes[a], outer, inner, src, dst, fill, threads);
    cur[a] = axes[a].out;
    src = dst;
  }
}

template <typename E>
E encode_fill(DataType dt, double v) {
  E e{};
  if constexpr (sizeof(E) == 2) {
    if (dt == DataType::kFloat16) return float_to_half(static_cast<float>(v));
    if (dt == DataType::kBFloat16) return float_to_bfloat16(static_cast<float>(v));
  }
  auto put = [&](auto typed) {
    if constexpr (sizeof(typed) == sizeof(E)) std::memcpy(&e, &typed, sizeof(E));
  };
  switch (dt) {
    case DataType::kFloat32:
      put(static_cast<float>(v));
      break;
    case DataType::kFloat64:
      put(v);
      break;
    case DataType::kInt8:
      put(static_cast<int8_t>(v));
      break;
    case DataType::kUInt8:
      put(static_cast<uint8_t>(v));
      break;
    case DataType::kBool:
      put(static_cast<uint8_t>(v != 0));
      break;
    case DataType::kInt16:
      put(static_cast<int16_t>(v));
      break;
    case DataType::kUInt16:
      put(static_cast<uint16_t>(v));
      break;
    case DataType::kInt32:
      put(static_cast<int32_t>(v));
      break;
    case DataType::kUInt32:
      put(static_cast<uint32_t>(v));
      break;
    case DataType::kInt64:
      put(static_cast<int64_t>(v));
      break;
    case DataType::kUInt64:
      put(static_cast<uint64_t>(v));
      break;
    default:
      break;
  }
  return e;
}

Expected<std::vector<double>> read_floats(const ir::Node& node, int index, const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.element_count()));
  if (t.dtype() == DataType::kFloat32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<float>()[i];
  } else if (t.dtype() == DataType::kFloat64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<double>()[i];
  } else if (t.dtype() == DataType::kFloat16) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = half_to_float(t.data<uint16_t>()[i]);
  } else {
    return unsupported_dtype(node, index, t.dtype());
  }
  return v;
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeAttrs at) : at_(std::move(at)) {}
  const char* name() const override { return "resize__reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input X is missing");
    const int64_t rank = x->rank();
    const DataType dt = x->dtype();
    // Input positions: Upsample-9 / Resize-10 (X, scales); Resize-11+ (X, roi, scales, sizes).
    const bool v11 = !at_.upsample && at_.opset >= 11;
    const int scales_index = v11 ? 2 : 1;
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    if (at_.upsample && at_.opset < 9) {
      scales.assign(at_.scales_attr.begin(), at_.scales_attr.end());
    } else {
      const Tensor* s = ctx.input(scales_index);
      if (s != nullptr && s->element_count() > 0) {
        EDGEMM_ASSIGN_OR_RETURN(scales, read_floats(node, scales_index, *s));
      }
    }
    if (v11) {
      const Tensor* r = ctx.input(1);
      if (r != nullptr && r->element_count() > 0) {
        EDGEMM_ASSIGN_OR_RETURN(roi, read_floats(node, 1, *r));
      }
      const Tensor* z = ctx.input_count() > 3 ? ctx.input(3) : nullptr;
      if (z != nullptr && z->element_count() > 0) {
        EDGEMM_ASSIGN_OR_RETURN(sizes, read_int_values(node, 3, *z));
      }
    }
    if (!scales.empty() && !sizes.empty()) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "both 'scales' and 'sizes' are given; the spec allows only one");
    }
    if (scales.empty() && sizes.empty()) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "neither 'scales' nor 'sizes' is given (or both are empty)");
    }
    // The axes that `scales`, `sizes` and `roi` list: attribute `axes` (Resize-18), else all.
    std::vector<int64_t> listed;
    std::vector<bool> is_listed(static_cast<size_t>(rank), !at_.has_axes);
    if (at_.has_axes) {
      for (int64_t axis : at_.axes) {
        EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axis, rank));
        if (is_listed[a]) {
          return ir::node_error(
              node, StatusCode::kInvalidModel,
              "attribute 'axes' " + shape_to_string(at_.axes) + " names axis " + std::to_string(a) + " twice");
        }
        is_listed[a] = true;
        listed.push_back(a);
      }
    } else {
      for (int64_t a = 0; a < rank; ++a) listed.push_back(a);
    }
    const size_t n = listed.size();
    const size_t count = scales.empty() ? sizes.size() : scales.size();
    if (count != n) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string(scales.empty() ? "'sizes'" : "'scales'") + " has " + std::to_string(count) +
                                " values but " +
                                (at_.has_axes ? "attribute 'axes' lists " + std::to_string(n) + " axes"
                                              : "input '" + node.inputs[0] + "' has rank " + std::to_string(rank)));
    }
    if (at_.coord == Coord::kTfCropAndResize && v11 && roi.size() != 2 * n) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "'roi' has " + std::to_string(roi.size()) + " values; tf_crop_and_resize needs " +
                                std::to_string(2 * n) + " (starts then ends)");
    }
    // Per-axis values over every axis: unlisted axes keep scale 1, their extent and roi [0, 1].
    std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
    if (roi.size() == 2 * n) {
      for (size_t i = 0; i < n; ++i) {
        roi_start[listed[i]] = roi[i];
        roi_end[listed[i]] = roi[n + i];
      }
    }
    std::vector<double> full_scales(static_cast<size_t>(rank), 1.0);
    Shape full_sizes = x->shape();
    for (size_t i = 0; i < n; ++i) {
      if (!scales.empty()) full_scales[listed[i]] = scales[i];
      if (!sizes.empty()) full_sizes[listed[i]] = sizes[i];
    }
    // keep_aspect_ratio_policy not_larger / not_smaller: one scale for every listed axis.
    const bool keep_aspect = !sizes.empty() && at_.policy != AspectPolicy::kStretch;
    double common_scale = 0;
    if (keep_aspect) {
      for (size_t i = 0; i < n; ++i) {
        const int64_t in = x->shape()[listed[i]];
        if (in <= 0 || sizes[i] < 0) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "keep_aspect_ratio_policy needs non-empty input axes and non-negative 'sizes'; axis " +
                                    std::to_string(listed[i]) + " has extent " + std::to_string(in) + " and size " +
                                    std::to_string(sizes[i]));
        }
        const double r = static_cast<double>(sizes[i]) / static_cast<double>(in);
        if (i == 0 || (at_.policy == AspectPolicy::kNotLarger ? r < common_scale : r > common_scale)) {
          common_scale = r;
        }
      }
    }
    Shape out_shape(static_cast<size_t>(rank));
    std::vector<double> axis_scale(static_cast<size_t>(rank));
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t in = x->shape()[a];
      double scale;
      if (!scales.empty() || (keep_aspect && is_listed[a])) {
        scale = keep_aspect ? common_scale : full_scales[a];
        if (!(scale > 0) || !std::isfinite(scale)) {
          return ir::node_error(
              node, StatusCode::kInvalidArgument,
              "scale " + std::to_string(scale) + " for axis " + std::to_string(a) + " must be positive and finite");
        }
        // keep_aspect_ratio_policy rounds halves up; scales round down.
        const double o = std::floor(static_cast<double>(in) * scale + (keep_aspect ? 0.5 : 0.0));
        if (o > static_cast<double>(kMaxTensorBytes)) {
          return ir::node_error(node, StatusCode::kOutOfMemory,
                                "scale " + std::to_string(scale) + " makes axis " + std::to_string(a) + " too large");
        }
        out_shape[a] = static_cast<int64_t>(o);
      } else {
        if (full_sizes[a] < 0) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "'sizes' has a negative value " + std::to_string(full_sizes[a]));
        }
        out_shape[a] = full_sizes[a];
        scale = in > 0 ? static_cast<double>(full_sizes[a]) / static_cast<double>(in) : 1.0;
      }
      axis_scale[a] = scale;
    }
    // Refuse outputs beyond the tensor size limit before building per-axis tables for them.
    auto out_count = shape_element_count(out_shape);
    if (!out_count.has_value() ||
        *out_count > kMaxTensorBytes / static_cast<int64_t>(std::max<size_t>(1, dtype_size(dt)))) {
      return ir::node_error(node, StatusCode::kOutOfMemory,
                            "the output " + shape_to_string(out_shape) + " would exceed the tensor size limit");
    }
    std::vector<AxisPlan> axes(static_cast<size_t>(rank));
    for (int64_t a = 0; a < rank; ++a) {
      axes[a] = plan_axis(at_, x->shape()[a], out_shape[a], axis_scale[a], roi_start[a], roi_end[a]);
    }
    if (at_.mode != Mode::kNearest && dt != DataType::kFloat32 && dt != DataType::kFloat64) {
      return ir::node_error(node, StatusCode::kUnsupported,
                            std::string("input '") + node.inputs[0] + "' has dtype " + dtype_name(dt) +
                                "; linear and cubic modes support float32 and float64");
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    if (x->element_count() == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + node.inputs[0] + "' is empty but the output is not");
    }
    if (rank == 0) {
      std::memcpy(y->raw_data(), x->raw_data(), x->byte_size());
      return Status::ok();
    }
    const int threads = ctx.threads();
    const double fill = at_.extrapolation_value;
    if (at_.mode == Mode::kNearest) {
      switch (dtype_size(dt)) {
        case 1:
          nearest_gather<uint8_t>(axes, x->shape(), x->data<uint8_t>(), y->data<uint8_t>(),
                                  encode_fill<uint8_t>(dt, fill), threads);
          break;
        case 2:
          nearest_gather<uint16_t>(axes, x->shape(), x->data<uint16_t>(), y->data<uint16_t>(),
                                   encode_fill<uint16_t>(dt, fill), threads);
          break;
        case 4:
          nearest_gather<uint32_t>(axes, x->shape(), x->data<uint32_t>(), y->data<uint32_t>(),
                                   encode_fill<uint32_t>(dt, fill), threads);
          break;
        case 8:
          nearest_gather<uint64_t>(axes, x->shape(), x->data<uint64_t>(), y->data<uint64_t>(),
                                   encode_fill<uint64_t>(dt, fill), threads);
          break;
        default:
          return unsupported_dtype(node, 0, dt);
      }
      return Status::ok();
    }
    if (dt == DataType::kFloat32) {
      interpolate<float>(axes, x->shape(), x->data<float>(), y->data<float>(), static_cast<float>(fill), threads);
    } else {
      interpolate<double>(axes, x->shape(), x->data<double>(), y->data<double>(), fill, threads);
    }
    return Status::ok();
  }

 private:
  ResizeAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_resize(const KernelInfo& info, bool upsample) {
  const ir::Node& node = info.node;
  ResizeAttrs at;
  at.upsample = upsample;
  at.opset = info.opset;
  EDGEMM_ASSIGN_OR_RETURN(std::string mode, node.attr_string("mode", "nearest"));
  if (mode == "nearest") {
    at.mode = Mode::kNearest;
  } else if (mode == "linear" || (upsample && mode == "bilinear")) {
    at.mode = Mode::kLinear;
  } else if (mode == "cubic" && !upsample && info.opset >= 11) {
    at.mode = Mode::kCubic;
  } else {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute mode '" + mode + "' is not valid for this opset");
  }
  if (upsample && info.opset < 9) {
    EDGEMM_ASSIGN_OR_RETURN(at.scales_attr, node.attr_floats("scales"));
    if (at.scales_attr.empty()) {
      return ir::node_error(node, StatusCode::kInvalidModel, "attribute scales is required");
    }
  }
  if (!upsample && info.opset >= 11) {
    EDGEMM_ASSIGN_OR_RETURN(std::string coord, node.attr_string("coordinate_transformation_mode", "half_pixel"));
    static const std::pair<const char*, Coord> kCoords[] = {{"half_pixel", Coord::kHalfPixel},
                                                            {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
                                                            {"align_corners", Coord::kAlignCorners},
                                                            {"asymmetric", Coord::kAsymmetric},
                                                            {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn},
                                                            {"tf_crop_and_resize", Coord::kTfCropAndResize}};
    bool found = false;
    for (const auto& [n, c] : kCoords) {
      if (coord == n) {
        at.coord = c;
        found = true;
      }
    }
    if (coord == "half_pixel_symmetric" && info.opset >= 19) {
      at.coord = Coord::kHalfPixelSymmetric;
      found = true;
    }
    if (!found) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute coordinate_transformation_mode '" + coord + "' is unknown");
    }
    EDGEMM_ASSIGN_OR_RETURN(std::string nm, node.attr_string("nearest_mode", "round_prefer_floor"));
    if (nm == "round_prefer_floor") {
      at.nearest = NearestMode::kRoundPreferFloor;
    } else if (nm == "round_prefer_ceil") {
      at.nearest = NearestMode::kRoundPreferCeil;
    } else if (nm == "floor") {
      at.nearest = NearestMode::kFloor;
    } else if (nm == "ceil") {
      at.nearest = NearestMode::kCeil;
    } else {
      return ir::node_error(node, StatusCode::kInvalidModel, "attribute nearest_mode '" + nm + "' is unknown");
    }
    EDGEMM_ASSIGN_OR_RETURN(float a, node.attr_float("cubic_coeff_a", -0.75f));
    EDGEMM_ASSIGN_OR_RETURN(int64_t ex, node.attr_int("exclude_outside", 0));
    EDGEMM_ASSIGN_OR_RETURN(float ev, node.attr_float("extrapolation_value", 0.0f));
    at.cubic_a = a;
    at.exclude_outside = ex != 0;
    at.extrapolation_value = ev;
  }
  if (!upsample && info.opset >= 18) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t antialias, node.attr_int("antialias", 0));
    at.antialias = antialias != 0;
    if (at.antialias && at.mode == Mode::kNearest) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute antialias=" + std::to_string(antialias) +
                                " applies to the linear and cubic modes only, not to mode 'nearest'");
    }
    if (node.has_attr("axes")) {
      EDGEMM_ASSIGN_OR_RETURN(at.axes, node.attr_ints("axes"));
      at.has_axes = true;
    }
    EDGEMM_ASSIGN_OR_RETURN(std::string policy, node.attr_string("keep_aspect_ratio_policy", "stretch"));
    if (policy == "stretch") {
      at.policy = AspectPolicy::kStretch;
    } else if (policy == "not_larger") {
      at.policy = AspectPolicy::kNotLarger;
    } else if (policy == "not_smaller") {
      at.policy = AspectPolicy::kNotSmaller;
    } else {
      return ir::node_error(
          node, StatusCode::kInvalidModel,
          "attribute keep_aspect_ratio_policy '" + policy + "' is unknown (stretch, not_larger or not_smaller)");
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(std::move(at)));
}

}  // namespace

void register_resize_kernels(KernelRegistry& registry) {
  for (int since : {10, 11, 13, 18, 19}) {
    registry.add("", "Resize", since, [](const KernelInfo& i) { return make_resize(i, false); });
  }
  for (int since : {7, 9}) {
    registry.add("", "Upsample", since, [](const KernelInfo& i) { return make_resize(i, true); });
  }
}

}  // namespace edgemm::kernels
