#include "passes/pattern_util.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <unordered_set>

namespace edgemm::passes {

bool Rewrite::changed() const {
  return std::find(dead.begin(), dead.end(), true) != dead.end() ||
         std::find(touched.begin(), touched.end(), true) != touched.end();
}

bool Rewrite::all_untouched(const std::vector<int>& nodes) const {
  return std::all_of(nodes.begin(), nodes.end(), [this](int k) { return untouched(k); });
}

void Rewrite::replace(ir::Graph& graph, const std::vector<int>& nodes, ir::Node node) {
  const int last = nodes.back();
  for (int k : nodes) dead[k] = true;
  dead[last] = false;
  touched[last] = true;
  graph.nodes[last] = std::move(node);
}

int producer_of(const GraphView& view, const ir::Graph& graph, const std::string& value, const char* op_type) {
  const int k = view.producer(value);
  if (k < 0) return -1;
  const ir::Node& node = graph.nodes[k];
  return node.domain.empty() && node.op_type == op_type ? k : -1;
}

const ValueInfo* value_info(const ir::Graph& graph, const std::string& name) {
  for (const auto& in : graph.inputs) {
    if (in.name == name) return &in;
  }
  for (const auto& out : graph.outputs) {
    if (out.name == name) return &out;
  }
  auto it = graph.value_infos.find(name);
  return it == graph.value_infos.end() ? nullptr : &it->second;
}

int64_t known_rank(const ir::Graph& graph, const std::string& name) {
  if (const Tensor* t = constant(graph, name)) return t->rank();
  const ValueInfo* info = value_info(graph, name);
  return info != nullptr && info->rank_known ? static_cast<int64_t>(info->shape.size()) : -1;
}

std::optional<Shape> static_shape(const ir::Graph& graph, const std::string& name) {
  if (const Tensor* t = constant(graph, name)) return t->shape();
  const ValueInfo* info = value_info(graph, name);
  if (info == nullptr || !info->rank_known) return std::nullopt;
  Shape shape;
  for (const auto& d : info->shape) {
    if (!d.is_static()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

bool is_op(const ir::Node& node, const char* op_type) { return node.domain.empty() && node.op_type == op_type; }

bool near(float value, float target, float tolerance) { return std::fabs(value - target) <= tolerance; }

std::optional<float> scalar_operand(const ir::Graph& graph, const ir::Node& node, std::string* other) {
  if (node.inputs.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (auto v = scalar_constant(graph, node.inputs[i])) {
      *other = node.inputs[1 - i];
      return v;
    }
  }
  return std::nullopt;
}

std::string other_input(const ir::Node& node, const std::string& value) {
  if (node.inputs.size() != 2) return "";
  if (node.inputs[0] == value) return node.inputs[1];
  if (node.inputs[1] == value) return node.inputs[0];
  return "";
}

bool only_read_by(const GraphView& view, const std::string& value, const std::vector<int>& readers) {
  if (view.is_graph_output(value)) return false;
  for (int k : view.consumers(value)) {
    if (std::find(readers.begin(), readers.end(), k) == readers.end()) return false;
  }
  return true;
}

bool replace_uses(ir::Graph& graph, const GraphView& view, Rewrite& rw, const std::string& value,
                  const std::string& replacement) {
  if (view.is_graph_output(value)) return false;
  const std::vector<int>& readers = view.consumers(value);
  for (int k : readers) {
    if (std::find(graph.nodes[k].inputs.begin(), graph.nodes[k].inputs.end(), value) == graph.nodes[k].inputs.end()) {
      return false;
    }
    for (const auto& [key, attr] : graph.nodes[k].attributes) {
      if (attr.kind == ir::Attribute::Kind::kGraph) return false;
    }
  }
  for (int k : readers) {
    for (auto& in : graph.nodes[k].inputs) {
      if (in == value) in = replacement;
    }
    rw.touched[k] = true;
  }
  return true;
}

std::optional<int64_t> single_reduce_axis(const ir::Graph& graph, const ir::Node& node) {
  auto keepdims = node.attr_int("keepdims", 1);
  if (!keepdims || *keepdims != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (node.has_attr("axes")) {
    auto a = node.attr_ints("axes");
    if (!a) return std::nullopt;
    axes = *a;
  } else if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
    const Tensor* t = constant(graph, node.inputs[1]);
    if (t == nullptr || t->dtype() != DataType::kInt64) return std::nullopt;
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->element_count());
  }
  if (axes.size() != 1) return std::nullopt;
  return axes[0];
}

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

std::optional<std::string> other_operand(const ir::Node& node, const std::string& value, bool* first) {
  if (node.inputs.size() != 2 || (node.inputs[0] == value) == (node.inputs[1] == value)) return std::nullopt;
  *first = node.inputs[0] == value;
  return node.inputs[*first ? 1 : 0];
}

}  // namespace edgemm::passes
