#include "ir/flops.h"

namespace edgemm::ir {

namespace {

/// Static shape of a value (input, initializer or inferred), or false.
bool shape_of(const Graph& g, const std::string& name, Shape& out) {
  auto init = g.initializers.find(name);
  if (init != g.initializers.end()) {
    out = init->second.shape();
    return true;
  }
  const ValueInfo* info = nullptr;
  auto it = g.value_infos.find(name);
  if (it != g.value_infos.end()) info = &it->second;
  for (const auto& v : g.inputs) if (v.name == name) info = &v;
  for (const auto& v : g.outputs) if (v.name == name && v.rank_known) info = &v;
  if (info == nullptr || !info->rank_known) return false;
  out.clear();
  for (const auto& d : info->shape) {
    if (!d.is_static()) return false;
    out.push_back(d.value);
  }
  return true;
}

int64_t product(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < s.size() && i < to; ++i) p *= s[i];
  return p;
}

}  // namespace

FlopsEstimate estimate_flops(const Graph& graph) {
  FlopsEstimate est;
  for (const auto& node : graph.nodes) {
    Shape out, a, w;
    if (node.outputs.empty() || !shape_of(graph, node.outputs[0], out)) {
      ++est.unknown_nodes;
      continue;
    }
    int64_t flops = product(out);
    const std::string& op = node.op_type;
    if ((op == "Conv" || op == "ConvTranspose") && node.inputs.size() >= 2 && shape_of(graph, node.inputs[1], w) &&
        w.size() >= 3) {
      // Conv: out N×M×spatial, W M×C/g×k; ConvTranspose: W C×M/g×k, each input pixel spreads over k.
      if (op == "Conv") {
        flops = 2 * product(out) * product(w, 1);
      } else if (shape_of(graph, node.inputs[0], a)) {
        flops = 2 * product(a) * product(w, 1);
      }
    } else if (op == "MatMul" && node.inputs.size() == 2 && shape_of(graph, node.inputs[0], a) && !a.empty()) {
      flops = 2 * product(out) * a.back();
    } else if (op == "Gemm" && node.inputs.size() >= 2 && shape_of(graph, node.inputs[0], a) && a.size() == 2) {
      auto trans_a = node.attr_int("transA", 0);
      const int64_t k = (trans_a.has_value() && *trans_a) ? a[0] : a[1];
      flops = 2 * product(out) * k;
    }
    est.total += flops;
    est.by_op[op] += flops;
  }
  return est;
}

}  // namespace edgemm::ir
