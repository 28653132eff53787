/// \file loss.cc
/// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss of the default ONNX domain.
///
/// Follows the ONNX operator spec (Operators.md / Changelog.md), versions 12 and 13 of both ops
/// (13 adds bfloat16 to SoftmaxCrossEntropyLoss; the semantics are the same):
/// - Inputs: scores / log-probabilities X of shape [N, C] or [N, C, d1, ..., dk], integer labels
///   L of shape [N] or [N, d1, ..., dk] (int32 or int64), optional per-class weights W of shape
///   [C] (all ones when absent).
/// - NegativeLogLikelihoodLoss: loss[n, d...] = -X[n, c, d...] · W[c], c = L[n, d...].
/// - SoftmaxCrossEntropyLoss: the same on Y = LogSoftmax(X) over axis 1 (x - max - log Σ exp(x -
///   max)); its optional second output `log_prob` is Y.
/// - `ignore_index` (optional): positions whose label equals it have loss 0 and weight 0; such
///   labels may lie outside [0, C). Any other label outside [0, C) is kInvalidArgument naming the
///   node, the label, its index and C (no element is read for it).
/// - `reduction`: "none" gives the loss tensor (the labels' shape); "sum" its sum; "mean" (the
///   default) the sum divided by the sum of the applied weights, Σ W[L[i]] over positions not
///   ignored (without W: their count). As in the spec's reference, a mean over no applied weight
///   (every label ignored, or no positions) is 0/0 = NaN.
///
/// dtypes: float32, float64, float16 (and bfloat16 for SoftmaxCrossEntropyLoss-13) scores and
/// weights; int32, int64 labels. Arithmetic is in float64 (half types widened on load, rounded
/// to nearest on store); sums run over one partial per batch row, added up in row order, so the
/// result does not depend on the thread count.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

enum class LossKind { kNegativeLogLikelihood, kSoftmaxCrossEntropy };
enum class LossReduction { kNone, kSum, kMean };

// Element access per dtype: the storage type and conversions to and from float64.
struct LossF32 {
  using T = float;
  static double load(float v) { return v; }
  static float store(double v) { return static_cast<float>(v); }
};
struct LossF64 {
  using T = double;
  static double load(double v) { return v; }
  static double store(double v) { return v; }
};
struct LossF16 {
  using T = uint16_t;
  static double load(uint16_t v) { return half_to_float(v); }
  static uint16_t store(double v) { return float_to_half(static_cast<float>(v)); }
};
struct LossBF16 {
  using T = uint16_t;
  static double load(uint16_t v) { return bfloat16_to_float(v); }
  static uint16_t store(double v) { return float_to_bfloat16(static_cast<float>(v)); }
};

// "[1, 0, 2]": the multi-index of flat position `flat` in `shape`.
std::string label_index_string(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    const int64_t extent = shape[i] > 0 ? shape[i] : 1;
    index[i] = flat % extent;
    flat /= extent;
  }
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// What one run computes on: X viewed as [N, C, D], the labels as int64 [N, D].
struct LossProblem {
  int64_t n = 0, c = 0, d = 0;
  const std::vector<int64_t>* labels = nullptr;
  bool has_ignore = false;
  int64_t ignore_index = 0;
  LossReduction reduction = LossReduction::kMean;
  bool softmax = false;
};

template <typename Tr>
void compute_loss(const LossProblem& p, const typename Tr::T* x, const typename Tr::T* weight, typename Tr::T* out,
                  typename Tr::T* log_prob, int threads) {
  using T = typename Tr::T;
  const int64_t n_rows = p.n, classes = p.c, inner = p.d;
  const int64_t* labels = p.labels->data();
  // One partial loss sum and weight sum per batch row, added up in order afterwards.
  std::vector<double> row_loss(static_cast<size_t>(n_rows), 0.0), row_weight(static_cast<size_t>(n_rows), 0.0);
  const int64_t cost = classes * inner * (p.softmax ? 16 : 1) + inner;
  parallel_for(threads, n_rows, cost, [&](int64_t begin, int64_t end) {
    // log Σ_c exp(X[n, c, d]) per d (softmax only).
    std::vector<double> max_of(p.softmax ? static_cast<size_t>(inner) : 0);
    std::vector<double> lse(max_of.size());
    for (int64_t n = begin; n < end; ++n) {
      const T* xn = x + n * classes * inner;
      if (p.softmax) {
        std::fill(max_of.begin(), max_of.end(), -std::numeric_limits<double>::infinity());
        std::fill(lse.begin(), lse.end(), 0.0);
        for (int64_t c = 0; c < classes; ++c) {
          const T* row = xn + c * inner;
          for (int64_t d = 0; d < inner; ++d) {
            const double v = Tr::load(row[d]);
            // A NaN score makes the maximum NaN (and kept), so the whole column comes out NaN.
            if (std::isnan(v) || v > max_of[d]) max_of[d] = v;
          }
        }
        for (int64_t c = 0; c < classes; ++c) {
          const T* row = xn + c * inner;
          for (int64_t d = 0; d < inner; ++d) lse[d] += std::exp(Tr::load(row[d]) - max_of[d]);
        }
        for (int64_t d = 0; d < inner; ++d) lse[d] = max_of[d] + std::log(lse[d]);
        if (log_prob != nullptr) {
          T* lp = log_prob + n * classes * inner;
          for (int64_t c = 0; c < classes; ++c) {
            for (int64_t d = 0; d < inner; ++d) {
              lp[c * inner + d] = Tr::store(Tr::load(xn[c * inner + d]) - lse[d]);
            }
          }
        }
      }
      double loss_sum = 0, weight_sum = 0;
      for (int64_t d = 0; d < inner; ++d) {
        const int64_t i = n * inner + d;
        const int64_t label = labels[i];
        double loss = 0;
        if (!(p.has_ignore && label == p.ignore_index)) {
          // Labels were checked to lie in [0, C) before this loop.
          double v = Tr::load(xn[label * inner + d]);
          if (p.softmax) v -= lse[d];
          const double w = weight != nullptr ? Tr::load(weight[label]) : 1.0;
          loss = -v * w;
          loss_sum += loss;
          weight_sum += w;
        }
        if (p.reduction == LossReduction::kNone) out[i] = Tr::store(loss);
      }
      row_loss[n] = loss_sum;
      row_weight[n] = weight_sum;
    }
  });
  if (p.reduction == LossReduction::kNone) return;
  double total = 0, total_weight = 0;
  for (int64_t n = 0; n < n_rows; ++n) {
    total += row_loss[n];
    total_weight += row_weight[n];
  }
  out[0] = Tr::store(p.reduction == LossReduction::kSum ? total : total / total_weight);
}

class LossKernel final : public Kernel {
 public:
  LossKernel(LossKind kind, LossReduction reduction, bool has_ignore, int64_t ignore_index, bool allow_bfloat16)
      : kind_(kind),
        reduction_(reduction),
        has_ignore_(has_ignore),
        ignore_index_(ignore_index),
        allow_bfloat16_(allow_bfloat16) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const bool sce = kind_ == LossKind::kSoftmaxCrossEntropy;
    const char* x_name = sce ? "scores" : "input";
    const char* label_name = sce ? "labels" : "target";
    const char* weight_name = sce ? "weights" : "weight";
    const Tensor* x = ctx.input(0);
    const Tensor* labels = ctx.input(1);
    const Tensor* weight = ctx.input(2);
    if (x == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, std::string("input '") + x_name + "' is missing");
    }
    if (labels == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, std::string("input '") + label_name + "' is missing");
    }
    const DataType dtype = x->dtype();
    if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64 && dtype != DataType::kFloat16 &&
        !(dtype == DataType::kBFloat16 && allow_bfloat16_)) {
      return unsupported_dtype(node, 0, dtype);
    }
    if (labels->dtype() != DataType::kInt32 && labels->dtype() != DataType::kInt64) {
      return unsupported_dtype(node, 1, labels->dtype());
    }
    const Shape& xs = x->shape();
    if (xs.size() < 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("input '") + x_name + "' has shape " + shape_to_string(xs) +
                                "; it needs rank >= 2, [N, C] or [N, C, d1, ..., dk]");
    }
    Shape label_shape = xs;
    label_shape.erase(label_shape.begin() + 1);
    if (labels->shape() != label_shape) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("input '") + label_name + "' has shape " + shape_to_string(labels->shape()) +
                                ", expected " + shape_to_string(label_shape) + " for input '" + x_name + "' of shape " +
                                shape_to_string(xs));
    }
    const int64_t classes = xs[1];
    if (weight != nullptr) {
      if (weight->dtype() != dtype) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              std::string("input '") + weight_name + "' has dtype " + dtype_name(weight->dtype()) +
                                  ", but input '" + x_name + "' has " + dtype_name(dtype));
      }
      if (weight->rank() != 1 || weight->shape()[0] != classes) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              std::string("input '") + weight_name + "' has shape " + shape_to_string(weight->shape()) +
                                  ", expected [" + std::to_string(classes) + "] (one weight per class)");
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> label_values, read_int_values(node, 1, *labels));
    for (size_t i = 0; i < label_values.size(); ++i) {
      const int64_t label = label_values[i];
      if (has_ignore_ && label == ignore_index_) continue;
      if (label < 0 || label >= classes) {
        const std::string ignore =
            has_ignore_ ? " and is not ignore_index " + std::to_string(ignore_index_) : " (no ignore_index is set)";
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              std::string("input '") + label_name + "' holds label " + std::to_string(label) +
                                  " at index " + label_index_string(labels->shape(), static_cast<int64_t>(i)) +
                                  ", outside the class range [0, " + std::to_string(classes) + ")" + ignore);
      }
    }

    LossProblem p;
    p.n = xs[0];
    p.c = classes;
    p.d = 1;
    for (size_t i = 2; i < xs.size(); ++i) p.d *= xs[i];
    p.labels = &label_values;
    p.has_ignore = has_ignore_;
    p.ignore_index = ignore_index_;
    p.reduction = reduction_;
    p.softmax = sce;
    const Shape out_shape = reduction_ == LossReduction::kNone ? label_shape : Shape{};
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, out_shape));
    Tensor* log_prob = nullptr;
    if (sce && ctx.output_count() > 1 && ctx.output_wanted(1)) {
      EDGEMM_ASSIGN_OR_RETURN(log_prob, ctx.allocate_output(1, dtype, xs));
    }
    const int t = ctx.threads();
    switch (dtype) {
      case DataType::kFloat32:
        run_typed<LossF32, float>(p, *x, weight, *out, log_prob, t);
        break;
      case DataType::kFloat64:
        run_typed<LossF64, double>(p, *x, weight, *out, log_prob, t);
        break;
      case DataType::kFloat16:
        run_typed<LossF16, uint16_t>(p, *x, weight, *out, log_prob, t);
        break;
      default:
        run_typed<LossBF16, uint16_t>(p, *x, weight, *out, log_prob, t);
        break;
    }
    return Status::ok();
  }

 private:
  template <typename Tr, typename T>
  static void run_typed(const LossProblem& p, const Tensor& x, const Tensor* weight, Tensor& out, Tensor* log_prob,
                        int threads) {
    compute_loss<Tr>(p, x.data<T>(), weight != nullptr ? weight->data<T>() : nullptr, out.data<T>(),
                     log_prob != nullptr ? log_prob->data<T>() : nullptr, threads);
  }

  LossKind kind_;
  LossReduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
  bool allow_bfloat16_;
};

KernelFactory loss_factory(LossKind kind, bool allow_bfloat16) {
  return [kind, allow_bfloat16](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    const ir::Node& node = info.node;
    EDGEMM_ASSIGN_OR_RETURN(std::string name, node.attr_string("reduction", "mean"));
    LossReduction reduction;
    if (name == "none") {
      reduction = LossReduction::kNone;
    } else if (name == "sum") {
      reduction = LossReduction::kSum;
    } else if (name == "mean") {
      reduction = LossReduction::kMean;
    } else {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"" + name + "\"");
    }
    const bool has_ignore = node.has_attr("ignore_index");
    EDGEMM_ASSIGN_OR_RETURN(int64_t ignore_index, node.attr_int("ignore_index", 0));
    return std::unique_ptr<Kernel>(
        std::make_unique<LossKernel>(kind, reduction, has_ignore, ignore_index, allow_bfloat16));
  };
}

}  // namespace

/// Registers NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, versions 12 and 13.
void register_loss_kernels(KernelRegistry& registry) {
  for (int since : {12, 13}) {
    registry.add("", "NegativeLogLikelihoodLoss", since, loss_factory(LossKind::kNegativeLogLikelihood, false));
    registry.add("", "SoftmaxCrossEntropyLoss", since, loss_factory(LossKind::kSoftmaxCrossEntropy, since >= 13));
  }
}

}  // namespace edgemm::kernels
