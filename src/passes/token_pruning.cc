/// \file token_pruning.cc
/// prune_visual_tokens (token_pruning.h): finds encoder layer k's output by the graph's structure
/// (Softmax per layer, the LayerNormalization that starts the next layer), inserts com.edgemm
/// TokenPrune, and rewrites what hard-codes the token count after it.

#include "passes/token_pruning.h"

#include <deque>
#include <unordered_set>
#include <vector>

#include "kernels/cpu/token_prune.h"
#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

bool is_layer_norm(const ir::Node& n) {
  return n.op_type == "LayerNormalization" && (n.domain.empty() || n.domain == kEdgemmDomain);
}

/// Indices of the Softmax nodes, in graph order: one per encoder layer's attention.
std::vector<int> attention_softmaxes(const ir::Graph& graph) {
  std::vector<int> found;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    if (graph.nodes[i].domain.empty() && graph.nodes[i].op_type == "Softmax") found.push_back(i);
  }
  return found;
}

/// The LayerNormalization nearest before node `start` (breadth-first over its inputs' producers),
/// or -1.
int nearest_layer_norm_before(const ir::Graph& graph, const GraphView& view, int start) {
  std::deque<int> queue = {start};
  std::unordered_set<int> seen = {start};
  while (!queue.empty()) {
    const int k = queue.front();
    queue.pop_front();
    for (const std::string& in : graph.nodes[k].inputs) {
      const int p = in.empty() ? -1 : view.producer(in);
      if (p < 0 || !seen.insert(p).second) continue;
      if (is_layer_norm(graph.nodes[p])) return p;
      queue.push_back(p);
    }
  }
  return -1;
}

/// Indices of the nodes that read `value` directly or through other nodes.
std::vector<int> downstream_nodes(const ir::Graph& graph, const GraphView& view, const std::string& value) {
  std::vector<int> found;
  std::unordered_set<int> seen;
  std::deque<std::string> values = {value};
  while (!values.empty()) {
    const std::string v = values.front();
    values.pop_front();
    for (int k : view.consumers(v)) {
      if (!seen.insert(k).second) continue;
      found.push_back(k);
      for (const std::string& out : graph.nodes[k].outputs) values.push_back(out);
    }
  }
  return found;
}

/// The constant int64 shape of a Reshape among `nodes` with every extent given (no 0 or -1), i.e.
/// one that hard-codes the token count; nullptr for others.
const Tensor* hard_coded_shape(const ir::Graph& graph, const ir::Node& n) {
  if (!n.domain.empty() || n.op_type != "Reshape" || n.inputs.size() < 2) return nullptr;
  const Tensor* shape = constant(graph, n.inputs[1]);
  if (shape == nullptr || shape->dtype() != DataType::kInt64 || shape->element_count() < 3) return nullptr;
  for (int64_t i = 0; i < shape->element_count(); ++i) {
    if (shape->data<int64_t>()[i] <= 0) return nullptr;
  }
  return shape;
}

/// T from the hard-coded Reshape shapes among `nodes` ([B, T, ...]: all must agree on axis 1);
/// -1 when there are none. Error naming two Reshapes that disagree.
Expected<int64_t> tokens_from_reshapes(const ir::Graph& graph, const std::vector<int>& nodes) {
  int64_t tokens = -1;
  const ir::Node* first = nullptr;
  for (int k : nodes) {
    const Tensor* shape = hard_coded_shape(graph, graph.nodes[k]);
    if (shape == nullptr) continue;
    const int64_t t = shape->data<int64_t>()[1];
    if (first == nullptr) {
      tokens = t;
      first = &graph.nodes[k];
    } else if (t != tokens) {
      return make_error(StatusCode::kInvalidArgument,
                        "token pruning: the graph hard-codes shapes after the pruned layer, and " + first->describe() +
                            " and " + graph.nodes[k].describe() +
                            " disagree on the token count (axis 1); give the token count (1 + patches) explicitly");
    }
  }
  return tokens;
}

/// Replaces the extent `tokens` by `kept` in Reshape shape constants read by `nodes`. Returns how
/// many Reshapes changed.
int rewrite_reshapes(ir::Graph& graph, const std::vector<int>& nodes, int64_t tokens, int64_t kept) {
  int rewritten = 0;
  for (int k : nodes) {
    ir::Node& n = graph.nodes[k];
    if (!n.domain.empty() || n.op_type != "Reshape" || n.inputs.size() < 2) continue;
    const Tensor* shape = constant(graph, n.inputs[1]);
    if (shape == nullptr || shape->dtype() != DataType::kInt64) continue;
    std::vector<int64_t> dims(shape->data<int64_t>(), shape->data<int64_t>() + shape->element_count());
    bool changed = false;
    for (int64_t& d : dims) {
      if (d == tokens) {
        d = kept;
        changed = true;
      }
    }
    if (!changed) continue;
    n.inputs[1] = add_initializer(graph, n.inputs[1] + "/pruned", Tensor::from_int64s({shape->element_count()}, dims));
    ++rewritten;
  }
  return rewritten;
}

/// Drops inferred shapes of the values `nodes` write; graph outputs among them get `kept` for
/// the extent `tokens` (when known) and keep their other axes.
void forget_stale_shapes(ir::Graph& graph, const std::vector<int>& nodes, int64_t tokens, int64_t kept) {
  std::unordered_set<std::string> written;
  for (int k : nodes) {
    for (const std::string& out : graph.nodes[k].outputs) written.insert(out);
  }
  for (const std::string& v : written) graph.value_infos.erase(v);
  for (ValueInfo& out : graph.outputs) {
    if (written.count(out.name) == 0) continue;
    for (Dim& d : out.shape) {
      if (tokens >= 0 && d.value == tokens) d.value = kept;
    }
  }
}

}  // namespace

Expected<TokenPruningReport> prune_visual_tokens(ir::Model& model, const TokenPruningOptions& options) {
  if (!(options.keep_ratio > 0 && options.keep_ratio <= 1)) {
    return make_error(StatusCode::kInvalidArgument,
                      "token pruning: keep ratio must be in (0, 1], got " + std::to_string(options.keep_ratio));
  }
  if (options.rule != "cls_attention" && options.rule != "mean_abs") {
    return make_error(StatusCode::kInvalidArgument,
                      "token pruning: rule must be cls_attention or mean_abs, got '" + options.rule + "'");
  }
  PassReport scratch;
  fold_constants(model, scratch);  // Constant nodes and statically known shape chains → initializers
  fuse_layer_norm(model, scratch);
  ir::Graph& graph = model.graph;
  TokenPruningReport report;
  const std::vector<int> softmaxes = attention_softmaxes(graph);
  report.layers = static_cast<int>(softmaxes.size());
  if (report.layers < 2) {
    return make_error(StatusCode::kUnsupported, "token pruning: the model has " + std::to_string(report.layers) +
                                                    " attention layers (Softmax nodes); pruning needs a transformer "
                                                    "encoder with at least 2");
  }
  if (options.after_layer < 0 || options.after_layer + 1 >= report.layers) {
    return make_error(StatusCode::kInvalidArgument,
                      "token pruning: the model has " + std::to_string(report.layers) +
                          " attention layers (Softmax nodes); the layer to prune after must be in 0.." +
                          std::to_string(report.layers - 2) + ", got " + std::to_string(options.after_layer));
  }
  const GraphView view(graph);
  const ir::Node& next_softmax = graph.nodes[softmaxes[options.after_layer + 1]];
  const int ln = nearest_layer_norm_before(graph, view, softmaxes[options.after_layer + 1]);
  if (ln < 0) {
    return make_error(StatusCode::kInvalidArgument, "token pruning: no LayerNormalization before " +
                                                        next_softmax.describe() + " (layer " +
                                                        std::to_string(options.after_layer + 1) + "'s attention)");
  }
  report.hidden = graph.nodes[ln].inputs[0];
  if (options.rule == "cls_attention") report.attention = graph.nodes[softmaxes[options.after_layer]].outputs[0];
  ir::Node prune;
  prune.name = "/token_prune/after_layer_" + std::to_string(options.after_layer);
  prune.domain = kEdgemmDomain;
  prune.op_type = "TokenPrune";
  prune.inputs = {report.hidden};
  if (!report.attention.empty()) prune.inputs.push_back(report.attention);
  const std::string pruned = report.hidden + "/pruned";
  prune.outputs = {pruned};
  prune.attributes["keep_ratio"].kind = ir::Attribute::Kind::kFloat;
  prune.attributes["keep_ratio"].f = options.keep_ratio;
  prune.attributes["rule"].kind = ir::Attribute::Kind::kString;
  prune.attributes["rule"].s = options.rule;
  for (ir::Node& n : graph.nodes) {
    for (std::string& in : n.inputs) {
      if (in == report.hidden) in = pruned;
    }
  }
  graph.nodes.push_back(std::move(prune));
  sort_topologically(graph);
  use_edgemm_domain(model);

  const GraphView after(graph);
  const std::vector<int> downstream = downstream_nodes(graph, after, pruned);
  report.tokens = options.tokens;
  if (auto shape = value_shape(graph, report.hidden);
      report.tokens < 0 && shape && shape->size() == 3 && (*shape)[1].is_static()) {
    report.tokens = (*shape)[1].value;
  }
  if (report.tokens < 0) {
    EDGEMM_ASSIGN_OR_RETURN(report.tokens, tokens_from_reshapes(graph, downstream));
  }
  if (report.tokens >= 0) {
    report.kept_tokens = 1 + kernels::pruned_patch_count(options.keep_ratio, report.tokens - 1);
    report.reshapes_rewritten = rewrite_reshapes(graph, downstream, report.tokens, report.kept_tokens);
  }
  forget_stale_shapes(graph, downstream, report.tokens, report.kept_tokens);
  return report;
}

}  // namespace edgemm::passes
