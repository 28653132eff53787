/// \file layer_norm_fusion.cc
/// fuse_layer_norm: the decomposed layer normalization exporters write (Paddle2ONNX, older
/// PyTorch opsets) → one kEdgemmDomain LayerNormalization node (ONNX LayerNormalization-17
/// semantics, Operators.md, with axis -1):
///
///   m = ReduceMean(x, axes=[-1]);  d = Sub(x, m);  q = Pow(d, 2) | Mul(d, d)
///   v = ReduceMean(q, axes=[-1]);  s = Sqrt(Add(v, eps));  n = Div(d, s)
///   y = Add(Mul(n, gamma), beta)   (the Mul and the Add are each optional)

#include <cstring>

#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// A matched normalization: its input, epsilon, the nodes it covers and the affine parameters.
struct LayerNormMatch {
  std::string x;
  float epsilon = 0;
  std::vector<int> nodes;   ///< every matched node; the last one produces the result
  std::string scale, bias;  ///< constant names, or "" when the pattern has no Mul / Add
};

/// True when a ReduceMean reduces only the last axis of its input, keeping it.
bool reduces_last_axis(const ir::Graph& graph, const ir::Node& node) {
  const auto axis = single_reduce_axis(graph, node);
  if (!axis) return false;
  if (*axis == -1) return true;
  const int64_t rank = known_rank(graph, node.inputs[0]);
  return rank > 0 && *axis == rank - 1;
}

/// The size of x's last axis when statically known, else -1.
int64_t last_axis_size(const ir::Graph& graph, const std::string& x) {
  const ValueInfo* info = value_info(graph, x);
  if (info == nullptr || !info->rank_known || info->shape.empty()) return -1;
  return info->shape.back().value;
}

/// True when the float32 constant `name` broadcasts along x's last axis only (every other
/// axis 1, at most x's rank) with the axis size `c` (or 1). When `c` is unknown (-1) any last
/// size is accepted: the kernel then checks at run time that the sizes agree.
bool fits_last_axis(const ir::Graph& graph, const std::string& name, const std::string& x, int64_t c) {
  const Tensor* t = constant(graph, name);
  if (t == nullptr || t->dtype() != DataType::kFloat32 || t->element_count() == 0) return false;
  const int64_t rank = known_rank(graph, x);
  if (t->rank() > (rank < 0 ? 1 : rank)) return false;
  for (int64_t i = 0; i + 1 < t->rank(); ++i) {
    if (t->shape()[i] != 1) return false;
  }
  const int64_t last = t->element_count();
  return last == 1 || c < 0 || last == c;
}

/// Matches the normalization n = (x - mean) / sqrt(var + eps) ending at the Div node `div_k`.
std::optional<LayerNormMatch> match_normalization(const ir::Graph& graph, const GraphView& view, const Rewrite& rw,
                                                  int div_k) {
  const ir::Node& div = graph.nodes[div_k];
  if (div.inputs.size() != 2) return std::nullopt;
  const std::string& d = div.inputs[0];
  const int sub_k = producer_of(view, graph, d, "Sub");
  const int sqrt_k = producer_of(view, graph, div.inputs[1], "Sqrt");
  if (sub_k < 0 || sqrt_k < 0) return std::nullopt;
  const ir::Node& sub = graph.nodes[sub_k];
  const int mean_k = producer_of(view, graph, sub.inputs[1], "ReduceMean");
  const int add_k = producer_of(view, graph, graph.nodes[sqrt_k].inputs[0], "Add");
  if (mean_k < 0 || add_k < 0 || graph.nodes[mean_k].inputs[0] != sub.inputs[0]) return std::nullopt;
  std::string v;
  const auto eps = scalar_operand(graph, graph.nodes[add_k], &v);
  const int var_k = producer_of(view, graph, v, "ReduceMean");
  if (!eps || var_k < 0) return std::nullopt;
  const std::string& q = graph.nodes[var_k].inputs[0];
  int sq_k = producer_of(view, graph, q, "Pow");
  if (sq_k >= 0) {
    const auto exponent = scalar_constant(graph, graph.nodes[sq_k].inputs[1]);
    if (graph.nodes[sq_k].inputs[0] != d || !exponent || *exponent != 2.0f) return std::nullopt;
  } else {
    sq_k = producer_of(view, graph, q, "Mul");
    if (sq_k < 0 || graph.nodes[sq_k].inputs[0] != d || graph.nodes[sq_k].inputs[1] != d) return std::nullopt;
  }
  if (!reduces_last_axis(graph, graph.nodes[mean_k]) || !reduces_last_axis(graph, graph.nodes[var_k])) {
    return std::nullopt;
  }
  const std::vector<int> nodes = {mean_k, sub_k, sq_k, var_k, add_k, sqrt_k, div_k};
  if (!rw.all_untouched(nodes)) return std::nullopt;
  const bool private_values = only_read_by(view, sub.inputs[1], {sub_k}) && only_read_by(view, d, {sq_k, div_k}) &&
                              only_read_by(view, q, {var_k}) && only_read_by(view, v, {add_k}) &&
                              only_read_by(view, graph.nodes[add_k].outputs[0], {sqrt_k}) &&
                              only_read_by(view, div.inputs[1], {div_k});
  if (!private_values) return std::nullopt;
  LayerNormMatch m;
  m.x = sub.inputs[0];
  m.epsilon = *eps;
  m.nodes = nodes;
  return m;
}

/// Extends `m` with a following Mul by a constant (scale) and then Add of a constant (bias).
void match_affine(const ir::Graph& graph, const GraphView& view, const Rewrite& rw, LayerNormMatch& m) {
  const int64_t c = last_axis_size(graph, m.x);
  const char* const kOps[] = {"Mul", "Add"};
  for (const char* op : kOps) {
    const std::string& out = graph.nodes[m.nodes.back()].outputs[0];
    if (!view.single_use(out)) return;
    const int k = view.consumers(out)[0];
    const ir::Node& node = graph.nodes[k];
    const std::string param = other_input(node, out);
    if (!node.domain.empty() || node.op_type != op || !rw.untouched(k) || param.empty() ||
        !fits_last_axis(graph, param, m.x, c)) {
      continue;
    }
    (std::strcmp(op, "Mul") == 0 ? m.scale : m.bias) = param;
    m.nodes.push_back(k);
  }
}

/// A float32 constant holding `t`'s values as a 1-D tensor (Scale and B of LayerNormalization).
std::string flat_parameter(ir::Graph& graph, const std::string& name, const std::string& hint) {
  const Tensor* t = constant(graph, name);
  if (t->rank() == 1) return name;
  auto flat = t->reshaped({t->element_count()});
  return add_initializer(graph, hint, std::move(flat).value());
}

/// Replaces the last matched node by the fused LayerNormalization and marks the others dead.
void rewrite(ir::Graph& graph, Rewrite& rw, const LayerNormMatch& m) {
  const int last = m.nodes.back();
  ir::Node fused;
  fused.name = graph.nodes[last].name + "/LayerNormalization";
  fused.op_type = "LayerNormalization";
  fused.domain = kEdgemmDomain;
  fused.outputs = {graph.nodes[last].outputs[0]};
  const std::string scale = m.scale.empty()
                                ? add_initializer(graph, fused.name + "/ones", Tensor::from_floats({1}, {1.0f}))
                                : flat_parameter(graph, m.scale, fused.name + "/scale");
  fused.inputs = {m.x, scale};
  if (!m.bias.empty()) fused.inputs.push_back(flat_parameter(graph, m.bias, fused.name + "/bias"));
  ir::Attribute axis;
  axis.kind = ir::Attribute::Kind::kInt;
  axis.i = -1;
  ir::Attribute epsilon;
  epsilon.kind = ir::Attribute::Kind::kFloat;
  epsilon.f = m.epsilon;
  fused.attributes["axis"] = axis;
  fused.attributes["epsilon"] = epsilon;
  rw.replace(graph, m.nodes, std::move(fused));
}

}  // namespace

void fuse_layer_norm(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  const GraphView view(graph);
  Rewrite rw(graph);
  int fused = 0;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    const ir::Node& node = graph.nodes[k];
    if (!node.domain.empty() || node.op_type != "Div" || !rw.untouched(k)) continue;
    auto m = match_normalization(graph, view, rw, k);
    if (!m) continue;
    match_affine(graph, view, rw, *m);
    rewrite(graph, rw, *m);
    ++fused;
  }
  if (fused == 0) return;
  remove_nodes(graph, rw.dead);
  use_edgemm_domain(model);
  report.patterns["LayerNormalization"] += fused;
}

}  // namespace edgemm::passes
