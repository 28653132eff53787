/// \file kv_cache.cc
/// bind_kv_cache (kv_cache.h): inline the use_cache_branch If, match each layer's attention from
/// its past input, replace it by com.edgemm KvAttention on new kv_cache inputs.

#include "passes/kv_cache.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// `e`'s value, or `fallback` on error.
template <typename T>
T value_or(const Expected<T>& e, T fallback) {
  return e.has_value() ? *e : fallback;
}

/// Pointers to every input and output name of `n`.
std::vector<std::string*> value_names(ir::Node& n) {
  std::vector<std::string*> names;
  for (std::string& v : n.inputs) names.push_back(&v);
  for (std::string& v : n.outputs) names.push_back(&v);
  return names;
}

/// Replaces an If on the graph input `use_cache_branch` by its then_branch (the with-past graph
/// of an Optimum merged decoder) and drops that input. Returns whether it did.
Expected<bool> inline_cache_branch(ir::Graph& graph) {
  int found = -1;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    if (is_op(graph.nodes[k], "If") && graph.nodes[k].inputs[0] == "use_cache_branch") found = k;
  }
  if (found < 0) return false;
  const ir::Node node = graph.nodes[found];
  auto branch = node.attributes.find("then_branch");
  if (branch == node.attributes.end() || !branch->second.g) {
    return make_error(StatusCode::kInvalidModel, node.describe() + "has no then_branch graph");
  }
  const ir::Graph& then = *branch->second.g;
  if (then.outputs.size() != node.outputs.size()) {
    return make_error(StatusCode::kInvalidModel, node.describe() + "then_branch has " +
                                                     std::to_string(then.outputs.size()) + " outputs, the If " +
                                                     std::to_string(node.outputs.size()));
  }
  for (const auto& [name, value] : then.initializers) {
    if (graph.initializers.count(name) != 0) {
      return make_error(StatusCode::kUnsupported,
                        node.describe() + "then_branch initializer '" + name + "' shadows a main-graph value");
    }
    graph.initializers[name] = value;
  }
  for (const auto& [name, info] : then.value_infos) graph.value_infos[name] = info;
  graph.nodes.erase(graph.nodes.begin() + found);
  // The branch's nodes join the graph; a branch output a branch node makes takes the If output's
  // name (so its readers stay the graph's), any other (an outer value) goes through an Identity.
  std::map<std::string, std::string> renamed;
  std::set<std::string> made;
  for (const ir::Node& n : then.nodes) made.insert(n.outputs.begin(), n.outputs.end());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    if (made.count(then.outputs[i].name) != 0 && renamed.count(then.outputs[i].name) == 0) {
      renamed[then.outputs[i].name] = node.outputs[i];
      continue;
    }
    ir::Node identity;
    identity.name = node.name + "/then_output_" + std::to_string(i);
    identity.op_type = "Identity";
    identity.inputs = {then.outputs[i].name};
    identity.outputs = {node.outputs[i]};
    graph.nodes.push_back(std::move(identity));
  }
  for (ir::Node n : then.nodes) {
    for (std::string* name : value_names(n)) {
      if (auto it = renamed.find(*name); it != renamed.end()) *name = it->second;
    }
    graph.nodes.push_back(std::move(n));
  }
  std::erase_if(graph.inputs, [](const ValueInfo& v) { return v.name == "use_cache_branch"; });
  sort_topologically(graph);
  return true;
}

/// One layer's attention, as node indices and value names.
struct CacheAttention {
  int concat_k = -1, concat_v = -1, qk = -1, scale_node = -1, mask_node = -1, softmax = -1, pv = -1;
  std::string past_k, past_v, k_new, v_new, q, mask;
  float scale = 1.0f;
};

/// The Concat(past, new) on axis 2 that reads graph input `past`, or -1.
int concat_of(const ir::Graph& graph, const GraphView& view, const std::string& past) {
  for (int k : view.consumers(past)) {
    const ir::Node& n = graph.nodes[k];
    if (!is_op(n, "Concat") || n.inputs.size() != 2 || n.inputs[0] != past) continue;
    const auto axis = n.attr_int("axis", 0);
    if (axis.has_value() && (*axis == 2 || *axis == -2)) return k;
  }
  return -1;
}

/// The one node reading `value` other than Shape nodes, or -1 (none, or several).
int single_data_reader(const ir::Graph& graph, const GraphView& view, const std::string& value) {
  int found = -1;
  for (int k : view.consumers(value)) {
    if (is_op(graph.nodes[k], "Shape")) continue;
    if (found >= 0) return -1;
    found = k;
  }
  return found;
}

/// Follows `value` through the grouped-query repeat (Unsqueeze on axis 2, Expand, Reshape) and,
/// when `transposed`, a Transpose(0, 1, 3, 2), to the MatMul reading it as input B. -1 when the
/// chain has another shape.
int follow_to_matmul(const ir::Graph& graph, const GraphView& view, std::string value, bool transposed) {
  bool saw_transpose = false;
  for (int step = 0; step < 5; ++step) {
    const int k = single_data_reader(graph, view, value);
    if (k < 0) return -1;
    const ir::Node& n = graph.nodes[k];
    if (is_op(n, "MatMul")) return n.inputs[1] == value && saw_transpose == transposed ? k : -1;
    if (n.inputs.empty() || n.inputs[0] != value) return -1;
    if (is_op(n, "Unsqueeze")) {
      std::vector<int64_t> axes = value_or(n.attr_ints("axes"), std::vector<int64_t>{});
      if (axes.empty() && n.inputs.size() > 1) {
        const Tensor* t = constant(graph, n.inputs[1]);
        if (t != nullptr && t->dtype() == DataType::kInt64)
          axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->element_count());
      }
      if (axes != std::vector<int64_t>{2}) return -1;
    } else if (is_op(n, "Transpose")) {
      if (saw_transpose || value_or(n.attr_ints("perm"), std::vector<int64_t>{}) != std::vector<int64_t>{0, 1, 3, 2}) {
        return -1;
      }
      saw_transpose = true;
    } else if (!is_op(n, "Expand") && !is_op(n, "Reshape")) {
      return -1;
    }
    value = n.outputs[0];
  }
  return -1;
}

/// The attention reading past_key_values.`layer`.*, or an error naming where it differs.
Expected<CacheAttention> match_layer(const ir::Graph& graph, const GraphView& view, int layer) {
  CacheAttention m;
  m.past_k = "past_key_values." + std::to_string(layer) + ".key";
  m.past_v = "past_key_values." + std::to_string(layer) + ".value";
  const std::string where = "KV cache binding, layer " + std::to_string(layer) + ": ";
  m.concat_k = concat_of(graph, view, m.past_k);
  m.concat_v = concat_of(graph, view, m.past_v);
  if (m.concat_k < 0 || m.concat_v < 0) {
    return make_error(StatusCode::kUnsupported,
                      where + "no Concat(past, new) on axis 2 reads '" + (m.concat_k < 0 ? m.past_k : m.past_v) + "'");
  }
  m.k_new = graph.nodes[m.concat_k].inputs[1];
  m.v_new = graph.nodes[m.concat_v].inputs[1];
  m.qk = follow_to_matmul(graph, view, graph.nodes[m.concat_k].outputs[0], true);
  if (m.qk < 0) {
    return make_error(StatusCode::kUnsupported, where + "the keys of " + graph.nodes[m.concat_k].describe() +
                                                    "do not reach a MatMul(Q, Kᵀ) through repeat and Transpose");
  }
  m.q = graph.nodes[m.qk].inputs[0];
  std::string value = graph.nodes[m.qk].outputs[0];
  int k = single_data_reader(graph, view, value);
  if (k >= 0 && (is_op(graph.nodes[k], "Mul") || is_op(graph.nodes[k], "Div"))) {
    std::string other;
    const std::optional<float> s = scalar_operand(graph, graph.nodes[k], &other);
    if (!s || other != value || *s <= 0 || (is_op(graph.nodes[k], "Div") && graph.nodes[k].inputs[1] == value)) {
      return make_error(StatusCode::kUnsupported, where + graph.nodes[k].describe() + "is not a positive scale");
    }
    m.scale = is_op(graph.nodes[k], "Div") ? 1.0f / *s : *s;
    m.scale_node = k;
    value = graph.nodes[k].outputs[0];
    k = single_data_reader(graph, view, value);
  }
  if (k >= 0 && is_op(graph.nodes[k], "Add")) {
    m.mask = other_input(graph.nodes[k], value);
    m.mask_node = k;
    value = graph.nodes[k].outputs[0];
    k = single_data_reader(graph, view, value);
  }
  const int64_t axis = k >= 0 ? value_or(graph.nodes[k].attr_int("axis", -1), int64_t{0}) : 0;
  if (k < 0 || !is_op(graph.nodes[k], "Softmax") || (axis != -1 && axis != 3)) {
    return make_error(StatusCode::kUnsupported, where + "the scores of " + graph.nodes[m.qk].describe() +
                                                    "do not reach a Softmax on the last axis");
  }
  m.softmax = k;
  m.pv = follow_to_matmul(graph, view, graph.nodes[m.concat_v].outputs[0], false);
  if (m.pv < 0 || graph.nodes[m.pv].inputs[0] != graph.nodes[m.softmax].outputs[0]) {
    return make_error(StatusCode::kUnsupported, where + "the values of " + graph.nodes[m.concat_v].describe() +
                                                    "do not reach MatMul(softmax, V)");
  }
  return m;
}

/// Declares kv_cache.<suffix> like the past input `past`, with `capacity` on axis 2.
std::string add_cache_input(ir::Graph& graph, const std::string& past, const std::string& suffix, int64_t capacity) {
  ValueInfo info;
  for (const ValueInfo& in : graph.inputs) {
    if (in.name == past) info = in;
  }
  info.name = "kv_cache." + suffix;
  info.dtype = DataType::kFloat32;
  if (info.shape.size() != 4) {
    info.shape.assign(4, Dim{});
    info.rank_known = true;
  }
  info.shape[2] = Dim{capacity, ""};
  graph.inputs.push_back(info);
  return info.name;
}

/// Nothing but Shape and KvAttention (as its `past` input) may read a past input's bytes.
Status check_past_readers(const ir::Graph& graph, const std::string& past) {
  const GraphView view(graph);
  for (int k : view.consumers(past)) {
    const ir::Node& n = graph.nodes[k];
    if (is_op(n, "Shape") || (n.domain == kEdgemmDomain && n.op_type == "KvAttention")) continue;
    return make_error(StatusCode::kUnsupported,
                      "KV cache binding: " + n.describe() + "still reads '" + past + "' after the rewrite");
  }
  return Status::ok();
}

}  // namespace

Expected<KvCacheReport> bind_kv_cache(ir::Model& model, int64_t capacity) {
  if (capacity < 1) {
    return make_error(StatusCode::kInvalidArgument,
                      "KV cache binding: capacity must be at least 1, got " + std::to_string(capacity));
  }
  ir::Graph& graph = model.graph;
  KvCacheReport report;
  EDGEMM_ASSIGN_OR_RETURN(report.inlined_if, inline_cache_branch(graph));
  PassReport scratch;
  fold_constants(model, scratch);  // Constant nodes → initializers, for the scale and Unsqueeze axes
  std::vector<CacheAttention> matches;
  {
    const GraphView view(graph);
    for (int layer = 0;; ++layer) {
      const std::string past = "past_key_values." + std::to_string(layer) + ".key";
      if (std::none_of(graph.inputs.begin(), graph.inputs.end(), [&](const ValueInfo& v) { return v.name == past; })) {
        break;
      }
      EDGEMM_ASSIGN_OR_RETURN(CacheAttention m, match_layer(graph, view, layer));
      matches.push_back(std::move(m));
    }
  }
  if (matches.empty()) {
    return make_error(StatusCode::kUnsupported, "KV cache binding: the model has no past_key_values.0.key input");
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t layer = 0; layer < matches.size(); ++layer) {
    const CacheAttention& m = matches[layer];
    ir::Node attention;
    attention.name = "/kv_cache/layer_" + std::to_string(layer) + "/KvAttention";
    attention.domain = kEdgemmDomain;
    attention.op_type = "KvAttention";
    const std::string id = std::to_string(layer);
    attention.inputs = {m.q,
                        m.k_new,
                        m.v_new,
                        m.mask,
                        m.past_k,
                        add_cache_input(graph, m.past_k, id + ".key", capacity),
                        add_cache_input(graph, m.past_v, id + ".value", capacity)};
    attention.outputs = {graph.nodes[m.pv].outputs[0]};
    attention.attributes["scale"].kind = ir::Attribute::Kind::kFloat;
    attention.attributes["scale"].f = m.scale;
    for (int k : {m.qk, m.scale_node, m.mask_node, m.softmax, m.pv}) {
      if (k >= 0) dead[k] = true;
    }
    graph.nodes.push_back(std::move(attention));
    std::erase_if(graph.outputs, [&](const ValueInfo& v) {
      return v.name == graph.nodes[m.concat_k].outputs[0] || v.name == graph.nodes[m.concat_v].outputs[0];
    });
  }
  dead.resize(graph.nodes.size(), false);
  remove_nodes(graph, dead);
  sort_topologically(graph);  // eliminate_dead_nodes walks the nodes in reverse topological order
  eliminate_dead_nodes(graph, scratch);
  use_edgemm_domain(model);
  for (const CacheAttention& m : matches) {
    EDGEMM_RETURN_IF_ERROR(check_past_readers(graph, m.past_k));
    EDGEMM_RETURN_IF_ERROR(check_past_readers(graph, m.past_v));
  }
  report.layers = static_cast<int>(matches.size());
  return report;
}

}  // namespace edgemm::passes
