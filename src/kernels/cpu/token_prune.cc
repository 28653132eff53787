/// \file token_prune.cc
/// com.edgemm TokenPrune (see token_prune.h): scores, a stable top-M selection, and a row gather.

#include "kernels/cpu/token_prune.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace edgemm::kernels {
namespace {

enum class Rule { kClsAttention, kMeanAbs };

class TokenPruneKernel final : public Kernel {
 public:
  TokenPruneKernel(float keep_ratio, Rule rule) : keep_ratio_(keep_ratio), rule_(rule) {}

  const char* name() const override { return "token_prune__reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr || x->dtype() != DataType::kFloat32 || x->rank() != 3 || x->dim(1) < 1) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input X must be float32 [batch, tokens >= 1, hidden], got " +
              (x == nullptr ? std::string("nothing")
                            : std::string(dtype_name(x->dtype())) + " " + shape_to_string(x->shape())));
    }
    const int64_t batch = x->dim(0), tokens = x->dim(1), hidden = x->dim(2);
    const Tensor* p = ctx.input(1);
    if (rule_ == Rule::kClsAttention) {
      if (p == nullptr || p->dtype() != DataType::kFloat32 || p->rank() != 4 || p->dim(0) != batch ||
          p->dim(2) != tokens || p->dim(3) != tokens) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "rule cls_attention needs input P float32 [" + std::to_string(batch) + ", heads, " +
                                  std::to_string(tokens) + ", " + std::to_string(tokens) + "], got " +
                                  (p == nullptr ? std::string("nothing") : shape_to_string(p->shape())));
      }
    }
    const int64_t patches = tokens - 1;
    const int64_t keep = pruned_patch_count(keep_ratio_, patches);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {batch, 1 + keep, hidden}));
    std::vector<double> score(static_cast<size_t>(patches));
    std::vector<int64_t> order(static_cast<size_t>(patches));
    for (int64_t b = 0; b < batch; ++b) {
      scores(*x, p, b, score);
      std::iota(order.begin(), order.end(), 0);
      // Highest score first; equal scores keep the lower index first (stable).
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return score[i] > score[j]; });
      std::sort(order.begin(), order.begin() + keep);
      const float* src = x->data<float>() + b * tokens * hidden;
      float* dst = y->data<float>() + b * (1 + keep) * hidden;
      std::memcpy(dst, src, sizeof(float) * hidden);  // the class token
      for (int64_t i = 0; i < keep; ++i) {
        std::memcpy(dst + (1 + i) * hidden, src + (1 + order[i]) * hidden, sizeof(float) * hidden);
      }
    }
    return Status::ok();
  }

 private:
  // score[j] for patch j + 1 of image b.
  void scores(const Tensor& x, const Tensor* p, int64_t b, std::vector<double>& score) const {
    const int64_t tokens = x.dim(1), hidden = x.dim(2);
    std::fill(score.begin(), score.end(), 0.0);
    if (rule_ == Rule::kMeanAbs) {
      const float* rows = x.data<float>() + b * tokens * hidden;
      for (size_t j = 0; j < score.size(); ++j) {
        const float* row = rows + (j + 1) * hidden;
        double sum = 0;
        for (int64_t d = 0; d < hidden; ++d) sum += std::abs(row[d]);
        score[j] = sum / static_cast<double>(hidden);
      }
      return;
    }
    const int64_t heads = p->dim(1);
    for (int64_t h = 0; h < heads; ++h) {
      const float* cls_row = p->data<float>() + ((b * heads + h) * tokens) * tokens;  // query 0
      for (size_t j = 0; j < score.size(); ++j) score[j] += cls_row[j + 1];
    }
    for (double& s : score) s /= static_cast<double>(heads);
  }

  float keep_ratio_;
  Rule rule_;
};

}  // namespace

int64_t pruned_patch_count(double keep_ratio, int64_t patches) {
  if (patches <= 0) return 0;
  const double exact = keep_ratio * static_cast<double>(patches);
  const int64_t m = static_cast<int64_t>(std::ceil(exact - 1e-6));
  return std::clamp<int64_t>(m, 1, patches);
}

Expected<std::unique_ptr<Kernel>> make_token_prune(const KernelInfo& info) {
  const ir::Node& node = info.node;
  EDGEMM_ASSIGN_OR_RETURN(const float keep_ratio, node.attr_float("keep_ratio", 0));
  if (!(keep_ratio > 0 && keep_ratio <= 1)) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute keep_ratio must be in (0, 1], got " + std::to_string(keep_ratio));
  }
  EDGEMM_ASSIGN_OR_RETURN(const std::string rule, node.attr_string("rule", "cls_attention"));
  if (rule != "cls_attention" && rule != "mean_abs") {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute rule must be cls_attention or mean_abs, got '" + rule + "'");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<TokenPruneKernel>(keep_ratio, rule == "mean_abs" ? Rule::kMeanAbs : Rule::kClsAttention));
}

}  // namespace edgemm::kernels
