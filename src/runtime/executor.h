#pragma once
/// \file executor.h
/// Runs a CompiledGraph: one frame of values per (sub)graph invocation, nodes in schedule
/// order, buffers released after their last use, optional per-node profiling.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/profile.h"
#include "runtime/compiled_graph.h"

namespace edgemm::runtime {

/// Where a node's output buffers come from (the main graph uses the planned arena).
class ValueAllocator {
 public:
  virtual ~ValueAllocator() = default;
  virtual Expected<Tensor> allocate(int value, DataType dtype, const Shape& shape) = 0;
};

/// Collects the node executions of one run (see edgemm::NodeProfile). Not shared between
/// concurrent runs.
class Profiler {
 public:
  Profiler() : origin_(std::chrono::steady_clock::now()) {}
  /// Microseconds since construction (steady clock, sub-microsecond resolution).
  double now_us() const;
  void add(NodeProfile event) { events_.push_back(std::move(event)); }
  const std::vector<NodeProfile>& events() const { return events_; }
  std::vector<NodeProfile> take_events() { return std::move(events_); }

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<NodeProfile> events_;
};


/// Per-run settings shared by a graph and its subgraphs.
struct ExecOptions {
  int threads = 1;
  Profiler* profiler = nullptr;  ///< nullable
};

/// Values of one graph invocation; outer-scope lookups go to `parent`.
struct Frame {
  const CompiledGraph* graph = nullptr;
  const Frame* parent = nullptr;
  std::vector<Tensor> values;
  /// Finds a value by name here or in enclosing frames; nullptr if absent or not yet set.
  const Tensor* lookup(const std::string& name) const;
};

/// Executes `graph` on `inputs` (in graph_inputs() order). `allocator` serves node outputs
/// (nullptr = heap). Returns graph outputs in order, each owning its memory.
Expected<std::vector<Tensor>> execute(const CompiledGraph& graph, const std::vector<Tensor>& inputs,
                                      const Frame* parent, const ExecOptions& options, ValueAllocator* allocator,
                                      int depth = 0);

}  // namespace edgemm::runtime
