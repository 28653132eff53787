/// \file head_scoring.cc
/// score_heads and select_heads (head_scoring.h): output-contribution norms of each head on
/// calibration runs, and the per-layer or global choice of the heads to remove.

#include "quant/head_scoring.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/onnx_model_access.h"

namespace edgemm::quant {
namespace {

/// Keeps ⌈ratio · n⌉ of n (ceil(x − 1e-6), at least 1, at most n).
int64_t kept_count(double ratio, int64_t n) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(ratio * static_cast<double>(n) - 1e-6)), 1, n);
}

}  // namespace

Expected<HeadScores> score_heads(const ir::Model& model, const std::vector<CalibrationSample>& samples,
                                 const FeedSource& source, const CalibrateOptions& options) {
  ir::Model copy = model;  // tensors are shared, not copied
  HeadScores result;
  EDGEMM_ASSIGN_OR_RETURN(result.layers, passes::find_attention_layers(copy));
  std::vector<std::string> values;
  std::vector<const Tensor*> out_weights;
  for (const passes::AttentionLayer& l : result.layers) {
    values.push_back(l.head_outputs);
    out_weights.push_back(&copy.graph.initializers.at(l.out_weight));
    result.scores.emplace_back(static_cast<size_t>(l.heads), 0.0);
  }
  std::vector<int64_t> counts(result.layers.size(), 0);
  Status shape_error = Status::ok();
  std::vector<double> row;
  EDGEMM_ASSIGN_OR_RETURN(
      CalibrationResult run, observe(copy, values, samples, source, options, [&](size_t i, const Tensor& t) {
        const passes::AttentionLayer& l = result.layers[i];
        if (t.rank() != 4 || t.dim(1) != l.heads || t.dim(3) != l.head_dim) {
          if (shape_error.is_ok()) {
            shape_error = make_error(StatusCode::kInvalidModel, "head scoring: the head outputs '" + l.head_outputs +
                                                                    "' of layer " + std::to_string(l.layer) +
                                                                    " are not [B, " + std::to_string(l.heads) +
                                                                    ", T, " + std::to_string(l.head_dim) + "]");
          }
          return;
        }
        const int64_t batch = t.dim(0), heads = t.dim(1), tokens = t.dim(2), d = t.dim(3);
        const Tensor& w = *out_weights[i];  // [H·d, D_out]
        const int64_t out = w.dim(1);
        row.assign(static_cast<size_t>(out), 0.0);
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t h = 0; h < heads; ++h) {
            const float* wh = w.data<float>() + h * d * out;
            for (int64_t s = 0; s < tokens; ++s) {
              const float* o = t.data<float>() + ((b * heads + h) * tokens + s) * d;
              std::fill(row.begin(), row.end(), 0.0);
              for (int64_t j = 0; j < d; ++j) {
                const double oj = o[j];
                const float* wr = wh + j * out;
                for (int64_t c = 0; c < out; ++c) row[c] += oj * wr[c];
              }
              result.scores[i][h] += std::sqrt(std::inner_product(row.begin(), row.end(), row.begin(), 0.0));
            }
          }
        }
        counts[i] += batch * tokens;
      }));
  EDGEMM_RETURN_IF_ERROR(shape_error);
  for (size_t i = 0; i < result.scores.size(); ++i) {
    for (double& s : result.scores[i]) s /= static_cast<double>(std::max<int64_t>(counts[i], 1));
  }
  result.samples_used = run.samples_used;
  result.samples_skipped = run.samples_skipped;
  result.runs = run.runs;
  result.seconds = run.seconds;
  return result;
}

Expected<passes::HeadPruningOptions> select_heads(const HeadScores& scores, double keep_ratio, HeadRanking ranking) {
  if (!(keep_ratio > 0 && keep_ratio <= 1)) {
    return make_error(StatusCode::kInvalidArgument,
                      "head pruning: keep ratio must be in (0, 1], got " + std::to_string(keep_ratio));
  }
  struct Candidate {
    int layer, head;
    double score;
  };
  // Highest score first; ties: lower (layer, head) first.
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.layer != b.layer ? a.layer < b.layer : a.head < b.head;
  };
  std::vector<std::vector<bool>> keep;
  std::vector<Candidate> rest;
  int64_t total = 0;
  for (size_t l = 0; l < scores.scores.size(); ++l) {
    const auto& s = scores.scores[l];
    std::vector<Candidate> layer;
    for (size_t h = 0; h < s.size(); ++h) layer.push_back({static_cast<int>(l), static_cast<int>(h), s[h]});
    std::sort(layer.begin(), layer.end(), better);
    keep.emplace_back(s.size(), false);
    total += static_cast<int64_t>(s.size());
    const int64_t n = ranking == HeadRanking::kPerLayer ? kept_count(keep_ratio, static_cast<int64_t>(s.size())) : 1;
    for (size_t j = 0; j < layer.size(); ++j) {
      if (static_cast<int64_t>(j) < n) {
        keep[l][layer[j].head] = true;
      } else {
        rest.push_back(layer[j]);
      }
    }
  }
  if (ranking == HeadRanking::kGlobal) {
    std::sort(rest.begin(), rest.end(), better);
    const int64_t slots = std::max<int64_t>(kept_count(keep_ratio, total) - static_cast<int64_t>(keep.size()), 0);
    for (int64_t j = 0; j < std::min<int64_t>(slots, static_cast<int64_t>(rest.size())); ++j) {
      keep[rest[j].layer][rest[j].head] = true;
    }
  }
  passes::HeadPruningOptions options;
  for (size_t l = 0; l < keep.size(); ++l) {
    for (size_t h = 0; h < keep[l].size(); ++h) {
      if (!keep[l][h]) options.remove[static_cast<int>(l)].push_back(static_cast<int>(h));
    }
  }
  return options;
}

Expected<HeadScores> score_heads(const OnnxModel& model, const std::vector<CalibrationSample>& samples,
                                 const FeedSource& source, const CalibrateOptions& options) {
  return score_heads(ir::model_of(model), samples, source, options);
}

}  // namespace edgemm::quant
