/// \file qdq.cc
/// Node selection and the QDQ rewrite of INT8 static quantization (see qdq.h).

#include "quant/qdq.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "convert/rewrite_context.h"
#include "kernels/cpu/quant_common.h"
#include "passes/graph_view.h"
#include "passes/passes.h"

namespace edgemm::quant {

std::vector<std::string> QuantPlan::activations() const {
  std::vector<std::string> names;
  for (const QuantTarget& t : targets) {
    if (std::find(names.begin(), names.end(), t.activation) == names.end()) names.push_back(t.activation);
  }
  return names;
}

namespace {

const Tensor* float_initializer(const ir::Graph& graph, const std::string& name) {
  const Tensor* t = passes::constant(graph, name);
  return t != nullptr && t->dtype() == DataType::kFloat32 ? t : nullptr;
}

// Why `node` cannot be quantized ("" when it can); fills the weight and its axis.
std::string check_node(const ir::Graph& graph, const ir::Node& node, const Int8Options& options, QuantTarget& t) {
  if (options.exclude_nodes.count(node.name) != 0) return "excluded by the user";
  const size_t weight_input = 1;
  if (node.inputs.size() <= weight_input || node.inputs[0].empty()) return "has no activation and weight inputs";
  if (passes::constant(graph, node.inputs[0]) != nullptr) return "its first input is a constant";
  const Tensor* w = float_initializer(graph, node.inputs[weight_input]);
  if (w == nullptr) {
    return node.op_type == "Conv" ? "its weight is not a float32 constant"
                                  : "its second input is not a float32 constant (activation × activation)";
  }
  t.activation = node.inputs[0];
  t.weight = node.inputs[weight_input];
  if (node.op_type == "Conv") {
    if (w->rank() < 3 || w->rank() > 5) return "weight of rank " + std::to_string(w->rank());
    const Expected<int64_t> group_attr = node.attr_int("group", 1);
    const int64_t group = group_attr ? *group_attr : 1;
    if (group > 1 && group == w->dim(0) && w->dim(1) == 1 && !options.quantize_depthwise) {
      return "depthwise (kept float: --quantize-depthwise quantizes it)";
    }
    t.weight_axis = 0;
    return "";
  }
  if (w->rank() != 2) return "weight of rank " + std::to_string(w->rank()) + " (2 needed)";
  if (node.op_type == "Gemm") {
    const Expected<int64_t> trans_b = node.attr_int("transB", 0);
    t.weight_axis = trans_b && *trans_b != 0 ? 0 : 1;
    return "";
  }
  t.weight_axis = 1;  // MatMul: B is [K, N], one scale per output column
  return "";
}

}  // namespace

QuantPlan plan_int8(const ir::Graph& graph, const Int8Options& options) {
  QuantPlan plan;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (!node.domain.empty() || options.op_types.count(node.op_type) == 0) continue;
    QuantTarget t;
    const std::string reason = check_node(graph, node, options, t);
    if (!reason.empty()) {
      plan.skipped.push_back({node.describe(), node.op_type, reason});
      continue;
    }
    t.index = i;
    t.node = node.describe();
    t.name = node.name;
    t.op_type = node.op_type;
    plan.targets.push_back(std::move(t));
  }
  return plan;
}

Expected<QuantizedWeight> quantize_weight(const Tensor& weight, int64_t axis, int qmax) {
  if (weight.dtype() != DataType::kFloat32) {
    return make_error(StatusCode::kInvalidArgument,
                      std::string("weights to quantize must be float32, got ") + dtype_name(weight.dtype()));
  }
  if (axis >= weight.rank()) {
    return make_error(StatusCode::kInvalidArgument,
                      "weight axis " + std::to_string(axis) + " is outside rank " + std::to_string(weight.rank()));
  }
  const int64_t channels = axis < 0 ? 1 : weight.dim(axis);
  int64_t inner = 1;  // elements after `axis`
  for (int64_t a = axis + 1; a < weight.rank() && axis >= 0; ++a) inner *= weight.dim(a);
  if (axis < 0) inner = weight.element_count();
  const int64_t outer = channels == 0 ? 0 : weight.element_count() / (channels * inner);
  const float* w = weight.data<float>();
  std::vector<float> amax(static_cast<size_t>(channels), 0.0f);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* row = w + (o * channels + c) * inner;
      for (int64_t k = 0; k < inner; ++k) amax[c] = std::max(amax[c], std::abs(row[k]));
    }
  }
  QuantizedWeight q;
  EDGEMM_ASSIGN_OR_RETURN(q.values, Tensor::create(DataType::kInt8, weight.shape()));
  EDGEMM_ASSIGN_OR_RETURN(q.scales, Tensor::create(DataType::kFloat32, axis < 0 ? Shape{} : Shape{channels}));
  float* scales = q.scales.data<float>();
  // Channels whose weights are all below float's normal range (PP-OCRv4 rec has SE convolutions
  // with 1e-39 weights) are stored as zeros with scale 1: a denormal scale would make the
  // kernels' x_scale · w_scale and bias / scale underflow or overflow.
  constexpr float kTiny = 1e-30f;
  for (int64_t c = 0; c < channels; ++c) {
    scales[c] = amax[c] < kTiny ? 1.0f : symmetric_int8({-amax[c], amax[c]}, qmax).scale;
  }
  int8_t* out = q.values.data<int8_t>();
  const kernels::quant::QRange range{-qmax, qmax};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        out[base + k] = static_cast<int8_t>(kernels::quant::quantize_value(w[base + k] / scales[c], 0, range));
      }
    }
  }
  return q;
}

namespace {

// Value names already used in the graph (inputs, outputs, initializers, node outputs).
std::unordered_set<std::string> used_names(const ir::Graph& graph) {
  std::unordered_set<std::string> names;
  for (const auto& v : graph.inputs) names.insert(v.name);
  for (const auto& v : graph.outputs) names.insert(v.name);
  for (const auto& [name, t] : graph.initializers) names.insert(name);
  for (const auto& n : graph.nodes) names.insert(n.outputs.begin(), n.outputs.end());
  return names;
}

class QdqWriter {
 public:
  QdqWriter(ir::Graph& graph, const Int8Options& options)
      : graph_(graph), options_(options), used_(used_names(graph)) {}

  // The dequantized name of activation `x`, adding its Q/DQ pair on first use.
  std::string activation(const std::string& x, Range range) {
    auto it = activations_.find(x);
    if (it != activations_.end()) return it->second;
    const QuantParams p = options_.symmetric_activations ? symmetric_int8(range) : asymmetric_uint8(range);
    Tensor zp;
    if (options_.symmetric_activations) {
      zp = Tensor::create(DataType::kInt8, {}).value();
    } else {
      zp = Tensor::create(DataType::kUInt8, {}).value();
      zp.data<uint8_t>()[0] = static_cast<uint8_t>(p.zero_point);
    }
    const std::string scale = add_constant(x + "_scale", Tensor::from_floats({}, {p.scale}));
    const std::string zero_point = add_constant(x + "_zero_point", std::move(zp));
    const std::string q = fresh(x + "_quantized"), dq = fresh(x + "_dequantized");
    append_node("QuantizeLinear", x + "_QuantizeLinear", {x, scale, zero_point}, q, -1);
    append_node("DequantizeLinear", x + "_DequantizeLinear", {q, scale, zero_point}, dq, -1);
    activations_[x] = dq;
    return dq;
  }

  // The dequantized name of weight `w` quantized along `axis`.
  Expected<std::string> weight(const std::string& w, int64_t axis) {
    auto it = weights_.find(w);
    if (it != weights_.end()) return it->second;
    const int qmax = options_.reduce_range ? 64 : 127;
    const int64_t scale_axis = options_.per_channel ? axis : -1;
    EDGEMM_ASSIGN_OR_RETURN(QuantizedWeight q, quantize_weight(graph_.initializers.at(w), scale_axis, qmax));
    EDGEMM_ASSIGN_OR_RETURN(Tensor zp, Tensor::create(DataType::kInt8, q.scales.shape()));
    const std::string values = add_constant(w + "_quantized", std::move(q.values));
    const std::string scale = add_constant(w + "_scale", std::move(q.scales));
    const std::string zero_point = add_constant(w + "_zero_point", std::move(zp));
    const std::string dq = fresh(w + "_dequantized");
    append_node("DequantizeLinear", w + "_DequantizeLinear", {values, scale, zero_point}, dq, scale_axis);
    weights_[w] = dq;
    return dq;
  }

  std::vector<ir::Node>& added() { return added_; }

 private:
  std::string fresh(const std::string& hint) {
    std::string name = hint;
    for (int i = 1; used_.count(name) != 0; ++i) name = hint + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  std::string add_constant(const std::string& hint, Tensor value) {
    const std::string name = fresh(hint);
    graph_.initializers[name] = std::move(value);
    return name;
  }

  void append_node(const char* op, const std::string& name, std::vector<std::string> inputs, const std::string& output,
                   int64_t axis) {
    ir::Node n;
    n.op_type = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    if (axis >= 0) n.attributes["axis"] = convert::int_attribute(axis);
    added_.push_back(std::move(n));
  }

  ir::Graph& graph_;
  const Int8Options& options_;
  std::unordered_set<std::string> used_;
  std::map<std::string, std::string> activations_, weights_;
  std::vector<ir::Node> added_;
};

}  // namespace

Status insert_qdq(ir::Model& model, const QuantPlan& plan, const std::map<std::string, Range>& ranges,
                  const Int8Options& options) {
  if (model.opset("") < 13) {
    return make_error(
        StatusCode::kInvalidArgument,
        "QDQ with per-axis scales needs ai.onnx opset 13 or later; the model has " + std::to_string(model.opset("")));
  }
  ir::Graph& graph = model.graph;
  QdqWriter writer(graph, options);
  for (const QuantTarget& t : plan.targets) {
    auto range = ranges.find(t.activation);
    if (range == ranges.end()) {
      return make_error(StatusCode::kInvalidArgument,
                        "no calibrated range for '" + t.activation + "', input of " + t.node);
    }
    const std::string x = writer.activation(t.activation, range->second);
    EDGEMM_ASSIGN_OR_RETURN(const std::string w, writer.weight(t.weight, t.weight_axis));
    ir::Node& node = graph.nodes[t.index];
    node.inputs[0] = x;
    node.inputs[1] = w;
  }
  for (ir::Node& n : writer.added()) graph.nodes.push_back(std::move(n));
  passes::sort_topologically(graph);
  passes::PassReport report;
  passes::eliminate_dead_nodes(graph, report);
  return Status::ok();
}

}  // namespace edgemm::quant
