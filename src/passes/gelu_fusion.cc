/// \file gelu_fusion.cc
/// fuse_gelu: GELU written with Erf (Hendrycks & Gimpel, "Gaussian Error Linear Units", exact
/// form; ONNX Gelu-20 with approximate = "none") as exporters write it,
///
///   e = Div(x, √2) | Mul(x, 1/√2);  p = Add(Erf(e), 1)
///   y = Mul(Mul(x, p), 0.5) | Mul(x, Mul(p, 0.5)) | Mul(Mul(x, 0.5), p)   (operands in any order)
///
/// → one kEdgemmDomain ElementwiseChain(x) node with the single step "gelu"
/// (src/ir/elementwise_steps.h).

#include <cmath>

#include "ir/elementwise_steps.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

constexpr float kSqrt2 = 1.41421356237f;

/// A matched GELU: its input and every node it covers (the last one produces the result).
struct GeluMatch {
  std::string x;
  std::vector<int> nodes;
};

/// The default-domain node `k` if it is a Mul by the scalar constant `value`; then `other` is
/// its other input.
bool is_mul_by(const ir::Graph& graph, int k, float value, std::string* other) {
  if (k < 0 || graph.nodes[k].op_type != "Mul" || !graph.nodes[k].domain.empty()) return false;
  const auto c = scalar_operand(graph, graph.nodes[k], other);
  return c && near(*c, value);
}

/// x when `value` is x/√2 (Div by √2 or Mul by 1/√2), with the node in `k`; else "".
std::string scaled_input(const ir::Graph& graph, const GraphView& view, const std::string& value, int* k) {
  *k = producer_of(view, graph, value, "Div");
  if (*k >= 0) {
    const ir::Node& div = graph.nodes[*k];
    const auto c = scalar_constant(graph, div.inputs[1]);
    return c && near(*c, kSqrt2) ? div.inputs[0] : "";
  }
  *k = view.producer(value);
  std::string x;
  return is_mul_by(graph, *k, 1.0f / kSqrt2, &x) ? x : "";
}

/// The single reader of `value` (not a graph output), or -1.
int sole_reader(const GraphView& view, const std::string& value) {
  return view.single_use(value) ? view.consumers(value)[0] : -1;
}

/// True when node `k` is a default-domain Mul with `value` as one of its two inputs.
bool is_mul_with(const ir::Graph& graph, int k, const std::string& value) {
  return k >= 0 && graph.nodes[k].op_type == "Mul" && graph.nodes[k].domain.empty() &&
         !other_input(graph.nodes[k], value).empty();
}

/// Completes the product x · p · 0.5 from p = 1 + erf(x/√2); appends the nodes to `m`.
bool match_product(const ir::Graph& graph, const GraphView& view, const std::string& p, GeluMatch& m) {
  const int m1 = sole_reader(view, p);
  if (!is_mul_with(graph, m1, p)) return false;
  const std::string other = other_input(graph.nodes[m1], p);
  const std::string& m1_out = graph.nodes[m1].outputs[0];
  const int m2 = sole_reader(view, m1_out);
  std::string rest;
  if (other == m.x) {  // Mul(Mul(x, p), 0.5)
    if (!is_mul_by(graph, m2, 0.5f, &rest)) return false;
    m.nodes.insert(m.nodes.end(), {m1, m2});
    return true;
  }
  if (is_mul_by(graph, m1, 0.5f, &rest)) {  // Mul(x, Mul(p, 0.5))
    if (!is_mul_with(graph, m2, m1_out) || other_input(graph.nodes[m2], m1_out) != m.x) return false;
    m.nodes.insert(m.nodes.end(), {m1, m2});
    return true;
  }
  // Mul(Mul(x, 0.5), p)
  const int half = view.producer(other);
  if (!is_mul_by(graph, half, 0.5f, &rest) || rest != m.x || !view.single_use(other)) return false;
  m.nodes.insert(m.nodes.end(), {half, m1});
  return true;
}

/// Matches the GELU around the Erf node `erf_k`.
std::optional<GeluMatch> match_gelu(const ir::Graph& graph, const GraphView& view, const Rewrite& rw, int erf_k) {
  const ir::Node& erf = graph.nodes[erf_k];
  int scale_k = -1;
  GeluMatch m;
  m.x = scaled_input(graph, view, erf.inputs[0], &scale_k);
  if (m.x.empty() || !view.single_use(erf.inputs[0])) return std::nullopt;
  const int add_k = sole_reader(view, erf.outputs[0]);
  std::string erf_out;
  if (add_k < 0 || graph.nodes[add_k].op_type != "Add" || !graph.nodes[add_k].domain.empty()) return std::nullopt;
  const auto one = scalar_operand(graph, graph.nodes[add_k], &erf_out);
  if (!one || *one != 1.0f) return std::nullopt;
  m.nodes = {scale_k, erf_k, add_k};
  if (!match_product(graph, view, graph.nodes[add_k].outputs[0], m)) return std::nullopt;
  for (int k : m.nodes) {
    if (!rw.untouched(k)) return std::nullopt;
  }
  return m;
}

}  // namespace

void fuse_gelu(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  const GraphView view(graph);
  Rewrite rw(graph);
  int fused = 0;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    const ir::Node& node = graph.nodes[k];
    if (!node.domain.empty() || node.op_type != "Erf" || !rw.untouched(k)) continue;
    const auto m = match_gelu(graph, view, rw, k);
    if (!m) continue;
    const int last = m->nodes.back();
    ir::Node chain;
    chain.name = graph.nodes[last].name + "/Gelu";
    chain.op_type = "ElementwiseChain";
    chain.domain = kEdgemmDomain;
    chain.inputs = {m->x};
    chain.outputs = {graph.nodes[last].outputs[0]};
    ir::Step gelu;
    gelu.kind = ir::StepKind::kGelu;
    ir::write_steps(chain, {gelu});
    for (int n : m->nodes) rw.dead[n] = true;
    rw.dead[last] = false;
    rw.touched[last] = true;
    graph.nodes[last] = std::move(chain);
    ++fused;
  }
  if (fused == 0) return;
  remove_nodes(graph, rw.dead);
  use_edgemm_domain(model);
  report.patterns["Gelu"] += fused;
}

}  // namespace edgemm::passes
