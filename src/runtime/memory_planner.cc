#include "runtime/memory_planner.h"

#include <algorithm>

namespace edgemm::runtime {

MemoryPlan plan_memory(const CompiledGraph& graph, const std::vector<int64_t>& recorded_bytes) {
  const int nv = graph.value_count();
  MemoryPlan plan;
  plan.offset.assign(nv, -1);
  plan.bytes.assign(nv, 0);
  std::vector<int> release(nv, -1);
  const auto& nodes = graph.nodes();
  for (int s = 0; s < static_cast<int>(nodes.size()); ++s) {
    for (int v : nodes[s].release_after) release[v] = s;
  }
  struct Item {
    int value;
    int64_t bytes;
    int first, last;
  };
  std::vector<Item> items;
  for (int v = 0; v < nv; ++v) {
    if (v >= static_cast<int>(recorded_bytes.size()) || recorded_bytes[v] <= 0) continue;
    if (graph.is_graph_output(v) || graph.producer_step(v) < 0 || release[v] < 0) continue;
    const int64_t aligned = (recorded_bytes[v] + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
    items.push_back({v, aligned, graph.producer_step(v), release[v]});
    plan.unplanned_bytes += aligned;
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value;
  });
  std::vector<const Item*> placed;
  for (const Item& item : items) {
    // Busy address ranges of placed values alive at the same time, sorted by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Item* p : placed) {
      if (p->first <= item.last && item.first <= p->last) {
        busy.emplace_back(plan.offset[p->value], plan.offset[p->value] + p->bytes);
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [lo, hi] : busy) {
      const int64_t gap = lo - cursor;
      if (gap >= item.bytes && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, hi);
    }
    if (best < 0) best = cursor;
    plan.offset[item.value] = best;
    plan.bytes[item.value] = item.bytes;
    plan.arena_bytes = std::max(plan.arena_bytes, best + item.bytes);
    placed.push_back(&item);
  }
  return plan;
}

}  // namespace edgemm::runtime
