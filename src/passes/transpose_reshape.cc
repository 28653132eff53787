/// \file transpose_reshape.cc
/// simplify_transpose_reshape: removes data movement that does nothing (Operators.md semantics
/// of Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout):
/// - Transpose(Transpose(x, p1), p2) → x when p1[p2[j]] = j for all j, else Transpose(x, p1∘p2)
///   (also for the identity when the result is a graph output);
/// - Reshape(R(x), shape) → Reshape(x, shape) when R is Reshape/Flatten/Squeeze/Unsqueeze and
///   `shape` is a constant without 0 entries (0 would copy an extent of R's output);
/// - Reshape/Flatten/Squeeze/Unsqueeze whose static input and output shapes are equal → x;
/// - Identity, and Dropout in inference (mask unused, training_mode absent or false) → x.
/// A graph output is never renamed away: a node producing one stays.

#include <numeric>

#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// The permutation of a Transpose node (reversed axes when `perm` is absent and the rank is
/// known), or empty when unknown.
std::vector<int64_t> permutation(const ir::Graph& graph, const ir::Node& node) {
  if (node.has_attr("perm")) {
    auto perm = node.attr_ints("perm");
    return perm ? *perm : std::vector<int64_t>{};
  }
  const int64_t rank = known_rank(graph, node.inputs[0]);
  std::vector<int64_t> perm(static_cast<size_t>(std::max<int64_t>(rank, 0)));
  for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  return perm;
}

bool is_reshape_like(const ir::Node& node) {
  return node.domain.empty() && (node.op_type == "Reshape" || node.op_type == "Flatten" || node.op_type == "Squeeze" ||
                                 node.op_type == "Unsqueeze");
}

/// One sweep's context: the graph, its view from the sweep's start and the changes so far.
struct Sweep {
  ir::Graph& graph;
  const GraphView& view;
  Rewrite& rw;
};

/// Transpose node `k` reading another Transpose: composes the two.
bool fold_transpose_pair(Sweep& s, int k) {
  ir::Node& t2 = s.graph.nodes[k];
  const int t1_k = producer_of(s.view, s.graph, t2.inputs[0], "Transpose");
  if (t1_k < 0 || !s.rw.untouched(t1_k)) return false;
  const ir::Node& t1 = s.graph.nodes[t1_k];
  const std::vector<int64_t> p1 = permutation(s.graph, t1), p2 = permutation(s.graph, t2);
  if (p1.empty() || p1.size() != p2.size()) return false;
  std::vector<int64_t> composed(p2.size());
  for (size_t j = 0; j < p2.size(); ++j) {
    if (p2[j] < 0 || p2[j] >= static_cast<int64_t>(p1.size())) return false;
    composed[j] = p1[p2[j]];
  }
  std::vector<int64_t> identity(composed.size());
  std::iota(identity.begin(), identity.end(), 0);
  const std::string x = t1.inputs[0];
  const bool t1_private = s.view.single_use(t2.inputs[0]);
  if (composed == identity && replace_uses(s.graph, s.view, s.rw, t2.outputs[0], x)) {
    s.rw.dead[k] = true;
  } else {  // merged (an identity perm stays as one copy when t2 produces a graph output)
    t2.inputs[0] = x;
    t2.attributes["perm"].kind = ir::Attribute::Kind::kInts;
    t2.attributes["perm"].ints = composed;
    s.rw.touched[k] = true;
  }
  if (t1_private) s.rw.dead[t1_k] = true;
  return true;
}

/// Reshape node `k` with a constant target reading a reshape-like node: reads its input.
bool fold_reshape_pair(Sweep& s, int k) {
  ir::Node& r2 = s.graph.nodes[k];
  if (r2.inputs.size() < 2) return false;
  const Tensor* shape = constant(s.graph, r2.inputs[1]);
  auto allowzero = r2.attr_int("allowzero", 0);
  if (shape == nullptr || shape->dtype() != DataType::kInt64 || !allowzero) return false;
  for (int64_t i = 0; *allowzero == 0 && i < shape->element_count(); ++i) {
    if (shape->data<int64_t>()[i] == 0) return false;
  }
  const int r1_k = s.view.producer(r2.inputs[0]);
  if (r1_k < 0 || !s.rw.untouched(r1_k) || !is_reshape_like(s.graph.nodes[r1_k])) return false;
  if (s.view.single_use(r2.inputs[0])) s.rw.dead[r1_k] = true;
  r2.inputs[0] = s.graph.nodes[r1_k].inputs[0];
  s.rw.touched[k] = true;
  return true;
}

/// Reshape-like node `k` whose static output shape equals its static input shape: removed.
bool drop_same_shape(Sweep& s, int k) {
  const ir::Node& node = s.graph.nodes[k];
  const auto in = static_shape(s.graph, node.inputs[0]);
  const auto out = static_shape(s.graph, node.outputs[0]);
  if (!in || !out || *in != *out) return false;
  if (!replace_uses(s.graph, s.view, s.rw, node.outputs[0], node.inputs[0])) return false;
  s.rw.dead[k] = true;
  return true;
}

/// True when Dropout node `node` (model opset `opset`) is the identity on its first output.
bool dropout_is_identity(const ir::Graph& graph, const GraphView& view, const ir::Node& node, int64_t opset) {
  if (opset < 7) return false;
  if (node.outputs.size() > 1 && !node.outputs[1].empty() &&
      (!view.consumers(node.outputs[1]).empty() || view.is_graph_output(node.outputs[1]))) {
    return false;
  }
  if (opset < 12 || node.inputs.size() < 3 || node.inputs[2].empty()) return true;
  const Tensor* training = constant(graph, node.inputs[2]);
  return training != nullptr && training->dtype() == DataType::kBool && training->element_count() == 1 &&
         !*training->data<bool>();
}

/// Identity or inference Dropout node `k`: removed.
bool drop_identity(Sweep& s, int k) {
  const ir::Node& node = s.graph.nodes[k];
  if (node.inputs.empty() || node.inputs[0].empty()) return false;
  if (!replace_uses(s.graph, s.view, s.rw, node.outputs[0], node.inputs[0])) return false;
  s.rw.dead[k] = true;
  return true;
}

/// One pass over the nodes; returns whether anything changed.
bool sweep(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  const GraphView view(graph);
  Rewrite rw(graph);
  Sweep s{graph, view, rw};
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    const ir::Node& node = graph.nodes[k];
    if (!node.domain.empty() || !rw.untouched(k) || node.inputs.empty() || node.outputs.empty()) continue;
    const std::string op = node.op_type;
    if (op == "Transpose" && fold_transpose_pair(s, k)) {
      ++report.patterns["Transpose pair"];
    } else if (op == "Reshape" && fold_reshape_pair(s, k)) {
      ++report.patterns["Reshape pair"];
    } else if (is_reshape_like(node) && drop_same_shape(s, k)) {
      ++report.patterns["Reshape to same shape"];
    } else if (op == "Identity" && drop_identity(s, k)) {
      ++report.patterns["Identity"];
    } else if (op == "Dropout" && dropout_is_identity(graph, view, node, model.opset("")) && drop_identity(s, k)) {
      ++report.patterns["Dropout"];
    }
  }
  if (!rw.changed()) return false;
  remove_nodes(graph, rw.dead);
  return true;
}

}  // namespace

void simplify_transpose_reshape(ir::Model& model, PassReport& report) {
  constexpr int kMaxSweeps = 16;  // each sweep shortens every chain it touches
  for (int i = 0; i < kMaxSweeps; ++i) {
    if (!sweep(model, report)) break;
  }
}

}  // namespace edgemm::passes
