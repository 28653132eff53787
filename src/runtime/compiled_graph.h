#pragma once
/// \file compiled_graph.h
/// A graph ready to execute: values numbered, nodes in topological order with their kernels,
/// constants bound, and for every value the step after which its buffer can be released.

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace edgemm::runtime {

/// One scheduled node.
struct CompiledNode {
  const ir::Node* node = nullptr;
  std::unique_ptr<kernels::Kernel> kernel;
  std::vector<int> inputs;           ///< value index per node input; -1 when absent
  std::vector<int> outputs;          ///< value index per node output; -1 when not listed
  std::vector<int> implicit_inputs;  ///< outer-scope values read by the node's subgraphs
  std::vector<int> release_after;    ///< values whose last use is this node
};

/// Compiled (sub)graph. Immutable after compile(); safe to execute from many threads.
class CompiledGraph : public kernels::Subgraph {
 public:
  /// Compiles `graph` with the model's opsets. `outer_names` are the names visible from
  /// enclosing graphs (empty for the main graph). Kernels come from `extra` (nullable; searched
  /// first, e.g. backends::partition_kernels) and then the CPU registry.
  /// Errors: kUnsupported listing every node without a kernel; kInvalidModel for cycles or
  /// inputs that nothing defines; errors from kernel factories.
  static Expected<std::shared_ptr<CompiledGraph>> compile(std::shared_ptr<const ir::Graph> graph,
                                                          const std::map<std::string, int64_t>& opsets,
                                                          const std::unordered_set<std::string>& outer_names,
                                                          const kernels::KernelRegistry* extra = nullptr);
  /// compile() for a main graph handed over by its owner, its kernels made (their weights
  /// packed) on `threads` OpenMP threads, in waves of 8 · threads nodes in execution order (one
  /// node at a time with 1 thread): each initializer that no kernel reads as stored (every node
  /// reading it keeps a packed copy: Kernel::reads_constant_input), or that no node reads, is
  /// erased from `graph` after the wave that compiled its last reader, so that only a wave's
  /// weights are held twice at any time during compile. Kernel factories must be thread-safe.
  /// Errors as compile(), the first failing node's in execution order.
  static Expected<std::shared_ptr<CompiledGraph>> compile_freeing_packed(
      std::shared_ptr<ir::Graph> graph, const std::map<std::string, int64_t>& opsets,
      const kernels::KernelRegistry* extra = nullptr, int threads = 1);

  const std::vector<std::string>& input_names() const override { return input_names_; }
  const std::vector<std::string>& output_names() const override { return output_names_; }

  int value_count() const { return static_cast<int>(value_names_.size()); }
  const std::string& value_name(int v) const { return value_names_[v]; }
  /// Index of a value by name, or -1.
  int value_index(const std::string& name) const;
  /// Constant tensor bound to value `v` (initializer), or nullptr.
  const Tensor* constant(int v) const { return constants_[v].defined() ? &constants_[v] : nullptr; }
  const std::vector<int>& graph_inputs() const { return graph_inputs_; }
  const std::vector<int>& graph_outputs() const { return graph_outputs_; }
  /// Values read from enclosing graphs (filled by name from the parent frame at run start).
  const std::vector<int>& outer_values() const { return outer_values_; }
  const std::vector<CompiledNode>& nodes() const { return nodes_; }
  /// Step (node index) that produces value v, or -1 for inputs, constants and outer values.
  int producer_step(int v) const { return producer_step_[v]; }
  /// True when v is a graph output (kept until the end, never planned in the arena).
  bool is_graph_output(int v) const { return is_output_[v]; }
  /// Sum of the kernels' packed_bytes() (main graph; subgraphs' kernels not counted).
  int64_t packed_bytes() const;
  const ir::Graph& graph() const { return *graph_; }

 private:
  /// compile(); `owned` is `graph` itself when the caller handed it over
  /// (compile_freeing_packed), else null.
  static Expected<std::shared_ptr<CompiledGraph>> compile_graph(std::shared_ptr<const ir::Graph> graph,
                                                                ir::Graph* owned,
                                                                const std::map<std::string, int64_t>& opsets,
                                                                const std::unordered_set<std::string>& outer_names,
                                                                const kernels::KernelRegistry* extra, int threads);

  std::shared_ptr<const ir::Graph> graph_;
  std::vector<std::string> value_names_;
  std::unordered_map<std::string, int> index_;
  std::vector<Tensor> constants_;
  std::vector<int> graph_inputs_, graph_outputs_, outer_values_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<CompiledNode> nodes_;
  std::vector<int> producer_step_;
  std::vector<bool> is_output_;
};

}  // namespace edgemm::runtime
