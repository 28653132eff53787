#include "passes/graph_view.h"

#include <set>

#include "ir/graph.h"

namespace edgemm::passes {

GraphView::GraphView(const ir::Graph& graph) : graph_(graph) {
  for (const auto& o : graph.outputs) outputs_.insert(o.name);
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    const ir::Node& node = graph.nodes[k];
    for (const auto& out : node.outputs) {
      if (!out.empty()) producer_[out] = k;
    }
    std::unordered_set<std::string> read(node.inputs.begin(), node.inputs.end());
    for (const auto& name : ir::node_free_variables(node)) read.insert(name);
    read.erase("");
    for (const auto& name : read) consumers_[name].push_back(k);
  }
}

int GraphView::producer(const std::string& value) const {
  auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& GraphView::consumers(const std::string& value) const {
  static const std::vector<int> kNone;
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool GraphView::single_use(const std::string& value) const {
  if (is_graph_output(value)) return false;
  const std::vector<int>& readers = consumers(value);
  if (readers.size() != 1) return false;
  int uses = 0;
  for (const auto& in : graph_.nodes[readers[0]].inputs) uses += in == value ? 1 : 0;
  return uses == 1;
}

const Tensor* constant(const ir::Graph& graph, const std::string& name) {
  auto it = graph.initializers.find(name);
  return it == graph.initializers.end() ? nullptr : &it->second;
}

std::optional<float> scalar_constant(const ir::Graph& graph, const std::string& name) {
  const Tensor* t = constant(graph, name);
  if (t == nullptr || t->dtype() != DataType::kFloat32 || t->element_count() != 1) return std::nullopt;
  return t->data<float>()[0];
}

void remove_nodes(ir::Graph& graph, const std::vector<bool>& dead) {
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (!dead[k]) kept.push_back(std::move(graph.nodes[k]));
  }
  graph.nodes = std::move(kept);
}

void sort_topologically(ir::Graph& graph) {
  const GraphView view(graph);
  const size_t n = graph.nodes.size();
  std::vector<int> waiting(n, 0);  // producers not yet placed, per node
  std::vector<std::vector<int>> readers(n);
  for (size_t k = 0; k < n; ++k) {
    std::unordered_set<int> producers;
    for (const auto& in : graph.nodes[k].inputs) {
      const int p = in.empty() ? -1 : view.producer(in);
      if (p >= 0 && p != static_cast<int>(k)) producers.insert(p);
    }
    for (const auto& name : ir::node_free_variables(graph.nodes[k])) {
      const int p = view.producer(name);
      if (p >= 0 && p != static_cast<int>(k)) producers.insert(p);
    }
    waiting[k] = static_cast<int>(producers.size());
    for (int p : producers) readers[p].push_back(static_cast<int>(k));
  }
  // Kahn's algorithm, always taking the earliest ready node in the current order.
  std::set<int> ready;
  for (size_t k = 0; k < n; ++k) {
    if (waiting[k] == 0) ready.insert(static_cast<int>(k));
  }
  std::vector<int> order;
  std::vector<bool> placed(n, false);
  while (!ready.empty()) {
    const int k = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(k);
    placed[k] = true;
    for (int r : readers[k]) {
      if (--waiting[r] == 0) ready.insert(r);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (!placed[k]) order.push_back(static_cast<int>(k));
  }
  std::vector<ir::Node> sorted;
  sorted.reserve(n);
  for (int k : order) sorted.push_back(std::move(graph.nodes[k]));
  graph.nodes = std::move(sorted);
}

std::string add_initializer(ir::Graph& graph, const std::string& hint, Tensor value) {
  std::string name = hint;
  for (int i = 1; graph.initializers.count(name) != 0; ++i) name = hint + "_" + std::to_string(i);
  graph.initializers[name] = std::move(value);
  return name;
}

void use_edgemm_domain(ir::Model& model) { model.opsets[kEdgemmDomain] = 1; }

}  // namespace edgemm::passes
