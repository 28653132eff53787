#pragma once
/// \file executor.h
/// Runs a CompiledGraph: one frame of values per (sub)graph invocation, nodes in schedule
/// order, buffers released after their last use, optional per-node profiling.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/compiled_graph.h"

namespace edgemm::runtime {

/// Where a node's output buffers come from (the main graph uses the planned arena).
class ValueAllocator {
 public:
  virtual ~ValueAllocator() = default;
  virtual Expected<Tensor> allocate(int value, DataType dtype, const Shape& shape) = 0;
};

/// One profiled node execution (microseconds since the profiler's start).
struct ProfileEvent {
  std::string node_name;
  std::string op_type;
  std::string kernel;
  std::string shapes;  ///< output shapes, e.g. "[1,16,320,320]"
  int64_t start_us = 0;
  int64_t duration_us = 0;
  int depth = 0;  ///< 0 for the main graph, 1+ inside subgraphs
};

/// Collects events from one run. Not shared between concurrent runs.
class Profiler {
 public:
  Profiler() : origin_(std::chrono::steady_clock::now()) {}
  int64_t now_us() const;
  void add(ProfileEvent event) { events_.push_back(std::move(event)); }
  const std::vector<ProfileEvent>& events() const { return events_; }
  /// Chrome trace JSON ("Trace Event Format", complete events "ph":"X").
  std::string chrome_trace_json() const;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<ProfileEvent> events_;
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
