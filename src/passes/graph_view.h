#pragma once
/// \file graph_view.h
/// Read-only indexes over an ir::Graph that pattern-matching passes share: which node produces
/// a value, which nodes read it, and the constant (initializer) behind a name. Rebuild a view
/// after rewriting the graph; it holds indices into graph.nodes.

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::passes {

using ir::kEdgemmDomain;

/// Producer and consumer indexes of a graph. Values read by a node's subgraphs (If/Loop/Scan
/// bodies) count as read by that node.
class GraphView {
 public:
  explicit GraphView(const ir::Graph& graph);

  /// Index in graph.nodes of the node producing `value`, or -1 (graph input, initializer).
  int producer(const std::string& value) const;
  /// Indices of the nodes reading `value` (each node once, in graph order).
  const std::vector<int>& consumers(const std::string& value) const;
  bool is_graph_output(const std::string& value) const { return outputs_.count(value) != 0; }
  /// True when exactly one node reads `value`, through exactly one of its inputs, and the
  /// value is not a graph output: a pass may then fold the producer into that reader.
  bool single_use(const std::string& value) const;

 private:
  const ir::Graph& graph_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_set<std::string> outputs_;
};

/// The initializer named `name`, or nullptr.
const Tensor* constant(const ir::Graph& graph, const std::string& name);

/// The value of a float32 initializer holding exactly one element (any rank), or nullopt.
std::optional<float> scalar_constant(const ir::Graph& graph, const std::string& name);

/// Drops the nodes whose `dead` flag is set, keeping the others in order.
void remove_nodes(ir::Graph& graph, const std::vector<bool>& dead);

/// Reorders graph.nodes so that every node comes after the producers of its inputs (ONNX
/// requires this order, and eliminate_dead_nodes relies on it), keeping the current order
/// wherever it already satisfies that. Passes that append or merge nodes call it when done.
/// Nodes on a cycle (invalid graphs) keep their relative order at the end.
void sort_topologically(ir::Graph& graph);

/// Adds an initializer under a fresh name derived from `hint` and returns the name.
std::string add_initializer(ir::Graph& graph, const std::string& hint, Tensor value);

/// Declares kEdgemmDomain (version 1) in the model's opsets so its nodes find their kernels.
void use_edgemm_domain(ir::Model& model);

}  // namespace edgemm::passes
