#pragma once
/// \file memory_planner.h
/// Buffer-reuse planning for one input-shape signature: the first run records each
/// intermediate's byte size; the plan then gives every intermediate an offset in one arena so
/// that values whose lifetimes overlap never share bytes (greedy by size, best fit, as in
/// ONNX Runtime's memory patterns and TFLite's arena planner).

#include <cstdint>
#include <vector>

#include "runtime/compiled_graph.h"

namespace edgemm::runtime {

/// Offsets of planned values inside the arena.
struct MemoryPlan {
  std::vector<int64_t> offset;  ///< per value; -1 = not planned (heap)
  std::vector<int64_t> bytes;   ///< per value; planned size
  int64_t arena_bytes = 0;      ///< peak: the arena size
  int64_t unplanned_bytes = 0;  ///< sum of the planned values' sizes (no reuse)
};

/// Alignment of every planned buffer, in bytes.
inline constexpr int64_t kPlanAlignment = 64;

/// Plans the main graph's intermediates from `recorded_bytes` (per value, 0 = not allocated).
/// Graph outputs are never planned (they are returned to the caller).
MemoryPlan plan_memory(const CompiledGraph& graph, const std::vector<int64_t>& recorded_bytes);

}  // namespace edgemm::runtime
