/// \file attention.cc
/// com.edgemm Attention (attention.h). Per leading index (a batch entry and head): with
/// AVX-512F, blocks of 32 query rows on the register tiles of matmul_panels.h with the scores
/// transposed (see run_panels), the [T, 32] scores of a block in a per-thread buffer that stays
/// in L2. Leading indices are split over the threads. Elsewhere plain loops (the reference,
/// also used to check the fast path).

#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/softmax.h"

namespace edgemm::kernels {
namespace {

/// Extents of one run: the broadcast leading axes of Q, Kᵀ, V and the mask, S, T, D, and each
/// operand's strides over those axes in elements (0 where it broadcasts).
struct Dims {
  int64_t lead = 1, s = 0, t = 0, d = 0;
  Shape lead_shape;
  std::vector<int64_t> q, kt, v, mask;  // strides over lead_shape (mask: empty without one)
  int64_t mask_row = 0, mask_col = 0;   // the mask's strides along S and T
};

std::string describe(const Tensor* t) {
  return t == nullptr ? std::string("nothing")
                      : std::string(dtype_name(t->dtype())) + " " + shape_to_string(t->shape());
}

Status bad_input(const ir::Node& node, int i, const std::string& expected, const Tensor* t) {
  const std::string name = i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : "?";
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "input '" + name + "' must be float32 " + expected + ", got " + describe(t));
}

Shape leading(const Tensor& t, size_t rank) {
  Shape s(rank - 2, 1);
  std::copy(t.shape().begin(), t.shape().end() - 2, s.end() - (t.rank() - 2));
  return s;
}

/// Strides of `t` (leading axes `lead`, matrices of `matrix` elements) over `out`.
std::vector<int64_t> lead_strides(const Shape& lead, const Shape& out, int64_t matrix) {
  std::vector<int64_t> strides = broadcast_strides(lead, out);
  for (int64_t& s : strides) s *= matrix;
  return strides;
}

Expected<Dims> check_inputs(const KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor *q = ctx.input(0), *kt = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
  if (q == nullptr || q->dtype() != DataType::kFloat32 || q->rank() < 2) return bad_input(node, 0, "[..., S, D]", q);
  const int64_t rank = q->rank();
  Dims d;
  d.s = q->dim(-2);
  d.d = q->dim(-1);
  if (kt == nullptr || kt->dtype() != DataType::kFloat32 || kt->rank() != rank || kt->dim(-2) != d.d) {
    return bad_input(node, 1, "[..., D, T] of Q's rank with D = " + std::to_string(d.d), kt);
  }
  d.t = kt->dim(-1);
  if (v == nullptr || v->dtype() != DataType::kFloat32 || v->rank() != rank || v->dim(-2) != d.t || v->dim(-1) != d.d) {
    return bad_input(node, 2, "[..., T, D] of Q's rank with T = " + std::to_string(d.t), v);
  }
  std::vector<Shape> leads = {leading(*q, rank), leading(*kt, rank), leading(*v, rank)};
  if (mask != nullptr) {
    bool fits = mask->dtype() == DataType::kFloat32 && mask->rank() <= rank;
    fits = fits && (mask->rank() < 2 || mask->dim(-2) == 1 || mask->dim(-2) == d.s);
    fits = fits && (mask->rank() < 1 || mask->dim(-1) == 1 || mask->dim(-1) == d.t);
    if (!fits) return bad_input(node, 3, "of rank <= " + std::to_string(rank) + " ending in [1 or S, 1 or T]", mask);
    Shape padded(rank - mask->rank(), 1);
    padded.insert(padded.end(), mask->shape().begin(), mask->shape().end());
    leads.push_back(Shape(padded.begin(), padded.end() - 2));
    d.mask_row = padded[rank - 2] == 1 ? 0 : padded[rank - 1];
    d.mask_col = padded[rank - 1] == 1 ? 0 : 1;
  }
  d.lead_shape = leads[0];
  for (size_t i = 1; i < leads.size(); ++i) {
    auto shape = broadcast_shapes(node, d.lead_shape, leads[i]);
    if (!shape) return bad_input(node, static_cast<int>(i), "with leading axes that broadcast", ctx.input(i));
    d.lead_shape = *shape;
  }
  for (int64_t e : d.lead_shape) d.lead *= e;
  d.q = lead_strides(leads[0], d.lead_shape, d.s * d.d);
  d.kt = lead_strides(leads[1], d.lead_shape, d.d * d.t);
  d.v = lead_strides(leads[2], d.lead_shape, d.t * d.d);
  if (mask != nullptr) {
    const Shape& m = leads[3];
    d.mask = lead_strides(m, d.lead_shape, (d.mask_row != 0 ? d.s : 1) * (d.mask_col != 0 ? d.t : 1));
  }
  return d;
}

/// Offset of leading index `l` (row-major over d.lead_shape) for an operand's strides.
int64_t lead_offset(const Dims& d, const std::vector<int64_t>& strides, int64_t l) {
  int64_t offset = 0;
  for (size_t i = d.lead_shape.size(); i-- > 0;) {
    offset += (l % d.lead_shape[i]) * strides[i];
    l /= d.lead_shape[i];
  }
  return offset;
}

/// Scales one row of scores, adds its mask row (stride `mask_step` along T; null: none), and
/// takes its softmax in place.
void finish_row(float* scores, int64_t t, float scale, const float* mask, int64_t mask_step) {
  if (scale != 1.0f) {
    for (int64_t j = 0; j < t; ++j) scores[j] *= scale;
  }
  if (mask != nullptr) {
    for (int64_t j = 0; j < t; ++j) scores[j] += mask[j * mask_step];
  }
  softmax_row(scores, scores, t);
}

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(float scale) : scale_(scale) {}
  const char* name() const override { return panels_ ? "f32_attention__avx512_panels" : "attention__reference"; }

  Status run(KernelContext& ctx) const override {
    EDGEMM_ASSIGN_OR_RETURN(const Dims d, check_inputs(ctx));
    const Tensor *q = ctx.input(0), *kt = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
    Shape out = d.lead_shape;
    out.insert(out.end(), {d.s, d.d});
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out));
    if (y->element_count() == 0) return Status::ok();
    if (d.t == 0) {  // softmax over no keys: every weight and output would be undefined
      return ir::node_error(ctx.node(), StatusCode::kInvalidArgument, "Kt has no keys (T = 0)");
    }
    const float* mask_data = mask != nullptr ? mask->data<float>() : nullptr;
    const int64_t mask_step = d.mask_col;
    parallel_for(ctx.threads(), d.lead, d.s * d.t * d.d * 4, [&](int64_t begin, int64_t end) {
      for (int64_t l = begin; l < end; ++l) {
        const float* ql = q->data<float>() + lead_offset(d, d.q, l);
        const float* ktl = kt->data<float>() + lead_offset(d, d.kt, l);
        const float* vl = v->data<float>() + lead_offset(d, d.v, l);
        float* yl = y->data<float>() + l * d.s * d.d;
        const float* mask_l = mask_data != nullptr ? mask_data + lead_offset(d, d.mask, l) : nullptr;
        auto mask_row = [&](int64_t row) { return mask_l != nullptr ? mask_l + row * d.mask_row : nullptr; };
        if (panels_) {
          run_panels(d, ql, ktl, vl, mask_row, mask_step, yl);
        } else {
          run_reference(d, ql, ktl, vl, mask_row, mask_step, yl);
        }
      }
    });
    return Status::ok();
  }

 private:
  /// One leading index on the panel kernel, in blocks of 32 query rows, everything transposed so
  /// that no [S, T] matrix is ever transposed: Sᵀ [T, 32] = K · (scale · Q_block)ᵀ (A = K packed
  /// from Kᵀ, B = the block's scaled Qᵀ as one panel), the softmax down its columns, then
  /// Y_blockᵀ [D, 32] = Vᵀ · Pᵀ (A = Vᵀ packed from V, B = Pᵀ, already a panel), divided by the
  /// sums while transposed back. Columns past a short last block hold stale values that no valid
  /// column reads.
  template <typename MaskRow>
  void run_panels(const Dims& d, const float* q, const float* kt, const float* v, const MaskRow& mask_row,
                  int64_t mask_step, float* y) const {
    using onednn::Slot;
    using onednn::thread_buffer;
    auto* keys = static_cast<float*>(thread_buffer(Slot::kWeights, d.t * d.d * sizeof(float)));
    auto* values = static_cast<float*>(thread_buffer(Slot::kBias, d.t * d.d * sizeof(float)));
    auto* scores = static_cast<float*>(thread_buffer(Slot::kDst, d.t * kPanelColumns * sizeof(float)));
    auto* small = static_cast<float*>(thread_buffer(Slot::kExtra, 2 * d.d * kPanelColumns * sizeof(float)));
    float* q_panel = small;                                 // [D, 32]
    float* y_t = small + d.d * kPanelColumns;               // [D, 32]
    pack_panel_columns(kt, d.t, d.t, d.d, keys);            // A = K [T, D] from Kᵀ
    pack_panel_columns(v, d.d, d.d, d.t, values);           // A = Vᵀ [D, T] from V
    std::fill(scores, scores + d.t * kPanelColumns, 0.0f);  // columns past a short block stay finite
    float sums[kPanelColumns];
    for (int64_t r0 = 0; r0 < d.s; r0 += kPanelColumns) {
      const int64_t rows = std::min(kPanelColumns, d.s - r0);
      for (int64_t k = 0; k < d.d; ++k) {
        for (int64_t c = 0; c < kPanelColumns; ++c) {
          q_panel[k * kPanelColumns + c] = c < rows ? scale_ * q[(r0 + c) * d.d + k] : 0;  // (scale · Q)·Kᵀ
        }
      }
      matmul_panel(q_panel, d.d, 0, d.d, rows, keys, d.t, nullptr, scores, kPanelColumns);
      add_mask(scores, d.t, rows, r0, mask_row, mask_step);
      exp_columns32(scores, d.t, sums);
      matmul_panel(scores, d.t, 0, d.t, rows, values, d.d, nullptr, y_t, kPanelColumns);
      for (int64_t c = 0; c < rows; ++c) {
        const float inv = 1.0f / sums[c];
        for (int64_t k = 0; k < d.d; ++k) y[(r0 + c) * d.d + k] = y_t[k * kPanelColumns + c] * inv;
      }
    }
  }

  /// Adds each query's mask row to scores [T, 32] (query r0 + c in column c).
  template <typename MaskRow>
  static void add_mask(float* scores, int64_t t, int64_t rows, int64_t r0, const MaskRow& mask_row, int64_t mask_step) {
    const float* first = mask_row(r0);
    if (first == nullptr) return;
    if (rows == 1 || mask_row(r0 + 1) == first) {  // one mask row for every query
      for (int64_t j = 0; j < t; ++j) {
        const float add = first[j * mask_step];
        for (int64_t c = 0; c < kPanelColumns; ++c) scores[j * kPanelColumns + c] += add;
      }
      return;
    }
    for (int64_t c = 0; c < rows; ++c) {
      const float* m = mask_row(r0 + c);
      for (int64_t j = 0; j < t; ++j) scores[j * kPanelColumns + c] += m[j * mask_step];
    }
  }

  template <typename MaskRow>
  void run_reference(const Dims& d, const float* q, const float* kt, const float* v, const MaskRow& mask_row,
                     int64_t mask_step, float* y) const {
    std::vector<float> scores(d.t);
    for (int64_t r = 0; r < d.s; ++r) {
      for (int64_t j = 0; j < d.t; ++j) {
        float sum = 0;
        for (int64_t k = 0; k < d.d; ++k) sum += q[r * d.d + k] * kt[k * d.t + j];
        scores[j] = sum;
      }
      finish_row(scores.data(), d.t, scale_, mask_row(r), mask_step);
      for (int64_t k = 0; k < d.d; ++k) {
        float sum = 0;
        for (int64_t j = 0; j < d.t; ++j) sum += scores[j] * v[j * d.d + k];
        y[r * d.d + k] = sum;
      }
    }
  }

  float scale_;
  bool panels_ = matmul_panels_available();
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_attention(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(const float scale, info.node.attr_float("scale", 1.0f));
  if (!std::isfinite(scale)) {
    return ir::node_error(info.node, StatusCode::kInvalidModel, "attribute 'scale' must be finite");
  }
  return std::unique_ptr<Kernel>(std::make_unique<AttentionKernel>(scale));
}

void register_encoder_attention_kernels(KernelRegistry& registry) {
  registry.add(ir::kEdgemmDomain, "Attention", 1, make_attention);
}

}  // namespace edgemm::kernels
