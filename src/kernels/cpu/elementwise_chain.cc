/// \file elementwise_chain.cc
/// com.edgemm ElementwiseChain-1: a chain of elementwise steps (src/ir/elementwise_steps.h)
/// applied in order to input 0, each binary step reading its operand input numpy-broadcast
/// ("Broadcasting in ONNX") to the output, whose shape is the broadcast of all inputs.
/// float32 only; with the attributes y_scale and y_zero_point (passes::chain_int8) the output is
/// uint8, each finished tile quantized (QuantizeLinear) before it is written.
/// fuse_elementwise_chains (src/passes/elementwise_fusion.cc) creates these nodes so that a chain
/// of elementwise ops reads and writes memory once.
///
/// The output is processed in tiles of about kTileElements elements (a piece of one broadcast
/// row, or several whole rows when rows are short) that stay in L1 while every step runs over
/// them in a loop the compiler vectorizes (SSE2, plus an AVX2 variant on x86-64); tiles are split
/// across the OpenMP threads.
/// exp (and sigmoid, swish through it) uses a vectorizable approximation within ~3e-7 relative
/// of std::exp, tanh one within ~7e-7 of std::tanh; gelu and pow call the std:: functions. On
/// aarch64 the clamps (Relu, Clip, HardSigmoid, HardSwish) and exponentials (Exp, Sigmoid,
/// Swish) run NEON forms (apply_unary_neon).

#include "kernels/cpu/elementwise_chain.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/vector_math.h"

namespace edgemm::kernels {
namespace {

using elementwise::BroadcastPlan;
using ir::Step;
using ir::StepKind;

/// The step-loop variant the loader chose, for profiles.
const char* variant_name() { return avx2_clones_selected() ? "f32_elementwise_chain__avx2" : "f32_elementwise_chain"; }

/// Elements per tile: 4 KiB of output plus the operand pieces fit L1 comfortably.
constexpr int64_t kTileElements = 1024;

// ---------------------------------------------------------------------------------------
// Step loops over a tile (v: the tile's values, updated in place).

template <typename F>
void map_values(float* v, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) v[i] = f(v[i]);
}

#if defined(__aarch64__)
/// v[i] = f4(v[i..i+4)) four lanes at a time, the last 1-3 values through f.
template <typename F4, typename F>
void map_values4(float* v, int64_t n, F4 f4, F f) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(v + i, f4(vld1q_f32(v + i)));
  for (; i < n; ++i) v[i] = f(v[i]);
}

/// 1 / (1 + e^-x) on four lanes (exp_approx4), as sigmoid_approx.
inline float32x4_t sigmoid4(float32x4_t x) {
  return vdivq_f32(vdupq_n_f32(1.f), vaddq_f32(vdupq_n_f32(1.f), exp_approx4(vnegq_f32(x))));
}

/// The NEON forms of apply_unary_tile's clamps and exponentials, or false for other steps. GCC
/// vectorizes the scalar forms' NaN-aware clamps as compare-and-select sequences and calls
/// exp_approx per value on aarch64; FMAX and FMIN return NaN when an operand is NaN, so NaN passes
/// as through the scalar forms' comparisons (Relu gives +0 for -0 where the scalar form keeps -0).
bool apply_unary_neon(const Step& s, float* v, int64_t n) {
  const float a = s.alpha, b = s.beta;
  const float32x4_t va = vdupq_n_f32(a), vb = vdupq_n_f32(b), zero = vdupq_n_f32(0.f), one = vdupq_n_f32(1.f);
  switch (s.kind) {
    case StepKind::kRelu:
      map_values4(
          v, n, [&](float32x4_t x) { return vmaxq_f32(x, zero); }, [](float x) { return x < 0.f ? 0.f : x; });
      return true;
    case StepKind::kClip:
      map_values4(
          v, n, [&](float32x4_t x) { return vminq_f32(vmaxq_f32(x, va), vb); },
          [a, b](float x) { return std::min(std::max(x, a), b); });
      return true;
    case StepKind::kHardSigmoid:
      map_values4(
          v, n, [&](float32x4_t x) { return vmaxq_f32(vminq_f32(vfmaq_f32(vb, va, x), one), zero); },
          [a, b](float x) { return std::max(std::min(a * x + b, 1.f), 0.f); });
      return true;
    case StepKind::kHardSwish: {
      // x / 6 as the scalar form rounds it (x · (1/6) would lose digits where x / 6 + 0.5 cancels).
      const float32x4_t six = vdupq_n_f32(6.f), half = vdupq_n_f32(0.5f);
      map_values4(
          v, n,
          [&](float32x4_t x) {
            return vmulq_f32(x, vmaxq_f32(vminq_f32(vaddq_f32(vdivq_f32(x, six), half), one), zero));
          },
          [](float x) { return x * std::max(std::min(x / 6.f + 0.5f, 1.f), 0.f); });
      return true;
    }
    case StepKind::kSigmoid:
      map_values4(v, n, sigmoid4, sigmoid_approx);
      return true;
    case StepKind::kSwish:
      map_values4(
          v, n, [&](float32x4_t x) { return vmulq_f32(x, sigmoid4(vmulq_f32(va, x))); },
          [a](float x) { return x * sigmoid_approx(a * x); });
      return true;
    case StepKind::kExp:
      map_values4(v, n, exp_approx4, exp_approx);
      return true;
    default:
      return false;
  }
}
#endif

/// Applies a unary step to n values; same formulas as ir::apply_unary.
EDGEMM_AVX2_CLONES void apply_unary_tile(const Step& s, float* v, int64_t n) {
#if defined(__aarch64__)
  if (apply_unary_neon(s, v, n)) return;
#endif
  const float a = s.alpha, b = s.beta;
  switch (s.kind) {
    case StepKind::kRelu:
      return map_values(v, n, [](float x) { return x < 0.f ? 0.f : x; });
    case StepKind::kClip:
      return map_values(v, n, [a, b](float x) {
        x = x < a ? a : x;
        return b < x ? b : x;
      });
    case StepKind::kLinear:
      return map_values(v, n, [a, b](float x) { return a * x + b; });
    case StepKind::kHardSigmoid:
      return map_values(v, n, [a, b](float x) {
        const float y = a * x + b;  // comparisons false for NaN: it passes, as in ONNX Runtime
        const float hi = y > 1.f ? 1.f : y;
        return hi < 0.f ? 0.f : hi;
      });
    case StepKind::kHardSwish:
      return map_values(v, n, [](float x) {
        const float y = x / 6.f + 0.5f;
        const float lo = y < 1.f ? y : 1.f;
        return x * (lo > 0.f ? lo : 0.f);
      });
    case StepKind::kSigmoid:
      return map_values(v, n, [](float x) { return sigmoid_approx(x); });
    case StepKind::kSwish:
      return map_values(v, n, [a](float x) { return x * sigmoid_approx(a * x); });
    case StepKind::kExp:
      return map_values(v, n, [](float x) { return exp_approx(x); });
    case StepKind::kTanh:
      return map_values(v, n, [](float x) { return tanh_approx(x); });
    case StepKind::kGeluTanh:  // 0.5·x·(1 + tanh(y)) = x·sigmoid(2y); exactly 0 far left (-Inf·0 = NaN)
      return map_values(v, n, [](float x) {
        const float z = 1.59576912160573072f * (x + 0.044715f * x * x * x);
        return x * (z < -88.f ? 0.f : sigmoid_approx(z));
      });
    case StepKind::kSqrt:
      return map_values(v, n, [](float x) { return std::sqrt(x); });
    case StepKind::kAbs:
      return map_values(v, n, [](float x) { return std::fabs(x); });
    case StepKind::kNeg:
      return map_values(v, n, [](float x) { return -x; });
    default:
      return map_values(v, n, [&s](float x) { return ir::apply_unary(s, x); });  // gelu, pow
  }
}

/// v[i] = f(v[i], o[i % period]): period n for an operand contiguous along the run, 0 for one
/// value broadcast over it, and in between for rows sharing one operand piece (a per-channel
/// operand of an nChw8c value repeats every 8 elements).
template <typename F>
void combine(float* v, const float* o, int64_t n, int64_t period, F f) {
  if (period == 0) {
    const float c = *o;
    for (int64_t i = 0; i < n; ++i) v[i] = f(v[i], c);
  } else if (period == n) {
    for (int64_t i = 0; i < n; ++i) v[i] = f(v[i], o[i]);
  } else if (period == 8) {
    for (int64_t r = 0; r < n; r += 8) {
      for (int64_t j = 0; j < 8; ++j) v[r + j] = f(v[r + j], o[j]);
    }
  } else {
    for (int64_t r = 0; r < n; r += period) {
      for (int64_t j = 0; j < period; ++j) v[r + j] = f(v[r + j], o[j]);
    }
  }
}

/// Applies a binary step to a run of n values (operand read as in combine()); same formulas as
/// ir::apply_binary.
EDGEMM_AVX2_CLONES void apply_binary_run(const Step& s, float* v, const float* o, int64_t n, int64_t period) {
  switch (s.kind) {
    case StepKind::kAdd:
      return combine(v, o, n, period, [](float x, float y) { return x + y; });
    case StepKind::kSub:
      return combine(v, o, n, period, [](float x, float y) { return x - y; });
    case StepKind::kRSub:
      return combine(v, o, n, period, [](float x, float y) { return y - x; });
    case StepKind::kMul:
      return combine(v, o, n, period, [](float x, float y) { return x * y; });
    case StepKind::kDiv:
      return combine(v, o, n, period, [](float x, float y) { return x / y; });
    case StepKind::kRDiv:
      return combine(v, o, n, period, [](float x, float y) { return y / x; });
    case StepKind::kMax:
      return combine(v, o, n, period, [](float x, float y) {
        const float m = x < y ? y : x;
        return y != y ? y : m;  // NaN in either gives NaN
      });
    case StepKind::kMin:
      return combine(v, o, n, period, [](float x, float y) {
        const float m = y < x ? y : x;
        return y != y ? y : m;
      });
    default:
      return combine(v, o, n, period, [&s](float x, float y) { return ir::apply_binary(s, x, y); });
  }
}

/// Rough cost of a step per element (1 = an add) for the threading threshold.
int64_t step_cost(const Step& s) {
  switch (s.kind) {
    case StepKind::kSigmoid:
    case StepKind::kSwish:
    case StepKind::kExp:
    case StepKind::kTanh:
      return 4;
    case StepKind::kGelu:
    case StepKind::kPow:
      return 20;
    case StepKind::kGeluTanh:
      return 8;
    default:
      return 1;
  }
}

// ---------------------------------------------------------------------------------------
// Iteration over the broadcast rows.

/// Offsets of every input at the start of an output row (row-major over plan.outer_dims),
/// moved forward one row at a time or set to any row.
class RowCursor {
 public:
  explicit RowCursor(const BroadcastPlan& plan)
      : plan_(plan), idx_(plan.outer_dims.size(), 0), off_(static_cast<size_t>(plan.n), 0) {}

  const int64_t* offsets() const { return off_.data(); }

  /// Positions the cursor at `row`.
  void seek(int64_t row) {
    if (row == row_) return;
    if (row == row_ + 1) return next();
    row_ = row;
    std::fill(off_.begin(), off_.end(), 0);
    const int64_t rank = static_cast<int64_t>(idx_.size());
    for (int64_t d = rank - 1; d >= 0; --d) {
      idx_[d] = row % plan_.outer_dims[d];
      row /= plan_.outer_dims[d];
      for (int k = 0; k < plan_.n; ++k) off_[k] += idx_[d] * plan_.strides[k * rank + d];
    }
  }

 private:
  void next() {
    ++row_;
    const int64_t rank = static_cast<int64_t>(idx_.size());
    for (int64_t d = rank - 1; d >= 0; --d) {
      ++idx_[d];
      for (int k = 0; k < plan_.n; ++k) off_[k] += plan_.strides[k * rank + d];
      if (idx_[d] < plan_.outer_dims[d]) return;
      for (int k = 0; k < plan_.n; ++k) off_[k] -= plan_.strides[k * rank + d] * plan_.outer_dims[d];
      idx_[d] = 0;
    }
  }

  const BroadcastPlan& plan_;
  std::vector<int64_t> idx_;
  std::vector<int64_t> off_;
  int64_t row_ = 0;
};

/// How the output is cut into tiles: `row_pieces` pieces of `piece` elements per row when rows
/// are long, otherwise groups of `rows_per_tile` whole rows.
struct Tiling {
  int64_t piece = 0;
  int64_t row_pieces = 1;
  int64_t rows_per_tile = 1;
  int64_t count = 0;
};

/// Tiles of the plan's rows; pieces of long rows are a multiple of `align` elements and never
/// longer than kTileElements (`align` is at most kTileElements / 4: merge_periodic_axis).
Tiling make_tiling(const BroadcastPlan& plan, int64_t align) {
  Tiling t;
  if (plan.inner >= kTileElements) {
    const int64_t longest = kTileElements / align * align;
    t.row_pieces = (plan.inner + longest - 1) / longest;
    t.piece = ((plan.inner + t.row_pieces - 1) / t.row_pieces + align - 1) / align * align;
    t.row_pieces = (plan.inner + t.piece - 1) / t.piece;
    t.count = plan.outer * t.row_pieces;
  } else {
    t.piece = plan.inner;
    t.rows_per_tile = kTileElements / plan.inner;
    t.count = (plan.outer + t.rows_per_tile - 1) / t.rows_per_tile;
  }
  return t;
}

/// Inputs, output and steps of one run.
struct ChainRun {
  const std::vector<Step>& steps;
  const BroadcastPlan& plan;
  const Tiling& tiling;
  std::vector<const float*> inputs;
  float* out = nullptr;
  std::vector<int64_t> periods;                         // per input: repeats every `period` elements of a row; 0 = no
  const int8::OutputQuantization* quantized = nullptr;  // set: out_u8 receives the quantized values instead
  uint8_t* out_u8 = nullptr;
};

/// Merges the last outer axis into the rows when every input either continues contiguously
/// across it, is broadcast along it and contiguous within a row (then it repeats every
/// `inner` elements: a per-channel operand of an nChw8c value [N, C/8, H, W, 8] has rows of 8),
/// or is broadcast along both. Without this such a value runs as rows of 8 elements. Returns
/// each input's period (0 for the others); the plan is left alone when nothing repeats.
std::vector<int64_t> merge_periodic_axis(BroadcastPlan& plan) {
  std::vector<int64_t> periods(static_cast<size_t>(plan.n), 0);
  const int64_t rank = static_cast<int64_t>(plan.outer_dims.size());
  if (rank == 0 || plan.inner > kTileElements / 4) return periods;
  const int64_t d = rank - 1;
  bool repeats = false;
  for (int k = 0; k < plan.n; ++k) {
    const int64_t stride = plan.strides[k * rank + d], inner = plan.inner_stride[k];
    const bool continues = inner == 1 && stride == plan.inner;
    const bool periodic = inner == 1 && stride == 0;
    const bool constant = inner == 0 && stride == 0;
    if (!continues && !periodic && !constant) return std::vector<int64_t>(static_cast<size_t>(plan.n), 0);
    if (periodic) periods[k] = plan.inner;
    repeats = repeats || periodic;
  }
  if (!repeats) return periods;
  std::vector<int64_t> strides;
  for (int k = 0; k < plan.n; ++k) {
    for (int64_t a = 0; a < d; ++a) strides.push_back(plan.strides[k * rank + a]);
  }
  plan.strides = std::move(strides);
  plan.inner *= plan.outer_dims[d];
  plan.outer /= plan.outer_dims[d];
  plan.outer_dims.pop_back();
  return periods;
}

/// How input k is read over a tile of `rows` rows of `len` elements: one contiguous run
/// (consecutive rows follow each other in memory), one piece shared by every row (a per-channel
/// operand of an nChw8c value), or row by row.
enum class TileAccess { kOneRun, kShared, kPerRow };

TileAccess tile_access(const BroadcastPlan& p, const std::vector<int64_t>& offsets, int k, int64_t rows, int64_t len) {
  bool shared = true, one_run = p.inner_stride[k] != 0;
  for (int64_t r = 1; r < rows; ++r) {
    const int64_t off = offsets[r * p.n + k];
    shared = shared && off == offsets[k];
    one_run = one_run && off == offsets[k] + r * len;
  }
  if (rows == 1) return p.inner_stride[k] != 0 ? TileAccess::kOneRun : TileAccess::kShared;
  return one_run ? TileAccess::kOneRun : shared ? TileAccess::kShared : TileAccess::kPerRow;
}

/// Computes tile `tile` of the output (at most kTileElements elements); `offsets` is scratch for
/// rows_per_tile · n offsets.
void run_tile(const ChainRun& run, int64_t tile, RowCursor& cursor, std::vector<int64_t>& offsets) {
  const BroadcastPlan& p = run.plan;
  const Tiling& t = run.tiling;
  const int64_t row0 = t.row_pieces > 1 ? tile / t.row_pieces : tile * t.rows_per_tile;
  const int64_t rows = t.row_pieces > 1 ? 1 : std::min(t.rows_per_tile, p.outer - row0);
  const int64_t col = t.row_pieces > 1 ? (tile % t.row_pieces) * t.piece : 0;
  const int64_t len = std::min(t.piece, p.inner - col);
  for (int64_t r = 0; r < rows; ++r) {
    cursor.seek(row0 + r);
    std::copy_n(cursor.offsets(), p.n, offsets.begin() + r * p.n);
  }
  // The steps run on a stack buffer that stays in L1; the output is written once at the end.
  alignas(64) float v[kTileElements];
  const int64_t n = rows * len;
  const TileAccess in0 = tile_access(p, offsets, 0, rows, len);
  const float* src0 = run.inputs[0] + offsets[0] + col * p.inner_stride[0];
  if (run.periods[0] > 0) {
    // Pieces start at multiples of the period (make_tiling), so the pattern starts at offset 0.
    const int64_t period = run.periods[0];
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = run.inputs[0] + offsets[r * p.n];
      for (int64_t i = 0; i < len; ++i) v[r * len + i] = src[i % period];
    }
  } else if (in0 == TileAccess::kOneRun) {
    std::memcpy(v, src0, static_cast<size_t>(n) * sizeof(float));
  } else if (in0 == TileAccess::kShared && p.inner_stride[0] == 0) {
    std::fill_n(v, n, *src0);  // one value for the whole tile (input 0 broadcast over it)
  } else if (in0 == TileAccess::kShared) {
    for (int64_t r = 0; r < rows; ++r) std::copy_n(src0, len, v + r * len);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = run.inputs[0] + offsets[r * p.n] + col * p.inner_stride[0];
      if (p.inner_stride[0] != 0) {
        std::memcpy(v + r * len, src, static_cast<size_t>(len) * sizeof(float));
      } else {
        std::fill_n(v + r * len, len, *src);
      }
    }
  }
  for (const Step& s : run.steps) {
    if (!s.binary()) {
      apply_unary_tile(s, v, n);
      continue;
    }
    const int64_t stride = p.inner_stride[s.operand];
    const int64_t period = run.periods[s.operand];
    if (period > 0) {
      for (int64_t r = 0; r < rows; ++r) {
        apply_binary_run(s, v + r * len, run.inputs[s.operand] + offsets[r * p.n + s.operand], len, period);
      }
      continue;
    }
    const float* o0 = run.inputs[s.operand] + offsets[s.operand] + col * stride;
    switch (tile_access(p, offsets, s.operand, rows, len)) {
      case TileAccess::kOneRun:
        apply_binary_run(s, v, o0, n, n);
        break;
      case TileAccess::kShared:
        apply_binary_run(s, v, o0, n, stride != 0 ? len : 0);
        break;
      case TileAccess::kPerRow:
        for (int64_t r = 0; r < rows; ++r) {
          const float* o = run.inputs[s.operand] + offsets[r * p.n + s.operand] + col * stride;
          apply_binary_run(s, v + r * len, o, len, stride != 0 ? len : 0);
        }
        break;
    }
  }
  const int64_t at = row0 * p.inner + col;
  if (run.quantized != nullptr) {
    int8::quantize_u8(v, rows * len, run.quantized->scale, run.quantized->zero_point, run.out_u8 + at);
  } else {
    std::memcpy(run.out + at, v, static_cast<size_t>(rows * len) * sizeof(float));
  }
}

class ElementwiseChainKernel final : public Kernel {
 public:
  ElementwiseChainKernel(std::vector<Step> steps, std::optional<int8::OutputQuantization> quantized)
      : steps_(std::move(steps)), quantized_(quantized) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.input_count(); ++i) {
      EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, elementwise::need_input(ctx, i));
      if (x->dtype() != DataType::kFloat32) return unsupported_dtype(node, i, x->dtype());
      inputs.push_back(x);
    }
    if (inputs.empty()) return ir::node_error(node, StatusCode::kInvalidModel, "needs at least one input");
    EDGEMM_ASSIGN_OR_RETURN(Shape out_shape, elementwise::broadcast_all(node, inputs));
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.allocate_output(0, quantized_ ? DataType::kUInt8 : DataType::kFloat32, out_shape));
    if (quantized_) {
      run_elementwise_chain(steps_, inputs, out_shape, *quantized_, y->data<uint8_t>(), ctx.threads());
    } else {
      run_elementwise_chain(steps_, inputs, out_shape, y->data<float>(), ctx.threads());
    }
    return Status::ok();
  }

  const char* name() const override {
    static const char* const kName = variant_name();
    return kName;
  }

 private:
  std::vector<Step> steps_;
  std::optional<int8::OutputQuantization> quantized_;
};

}  // namespace

namespace {

void run_chain(const std::vector<Step>& steps, const std::vector<const Tensor*>& inputs, const Shape& out_shape,
               float* out, const int8::OutputQuantization* quantized, uint8_t* out_u8, int threads) {
  std::vector<const Shape*> shapes;
  for (const Tensor* x : inputs) shapes.push_back(&x->shape());
  BroadcastPlan plan = elementwise::make_broadcast_plan(out_shape, shapes);
  if (plan.outer * plan.inner == 0) return;
  const std::vector<int64_t> periods = merge_periodic_axis(plan);
  int64_t align = 1;
  for (int64_t period : periods) align = std::max(align, period);
  int64_t cost = 1;
  for (const Step& s : steps) cost += step_cost(s);
  const Tiling tiling = make_tiling(plan, align);
  ChainRun chain{steps, plan, tiling, {}, out, periods, quantized, out_u8};
  for (const Tensor* x : inputs) chain.inputs.push_back(x->data<float>());
  const int64_t tile_cost = tiling.piece * tiling.rows_per_tile * cost;
  parallel_for(threads, tiling.count, tile_cost, [&](int64_t begin, int64_t end) {
    RowCursor cursor(plan);
    std::vector<int64_t> offsets(static_cast<size_t>(tiling.rows_per_tile * plan.n));
    for (int64_t tile = begin; tile < end; ++tile) run_tile(chain, tile, cursor, offsets);
  });
}

}  // namespace

void apply_unary_steps(const std::vector<Step>& steps, float* v, int64_t n) {
  for (int64_t begin = 0; begin < n; begin += kTileElements) {
    const int64_t len = std::min(kTileElements, n - begin);
    for (const Step& s : steps) apply_unary_tile(s, v + begin, len);
  }
}

void run_elementwise_chain(const std::vector<Step>& steps, const std::vector<const Tensor*>& inputs,
                           const Shape& out_shape, float* out, int threads) {
  run_chain(steps, inputs, out_shape, out, nullptr, nullptr, threads);
}

void run_elementwise_chain(const std::vector<Step>& steps, const std::vector<const Tensor*>& inputs,
                           const Shape& out_shape, const int8::OutputQuantization& quantized, uint8_t* out,
                           int threads) {
  run_chain(steps, inputs, out_shape, nullptr, &quantized, out, threads);
}

void register_elementwise_chain_kernels(KernelRegistry& registry) {
  registry.add("com.edgemm", "ElementwiseChain", 1, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Step> steps, ir::read_steps(info.node));
    EDGEMM_ASSIGN_OR_RETURN(std::optional<int8::OutputQuantization> quantized,
                            int8::read_output_quantization(info.node));
    return std::unique_ptr<Kernel>(std::make_unique<ElementwiseChainKernel>(std::move(steps), quantized));
  });
}

}  // namespace edgemm::kernels
