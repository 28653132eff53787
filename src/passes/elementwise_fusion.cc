/// \file elementwise_fusion.cc
/// fuse_elementwise_chains: maximal chains of float32 elementwise nodes become one com.edgemm
/// ElementwiseChain node (src/kernels/cpu/elementwise_chain.cc), so that the chain reads and
/// writes memory once instead of once per node.
///
/// A chain v0 → n1 → n2 → ... follows one value (the chain value) through nodes that each map
/// to elementwise steps (src/ir/elementwise_steps.h); every intermediate value has a single use
/// and is not a graph output. The first node may broadcast (the kernel's output is the
/// broadcast of all its inputs); every later binary node's other operand must broadcast *into*
/// the chain value (known shapes: equal fixed extents or equal named symbols), so the value
/// never grows mid-chain. Scalar float32 constants become unary steps (linear, clip).

#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/elementwise_steps.h"
#include "passes/graph_view.h"
#include "passes/passes.h"

namespace edgemm::passes {
namespace {

using ir::Step;
using ir::StepKind;

/// Type and shape known for a value (initializer, graph input/output or inferred value_info).
struct KnownValue {
  DataType dtype = DataType::kUndefined;
  std::vector<Dim> shape;
  bool rank_known = false;
};

std::optional<KnownValue> known_value(const ir::Graph& graph, const std::string& name) {
  if (const Tensor* t = constant(graph, name)) {
    KnownValue v{t->dtype(), {}, true};
    for (int64_t d : t->shape()) v.shape.push_back(Dim{d, ""});
    return v;
  }
  const auto from = [](const ValueInfo& info) { return KnownValue{info.dtype, info.shape, info.rank_known}; };
  if (auto it = graph.value_infos.find(name); it != graph.value_infos.end()) return from(it->second);
  for (const auto* list : {&graph.inputs, &graph.outputs}) {
    for (const ValueInfo& info : *list) {
      if (info.name == name) return from(info);
    }
  }
  return std::nullopt;
}

bool is_float32(const ir::Graph& graph, const std::string& name) {
  const auto v = known_value(graph, name);
  return v && v->dtype == DataType::kFloat32;
}

/// True when `operand` numpy-broadcasts to exactly `value`'s shape (both shapes known; each
/// operand axis is 1 or the value's extent, fixed or the same named symbol).
bool broadcasts_into(const ir::Graph& graph, const std::string& operand, const std::string& value) {
  const auto o = known_value(graph, operand);
  const auto v = known_value(graph, value);
  if (!o || !v || !o->rank_known || !v->rank_known || o->shape.size() > v->shape.size()) return false;
  const size_t shift = v->shape.size() - o->shape.size();
  for (size_t i = 0; i < o->shape.size(); ++i) {
    const Dim& od = o->shape[i];
    const Dim& vd = v->shape[i + shift];
    const bool same = od.is_static() ? od.value == vd.value : !od.symbol.empty() && od.symbol == vd.symbol;
    if (!(od.value == 1 || same)) return false;
  }
  return true;
}

/// What one node contributes to a chain: its steps, whose operand fields index `operands`
/// (input names of the node).
struct Link {
  std::vector<Step> steps;
  std::vector<std::string> operands;
};

Link one_step(StepKind kind, float alpha = 0, float beta = 0) { return Link{{Step{kind, alpha, beta, -1}}, {}}; }

/// Clip bounds: inputs 1 and 2 (opset >= 11, absent = unbounded) or attributes min/max (Clip-6).
std::optional<Link> clip_link(const ir::Graph& graph, const ir::Node& node, int64_t opset) {
  if (opset < 11) {
    const auto lo = node.attr_float("min", -3.402823466e38f);
    const auto hi = node.attr_float("max", 3.402823466e38f);
    if (!lo || !hi) return std::nullopt;
    return one_step(StepKind::kClip, *lo, *hi);
  }
  float bounds[2] = {-INFINITY, INFINITY};
  for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
    if (node.inputs[i].empty()) continue;
    const auto c = scalar_constant(graph, node.inputs[i]);
    if (!c) return std::nullopt;
    bounds[i - 1] = *c;
  }
  return one_step(StepKind::kClip, bounds[0], bounds[1]);
}

/// Link of a one-input op (input 0 carries the value), or nullopt for other ops.
std::optional<Link> unary_link(const ir::Graph& graph, const ir::Node& node, int64_t opset) {
  static const std::unordered_map<std::string, StepKind> kPlain = {
      {"Relu", StepKind::kRelu}, {"Sigmoid", StepKind::kSigmoid}, {"HardSwish", StepKind::kHardSwish},
      {"Tanh", StepKind::kTanh}, {"Exp", StepKind::kExp},         {"Sqrt", StepKind::kSqrt},
      {"Abs", StepKind::kAbs},   {"Neg", StepKind::kNeg}};
  if (const auto it = kPlain.find(node.op_type); it != kPlain.end()) return one_step(it->second);
  if (node.op_type == "HardSigmoid") {
    const auto alpha = node.attr_float("alpha", 0.2f);
    const auto beta = node.attr_float("beta", 0.5f);
    if (!alpha || !beta) return std::nullopt;
    return one_step(StepKind::kHardSigmoid, *alpha, *beta);
  }
  if (node.op_type == "Clip") return clip_link(graph, node, opset);
  return std::nullopt;
}

/// A binary op with the scalar constant c as its other operand as a unary step, when one fits.
std::optional<Link> scalar_link(const std::string& op, bool value_first, float c) {
  if (op == "Add") return one_step(StepKind::kLinear, 1.f, c);
  if (op == "Sub") return value_first ? one_step(StepKind::kLinear, 1.f, -c) : one_step(StepKind::kLinear, -1.f, c);
  if (op == "Mul") return one_step(StepKind::kLinear, c, 0.f);
  if (op == "Div" && value_first && std::isfinite(c) && c != 0 && std::isnormal(1.f / c)) {
    return one_step(StepKind::kLinear, 1.f / c, 0.f);
  }
  if (op == "Max" && !std::isnan(c)) return one_step(StepKind::kClip, c, INFINITY);
  if (op == "Min" && !std::isnan(c)) return one_step(StepKind::kClip, -INFINITY, c);
  return std::nullopt;
}

/// Link of a two-input op when input `value_input` carries the chain value.
std::optional<Link> binary_link(const ir::Graph& graph, const ir::Node& node, int value_input) {
  static const std::unordered_map<std::string, std::pair<StepKind, StepKind>> kKinds = {
      {"Add", {StepKind::kAdd, StepKind::kAdd}}, {"Sub", {StepKind::kSub, StepKind::kRSub}},
      {"Mul", {StepKind::kMul, StepKind::kMul}}, {"Div", {StepKind::kDiv, StepKind::kRDiv}},
      {"Max", {StepKind::kMax, StepKind::kMax}}, {"Min", {StepKind::kMin, StepKind::kMin}},
      {"Pow", {StepKind::kPow, StepKind::kPow}}};
  const auto it = kKinds.find(node.op_type);
  if (it == kKinds.end() || node.inputs.size() != 2 || (node.op_type == "Pow" && value_input != 0)) {
    return std::nullopt;
  }
  const std::string& value = node.inputs[value_input];
  const std::string& operand = node.inputs[1 - value_input];
  if (!is_float32(graph, operand)) return std::nullopt;
  if (const auto c = scalar_constant(graph, operand); c && broadcasts_into(graph, operand, value)) {
    if (auto link = scalar_link(node.op_type, value_input == 0, *c)) return link;
  }
  const StepKind kind = value_input == 0 ? it->second.first : it->second.second;
  return Link{{Step{kind, 0, 0, 0}}, {operand}};
}

/// Link of an existing ElementwiseChain node (its input 0 carries the value).
std::optional<Link> chain_node_link(const ir::Graph& graph, const ir::Node& node) {
  auto steps = ir::read_steps(node);
  if (!steps || node.inputs.empty()) return std::nullopt;
  for (const std::string& in : node.inputs) {
    if (!is_float32(graph, in)) return std::nullopt;
  }
  return Link{std::move(*steps), node.inputs};
}

bool is_chain_node(const ir::Node& node) { return node.op_type == "ElementwiseChain" && node.domain == kEdgemmDomain; }

/// The link of `node` with input `value_input` carrying the chain value, or nullopt when the
/// node is no float32 elementwise op or that input cannot carry the value.
std::optional<Link> link_of(const ir::Model& model, const ir::Node& node, int value_input) {
  const ir::Graph& graph = model.graph;
  if (node.outputs.size() != 1 || value_input >= static_cast<int>(node.inputs.size()) ||
      !is_float32(graph, node.inputs[value_input])) {
    return std::nullopt;
  }
  if (is_chain_node(node)) return value_input == 0 ? chain_node_link(graph, node) : std::nullopt;
  if (!node.domain.empty() && node.domain != "ai.onnx") return std::nullopt;
  if (value_input == 0) {
    if (auto link = unary_link(graph, node, model.opset(""))) return link;
  }
  return binary_link(graph, node, value_input);
}

/// True when the link may continue a chain whose value is `value`: every operand broadcasts
/// into the value and none is the value itself (which exists only inside the fused node).
bool continues(const ir::Graph& graph, const Link& link, const std::string& value) {
  for (const Step& s : link.steps) {
    if (!s.binary()) continue;
    const std::string& operand = link.operands[s.operand];
    if (operand == value || !broadcasts_into(graph, operand, value)) return false;
  }
  return true;
}

/// One node of a chain and the input carrying the chain value.
struct Member {
  int node = -1;
  int value_input = 0;
};

/// The chain value input for a node starting a chain: the non-constant side of a binary op
/// whose other input is a scalar constant (so it becomes a unary step), input 0 otherwise.
int start_input(const ir::Model& model, const ir::Node& node) {
  if (node.inputs.size() == 2 && scalar_constant(model.graph, node.inputs[0]) &&
      !scalar_constant(model.graph, node.inputs[1]) && link_of(model, node, 1)) {
    return 1;
  }
  return 0;
}

/// Finds every chain: for each node, the predecessor whose output it continues (the first
/// input that qualifies), then walks forward from nodes without one.
class ChainFinder {
 public:
  ChainFinder(const ir::Model& model, const GraphView& view) : model_(model), view_(view) {}

  std::vector<std::vector<Member>> chains() const {
    const auto& nodes = model_.graph.nodes;
    std::vector<Member> next(nodes.size());
    std::vector<bool> has_prev(nodes.size(), false);
    for (int k = 0; k < static_cast<int>(nodes.size()); ++k) {
      const Member prev = predecessor(k);
      if (prev.node < 0) continue;
      next[prev.node] = Member{k, prev.value_input};
      has_prev[k] = true;
    }
    std::vector<std::vector<Member>> out;
    for (int k = 0; k < static_cast<int>(nodes.size()); ++k) {
      if (has_prev[k] || next[k].node < 0) continue;  // not a start, or a chain of one node
      std::vector<Member> chain = {Member{k, start_input(model_, nodes[k])}};
      while (next[chain.back().node].node >= 0) chain.push_back(next[chain.back().node]);
      out.push_back(std::move(chain));
    }
    return out;
  }

 private:
  /// The node whose output node k continues (with the input index carrying it), or node -1.
  Member predecessor(int k) const {
    const ir::Node& node = model_.graph.nodes[k];
    for (int i = 0; i < static_cast<int>(node.inputs.size()) && i < 2; ++i) {
      const std::string& value = node.inputs[i];
      const int p = view_.producer(value);
      if (p < 0 || !view_.single_use(value)) continue;
      const ir::Node& prev = model_.graph.nodes[p];
      if (!link_of(model_, prev, start_input(model_, prev))) continue;
      const auto link = link_of(model_, node, i);
      if (link && continues(model_.graph, *link, value)) return Member{p, i};
    }
    return Member{};
  }

  const ir::Model& model_;
  const GraphView& view_;
};

/// Index of `name` in the fused node's inputs, appending it when new.
int input_index(ir::Node& fused, const std::string& name) {
  for (size_t i = 0; i < fused.inputs.size(); ++i) {
    if (fused.inputs[i] == name) return static_cast<int>(i);
  }
  fused.inputs.push_back(name);
  return static_cast<int>(fused.inputs.size()) - 1;
}

/// The ElementwiseChain node replacing `chain` (named and writing like its last node).
ir::Node fuse(const ir::Model& model, const std::vector<Member>& chain) {
  const auto& nodes = model.graph.nodes;
  const ir::Node& first = nodes[chain.front().node];
  const ir::Node& last = nodes[chain.back().node];
  ir::Node fused;
  fused.name = last.name;
  fused.op_type = "ElementwiseChain";
  fused.domain = kEdgemmDomain;
  fused.inputs = {first.inputs[chain.front().value_input]};
  fused.outputs = last.outputs;
  std::vector<Step> steps;
  for (const Member& m : chain) {
    Link link = *link_of(model, nodes[m.node], m.value_input);
    for (Step s : link.steps) {
      if (s.binary()) s.operand = input_index(fused, link.operands[s.operand]);
      steps.push_back(s);
    }
  }
  ir::write_steps(fused, steps);
  return fused;
}

}  // namespace

std::optional<ir::Node> elementwise_chain_of(const ir::Model& model, int node) {
  const std::vector<Member> alone = {{node, start_input(model, model.graph.nodes[node])}};
  if (!link_of(model, model.graph.nodes[node], alone[0].value_input)) return std::nullopt;
  return fuse(model, alone);
}

void fuse_elementwise_chains(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  std::vector<std::vector<Member>> chains;
  {
    const GraphView view(graph);
    chains = ChainFinder(model, view).chains();
  }
  if (chains.empty()) return;
  std::vector<bool> dead(graph.nodes.size(), false);
  for (const auto& chain : chains) {
    ir::Node fused = fuse(model, chain);
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      dead[chain[i].node] = true;
      graph.value_infos.erase(graph.nodes[chain[i].node].outputs[0]);
    }
    graph.nodes[chain.back().node] = std::move(fused);
    report.patterns["elementwise chain"] += 1;
    report.patterns["elementwise chain (nodes fused)"] += static_cast<int>(chain.size());
  }
  remove_nodes(graph, dead);
  use_edgemm_domain(model);
}

}  // namespace edgemm::passes
