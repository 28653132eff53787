/// \file speed_check.cc
/// Per-node timing of the float and int8 forms of a model (see speed_check.h).

#include "quant/speed_check.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace edgemm::quant {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Expected<std::vector<NodeTiming>> time_targets(const ir::Model& float_model, const ir::Model& int8_model,
                                               const QuantPlan& plan, const Feed& feed, int threads, int runs) {
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> fp32, make_inferencer(float_model, threads));
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> int8, make_inferencer(int8_model, threads));
  std::map<std::string, std::vector<double>> float_us, int8_us;
  for (int r = 0; r <= runs; ++r) {
    EDGEMM_ASSIGN_OR_RETURN(ProfiledRun a, fp32->run_profiled(feed));
    EDGEMM_ASSIGN_OR_RETURN(ProfiledRun b, int8->run_profiled(feed));
    if (r == 0) continue;  // warm-up: plans and packed weights are made on the first run
    for (const NodeProfile& n : a.nodes) float_us[n.node].push_back(n.duration_us);
    for (const NodeProfile& n : b.nodes) int8_us[n.node].push_back(n.duration_us);
  }
  std::vector<NodeTiming> timings;
  for (const QuantTarget& t : plan.targets) {
    if (t.name.empty() || float_us.count(t.name) == 0 || int8_us.count(t.name) == 0) continue;
    NodeTiming timing{t.name, median(float_us[t.name]), median(int8_us[t.name])};
    // QuantizeLinear / DequantizeLinear that no int8 kernel absorbed (insert_qdq's node names)
    // run for this node too: charged in full to each node reading the activation.
    for (const char* suffix : {"_QuantizeLinear", "_DequantizeLinear"}) {
      auto qdq = int8_us.find(t.activation + suffix);
      if (qdq != int8_us.end()) timing.int8_us += median(qdq->second);
    }
    timings.push_back(timing);
  }
  return timings;
}

void keep_faster_targets(QuantPlan& plan, const std::vector<NodeTiming>& timings) {
  std::map<std::string, const NodeTiming*> by_name;
  for (const NodeTiming& t : timings) by_name[t.node] = &t;
  std::vector<QuantTarget> kept;
  for (QuantTarget& t : plan.targets) {
    auto it = by_name.find(t.name);
    if (it == by_name.end() || it->second->int8_us < kInt8TieRatio * it->second->float_us) {
      kept.push_back(std::move(t));
      continue;
    }
    char reason[128];
    std::snprintf(reason, sizeof reason, "slower in int8 on this CPU (%.3f ms vs %.3f ms in float)",
                  it->second->int8_us / 1e3, it->second->float_us / 1e3);
    plan.skipped.push_back({t.node, t.op_type, reason});
  }
  plan.targets = std::move(kept);
}

}  // namespace edgemm::quant
