#include "convert/simplify_extra.h"

#include <cfloat>
#include <cmath>

#include "convert/rewrite_context.h"
#include "passes/activation_patterns.h"
#include "passes/graph_view.h"
#include "passes/pattern_util.h"

namespace edgemm::convert {

namespace {

constexpr int64_t kMaxExpandedElements = 65536;

void hardswish_to_hard_sigmoid(ir::Graph& graph, std::map<std::string, int>& counts) {
  passes::GraphView view(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<ir::Node> added;
  RewriteContext names(graph, 0, 0);
  for (const ir::Node& node : graph.nodes) {
    auto m = passes::match_hardswish_pattern(graph, view, node);
    if (!m) continue;
    bool taken = false;
    for (int k : m->nodes) taken = taken || dead[k];
    if (taken) continue;
    for (int k : m->nodes) dead[k] = true;
    const std::string base = graph.nodes[m->nodes.back()].name;
    const std::string gate = names.fresh_name(base + "/HardSigmoid_output");
    ir::Node hard_sigmoid{names.fresh_name(base + "/HardSigmoid"), "HardSigmoid", "", {m->input}, {gate}, {}};
    hard_sigmoid.attributes["alpha"] = float_attribute(1.f / 6.f);
    hard_sigmoid.attributes["beta"] = float_attribute(0.5f);
    added.push_back(std::move(hard_sigmoid));
    added.push_back(ir::Node{names.fresh_name(base + "/Mul"), "Mul", "", {m->input, gate}, {m->output}, {}});
    ++counts["HardSwish → x·HardSigmoid(x)"];
  }
  if (added.empty()) return;
  passes::remove_nodes(graph, dead);
  for (ir::Node& n : added) graph.nodes.push_back(std::move(n));
  passes::sort_topologically(graph);
}

constexpr int64_t kClipBoundsAsInputsOpset = 11;

/// Appends the nodes computing Clip(x, lo, hi) from Relu/HardSigmoid/Add/Sub/Mul to `out`, the
/// last one writing `node`'s output. `lo` / `hi` at ∓FLT_MAX mean "no bound".
void emit_clip_replacement(ir::Graph& graph, const ir::Node& node, float lo, float hi, RewriteContext& names,
                           std::vector<ir::Node>& out) {
  const std::string& x = node.inputs[0];
  const std::string& y = node.outputs[0];
  auto value = [&](const char* what) { return names.fresh_name(node.name + "/" + what + "_output"); };
  auto scalar = [&](const char* what, float v) {
    return passes::add_initializer(graph, node.name + "/" + what, Tensor::from_floats({}, {v}));
  };
  auto add_node = [&](const char* op, std::vector<std::string> inputs, std::string output) -> ir::Node& {
    out.push_back(ir::Node{names.fresh_name(node.name + "/" + op), op, "", std::move(inputs), {std::move(output)}, {}});
    return out.back();
  };
  const bool has_lo = lo > -FLT_MAX, has_hi = hi < FLT_MAX;
  if (has_lo && has_hi) {  // lo + (hi - lo) · HardSigmoid(x; 1 / (hi - lo), -lo / (hi - lo))
    const std::string gate = value("HardSigmoid"), scaled = value("Mul");
    ir::Node& hs = add_node("HardSigmoid", {x}, gate);
    hs.attributes["alpha"] = float_attribute(1.f / (hi - lo));
    hs.attributes["beta"] = float_attribute(-lo / (hi - lo));
    add_node("Mul", {gate, scalar("range", hi - lo)}, lo == 0.f ? y : scaled);
    if (lo != 0.f) add_node("Add", {scaled, scalar("lo", lo)}, y);
  } else if (has_lo) {  // Relu(x - lo) + lo
    const std::string shifted = value("Sub"), rectified = value("Relu");
    add_node("Sub", {x, scalar("lo", lo)}, shifted);
    add_node("Relu", {shifted}, rectified);
    add_node("Add", {rectified, scalar("lo", lo)}, y);
  } else if (has_hi) {  // hi - Relu(hi - x)
    const std::string gap = value("Sub"), rectified = value("Relu");
    add_node("Sub", {scalar("hi", hi), x}, gap);
    add_node("Relu", {gap}, rectified);
    add_node("Sub", {scalar("hi", hi), rectified}, y);
  } else {
    add_node("Identity", {x}, y);
  }
}

void rewrite_constant_clips(ir::Model& model, std::map<std::string, int>& counts) {
  ir::Graph& graph = model.graph;
  RewriteContext names(graph, 0, 0);
  std::vector<ir::Node> out;
  for (ir::Node& node : graph.nodes) {
    auto bounds = node.domain.empty() && node.op_type == "Clip" ? passes::clip_bounds(graph, node) : std::nullopt;
    if (bounds && bounds->first == 0.f && bounds->second >= FLT_MAX) {
      node.op_type = "Relu";
      node.inputs.resize(1);
      node.attributes.clear();
      ++counts["Clip(0, ∞) → Relu"];
    } else if (bounds && model.opset("") >= kClipBoundsAsInputsOpset && node.inputs.size() > 1) {
      emit_clip_replacement(graph, node, bounds->first, bounds->second, names, out);
      ++counts["Clip with constant bounds → HardSigmoid/Relu form"];
      continue;
    }
    out.push_back(std::move(node));
  }
  graph.nodes = std::move(out);
}

/// `value` broadcast to `shape` (numpy rules; `value`'s shape must broadcast into `shape`).
Tensor broadcast_to(const Tensor& value, const Shape& shape) {
  Tensor out = std::move(Tensor::create(DataType::kFloat32, shape)).value();
  const size_t rank = shape.size();
  const size_t offset = rank - value.shape().size();
  std::vector<int64_t> strides(rank, 0);
  for (int64_t axis = static_cast<int64_t>(rank) - 1, stride = 1; axis >= static_cast<int64_t>(offset); --axis) {
    const int64_t extent = value.shape()[static_cast<size_t>(axis) - offset];
    strides[static_cast<size_t>(axis)] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    int64_t source = 0;
    for (size_t a = 0; a < rank; ++a) source += index[a] * strides[a];
    out.data<float>()[i] = value.data<float>()[source];
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

/// True when the constant (left-padded to `rank`) has an extent above 1 on an axis other than 1.
bool varies_off_axis_one(const Shape& constant, size_t rank) {
  const size_t offset = rank - constant.size();
  for (size_t a = 0; a < constant.size(); ++a) {
    if (constant[a] > 1 && a + offset != 1) return true;
  }
  return false;
}

/// The static shape `constant` broadcasts into, when it is exactly `other`'s.
bool broadcasts_into(const Shape& constant, const Shape& other) {
  if (constant.size() > other.size() || constant == other) return false;
  const size_t offset = other.size() - constant.size();
  for (size_t a = 0; a < constant.size(); ++a) {
    if (constant[a] != 1 && constant[a] != other[a + offset]) return false;
  }
  return true;
}

void expand_broadcast_constants(ir::Graph& graph, std::map<std::string, int>& counts) {
  for (ir::Node& node : graph.nodes) {
    if (!node.domain.empty() || (node.op_type != "Mul" && node.op_type != "Div") || node.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const Tensor* c = passes::constant(graph, node.inputs[side]);
      auto other = passes::static_shape(graph, node.inputs[1 - side]);
      if (c == nullptr || !other || c->dtype() != DataType::kFloat32 || c->element_count() <= 1) continue;
      if (!broadcasts_into(c->shape(), *other) || !varies_off_axis_one(c->shape(), other->size())) continue;
      int64_t elements = 1;
      for (int64_t d : *other) elements *= d;
      if (elements > kMaxExpandedElements || passes::constant(graph, node.inputs[1 - side]) != nullptr) continue;
      node.inputs[side] = passes::add_initializer(graph, node.inputs[side] + "_expanded", broadcast_to(*c, *other));
      ++counts["Mul/Div constant expanded"];
    }
  }
}

/// Div(MatMul(a, b), c) / Mul(MatMul(a, b), c) with a scalar constant c and computed a and b
/// become MatMul(Div(a, c), b) / MatMul(Mul(a, c), b): the scale moves onto the first operand.
void scale_before_matmul(ir::Graph& graph, std::map<std::string, int>& counts) {
  passes::GraphView view(graph);
  RewriteContext names(graph, 0, 0);
  bool changed = false;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    ir::Node& scale = graph.nodes[k];
    if (!scale.domain.empty() || (scale.op_type != "Mul" && scale.op_type != "Div")) continue;
    std::string product;
    if (!passes::scalar_operand(graph, scale, &product)) continue;
    if (scale.op_type == "Div" && product != scale.inputs[0]) continue;
    const int m = passes::producer_of(view, graph, product, "MatMul");
    if (m < 0 || !passes::only_read_by(view, product, {static_cast<int>(k)})) continue;
    ir::Node& matmul = graph.nodes[static_cast<size_t>(m)];
    if (passes::constant(graph, matmul.inputs[0]) != nullptr || passes::constant(graph, matmul.inputs[1]) != nullptr) {
      continue;
    }
    const std::string scaled = names.fresh_name(scale.name + "_output");
    for (std::string& input : scale.inputs) {
      if (input == product) input = matmul.inputs[0];
    }
    matmul.inputs[0] = scaled;
    matmul.outputs[0] = scale.outputs[0];
    scale.outputs[0] = scaled;
    graph.value_infos.erase(product);
    ++counts["scalar Mul/Div moved before MatMul"];
    changed = true;
  }
  if (changed) passes::sort_topologically(graph);
}

}  // namespace

void simplify_extra(ir::Model& model, std::map<std::string, int>& counts) {
  hardswish_to_hard_sigmoid(model.graph, counts);
  rewrite_constant_clips(model, counts);
  expand_broadcast_constants(model.graph, counts);
  scale_before_matmul(model.graph, counts);
}

}  // namespace edgemm::convert
