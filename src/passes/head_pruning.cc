/// \file head_pruning.cc
/// find_attention_layers and prune_attention_heads (head_pruning.h): matches each Softmax's
/// attention block by structure (scores MatMul, Q/K/V branches back to their projections, the
/// head outputs forward to the out projection), then slices the projection weights and rewrites
/// the head count in the Reshape shapes around them.

#include "passes/head_pruning.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <unordered_set>

#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// One of the Q, K, V branches: from the attention MatMul's operand back to the projection.
struct Branch {
  int matmul = -1;                     ///< projection MatMul (input 1: the weight initializer)
  int reshape = -1;                    ///< the head-splitting Reshape
  std::vector<int> channel_constants;  ///< Add/Mul/Div nodes with a per-channel constant [..., H·d]
  std::vector<int> nodes;              ///< every node walked, projection included
};

/// The extents a Reshape's shape input gives, per position: known constants or nullopt for
/// computed pieces (Shape → Gather → Unsqueeze). `concat` is the producing Concat, or -1 for a
/// constant shape; `piece[i]` = (Concat input, offset in it) for position i.
struct ReshapeTarget {
  int concat = -1;
  std::vector<std::optional<int64_t>> dims;
  std::vector<std::pair<int, int64_t>> piece;
};

/// A matched attention block: the public summary plus what the rewrite needs.
struct HeadsMatch {
  AttentionLayer info;
  int softmax = -1;
  Branch q, k, v;
  std::vector<ReshapeTarget> splits;  ///< shapes of q.reshape, k.reshape, v.reshape
  ReshapeTarget merge;                ///< shape of merge_reshape
  int merge_reshape = -1;
  int out_matmul = -1;
  std::vector<int> nodes;  ///< nodes whose outputs change shape when heads go (stale shapes)
};

std::string layer_prefix(int layer, const ir::Node& softmax) {
  return "head pruning: layer " + std::to_string(layer) + " (" + softmax.describe() + ")";
}

/// The int64 1-D constant named `name`, or nullptr.
const Tensor* int64_vector(const ir::Graph& graph, const std::string& name) {
  const Tensor* t = constant(graph, name);
  return t != nullptr && t->dtype() == DataType::kInt64 && t->rank() <= 1 ? t : nullptr;
}

Expected<ReshapeTarget> reshape_target(const ir::Graph& graph, const GraphView& view, int reshape,
                                       const std::string& where) {
  const ir::Node& n = graph.nodes[reshape];
  ReshapeTarget target;
  if (const Tensor* c = int64_vector(graph, n.inputs[1])) {
    for (int64_t i = 0; i < c->element_count(); ++i) {
      target.dims.emplace_back(c->data<int64_t>()[i]);
      target.piece.emplace_back(-1, i);
    }
    return target;
  }
  const int p = view.producer(n.inputs[1]);
  if (p < 0 || !is_op(graph.nodes[p], "Concat")) {
    return make_error(StatusCode::kUnsupported,
                      where + ": the shape of " + n.describe() +
                          " is neither a constant nor a Concat of pieces; head pruning cannot rewrite it");
  }
  target.concat = p;
  const ir::Node& concat = graph.nodes[p];
  for (int i = 0; i < static_cast<int>(concat.inputs.size()); ++i) {
    if (const Tensor* c = int64_vector(graph, concat.inputs[i])) {
      for (int64_t j = 0; j < c->element_count(); ++j) {
        target.dims.emplace_back(c->data<int64_t>()[j]);
        target.piece.emplace_back(i, j);
      }
      continue;
    }
    int64_t length = -1;
    if (auto shape = value_shape(graph, concat.inputs[i]); shape && shape->size() == 1 && (*shape)[0].is_static()) {
      length = (*shape)[0].value;
    } else if (const int q = view.producer(concat.inputs[i]); q >= 0 && is_op(graph.nodes[q], "Unsqueeze")) {
      length = 1;  // Unsqueeze of a Gathered scalar, as exporters write shape pieces
    }
    if (length < 0) {
      return make_error(StatusCode::kUnsupported, where + ": cannot tell the length of piece '" + concat.inputs[i] +
                                                      "' of " + concat.describe() + " (the shape of " + n.describe() +
                                                      ")");
    }
    for (int64_t j = 0; j < length; ++j) {
      target.dims.emplace_back(std::nullopt);
      target.piece.emplace_back(i, j);
    }
  }
  return target;
}

/// Walks back from `value` (an operand of the attention MatMuls) to the projection MatMul.
Expected<Branch> walk_to_projection(const ir::Graph& graph, const GraphView& view, std::string value,
                                    const std::string& where, const char* what) {
  Branch b;
  for (int step = 0; step < 32; ++step) {
    const int p = view.producer(value);
    const std::string stop = std::string(what) + " branch: ";
    if (p < 0) {
      return make_error(StatusCode::kUnsupported,
                        where + ": " + stop + "'" + value + "' is not computed by a projection MatMul");
    }
    const ir::Node& n = graph.nodes[p];
    if (!view.single_use(value)) {
      return make_error(StatusCode::kUnsupported, where + ": " + stop + "'" + value + "' (output of " + n.describe() +
                                                      ") is read by other nodes too; head pruning would change them");
    }
    b.nodes.push_back(p);
    if (is_op(n, "Transpose")) {
      value = n.inputs[0];
    } else if (is_op(n, "Reshape")) {
      if (b.reshape >= 0) {
        return make_error(StatusCode::kUnsupported, where + ": " + stop + "two Reshapes (" + n.describe() + " and " +
                                                        graph.nodes[b.reshape].describe() + ")");
      }
      b.reshape = p;
      value = n.inputs[0];
    } else if ((is_op(n, "Add") || is_op(n, "Mul") || is_op(n, "Div")) && n.inputs.size() == 2) {
      const int c = constant(graph, n.inputs[1]) != nullptr ? 1 : constant(graph, n.inputs[0]) != nullptr ? 0 : -1;
      if (c < 0 || (c == 0 && is_op(n, "Div"))) {
        return make_error(StatusCode::kUnsupported, where + ": " + stop + n.describe() + " has no constant operand");
      }
      if (constant(graph, n.inputs[c])->element_count() != 1) {
        if (b.reshape < 0) {
          return make_error(StatusCode::kUnsupported, where + ": " + stop + n.describe() +
                                                          " applies a non-scalar constant after the heads are split");
        }
        b.channel_constants.push_back(p);
      }
      value = n.inputs[1 - c];
    } else if (is_op(n, "MatMul")) {
      const Tensor* w = constant(graph, n.inputs[1]);
      if (w == nullptr || w->rank() != 2 || w->dtype() != DataType::kFloat32) {
        return make_error(StatusCode::kUnsupported, where + ": " + stop + n.describe() +
                                                        " is not a projection with a 2-D float32 weight initializer");
      }
      if (b.reshape < 0) {
        return make_error(
            StatusCode::kUnsupported,
            where + ": " + stop + "no Reshape splits the heads between the attention and " + n.describe());
      }
      b.matmul = p;
      return b;
    } else {
      return make_error(StatusCode::kUnsupported, where + ": " + stop + "stopped at " + n.describe() +
                                                      " (expected Transpose, Reshape, Add/Mul/Div by a constant or "
                                                      "the projection MatMul)");
    }
  }
  return make_error(StatusCode::kUnsupported, where + ": " + what + " branch: no projection MatMul within 32 nodes");
}

/// The MatMul computing the attention scores: the nearest MatMul of two computed operands before
/// the Softmax, through mask Adds and scale Mul/Divs. Appends the nodes passed to `nodes`.
Expected<int> scores_matmul(const ir::Graph& graph, const GraphView& view, int softmax, const std::string& where,
                            std::vector<int>& nodes) {
  std::deque<std::pair<int, int>> queue = {{softmax, 0}};
  std::unordered_set<int> seen = {softmax};
  while (!queue.empty()) {
    const auto [k, depth] = queue.front();
    queue.pop_front();
    for (const std::string& in : graph.nodes[k].inputs) {
      const int p = in.empty() ? -1 : view.producer(in);
      if (p < 0 || !seen.insert(p).second) continue;
      const ir::Node& n = graph.nodes[p];
      if (is_op(n, "MatMul") && constant(graph, n.inputs[0]) == nullptr && constant(graph, n.inputs[1]) == nullptr) {
        return p;
      }
      if (depth < 3 && (is_op(n, "Add") || is_op(n, "Mul") || is_op(n, "Div") || is_op(n, "Sub"))) {
        nodes.push_back(p);
        queue.emplace_back(p, depth + 1);
      }
    }
  }
  return make_error(StatusCode::kUnsupported,
                    where + ": no MatMul of two computed operands (Q·Kᵀ) before the Softmax; not self-attention");
}

/// Follows the head outputs forward, through Transposes and the head-merging Reshape, to the out
/// projection MatMul.
Status walk_to_out_projection(const ir::Graph& graph, const GraphView& view, std::string value,
                              const std::string& where, HeadsMatch& m) {
  for (int step = 0; step < 16; ++step) {
    const std::vector<int>& readers = view.consumers(value);
    if (!view.single_use(value) || readers.size() != 1) {
      return make_error(StatusCode::kUnsupported, where + ": the head outputs '" + value +
                                                      "' are read by several nodes (or are a graph output) before "
                                                      "the out projection");
    }
    const int k = readers[0];
    const ir::Node& n = graph.nodes[k];
    if (is_op(n, "Transpose")) {
      m.nodes.push_back(k);
      value = n.outputs[0];
    } else if (is_op(n, "Reshape") && m.merge_reshape < 0) {
      m.nodes.push_back(k);
      m.merge_reshape = k;
      value = n.outputs[0];
    } else if (is_op(n, "MatMul") && n.inputs[0] == value && m.merge_reshape >= 0) {
      const Tensor* w = constant(graph, n.inputs[1]);
      if (w == nullptr || w->rank() != 2 || w->dtype() != DataType::kFloat32) {
        return make_error(StatusCode::kUnsupported,
                          where + ": the out projection " + n.describe() + " has no 2-D float32 weight initializer");
      }
      m.out_matmul = k;
      return Status::ok();
    } else {
      return make_error(StatusCode::kUnsupported, where + ": the head outputs reach " + n.describe() +
                                                      " (expected Transposes, one Reshape merging the heads, then "
                                                      "the out projection MatMul)");
    }
  }
  return make_error(StatusCode::kUnsupported, where + ": no out projection within 16 nodes of the head outputs");
}

/// H and d from a head-splitting Reshape ([..., H, d]; H may be -1 and then comes from the width).
Status read_split(const ir::Graph& graph, const GraphView& view, int reshape, int64_t width, const std::string& where,
                  int64_t& heads, int64_t& head_dim) {
  EDGEMM_ASSIGN_OR_RETURN(ReshapeTarget t, reshape_target(graph, view, reshape, where));
  const ir::Node& n = graph.nodes[reshape];
  const size_t r = t.dims.size();
  if (r < 3 || !t.dims[r - 1] || *t.dims[r - 1] <= 0 || !t.dims[r - 2] || *t.dims[r - 2] == 0 || *t.dims[r - 2] < -1) {
    return make_error(StatusCode::kUnsupported, where + ": " + n.describe() +
                                                    " does not split heads as [..., H, d] with constant H (or -1) "
                                                    "and d");
  }
  head_dim = *t.dims[r - 1];
  heads = *t.dims[r - 2] > 0 ? *t.dims[r - 2] : width / head_dim;
  if (heads * head_dim != width) {
    return make_error(StatusCode::kInvalidModel, where + ": " + n.describe() + " splits " + std::to_string(width) +
                                                     " channels into " + std::to_string(heads) + " heads of " +
                                                     std::to_string(head_dim));
  }
  return Status::ok();
}

Expected<HeadsMatch> match_layer(const ir::Graph& graph, const GraphView& view, int softmax, int layer) {
  const ir::Node& sm = graph.nodes[softmax];
  const std::string where = layer_prefix(layer, sm);
  HeadsMatch m;
  m.info.layer = layer;
  m.info.softmax = sm.name;
  m.softmax = softmax;
  m.nodes.push_back(softmax);
  EDGEMM_ASSIGN_OR_RETURN(const int qk, scores_matmul(graph, view, softmax, where, m.nodes));
  m.nodes.push_back(qk);
  int pv = -1;
  for (int k : view.consumers(sm.outputs[0])) {
    if (is_op(graph.nodes[k], "MatMul") && graph.nodes[k].inputs[0] == sm.outputs[0]) pv = k;
  }
  if (pv < 0) {
    return make_error(StatusCode::kUnsupported,
                      where + ": no MatMul reads the attention probabilities as its first operand (probabilities · V)");
  }
  m.nodes.push_back(pv);
  m.info.head_outputs = graph.nodes[pv].outputs[0];
  EDGEMM_ASSIGN_OR_RETURN(m.q, walk_to_projection(graph, view, graph.nodes[qk].inputs[0], where, "Q"));
  EDGEMM_ASSIGN_OR_RETURN(m.k, walk_to_projection(graph, view, graph.nodes[qk].inputs[1], where, "K"));
  EDGEMM_ASSIGN_OR_RETURN(m.v, walk_to_projection(graph, view, graph.nodes[pv].inputs[1], where, "V"));
  EDGEMM_RETURN_IF_ERROR(walk_to_out_projection(graph, view, m.info.head_outputs, where, m));
  for (const Branch* b : {&m.q, &m.k, &m.v}) m.nodes.insert(m.nodes.end(), b->nodes.begin(), b->nodes.end());

  const Tensor& wq = graph.initializers.at(graph.nodes[m.q.matmul].inputs[1]);
  m.info.hidden = wq.dim(0);
  EDGEMM_RETURN_IF_ERROR(read_split(graph, view, m.q.reshape, wq.dim(1), where, m.info.heads, m.info.head_dim));
  for (const Branch* b : {&m.k, &m.v}) {
    const ir::Node& mm = graph.nodes[b->matmul];
    const Tensor& w = graph.initializers.at(mm.inputs[1]);
    int64_t heads = 0, head_dim = 0;
    EDGEMM_RETURN_IF_ERROR(read_split(graph, view, b->reshape, w.dim(1), where, heads, head_dim));
    if (heads != m.info.heads || head_dim != m.info.head_dim || w.dim(0) != m.info.hidden) {
      return make_error(StatusCode::kInvalidModel,
                        where + ": " + mm.describe() + " has weight [" + std::to_string(w.dim(0)) + ", " +
                            std::to_string(w.dim(1)) + "] split into " + std::to_string(heads) +
                            " heads, but the q projection has " + std::to_string(m.info.heads) + " heads of " +
                            std::to_string(m.info.head_dim) + " over " + std::to_string(m.info.hidden) + " inputs");
    }
  }
  const int64_t width = m.info.heads * m.info.head_dim;
  for (const Branch* b : {&m.q, &m.k, &m.v}) {
    for (int c : b->channel_constants) {
      const ir::Node& n = graph.nodes[c];
      const Tensor* t =
          constant(graph, n.inputs[1]) != nullptr ? constant(graph, n.inputs[1]) : constant(graph, n.inputs[0]);
      if (t->dtype() != DataType::kFloat32 || t->rank() < 1 || t->dim(-1) != width) {
        return make_error(StatusCode::kUnsupported, where + ": " + n.describe() +
                                                        " has a constant that is neither a scalar nor float32 [..., " +
                                                        std::to_string(width) + "]");
      }
    }
  }
  const ir::Node& out = graph.nodes[m.out_matmul];
  if (graph.initializers.at(out.inputs[1]).dim(0) != width) {
    return make_error(StatusCode::kInvalidModel, where + ": the out projection " + out.describe() + " has " +
                                                     std::to_string(graph.initializers.at(out.inputs[1]).dim(0)) +
                                                     " input rows, expected H·d = " + std::to_string(width));
  }
  for (const Branch* b : {&m.q, &m.k, &m.v}) {
    EDGEMM_ASSIGN_OR_RETURN(ReshapeTarget t, reshape_target(graph, view, b->reshape, where));
    m.splits.push_back(std::move(t));
  }
  EDGEMM_ASSIGN_OR_RETURN(m.merge, reshape_target(graph, view, m.merge_reshape, where));
  if (m.merge.dims.empty() ||
      (!m.merge.dims.back() && std::count_if(m.merge.piece.begin(), m.merge.piece.end(), [&](const auto& p) {
                                 return p.first == m.merge.piece.back().first;
                               }) != 1)) {
    return make_error(StatusCode::kUnsupported, where + ": the last extent of " +
                                                    graph.nodes[m.merge_reshape].describe() +
                                                    "'s shape (the merged heads' width) is computed inside a longer "
                                                    "piece; head pruning rewrites constant or one-element pieces");
  }
  const std::optional<int64_t> merged = m.merge.dims.back();
  if (merged && *merged != -1 && *merged != width) {
    return make_error(StatusCode::kUnsupported, where + ": " + graph.nodes[m.merge_reshape].describe() +
                                                    " merges the heads into " + std::to_string(*merged) +
                                                    " channels, expected H·d = " + std::to_string(width) + " or -1");
  }
  m.info.q_weight = graph.nodes[m.q.matmul].inputs[1];
  m.info.k_weight = graph.nodes[m.k.matmul].inputs[1];
  m.info.v_weight = graph.nodes[m.v.matmul].inputs[1];
  m.info.out_weight = out.inputs[1];
  m.info.out_matmul = out.name;
  return m;
}

/// Folds constants, then matches every Softmax.
Expected<std::vector<HeadsMatch>> match_all(ir::Model& model) {
  PassReport scratch;
  fold_constants(model, scratch);
  eliminate_dead_nodes(model.graph, scratch);  // also makes the weight byte counts compare like with like
  const ir::Graph& graph = model.graph;
  const GraphView view(graph);
  std::vector<HeadsMatch> layers;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    if (!is_op(graph.nodes[i], "Softmax")) continue;
    EDGEMM_ASSIGN_OR_RETURN(HeadsMatch m, match_layer(graph, view, i, static_cast<int>(layers.size())));
    layers.push_back(std::move(m));
  }
  if (layers.empty()) {
    return make_error(StatusCode::kUnsupported,
                      "head pruning: the model has no attention layers (Softmax nodes); it needs a transformer");
  }
  return layers;
}

/// Columns (last axis) of `t` in the kept heads' blocks of `head_dim`.
Tensor keep_columns(const Tensor& t, const std::vector<int>& kept, int64_t head_dim) {
  const int64_t cols = t.dim(-1), rows = t.element_count() / cols;
  const int64_t new_cols = static_cast<int64_t>(kept.size()) * head_dim;
  Shape shape = t.shape();
  shape.back() = new_cols;
  std::vector<float> out(static_cast<size_t>(rows * new_cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < kept.size(); ++j) {
      std::memcpy(&out[r * new_cols + j * head_dim], t.data<float>() + r * cols + kept[j] * head_dim,
                  sizeof(float) * head_dim);
    }
  }
  return Tensor::from_floats(shape, out);
}

/// Rows (axis 0) of the 2-D `t` in the kept heads' blocks of `head_dim`.
Tensor keep_rows(const Tensor& t, const std::vector<int>& kept, int64_t head_dim) {
  const int64_t cols = t.dim(1);
  std::vector<float> out(kept.size() * head_dim * cols);
  for (size_t j = 0; j < kept.size(); ++j) {
    std::memcpy(&out[j * head_dim * cols], t.data<float>() + kept[j] * head_dim * cols,
                sizeof(float) * head_dim * cols);
  }
  return Tensor::from_floats({static_cast<int64_t>(kept.size()) * head_dim, cols}, out);
}

/// Replaces input `index` of node `k` by a new initializer holding `value`.
void replace_constant(ir::Graph& graph, int k, int index, Tensor value) {
  ir::Node& n = graph.nodes[k];
  n.inputs[index] = add_initializer(graph, n.inputs[index] + "/heads_pruned", std::move(value));
}

/// Sets position `from_end` (1 = last) of Reshape `reshape`'s shape to `value`: a new constant
/// shape, or a clone of its Concat with a new constant piece (appended to `clones`).
void set_reshape_dim(ir::Graph& graph, const GraphView& view, int reshape, const ReshapeTarget& target, size_t from_end,
                     int64_t value, std::vector<ir::Node>& clones) {
  const size_t pos = target.dims.size() - from_end;
  if (target.concat < 0) {
    const Tensor* c = constant(graph, graph.nodes[reshape].inputs[1]);
    std::vector<int64_t> dims(c->data<int64_t>(), c->data<int64_t>() + c->element_count());
    dims[pos] = value;
    replace_constant(graph, reshape, 1, Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims));
    return;
  }
  ir::Node concat = graph.nodes[target.concat];
  const auto [piece, offset] = target.piece[pos];
  std::vector<int64_t> dims = {value};
  if (const Tensor* c = int64_vector(graph, concat.inputs[piece]); c != nullptr && c->element_count() > 1) {
    dims.assign(c->data<int64_t>(), c->data<int64_t>() + c->element_count());
    dims[offset] = value;
  }
  concat.inputs[piece] = add_initializer(graph, concat.inputs[piece] + "/heads_pruned",
                                         Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims));
  std::string out = concat.outputs[0] + "/heads_pruned";
  for (int i = 1; view.producer(out) >= 0 ||
                  std::any_of(clones.begin(), clones.end(), [&](const ir::Node& n) { return n.outputs[0] == out; });
       ++i) {
    out = concat.outputs[0] + "/heads_pruned_" + std::to_string(i);
  }
  concat.name += "/heads_pruned";
  concat.outputs = {out};
  graph.nodes[reshape].inputs[1] = out;
  clones.push_back(std::move(concat));
}

/// Removes the heads not in `kept` from matched layer `m`. Returns the shapes rewritten.
int prune_layer(ir::Graph& graph, const GraphView& view, const HeadsMatch& m, const std::vector<int>& kept,
                std::vector<ir::Node>& clones) {
  const int64_t d = m.info.head_dim, kept_heads = static_cast<int64_t>(kept.size());
  const bool merge_infers_width = !m.merge.dims.empty() && m.merge.dims.back() == std::optional<int64_t>(-1);
  for (const Branch* b : {&m.q, &m.k, &m.v}) {
    ir::Node& mm = graph.nodes[b->matmul];
    replace_constant(graph, b->matmul, 1, keep_columns(graph.initializers.at(mm.inputs[1]), kept, d));
    for (int c : b->channel_constants) {
      const int index = constant(graph, graph.nodes[c].inputs[1]) != nullptr ? 1 : 0;
      replace_constant(graph, c, index, keep_columns(graph.initializers.at(graph.nodes[c].inputs[index]), kept, d));
    }
  }
  const ir::Node& out = graph.nodes[m.out_matmul];
  replace_constant(graph, m.out_matmul, 1, keep_rows(graph.initializers.at(out.inputs[1]), kept, d));
  int rewritten = 0;
  const int reshapes[3] = {m.q.reshape, m.k.reshape, m.v.reshape};
  for (int i = 0; i < 3; ++i) {
    const ReshapeTarget& target = m.splits[i];
    if (*target.dims[target.dims.size() - 2] == -1) continue;  // H inferred from the width
    set_reshape_dim(graph, view, reshapes[i], target, 2, kept_heads, clones);
    ++rewritten;
  }
  if (!merge_infers_width) {
    set_reshape_dim(graph, view, m.merge_reshape, m.merge, 1, kept_heads * d, clones);
    ++rewritten;
  }
  for (int k : m.nodes) {
    for (const std::string& v : graph.nodes[k].outputs) graph.value_infos.erase(v);
  }
  return rewritten;
}

int64_t weight_bytes(const ir::Graph& graph) {
  int64_t bytes = 0;
  for (const auto& [name, t] : graph.initializers) bytes += static_cast<int64_t>(t.byte_size());
  return bytes;
}

}  // namespace

Expected<std::vector<AttentionLayer>> find_attention_layers(ir::Model& model) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<HeadsMatch> matches, match_all(model));
  std::vector<AttentionLayer> layers;
  for (HeadsMatch& m : matches) layers.push_back(std::move(m.info));
  return layers;
}

Expected<HeadPruningOptions> parse_head_list(const std::string& text) {
  HeadPruningOptions options;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, comma - start);
    const size_t colon = entry.find(':');
    auto number = [](const std::string& s) -> std::optional<int> {
      if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      return std::stoi(s);
    };
    const auto layer = colon == std::string::npos ? std::nullopt : number(entry.substr(0, colon));
    const auto head = colon == std::string::npos ? std::nullopt : number(entry.substr(colon + 1));
    if (!layer || !head) {
      return make_error(StatusCode::kInvalidArgument,
                        "head list entry '" + entry + "' should be LAYER:HEAD (0-based integers), e.g. \"0:1,2:3\"");
    }
    options.remove[*layer].push_back(*head);
    start = comma + 1;
  }
  return options;
}

Expected<HeadPruningReport> prune_attention_heads(ir::Model& model, const HeadPruningOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<HeadsMatch> matches, match_all(model));
  ir::Graph& graph = model.graph;
  HeadPruningReport report;
  report.layers = static_cast<int>(matches.size());
  // Validate everything before changing anything.
  std::vector<std::set<int>> removed(matches.size());
  for (const auto& [layer, heads] : options.remove) {
    if (layer < 0 || layer >= report.layers) {
      return make_error(StatusCode::kInvalidArgument, "head pruning: the model has " + std::to_string(report.layers) +
                                                          " attention layers (Softmax nodes); layer " +
                                                          std::to_string(layer) + " is outside 0.." +
                                                          std::to_string(report.layers - 1));
    }
    const HeadsMatch& m = matches[layer];
    for (int h : heads) {
      if (h < 0 || h >= m.info.heads) {
        return make_error(StatusCode::kInvalidArgument, layer_prefix(layer, graph.nodes[m.softmax]) + " has " +
                                                            std::to_string(m.info.heads) + " heads; head " +
                                                            std::to_string(h) + " is outside 0.." +
                                                            std::to_string(m.info.heads - 1));
      }
      removed[layer].insert(h);
    }
    if (static_cast<int64_t>(removed[layer].size()) == m.info.heads) {
      return make_error(StatusCode::kInvalidArgument, "head pruning: layer " + std::to_string(layer) +
                                                          " would lose all its " + std::to_string(m.info.heads) +
                                                          " heads; keep at least one head per layer");
    }
  }
  report.weight_bytes_before = weight_bytes(graph);
  const GraphView view(graph);
  std::vector<ir::Node> clones;
  for (const HeadsMatch& m : matches) {
    PrunedLayer p{m.info.layer, m.info.softmax, m.info.heads, m.info.head_dim, {}, {}, 0};
    for (int h = 0; h < m.info.heads; ++h) (removed[m.info.layer].count(h) ? p.removed : p.kept).push_back(h);
    if (!p.removed.empty()) {
      p.shapes_rewritten = prune_layer(graph, view, m, p.kept, clones);
    }
    report.heads_before += p.heads;
    report.heads_after += static_cast<int64_t>(p.kept.size());
    report.pruned.push_back(std::move(p));
  }
  for (ir::Node& n : clones) graph.nodes.push_back(std::move(n));
  sort_topologically(graph);
  PassReport scratch;
  eliminate_dead_nodes(graph, scratch);
  report.weight_bytes_after = weight_bytes(graph);
  return report;
}

}  // namespace edgemm::passes
