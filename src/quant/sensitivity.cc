/// \file sensitivity.cc
/// Per-node sensitivity and the greedy mixed-precision plan (see sensitivity.h).

#include "quant/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace edgemm::quant {

namespace {

using Outputs = std::vector<std::vector<Tensor>>;  // per feed, the model's outputs

Expected<Outputs> run_all(const Inferencer& model, const std::vector<Feed>& feeds) {
  Outputs outputs;
  for (const Feed& feed : feeds) {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> out, model.run(feed));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace

OutputError output_error(const Outputs& reference, const Outputs& quantized) {
  double signal = 0, noise = 0, dot = 0, norm_q = 0;
  bool non_finite_differs = false;  // a NaN, or an infinity the other output does not have
  for (size_t f = 0; f < reference.size(); ++f) {
    for (size_t o = 0; o < reference[f].size(); ++o) {
      const Tensor& r = reference[f][o];
      const Tensor& q = quantized[f][o];
      if (r.dtype() != DataType::kFloat32 || q.dtype() != DataType::kFloat32) continue;
      for (int64_t i = 0; i < std::min(r.element_count(), q.element_count()); ++i) {
        const double a = r.data<float>()[i], b = q.data<float>()[i];
        if (!std::isfinite(a) || !std::isfinite(b)) {
          non_finite_differs = non_finite_differs || !(a == b);
          continue;
        }
        signal += a * a;
        noise += (a - b) * (a - b);
        dot += a * b;
        norm_q += b * b;
      }
    }
  }
  OutputError e;
  if (non_finite_differs) {  // no finite measure of the error: the worst
    e.sqnr_db = -std::numeric_limits<double>::infinity();
    e.cosine = 0;
    return e;
  }
  e.sqnr_db = noise > 0 ? 10.0 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
  e.cosine = signal > 0 && norm_q > 0 ? dot / std::sqrt(signal * norm_q) : 1.0;
  return e;
}

namespace {

// The output error of `prepared` quantized for `plan`.
Expected<OutputError> measure(const ir::Model& prepared, const QuantPlan& plan,
                              const std::map<std::string, Range>& ranges, const Int8Options& options,
                              const std::vector<Feed>& feeds, const Outputs& reference, int threads) {
  ir::Model quantized = prepared;
  EDGEMM_RETURN_IF_ERROR(insert_qdq(quantized, plan, ranges, options));
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> model, make_inferencer(quantized, threads));
  EDGEMM_ASSIGN_OR_RETURN(Outputs outputs, run_all(*model, feeds));
  return output_error(reference, outputs);
}

}  // namespace

Expected<OutputError> measure_output_error(const ir::Model& prepared, const QuantPlan& plan,
                                           const std::map<std::string, Range>& ranges, const Int8Options& options,
                                           const std::vector<Feed>& feeds, int threads) {
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> float_model, make_inferencer(prepared, threads));
  EDGEMM_ASSIGN_OR_RETURN(const Outputs reference, run_all(*float_model, feeds));
  return measure(prepared, plan, ranges, options, feeds, reference, threads);
}

void keep_in_float(QuantPlan& plan, const std::vector<std::string>& float_nodes, const std::string& reason) {
  std::vector<QuantTarget> kept;
  for (QuantTarget& t : plan.targets) {
    if (std::find(float_nodes.begin(), float_nodes.end(), t.name) == float_nodes.end()) {
      kept.push_back(std::move(t));
    } else {
      plan.skipped.push_back({t.node, t.op_type, reason});
    }
  }
  plan.targets = std::move(kept);
}

Expected<MixedPlan> plan_mixed_precision(const ir::Model& prepared, const QuantPlan& plan,
                                         const std::map<std::string, Range>& ranges, const Int8Options& options,
                                         const std::vector<Feed>& feeds, double budget_db, int threads) {
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> float_model, make_inferencer(prepared, threads));
  EDGEMM_ASSIGN_OR_RETURN(const Outputs reference, run_all(*float_model, feeds));
  MixedPlan result;
  for (const QuantTarget& t : plan.targets) {
    if (t.name.empty()) continue;
    QuantPlan alone;
    alone.targets = {t};
    EDGEMM_ASSIGN_OR_RETURN(OutputError e, measure(prepared, alone, ranges, options, feeds, reference, threads));
    result.layers.push_back({t.name, t.op_type, e});
  }
  std::stable_sort(
      result.layers.begin(), result.layers.end(),
      [](const LayerSensitivity& a, const LayerSensitivity& b) { return a.error.sqnr_db < b.error.sqnr_db; });
  EDGEMM_ASSIGN_OR_RETURN(result.all_int8, measure(prepared, plan, ranges, options, feeds, reference, threads));
  result.final_error = result.all_int8;
  QuantPlan current = plan;
  for (const LayerSensitivity& layer : result.layers) {
    if (result.final_error.sqnr_db >= budget_db) break;
    result.float_nodes.push_back(layer.node);
    keep_in_float(current, {layer.node}, "");
    if (current.targets.empty()) {
      result.final_error = {std::numeric_limits<double>::infinity(), 1.0};
      break;
    }
    EDGEMM_ASSIGN_OR_RETURN(result.final_error, measure(prepared, current, ranges, options, feeds, reference, threads));
  }
  result.budget_met = result.final_error.sqnr_db >= budget_db;
  return result;
}

}  // namespace edgemm::quant
