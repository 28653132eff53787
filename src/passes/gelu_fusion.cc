/// \file gelu_fusion.cc
/// fuse_gelu: GELU (Hendrycks & Gimpel, "Gaussian Error Linear Units") as exporters write it,
/// with Erf (exact form; ONNX Gelu-20 with approximate = "none") or with Tanh (approximate =
/// "tanh"; GPT-2's and SigLIP's gelu_pytorch_tanh),
///
///   erf:  e = Div(x, √2) | Mul(x, 1/√2);  p = Add(Erf(e), 1)
///   tanh: c = Mul(x, Mul(x, x)) | Mul(Mul(x, x), x) | Pow(x, 3);
///         p = Add(Tanh(Mul(Add(x, Mul(c, 0.044715)), √(2/π))), 1)
///   y = Mul(Mul(x, p), 0.5) | Mul(x, Mul(p, 0.5)) | Mul(Mul(x, 0.5), p)   (operands in any order)
///
/// → one kEdgemmDomain ElementwiseChain(x) node with the single step "gelu" or "gelu_tanh"
/// (src/ir/elementwise_steps.h).

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

constexpr float kSqrt2 = 1.41421356237f;
constexpr float kSqrt2OverPi = 0.79788456080f;
constexpr float kCubeFactor = 0.044715f;

/// A matched GELU: its input, form and every node it covers (the last one produces the result).
struct GeluMatch {
  std::string x;
  ir::StepKind kind = ir::StepKind::kGelu;
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
  if (!rw.all_untouched(m.nodes)) return std::nullopt;
  return m;
}

/// x when `value` (single use) is x³ as Mul(x, Mul(x, x)), Mul(Mul(x, x), x) or Pow(x, 3);
/// appends the nodes to `nodes`.
std::string cube_input(const ir::Graph& graph, const GraphView& view, const std::string& value,
                       std::vector<int>& nodes) {
  const int k = view.producer(value);
  if (k < 0 || !view.single_use(value)) return "";
  const ir::Node& n = graph.nodes[k];
  if (is_op(n, "Pow")) {
    const auto e = scalar_constant(graph, n.inputs[1]);
    if (!e || *e != 3.0f) return "";
    nodes.push_back(k);
    return n.inputs[0];
  }
  if (!is_op(n, "Mul")) return "";
  for (int i : {0, 1}) {
    const std::string &square = n.inputs[i], &x = n.inputs[1 - i];
    const int s = view.producer(square);
    if (s >= 0 && is_op(graph.nodes[s], "Mul") && graph.nodes[s].inputs[0] == x && graph.nodes[s].inputs[1] == x &&
        view.single_use(square)) {
      nodes.insert(nodes.end(), {s, k});
      return x;
    }
  }
  return "";
}

/// Matches the tanh-form GELU around the Tanh node `tanh_k`.
std::optional<GeluMatch> match_gelu_tanh(const ir::Graph& graph, const GraphView& view, const Rewrite& rw, int tanh_k) {
  const ir::Node& tanh = graph.nodes[tanh_k];
  GeluMatch m;
  m.kind = ir::StepKind::kGeluTanh;
  std::string inner;
  const int scale_k = view.single_use(tanh.inputs[0]) ? view.producer(tanh.inputs[0]) : -1;
  if (!is_mul_by(graph, scale_k, kSqrt2OverPi, &inner) || !view.single_use(inner)) return std::nullopt;
  const int add_k = view.producer(inner);
  if (add_k < 0 || !is_op(graph.nodes[add_k], "Add")) return std::nullopt;
  for (int i : {0, 1}) {
    std::string cube;
    const int cube_k = view.producer(graph.nodes[add_k].inputs[1 - i]);
    if (!view.single_use(graph.nodes[add_k].inputs[1 - i]) || !is_mul_by(graph, cube_k, kCubeFactor, &cube)) continue;
    std::vector<int> nodes;
    if (cube_input(graph, view, cube, nodes) != graph.nodes[add_k].inputs[i]) continue;
    m.x = graph.nodes[add_k].inputs[i];
    m.nodes = nodes;
    m.nodes.insert(m.nodes.end(), {cube_k, add_k, scale_k, tanh_k});
    break;
  }
  if (m.x.empty()) return std::nullopt;
  const int one_k = sole_reader(view, tanh.outputs[0]);
  std::string tanh_out;
  if (one_k < 0 || !is_op(graph.nodes[one_k], "Add")) return std::nullopt;
  const auto one = scalar_operand(graph, graph.nodes[one_k], &tanh_out);
  if (!one || *one != 1.0f) return std::nullopt;
  m.nodes.push_back(one_k);
  if (!match_product(graph, view, graph.nodes[one_k].outputs[0], m)) return std::nullopt;
  if (!rw.all_untouched(m.nodes)) return std::nullopt;
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
    if (!node.domain.empty() || (node.op_type != "Erf" && node.op_type != "Tanh") || !rw.untouched(k)) continue;
    const auto m = node.op_type == "Erf" ? match_gelu(graph, view, rw, k) : match_gelu_tanh(graph, view, rw, k);
    if (!m) continue;
    const int last = m->nodes.back();
    ir::Node chain;
    chain.name = graph.nodes[last].name + "/Gelu";
    chain.op_type = "ElementwiseChain";
    chain.domain = kEdgemmDomain;
    chain.inputs = {m->x};
    chain.outputs = {graph.nodes[last].outputs[0]};
    ir::Step gelu;
    gelu.kind = m->kind;
    ir::write_steps(chain, {gelu});
    rw.replace(graph, m->nodes, std::move(chain));
    ++fused;
  }
  if (fused == 0) return;
  remove_nodes(graph, rw.dead);
  use_edgemm_domain(model);
  report.patterns["Gelu"] += fused;  // either form
}

}  // namespace edgemm::passes
