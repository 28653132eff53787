#include "ir/flops.h"

#include <cstddef>

namespace edgemm::ir {

namespace {

/// Static shape of a value (input, initializer or inferred), or std::nullopt.
std::optional<Shape> static_shape(const Graph& g, const std::string& name) {
  auto init = g.initializers.find(name);
  if (init != g.initializers.end()) return init->second.shape();
  const ValueInfo* info = nullptr;
  auto it = g.value_infos.find(name);
  if (it != g.value_infos.end()) info = &it->second;
  for (const auto& v : g.inputs) {
    if (v.name == name) info = &v;
  }
  for (const auto& v : g.outputs) {
    if (v.name == name && v.rank_known) info = &v;
  }
  if (info == nullptr || !info->rank_known) return std::nullopt;
  Shape out;
  for (const auto& d : info->shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

NodeShapes static_shapes(const Graph& g, const std::vector<std::string>& names) {
  NodeShapes shapes;
  for (const auto& name : names) shapes.push_back(name.empty() ? std::nullopt : static_shape(g, name));
  return shapes;
}

int64_t product(const Shape& s, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= s[i];
  return p;
}

/// The shape at `i`, or null when absent or unknown.
const Shape* at(const NodeShapes& shapes, size_t i) { return i < shapes.size() && shapes[i] ? &*shapes[i] : nullptr; }

}  // namespace

std::optional<int64_t> node_flops(const Node& node, const NodeShapes& inputs, const NodeShapes& outputs) {
  const Shape* out = at(outputs, 0);
  if (out == nullptr) return std::nullopt;
  const std::string& op = node.op_type;
  const Shape* a = at(inputs, 0);
  const Shape* w = at(inputs, 1);
  // com.edgemm FusedConv(Transpose), Int8Conv: the convolution plus one operation per epilogue step.
  const bool fused =
      node.domain == kEdgemmDomain && (op == "FusedConv" || op == "FusedConvTranspose" || op == "Int8Conv");
  const int64_t epilogue = fused && node.has_attr("steps")
                               ? static_cast<int64_t>(node.attributes.at("steps").strings.size()) * product(*out)
                               : 0;
  if ((op == "Conv" || op == "ConvInteger" || (fused && (op == "FusedConv" || op == "Int8Conv"))) && w != nullptr &&
      w->size() >= 3) {
    return 2 * product(*out) * product(*w, 1) + epilogue;
  }
  // QLinearConv: W is input 3; plus one requantization per output element.
  const Shape* qw = at(inputs, 3);
  if (op == "QLinearConv" && qw != nullptr && qw->size() >= 3)
    return 2 * product(*out) * product(*qw, 1) + product(*out);
  // ConvTranspose: each input pixel spreads over M/group × kernel outputs.
  if ((op == "ConvTranspose" || (fused && op == "FusedConvTranspose")) && a != nullptr && w != nullptr &&
      w->size() >= 3) {
    return 2 * product(*a) * product(*w, 1) + epilogue;
  }
  if ((op == "MatMul" || op == "MatMulInteger") && a != nullptr && !a->empty()) return 2 * product(*out) * a->back();
  // QLinearMatMul: MatMul plus one requantization per output element.
  if (op == "QLinearMatMul" && a != nullptr && !a->empty()) return 2 * product(*out) * a->back() + product(*out);
  // com.edgemm FusedMatMul: MatMul plus one add per output element for the bias.
  if (op == "FusedMatMul" && node.domain == kEdgemmDomain && a != nullptr && !a->empty())
    return 2 * product(*out) * a->back() + product(*out);
  // com.edgemm Attention: Q·Kᵀ and P·V (2 · S · T · D each per leading index), the mask add and
  // the softmax's exponential and division counted as 3 per score. Kt is input 1 ([..., D, T]).
  if (op == "Attention" && node.domain == kEdgemmDomain && a != nullptr && a->size() >= 2 && w != nullptr &&
      !w->empty()) {
    const int64_t t = w->back(), scores = product(*out) / a->back() * t;
    return 4 * scores * a->back() + 3 * scores;
  }
  // com.edgemm Int8MatMul: MatMul plus the bias add when it has one.
  if (op == "Int8MatMul" && node.domain == kEdgemmDomain && a != nullptr && !a->empty()) {
    const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
    return 2 * product(*out) * a->back() + (bias ? product(*out) : 0);
  }
  // com.microsoft MatMulNBits: A [..., K] times the dequantized weight [N, K] (4- or 8-bit codes
  // counted like float ones), plus the bias add when it has one (input 5).
  if (op == "MatMulNBits" && node.domain == "com.microsoft" && a != nullptr && !a->empty()) {
    const bool bias = node.inputs.size() > 5 && !node.inputs[5].empty();
    return 2 * product(*out) * a->back() + (bias ? product(*out) : 0);
  }
  if (op == "Gemm" && a != nullptr && a->size() == 2) {
    const Expected<int64_t> trans_a = node.attr_int("transA", 0);
    const int64_t k = (trans_a.has_value() && *trans_a) ? (*a)[0] : (*a)[1];
    return 2 * product(*out) * k;
  }
  return product(*out);
}

FlopsEstimate estimate_flops(const Graph& graph) {
  FlopsEstimate est;
  for (const auto& node : graph.nodes) {
    const std::optional<int64_t> flops =
        node_flops(node, static_shapes(graph, node.inputs), static_shapes(graph, node.outputs));
    if (!flops) {
      ++est.unknown_nodes;
      continue;
    }
    est.total += *flops;
    est.by_op[node.op_type] += *flops;
  }
  return est;
}

}  // namespace edgemm::ir
