/// \file detection.cc
/// NonMaxSuppression and RoiAlign of the default ONNX domain (Operators.md "NonMaxSuppression"
/// 10/11, "RoiAlign" 10/16).
///
/// NonMaxSuppression: boxes [B, S, 4], scores [B, C, S]; optional scalar inputs
/// max_output_boxes_per_class (int64, absent = 0 = no output), iou_threshold (float, absent = 0,
/// must lie in [0, 1]) and score_threshold (float; when present a box is a candidate only if its
/// score is strictly greater). center_point_box 0: [y1, x1, y2, x2] with either diagonal pair of
/// corners; 1: [x_center, y_center, width, height]. For every batch and class the candidates are
/// visited by descending score (equal scores: lower box index first; NaN scores last) and a
/// candidate is kept when its IoU with every box kept so far is at most iou_threshold, until
/// max_output_boxes_per_class boxes are kept. As in the spec's reference (ONNX Runtime's
/// kernel), boxes that do not overlap, or where either box or the union has no area, never
/// suppress each other (so zero-area boxes are all kept). Output: int64 [num_selected, 3] rows
/// (batch, class, box), by batch, then class, then selection order. float32 boxes and scores.
///
/// RoiAlign: X [N, C, H, W], rois [R, 4] as [x1, y1, x2, y2] in image coordinates, batch_indices
/// [R] (int64; int32 accepted) → Y [R, C, output_height, output_width]. Each bin averages (mode
/// avg) or takes the maximum (mode max) of sampling_ratio² bilinear samples (sampling_ratio 0:
/// ceil(roi extent / output extent) per axis). coordinate_transformation_mode (16+, default
/// half_pixel) shifts the scaled roi by -0.5; output_half_pixel (the only behaviour at opset 10)
/// does not and widens rois to at least 1x1. Samples outside [-1, extent] (or NaN) count as 0 in
/// the average; samples in [-1, 0) are clamped to 0. max mode takes the maximum of the weighted
/// corner values of each sample, as the spec's reference (ONNX Runtime) does. A roi that would
/// take more than 2^24 samples per bin (sampling_ratio 0 with a huge roi) is kInvalidArgument; a
/// batch index outside [0, N) is kInvalidArgument naming the index and value. float32, float64.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace detection_impl {
namespace {

// ---- NonMaxSuppression ------------------------------------------------------------------

// A box as its extents on both axes (min <= max for corner boxes; center boxes keep their sign).
struct Box {
  float x_min, x_max, y_min, y_max;
};

Box make_box(const float* b, bool center) {
  if (center) {
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return {b[0] - half_w, b[0] + half_w, b[1] - half_h, b[1] + half_h};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

// True when `a` and `b` overlap with IoU > threshold (computed in float, as the reference does).
bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0.0f) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou_threshold;
}

// The one value of an optional scalar input (shape [] or [1]); `fallback` when absent.
Expected<float> scalar_float(const ir::Node& node, const Tensor* t, int index, const char* name, float fallback) {
  if (t == nullptr) return fallback;
  if (t->dtype() != DataType::kFloat32) return unsupported_dtype(node, index, t->dtype());
  if (t->element_count() != 1) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        std::string("input '") + name + "' must hold one value, got shape " + shape_to_string(t->shape()));
  }
  return t->data<float>()[0];
}

Status nms_run(KernelContext& ctx, bool center) {
  const ir::Node& node = ctx.node();
  const Tensor* boxes = ctx.input(0);
  const Tensor* scores = ctx.input(1);
  if (boxes == nullptr || scores == nullptr) {
    return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'boxes' and 'scores' are required");
  }
  if (boxes->dtype() != DataType::kFloat32) return unsupported_dtype(node, 0, boxes->dtype());
  if (scores->dtype() != DataType::kFloat32) return unsupported_dtype(node, 1, scores->dtype());
  const Shape& bs = boxes->shape();
  const Shape& ss = scores->shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "expected boxes [num_batches, spatial, 4] and scores [num_batches, classes, spatial], got " +
                              shape_to_string(bs) + " and " + shape_to_string(ss));
  }
  int64_t max_out = 0;
  if (const Tensor* m = ctx.input(2); m != nullptr) {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> mv, read_int_values(node, 2, *m));
    if (mv.size() != 1) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input 'max_output_boxes_per_class' must hold one value, got shape " + shape_to_string(m->shape()));
    }
    max_out = std::max<int64_t>(mv[0], 0);
  }
  EDGEMM_ASSIGN_OR_RETURN(float iou_threshold, scalar_float(node, ctx.input(3), 3, "iou_threshold", 0.0f));
  if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "iou_threshold " + std::to_string(iou_threshold) + " is outside [0, 1]");
  }
  const bool has_score_threshold = ctx.input(4) != nullptr;
  EDGEMM_ASSIGN_OR_RETURN(float score_threshold, scalar_float(node, ctx.input(4), 4, "score_threshold", 0.0f));

  const int64_t batches = bs[0], spatial = bs[1], classes = ss[1];
  std::vector<std::vector<int64_t>> kept(static_cast<size_t>(batches * classes));
  if (max_out > 0 && spatial > 0) {
    parallel_for(ctx.threads(), batches * classes, spatial * 16, [&](int64_t begin, int64_t end) {
      std::vector<Box> all(static_cast<size_t>(spatial));
      int64_t boxes_of = -1;  // batch whose boxes `all` holds
      std::vector<int64_t> order;
      std::vector<Box> chosen;
      for (int64_t bc = begin; bc < end; ++bc) {
        const int64_t b = bc / classes;
        if (b != boxes_of) {
          const float* bp = boxes->data<float>() + b * spatial * 4;
          for (int64_t i = 0; i < spatial; ++i) all[i] = make_box(bp + i * 4, center);
          boxes_of = b;
        }
        const float* sp = scores->data<float>() + bc * spatial;
        order.clear();
        for (int64_t i = 0; i < spatial; ++i) {
          if (!has_score_threshold || sp[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [sp](int64_t a, int64_t b2) {
          const bool a_nan = std::isnan(sp[a]), b_nan = std::isnan(sp[b2]);
          if (a_nan || b_nan) return !a_nan && b_nan;
          return sp[a] > sp[b2];
        });
        chosen.clear();
        std::vector<int64_t>& out = kept[static_cast<size_t>(bc)];
        for (int64_t i : order) {
          if (static_cast<int64_t>(out.size()) >= max_out) break;
          const Box& cand = all[i];
          bool drop = false;
          for (const Box& k : chosen) {
            if (suppresses(k, cand, iou_threshold)) {
              drop = true;
              break;
            }
          }
          if (drop) continue;
          chosen.push_back(cand);
          out.push_back(i);
        }
      }
    });
  }
  int64_t total = 0;
  for (const auto& k : kept) total += static_cast<int64_t>(k.size());
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, Shape{total, 3}));
  int64_t* p = y->data<int64_t>();
  for (int64_t bc = 0; bc < batches * classes; ++bc) {
    for (int64_t i : kept[static_cast<size_t>(bc)]) {
      *p++ = bc / classes;
      *p++ = bc % classes;
      *p++ = i;
    }
  }
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> make_nms(const KernelInfo& info) {
  const ir::Node& node = info.node;
  EDGEMM_ASSIGN_OR_RETURN(int64_t center, node.attr_int("center_point_box", 0));
  if (center != 0 && center != 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute center_point_box must be 0 or 1, got " + std::to_string(center));
  }
  const bool c = center == 1;
  return simple_kernel([c](KernelContext& ctx) { return nms_run(ctx, c); })(info);
}

// ---- RoiAlign ---------------------------------------------------------------------------

struct RoiAlignAttrs {
  bool max_mode = false;
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  float spatial_scale = 1.0f;
  bool half_pixel = false;
};

// One bilinear sample: four flat offsets into an H*W plane and their weights (all 0 outside).
template <typename T>
struct Sample {
  int64_t pos[4];
  T w[4];
};

// Most samples one bin may take (sampling_ratio², or the adaptive grid of a huge roi).
constexpr int64_t kMaxSamplesPerBin = int64_t{1} << 24;

// Bilinear samples of bin (ph, pw) of one roi: grid_h * grid_w of them, row by row.
template <typename T>
void bin_samples(int64_t height, int64_t width, int64_t ph, int64_t pw, T start_h, T start_w, T bin_h, T bin_w,
                 int64_t grid_h, int64_t grid_w, std::vector<Sample<T>>& out) {
  out.clear();
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    const T yy = start_h + static_cast<T>(ph) * bin_h +
                 static_cast<T>(static_cast<T>(iy) + T(0.5)) * bin_h / static_cast<T>(grid_h);
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      T x = start_w + static_cast<T>(pw) * bin_w +
            static_cast<T>(static_cast<T>(ix) + T(0.5)) * bin_w / static_cast<T>(grid_w);
      T y = yy;
      Sample<T> s{{0, 0, 0, 0}, {0, 0, 0, 0}};
      // Outside [-1, extent] (or NaN): the sample reads nothing.
      if (!(y >= T(-1) && y <= static_cast<T>(height) && x >= T(-1) && x <= static_cast<T>(width))) {
        out.push_back(s);
        continue;
      }
      if (y <= 0) y = 0;
      if (x <= 0) x = 0;
      int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
      if (y_low >= height - 1) {
        y_high = y_low = height - 1;
        y = static_cast<T>(y_low);
      } else {
        y_high = y_low + 1;
      }
      if (x_low >= width - 1) {
        x_high = x_low = width - 1;
        x = static_cast<T>(x_low);
      } else {
        x_high = x_low + 1;
      }
      const T ly = y - static_cast<T>(y_low), lx = x - static_cast<T>(x_low);
      const T hy = T(1) - ly, hx = T(1) - lx;
      s = {{y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high},
           {hy * hx, hy * lx, ly * hx, ly * lx}};
      out.push_back(s);
    }
  }
}

// Sampling grid of one roi along one axis: sampling_ratio, or ceil(extent / bins) (0 for an
// empty, negative or NaN extent; -1 when too large to sample).
template <typename T>
int64_t grid_extent(int64_t sampling_ratio, T extent, int64_t bins) {
  if (sampling_ratio > 0) return sampling_ratio;
  const T c = std::ceil(extent / static_cast<T>(bins));
  if (!(c > T(0))) return 0;
  return c > static_cast<T>(kMaxSamplesPerBin) ? -1 : static_cast<int64_t>(c);
}

// Geometry of one roi: start, bin size and sampling grid per axis.
template <typename T>
struct RoiGeometry {
  T start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

template <typename T>
RoiGeometry<T> roi_geometry(const RoiAlignAttrs& at, const T* roi) {
  const T offset = at.half_pixel ? T(0.5) : T(0);
  const T scale = static_cast<T>(at.spatial_scale);
  RoiGeometry<T> g;
  g.start_w = roi[0] * scale - offset;
  g.start_h = roi[1] * scale - offset;
  T roi_w = (roi[2] * scale - offset) - g.start_w, roi_h = (roi[3] * scale - offset) - g.start_h;
  if (!at.half_pixel) {  // legacy: malformed rois become 1x1
    roi_w = std::max(roi_w, T(1));
    roi_h = std::max(roi_h, T(1));
  }
  g.bin_h = roi_h / static_cast<T>(at.out_h);
  g.bin_w = roi_w / static_cast<T>(at.out_w);
  g.grid_h = grid_extent(at.sampling_ratio, roi_h, at.out_h);
  g.grid_w = grid_extent(at.sampling_ratio, roi_w, at.out_w);
  return g;
}

template <typename T>
void roi_align(const RoiAlignAttrs& at, const Tensor& xt, const T* rois, const std::vector<int64_t>& batch, T* y,
               int threads) {
  const int64_t channels = xt.shape()[1], height = xt.shape()[2], width = xt.shape()[3];
  const int64_t num_rois = static_cast<int64_t>(batch.size());
  const int64_t bins = at.out_h * at.out_w;
  const T* x = xt.data<T>();
  parallel_for(threads, num_rois * bins, channels * 16, [&](int64_t begin, int64_t end) {
    std::vector<Sample<T>> samples;
    for (int64_t rb = begin; rb < end; ++rb) {
      const int64_t r = rb / bins, bin = rb % bins;
      const RoiGeometry<T> g = roi_geometry(at, rois + r * 4);
      bin_samples<T>(height, width, bin / at.out_w, bin % at.out_w, g.start_h, g.start_w, g.bin_h, g.bin_w, g.grid_h,
                     g.grid_w, samples);
      const int64_t per_bin = static_cast<int64_t>(samples.size());
      const T count = static_cast<T>(std::max<int64_t>(per_bin, 1));
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = x + (batch[r] * channels + c) * height * width;
        T v = 0;
        if (at.max_mode) {
          for (int64_t k = 0; k < per_bin; ++k) {
            const Sample<T>& q = samples[k];
            const T m = std::max(
                std::max(std::max(q.w[0] * plane[q.pos[0]], q.w[1] * plane[q.pos[1]]), q.w[2] * plane[q.pos[2]]),
                q.w[3] * plane[q.pos[3]]);
            v = k == 0 ? m : std::max(v, m);
          }
        } else {
          for (const Sample<T>& q : samples) {
            v += q.w[0] * plane[q.pos[0]] + q.w[1] * plane[q.pos[1]] + q.w[2] * plane[q.pos[2]] +
                 q.w[3] * plane[q.pos[3]];
          }
          v /= count;
        }
        y[(r * channels + c) * bins + bin] = v;
      }
    }
  });
}

// Checks that no roi asks for more than kMaxSamplesPerBin samples per bin.
template <typename T>
Status check_roi_grids(const ir::Node& node, const RoiAlignAttrs& at, const T* rois, int64_t num_rois) {
  for (int64_t r = 0; r < num_rois; ++r) {
    const RoiGeometry<T> g = roi_geometry(at, rois + r * 4);
    if (g.grid_h < 0 || g.grid_w < 0 || g.grid_h * g.grid_w > kMaxSamplesPerBin) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "roi " + std::to_string(r) + " needs more than " + std::to_string(kMaxSamplesPerBin) +
                                " samples per bin (sampling_ratio 0 with a huge roi)");
    }
  }
  return Status::ok();
}

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(RoiAlignAttrs at) : at_(at) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* rois = ctx.input(1);
    const Tensor* bi = ctx.input(2);
    if (x == nullptr || rois == nullptr || bi == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'X', 'rois' and 'batch_indices' are required");
    }
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
    if (rois->dtype() != dt) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("input 'rois' has dtype ") + dtype_name(rois->dtype()) + ", expected " +
                                dtype_name(dt) + " as 'X'");
    }
    if (x->rank() != 4) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' must be 4-D [N, C, H, W], got shape " + shape_to_string(x->shape()));
    }
    const int64_t num_rois = rois->rank() == 2 ? rois->shape()[0] : -1;
    if (num_rois < 0 || rois->shape()[1] != 4 || bi->rank() != 1 || bi->shape()[0] != num_rois) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "expected rois [num_rois, 4] and batch_indices [num_rois], got " +
                                shape_to_string(rois->shape()) + " and " + shape_to_string(bi->shape()));
    }
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> batch, read_int_values(node, 2, *bi));
    const int64_t n = x->shape()[0];
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i] < 0 || batch[i] >= n) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "batch_indices[" + std::to_string(i) + "] = " + std::to_string(batch[i]) +
                                  " is out of range [0, " + std::to_string(n) + ") of the batch of 'X'");
      }
    }
    const Shape out_shape{num_rois, x->shape()[1], at_.out_h, at_.out_w};
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->element_count() == 0) return Status::ok();
    if (x->shape()[2] == 0 || x->shape()[3] == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' has an empty spatial extent: " + shape_to_string(x->shape()));
    }
    if (dt == DataType::kFloat32) {
      EDGEMM_RETURN_IF_ERROR(check_roi_grids(node, at_, rois->data<float>(), num_rois));
      roi_align<float>(at_, *x, rois->data<float>(), batch, y->data<float>(), ctx.threads());
    } else {
      EDGEMM_RETURN_IF_ERROR(check_roi_grids(node, at_, rois->data<double>(), num_rois));
      roi_align<double>(at_, *x, rois->data<double>(), batch, y->data<double>(), ctx.threads());
    }
    return Status::ok();
  }

 private:
  RoiAlignAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_roi_align(const KernelInfo& info) {
  const ir::Node& node = info.node;
  RoiAlignAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(std::string mode, node.attr_string("mode", "avg"));
  if (mode != "avg" && mode != "max") {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute mode '" + mode + "' is not avg or max");
  }
  at.max_mode = mode == "max";
  EDGEMM_ASSIGN_OR_RETURN(at.out_h, node.attr_int("output_height", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.out_w, node.attr_int("output_width", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.sampling_ratio, node.attr_int("sampling_ratio", 0));
  EDGEMM_ASSIGN_OR_RETURN(at.spatial_scale, node.attr_float("spatial_scale", 1.0f));
  if (at.out_h <= 0 || at.out_w <= 0 || at.sampling_ratio < 0) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "output_height and output_width must be > 0 and sampling_ratio >= 0, got " +
                              std::to_string(at.out_h) + ", " + std::to_string(at.out_w) + ", " +
                              std::to_string(at.sampling_ratio));
  }
  if (info.opset >= 16) {
    EDGEMM_ASSIGN_OR_RETURN(std::string ctm, node.attr_string("coordinate_transformation_mode", "half_pixel"));
    if (ctm != "half_pixel" && ctm != "output_half_pixel") {
      return ir::node_error(
          node, StatusCode::kInvalidModel,
          "attribute coordinate_transformation_mode '" + ctm + "' is not half_pixel or output_half_pixel");
    }
    at.half_pixel = ctm == "half_pixel";
  }
  return std::unique_ptr<Kernel>(std::make_unique<RoiAlignKernel>(at));
}

}  // namespace
}  // namespace detection_impl

/// Registers NonMaxSuppression (opsets 10, 11) and RoiAlign (opsets 10, 16) in `registry`.
void register_detection_kernels(KernelRegistry& registry) {
  for (int since : {10, 11}) registry.add("", "NonMaxSuppression", since, detection_impl::make_nms);
  for (int since : {10, 16}) registry.add("", "RoiAlign", since, detection_impl::make_roi_align);
}

}  // namespace edgemm::kernels
