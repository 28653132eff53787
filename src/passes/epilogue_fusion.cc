/// \file epilogue_fusion.cc
/// Fuses the elementwise ops that follow a Conv / ConvTranspose into its epilogue: the node
/// becomes com.edgemm FusedConv / FusedConvTranspose (inputs X, W, B or "", then the operands
/// of binary steps) carrying ir::Step attributes, which the kernel runs as oneDNN post-ops, so
/// the output is written once instead of once per op. A com.edgemm FusedMatMul (MatMul + bias)
/// takes the unary ops that follow it the same way (e.g. the Swish of a transformer MLP).

#include <cfloat>
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

/// The epilogue under construction for one convolution.
struct Epilogue {
  int conv = 0;                     // node index
  std::vector<std::string> inputs;  // X, W, B ("" if none), operands
  std::vector<Step> steps;
  std::vector<Dim> out_shape;  // shape of the convolution's output
  int64_t channels = 0;        // output channels (axis 1), -1 when unknown
  bool unary_only = false;     // FusedMatMul: no operands, only unary steps
};

int add_operand(Epilogue& e, const std::string& name) {
  e.inputs.push_back(name);
  return static_cast<int>(e.inputs.size()) - 1;
}

/// True when a tensor of shape `s` can be a binary post-op operand: the output's own shape,
/// or ones everywhere except the channel axis (per channel).
bool operand_fits(const std::vector<Dim>& s, const Epilogue& e) {
  if (same_shape(s, e.out_shape)) return true;
  if (s.size() > e.out_shape.size() || e.out_shape.size() < 2) return false;
  const size_t offset = e.out_shape.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    const bool one = s[i].is_static() && s[i].value == 1;
    const bool channel = offset + i == 1 && s[i].is_static() && s[i].value == e.channels;
    if (!one && !channel) return false;
  }
  return true;
}

/// Steps for a unary activation node, or false when it is not one the epilogue takes.
bool unary_steps(const ir::Graph& graph, const ir::Node& n, std::vector<Step>& out) {
  const std::string& op = n.op_type;
  if (!n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1) return false;
  if (op == "Relu")
    out.push_back({StepKind::kRelu});
  else if (op == "Sigmoid")
    out.push_back({StepKind::kSigmoid});
  else if (op == "Tanh")
    out.push_back({StepKind::kTanh});
  else if (op == "HardSwish")
    out.push_back({StepKind::kHardSwish});
  else if (op == "HardSigmoid") {
    auto a = n.attr_float("alpha", 0.2f);
    auto b = n.attr_float("beta", 0.5f);
    if (!a || !b) return false;
    out.push_back({StepKind::kHardSigmoid, *a, *b});
  } else if (op == "Clip") {
    auto bounds = clip_bounds(graph, n);
    if (!bounds) return false;
    out.push_back({StepKind::kClip, bounds->first, bounds->second});
  } else {
    return false;
  }
  return true;
}

/// Appends the steps of `n` (which reads `value`, the epilogue's current output) to `e`, or
/// returns false when `n` cannot join the epilogue.
bool absorb(const ir::Graph& graph, const GraphView& view, const ir::Node& n, const std::string& value, Epilogue& e) {
  std::vector<Step> steps;
  if (unary_steps(graph, n, steps)) {
    if (n.inputs[0] != value) return false;
    e.steps.insert(e.steps.end(), steps.begin(), steps.end());
    return true;
  }
  if (n.domain == ir::kEdgemmDomain && n.op_type == "ElementwiseChain") {
    auto chain = ir::read_steps(n);
    if (!chain || n.inputs.empty() || n.inputs[0] != value) return false;
    if (e.unary_only && n.inputs.size() > 1) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      auto s = value_shape(graph, n.inputs[i]);
      if (n.inputs[i] == value || !s || !operand_fits(*s, e) || depends_on_node(graph, view, n.inputs[i], e.conv)) {
        return false;
      }
    }
    const int base = static_cast<int>(e.inputs.size()) - 1;  // chain input i → epilogue input base + i
    for (size_t i = 1; i < n.inputs.size(); ++i) add_operand(e, n.inputs[i]);
    for (Step s : *chain) {
      if (s.binary()) s.operand += base;
      e.steps.push_back(s);
    }
    return true;
  }
  const std::string& op = n.op_type;
  const bool arithmetic = op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
  bool first = false;
  auto other = n.domain.empty() && arithmetic ? other_operand(n, value, &first) : std::nullopt;
  if (!other) return false;
  if (auto c = scalar_constant(graph, *other)) {
    if (op == "Add")
      e.steps.push_back({StepKind::kLinear, 1.f, *c});
    else if (op == "Mul")
      e.steps.push_back({StepKind::kLinear, *c, 0.f});
    else if (op == "Sub")
      e.steps.push_back({StepKind::kLinear, first ? 1.f : -1.f, first ? -*c : *c});
    else if (first)
      e.steps.push_back({StepKind::kLinear, 1.f / *c, 0.f});
    else
      return false;  // c / v has no post-op
    return true;
  }
  auto s = value_shape(graph, *other);
  if (e.unary_only || !s || !operand_fits(*s, e) || depends_on_node(graph, view, *other, e.conv)) return false;
  StepKind kind;
  if (op == "Add")
    kind = StepKind::kAdd;
  else if (op == "Mul")
    kind = StepKind::kMul;
  else if (op == "Sub")
    kind = first ? StepKind::kSub : StepKind::kRSub;
  else if (first)
    kind = StepKind::kDiv;
  else
    return false;
  e.steps.push_back({kind, 0.f, 0.f, add_operand(e, *other)});
  return true;
}

/// Conv, ConvTranspose, or a com.edgemm Int8Conv without an epilogue yet.
bool is_plain_conv(const ir::Node& n) {
  const bool onnx = n.domain.empty() && (n.op_type == "Conv" || n.op_type == "ConvTranspose");
  const bool int8 = n.domain == ir::kEdgemmDomain && n.op_type == "Int8Conv" && !n.has_attr("steps");
  return (onnx || int8) && n.outputs.size() == 1 && n.inputs.size() >= 2;
}

bool is_fused_matmul(const ir::Node& n) {
  return n.domain == ir::kEdgemmDomain && n.op_type == "FusedMatMul" && n.outputs.size() == 1;
}

/// Output channels of a convolution with constant weights, or -1.
int64_t output_channels(const ir::Graph& graph, const ir::Node& conv) {
  const Tensor* w = constant(graph, conv.inputs[1]);
  if (w == nullptr || w->rank() < 3) return -1;
  if (conv.op_type == "Conv" || conv.op_type == "Int8Conv") return w->shape()[0];
  auto group = conv.attr_int("group", 1);
  return group ? w->shape()[1] * *group : -1;
}

}  // namespace

void fuse_epilogues(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  GraphView view(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  bool fused_any = false;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    ir::Node& producer = graph.nodes[k];
    const bool matmul = is_fused_matmul(producer);
    if (dead[k] || !(is_plain_conv(producer) || matmul)) continue;
    auto shape = value_shape(graph, producer.outputs[0]);
    if (!shape && !matmul) continue;
    Epilogue e{k, producer.inputs, {}, shape.value_or(std::vector<Dim>{}), -1, matmul};
    if (matmul) {
      auto existing = ir::read_steps(producer);
      if (!existing) continue;
      e.steps = *existing;
    } else {
      e.channels = output_channels(graph, producer);
      e.inputs.resize(3);
    }
    std::string value = producer.outputs[0];
    std::vector<int> absorbed;
    while (view.single_use(value)) {
      const int next = view.consumers(value)[0];
      if (dead[next] || !absorb(graph, view, graph.nodes[next], value, e)) break;
      absorbed.push_back(next);
      value = graph.nodes[next].outputs[0];
    }
    if (absorbed.empty()) continue;
    for (int n : absorbed) dead[n] = true;
    ++report.patterns[producer.op_type + " epilogue"];
    report.patterns["epilogue ops absorbed"] += static_cast<int>(absorbed.size());
    if (!matmul) {
      if (producer.domain.empty()) producer.op_type = producer.op_type == "Conv" ? "FusedConv" : "FusedConvTranspose";
      producer.domain = ir::kEdgemmDomain;
      producer.inputs = e.inputs;
    }
    producer.outputs[0] = value;
    ir::write_steps(producer, e.steps);
    fused_any = true;
  }
  remove_nodes(graph, dead);
  if (!fused_any) return;
  sort_topologically(graph);  // operands may be produced after the Conv's old position
  use_edgemm_domain(model);
}

}  // namespace edgemm::passes
