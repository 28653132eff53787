#include "passes/pass_util.h"

#include <cfloat>
#include <unordered_set>
#include <vector>

namespace edgemm::passes {

std::optional<std::pair<float, float>> clip_bounds(const ir::Graph& graph, const ir::Node& clip) {
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (clip.has_attr("min") || clip.has_attr("max")) {
    auto a = clip.attr_float("min", -FLT_MAX);
    auto b = clip.attr_float("max", FLT_MAX);
    if (!a || !b) return std::nullopt;
    lo = *a;
    hi = *b;
  }
  for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
    if (clip.inputs[i].empty()) continue;
    auto v = scalar_constant(graph, clip.inputs[i]);
    if (!v) return std::nullopt;
    (i == 1 ? lo : hi) = *v;
  }
  if (lo > hi) return std::nullopt;
  return std::make_pair(lo, hi);
}

std::optional<std::vector<Dim>> value_shape(const ir::Graph& graph, const std::string& value) {
  if (const Tensor* t = constant(graph, value)) {
    std::vector<Dim> dims;
    for (int64_t d : t->shape()) dims.push_back(Dim{d, ""});
    return dims;
  }
  for (const auto& in : graph.inputs) {
    if (in.name == value) return in.rank_known ? std::optional(in.shape) : std::nullopt;
  }
  auto it = graph.value_infos.find(value);
  if (it == graph.value_infos.end() || !it->second.rank_known) return std::nullopt;
  return it->second.shape;
}

bool same_shape(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool fixed = a[i].is_static() && b[i].is_static() && a[i].value == b[i].value;
    const bool symbol = !a[i].is_static() && !b[i].is_static() && !a[i].symbol.empty() && a[i].symbol == b[i].symbol;
    if (!fixed && !symbol) return false;
  }
  return true;
}

bool depends_on_node(const ir::Graph& graph, const GraphView& view, const std::string& value, int source) {
  std::vector<int> stack;
  std::unordered_set<int> seen;
  const int start = view.producer(value);
  if (start >= 0) stack.push_back(start);
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    if (k == source) return true;
    if (!seen.insert(k).second) continue;
    for (const auto& in : graph.nodes[k].inputs) {
      const int p = in.empty() ? -1 : view.producer(in);
      if (p >= 0) stack.push_back(p);
    }
  }
  return false;
}

std::optional<std::string> other_input(const ir::Node& node, const std::string& value, bool* first) {
  if (node.inputs.size() != 2 || (node.inputs[0] == value) == (node.inputs[1] == value)) return std::nullopt;
  *first = node.inputs[0] == value;
  return node.inputs[*first ? 1 : 0];
}

}  // namespace edgemm::passes
