#include <algorithm>
#include <unordered_set>

#include "passes/graph_view.h"
#include "passes/passes.h"
#include "runtime/single_node.h"

namespace edgemm::passes {

namespace {

bool is_foldable_op(const ir::Node& node) {
  static const std::unordered_set<std::string> kNever = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "If",
      "Loop",         "Scan",          "SequenceConstruct"};
  if (!node.domain.empty() || kNever.count(node.op_type)) return false;
  for (const auto& [key, attr] : node.attributes) {
    if (attr.kind == ir::Attribute::Kind::kGraph) return false;
  }
  return true;
}

/// The static shape of `name` from graph inputs or inferred value_infos, if every axis is fixed.
bool static_shape_of(const ir::Graph& graph, const std::string& name, Shape& shape) {
  const ValueInfo* info = nullptr;
  for (const auto& in : graph.inputs) {
    if (in.name == name) info = &in;
  }
  if (info == nullptr) {
    auto it = graph.value_infos.find(name);
    if (it != graph.value_infos.end()) info = &it->second;
  }
  if (info == nullptr || !info->rank_known) return false;
  shape.clear();
  for (const auto& d : info->shape) {
    if (!d.is_static()) return false;
    shape.push_back(d.value);
  }
  return true;
}

/// Shape (with opset-15 start/end) or Size of a statically known shape.
bool fold_shape_node(const ir::Graph& graph, const ir::Node& node, Tensor& out) {
  Shape shape;
  if (node.inputs.empty()) return false;
  auto it = graph.initializers.find(node.inputs[0]);
  if (it != graph.initializers.end()) {
    shape = it->second.shape();
  } else if (!static_shape_of(graph, node.inputs[0], shape)) {
    return false;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (node.op_type == "Size") {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    out = Tensor::from_int64s({}, {n});
    return true;
  }
  auto start = node.attr_int("start", 0);
  auto end = node.attr_int("end", rank);
  if (!start || !end) return false;
  auto clamp = [rank](int64_t a) { return std::min(std::max(a < 0 ? a + rank : a, int64_t{0}), rank); };
  const int64_t s = clamp(*start), e = clamp(*end);
  std::vector<int64_t> dims(shape.begin() + s, shape.begin() + std::max(s, e));
  out = Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims);
  return true;
}

}  // namespace

void fold_constants(ir::Model& model, PassReport& report, bool keep_dequantize) {
  ir::Graph& graph = model.graph;
  std::unordered_set<std::string> graph_outputs;
  for (const auto& o : graph.outputs) graph_outputs.insert(o.name);
  std::vector<ir::Node> kept;
  for (auto& node : graph.nodes) {
    bool folded = false;
    if (node.op_type == "Shape" || node.op_type == "Size") {
      Tensor t;
      if (node.domain.empty() && node.outputs.size() == 1 && fold_shape_node(graph, node, t)) {
        graph.initializers[node.outputs[0]] = std::move(t);
        folded = true;
      }
    } else if (is_foldable_op(node) && !(keep_dequantize && node.op_type == "DequantizeLinear")) {
      std::vector<Tensor> inputs;
      bool all_constant = true;
      for (const auto& in : node.inputs) {
        if (in.empty()) {
          inputs.emplace_back();
          continue;
        }
        auto it = graph.initializers.find(in);
        if (it == graph.initializers.end()) {
          all_constant = false;
          break;
        }
        inputs.push_back(it->second);
      }
      if (all_constant) {
        auto outputs = runtime::run_node(node, inputs, model.opset(node.domain));
        if (outputs && outputs->size() == node.outputs.size()) {
          for (size_t i = 0; i < node.outputs.size(); ++i) {
            if (!node.outputs[i].empty()) graph.initializers[node.outputs[i]] = (*outputs)[i];
          }
          folded = true;
        }
      }
    }
    if (folded) {
      ++report.folded_nodes;
    } else {
      kept.push_back(std::move(node));
    }
  }
  graph.nodes = std::move(kept);
}

void eliminate_dead_nodes(ir::Graph& graph, PassReport& report) {
  std::unordered_set<std::string> live;
  for (const auto& o : graph.outputs) live.insert(o.name);
  std::vector<bool> dead(graph.nodes.size(), true);
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    const ir::Node& node = graph.nodes[k];
    bool needed = false;
    for (const auto& out : node.outputs) needed = needed || (!out.empty() && live.count(out));
    if (!needed) continue;
    dead[k] = false;
    for (const auto& in : node.inputs) live.insert(in);
    for (const auto& name : ir::node_free_variables(node)) live.insert(name);
  }
  report.removed_nodes += static_cast<int>(std::count(dead.begin(), dead.end(), true));
  remove_nodes(graph, dead);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    it = live.count(it->first) ? std::next(it) : graph.initializers.erase(it);
  }
}

}  // namespace edgemm::passes
