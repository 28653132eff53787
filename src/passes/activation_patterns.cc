/// \file activation_patterns.cc
/// Recognizes activations that exporters write as several elementwise ops and replaces each by
/// a one-step com.edgemm ElementwiseChain (which the Conv epilogue and chain fusion absorb):
/// - HardSwish (ONNX HardSwish-14, x·max(0, min(1, x/6 + 1/2))) as Paddle2ONNX and PyTorch
///   exporters write it before opset 14: x·Clip(x + 3, 0, 6) / 6, with the division by 6 (or
///   multiplication by 1/6) before or after the product, or x·HardSigmoid(x; 1/6, 1/2);
/// - Swish / SiLU (x·sigmoid(β·x)) as Mul(x, Sigmoid(x)) or Mul(x, Sigmoid(Mul(x, β))).

#include "passes/activation_patterns.h"

#include <cmath>
#include <optional>
#include <vector>

#include "ir/elementwise_steps.h"
#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

using ir::Step;
using ir::StepKind;

bool close_to(float a, float b) { return std::fabs(a - b) <= 1e-6f * std::max(1.f, std::fabs(b)); }

/// The node reading `value` when it is its only reader (and `value` is not a graph output).
const ir::Node* only_reader(const ir::Graph& graph, const GraphView& view, const std::string& value) {
  return view.single_use(value) ? &graph.nodes[view.consumers(value)[0]] : nullptr;
}

bool is_op_at(const ir::Node* n, const char* op) { return n != nullptr && n->domain.empty() && n->op_type == op; }

/// True when `n` multiplies its input by `factor` (Mul by factor or Div by 1/factor).
bool scales_by(const ir::Graph& graph, const ir::Node* n, const std::string& input, float factor) {
  bool first = false;
  if (is_op_at(n, "Mul")) {
    auto other = other_operand(*n, input, &first);
    auto c = other ? scalar_constant(graph, *other) : std::nullopt;
    return c && close_to(*c, factor);
  }
  if (is_op_at(n, "Div")) {
    auto other = other_operand(*n, input, &first);
    auto c = other ? scalar_constant(graph, *other) : std::nullopt;
    return first && c && close_to(1.f / *c, factor);
  }
  return false;
}

/// A matched pattern: the nodes it replaces, its input x and final output, and its step.
struct ActivationMatch {
  std::vector<int> nodes;
  std::string input;
  std::string output;
  Step step;
};

int index_of(const ir::Graph& graph, const ir::Node* n) { return static_cast<int>(n - graph.nodes.data()); }

/// The HardSwish pattern (activation_patterns.h) as a one-step chain.
std::optional<ActivationMatch> match_hardswish(const ir::Graph& graph, const GraphView& view, const ir::Node& add) {
  auto m = match_hardswish_pattern(graph, view, add);
  if (!m) return std::nullopt;
  return ActivationMatch{m->nodes, m->input, m->output, {StepKind::kHardSwish}};
}

/// x·Sigmoid(x) or x·Sigmoid(β·x) ending at `mul`; x·HardSigmoid(x; 1/6, 1/2) as HardSwish.
std::optional<ActivationMatch> match_gated(const ir::Graph& graph, const GraphView& view, const ir::Node& mul) {
  if (!is_op_at(&mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const std::string& x = mul.inputs[side];
    const std::string& gate = mul.inputs[1 - side];
    const int g = view.producer(gate);
    if (g < 0 || !view.single_use(gate) || x == gate) continue;
    const ir::Node& gn = graph.nodes[g];
    if (is_op_at(&gn, "HardSigmoid") && gn.inputs[0] == x) {
      auto a = gn.attr_float("alpha", 0.2f);
      auto b = gn.attr_float("beta", 0.5f);
      if (a && b && close_to(*a, 1.f / 6.f) && close_to(*b, 0.5f)) {
        return ActivationMatch{{g, index_of(graph, &mul)}, x, mul.outputs[0], {StepKind::kHardSwish}};
      }
    }
    if (!is_op_at(&gn, "Sigmoid")) continue;
    if (gn.inputs[0] == x)
      return ActivationMatch{{g, index_of(graph, &mul)}, x, mul.outputs[0], {StepKind::kSwish, 1.f}};
    const int s = view.producer(gn.inputs[0]);
    if (s < 0 || !view.single_use(gn.inputs[0])) continue;
    bool first = false;
    const ir::Node& scale = graph.nodes[s];
    auto other = is_op_at(&scale, "Mul") ? other_operand(scale, x, &first) : std::nullopt;
    auto beta = other ? scalar_constant(graph, *other) : std::nullopt;
    if (beta) return ActivationMatch{{s, g, index_of(graph, &mul)}, x, mul.outputs[0], {StepKind::kSwish, *beta}};
  }
  return std::nullopt;
}

}  // namespace

std::optional<HardSwishMatch> match_hardswish_pattern(const ir::Graph& graph, const GraphView& view,
                                                      const ir::Node& add) {
  if (!is_op_at(&add, "Add") || add.inputs.size() != 2) return std::nullopt;
  const int x_index = scalar_constant(graph, add.inputs[1]) ? 0 : 1;
  const std::string& x = add.inputs[x_index];
  auto three = scalar_constant(graph, add.inputs[1 - x_index]);
  if (!three || !close_to(*three, 3.f)) return std::nullopt;
  const ir::Node* clip = only_reader(graph, view, add.outputs[0]);
  auto bounds = is_op_at(clip, "Clip") ? clip_bounds(graph, *clip) : std::nullopt;
  if (!bounds || bounds->first != 0.f || bounds->second != 6.f) return std::nullopt;
  HardSwishMatch m{{index_of(graph, &add), index_of(graph, clip)}, x, ""};
  // Either (x·clip)/6 or x·(clip/6).
  const ir::Node* after = only_reader(graph, view, clip->outputs[0]);
  bool first = false;
  if (is_op_at(after, "Mul") && other_operand(*after, clip->outputs[0], &first) == x) {
    const ir::Node* scale = only_reader(graph, view, after->outputs[0]);
    if (!scales_by(graph, scale, after->outputs[0], 1.f / 6.f)) return std::nullopt;
    m.nodes.push_back(index_of(graph, after));
    m.nodes.push_back(index_of(graph, scale));
    m.output = scale->outputs[0];
    return m;
  }
  if (scales_by(graph, after, clip->outputs[0], 1.f / 6.f)) {
    const ir::Node* mul = only_reader(graph, view, after->outputs[0]);
    if (!is_op_at(mul, "Mul") || other_operand(*mul, after->outputs[0], &first) != x) return std::nullopt;
    m.nodes.push_back(index_of(graph, after));
    m.nodes.push_back(index_of(graph, mul));
    m.output = mul->outputs[0];
    return m;
  }
  return std::nullopt;
}

void recognize_activations(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  GraphView view(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<ir::Node> added;
  for (const ir::Node& node : graph.nodes) {
    std::optional<ActivationMatch> m = match_hardswish(graph, view, node);
    if (!m) m = match_gated(graph, view, node);
    if (!m) continue;
    bool taken = false;
    for (int k : m->nodes) taken = taken || dead[k];
    if (taken) continue;
    for (int k : m->nodes) dead[k] = true;
    ir::Node chain;
    chain.name = graph.nodes[m->nodes.back()].name;
    chain.op_type = "ElementwiseChain";
    chain.domain = ir::kEdgemmDomain;
    chain.inputs = {m->input};
    chain.outputs = {m->output};
    ir::write_steps(chain, {m->step});
    added.push_back(std::move(chain));
    ++report.patterns[m->step.kind == StepKind::kHardSwish ? "HardSwish" : "Swish"];
  }
  remove_nodes(graph, dead);
  if (added.empty()) return;
  for (auto& n : added) graph.nodes.push_back(std::move(n));
  sort_topologically(graph);
  use_edgemm_domain(model);
}

}  // namespace edgemm::passes
