/// \file attention_fusion.cc
/// fuse_attention: softmax attention as transformer exports write it (PyTorch's
/// softmax(q @ k.transpose(-1, -2) * scale + mask) @ v, e.g. CLIP's and SigLIP's encoders),
///
///   s = MatMul(Q, Kt);  [s = Mul(s, c) | Mul(c, s) | Div(s, c)];  [s = Add(s, mask) | Add(mask, s)]
///   Y = MatMul(Softmax(s, axis = last), V)
///
/// → one kEdgemmDomain Attention(Q, Kt, V, mask) node with scale c (or 1 / c) writing Y
/// (kernels/cpu/attention.h). Q, Kt and V must be float32 of one known rank >= 3, the mask of no
/// higher rank, and every intermediate value must be read by the chain only. Leading axes
/// broadcast in the kernel as in the MatMuls; a mask that would widen the [S, T] scores is an
/// error there.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// A matched attention: its operands, scale and the nodes it covers (the last writes Y).
struct AttentionMatch {
  std::string q, kt, v, mask;
  float scale = 1.0f;
  std::vector<int> nodes;
};

bool is_default_op(const ir::Graph& graph, int k, const char* op_type) {
  return k >= 0 && is_op(graph.nodes[k], op_type);
}

/// True when `value` is float32 per its metadata.
bool known_float32(const ir::Graph& graph, const std::string& value) {
  const ValueInfo* info = value_info(graph, value);
  return info != nullptr && info->dtype == DataType::kFloat32;
}

/// The Softmax node `k` normalizes the last axis of its input (rank `rank`).
bool over_last_axis(const ir::Graph& graph, const ir::Model& model, int k, int64_t rank) {
  auto opset = model.opsets.find("");
  const int64_t version = opset == model.opsets.end() ? 13 : opset->second;
  const auto axis = graph.nodes[k].attr_int("axis", version >= 13 ? -1 : 1);
  return axis && (*axis == -1 || *axis == rank - 1);
}

/// Walks back from the Softmax input `s` through an optional Add(mask) and an optional scalar
/// Mul/Div to the MatMul(Q, Kt); fills `m` (nodes in graph order of the chain).
bool match_scores(const ir::Graph& graph, const GraphView& view, std::string s, AttentionMatch& m) {
  int k = view.producer(s);
  if (is_default_op(graph, k, "Add")) {
    for (int i : {0, 1}) {
      const int p = view.producer(graph.nodes[k].inputs[i]);
      if (is_default_op(graph, p, "MatMul") || is_default_op(graph, p, "Mul") || is_default_op(graph, p, "Div")) {
        m.mask = graph.nodes[k].inputs[1 - i];
        s = graph.nodes[k].inputs[i];
        break;
      }
    }
    if (m.mask.empty() || !view.single_use(s)) return false;
    m.nodes.push_back(k);
    k = view.producer(s);
  }
  if (is_default_op(graph, k, "Mul") || is_default_op(graph, k, "Div")) {
    std::string other;
    const auto c = scalar_operand(graph, graph.nodes[k], &other);
    if (!c || *c == 0.0f || (graph.nodes[k].op_type == "Div" && graph.nodes[k].inputs[0] != other)) return false;
    m.scale = graph.nodes[k].op_type == "Div" ? 1.0f / *c : *c;
    if (!view.single_use(other)) return false;
    m.nodes.push_back(k);
    k = view.producer(other);
  }
  if (!is_default_op(graph, k, "MatMul")) return false;
  m.q = graph.nodes[k].inputs[0];
  m.kt = graph.nodes[k].inputs[1];
  m.nodes.push_back(k);
  std::reverse(m.nodes.begin(), m.nodes.end());
  return true;
}

/// Matches the attention around the Softmax node `softmax_k`.
std::optional<AttentionMatch> match_attention(const ir::Model& model, const GraphView& view, const Rewrite& rw,
                                              int softmax_k) {
  const ir::Graph& graph = model.graph;
  const ir::Node& softmax = graph.nodes[softmax_k];
  const std::string& p = softmax.outputs[0];
  if (!view.single_use(p) || !view.single_use(softmax.inputs[0])) return std::nullopt;
  const int out_k = view.consumers(p)[0];
  if (!is_default_op(graph, out_k, "MatMul") || graph.nodes[out_k].inputs[0] != p) return std::nullopt;
  AttentionMatch m;
  if (!match_scores(graph, view, softmax.inputs[0], m)) return std::nullopt;
  m.v = graph.nodes[out_k].inputs[1];
  m.nodes.insert(m.nodes.end(), {softmax_k, out_k});
  const int64_t rank = known_rank(graph, m.q);
  if (rank < 3 || known_rank(graph, m.kt) != rank || known_rank(graph, m.v) != rank) return std::nullopt;
  if (!m.mask.empty() && (known_rank(graph, m.mask) < 0 || known_rank(graph, m.mask) > rank)) return std::nullopt;
  if (!over_last_axis(graph, model, softmax_k, rank)) return std::nullopt;
  for (const std::string* value : {&m.q, &m.kt, &m.v}) {
    if (!known_float32(graph, *value)) return std::nullopt;
  }
  if (!m.mask.empty() && !known_float32(graph, m.mask)) return std::nullopt;
  if (!rw.all_untouched(m.nodes)) return std::nullopt;
  return m;
}

}  // namespace

void fuse_attention(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  const GraphView view(graph);
  Rewrite rw(graph);
  int fused = 0;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    if (!is_default_op(graph, k, "Softmax") || !rw.untouched(k)) continue;
    const auto m = match_attention(model, view, rw, k);
    if (!m) continue;
    const int last = m->nodes.back();
    ir::Node attention;
    attention.name = graph.nodes[k].name + "/Attention";
    attention.op_type = "Attention";
    attention.domain = kEdgemmDomain;
    attention.inputs = {m->q, m->kt, m->v, m->mask};
    if (m->mask.empty()) attention.inputs.pop_back();
    attention.outputs = {graph.nodes[last].outputs[0]};
    attention.attributes["scale"].kind = ir::Attribute::Kind::kFloat;
    attention.attributes["scale"].f = m->scale;
    rw.replace(graph, m->nodes, std::move(attention));
    ++fused;
  }
  if (fused == 0) return;
  remove_nodes(graph, rw.dead);
  use_edgemm_domain(model);
  report.patterns["Attention"] += fused;
}

}  // namespace edgemm::passes
