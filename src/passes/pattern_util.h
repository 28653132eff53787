#pragma once
/// \file pattern_util.h
/// Matching and rewiring helpers shared by the fusion passes (activation patterns, epilogues,
/// layouts, LayerNormalization, GELU, MatMul+Add, Transpose/Reshape pairs). They read a GraphView built before the pass
/// started; a Rewrite tracks which nodes a pass already changed in the current sweep so one
/// node never takes part in two rewrites against a stale view.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/value_info.h"
#include "ir/graph.h"
#include "passes/graph_view.h"

namespace edgemm::passes {

/// Nodes changed (`touched`) or to be dropped (`dead`) in one sweep of a pass over a graph.
struct Rewrite {
  explicit Rewrite(const ir::Graph& graph) : dead(graph.nodes.size(), false), touched(graph.nodes.size(), false) {}
  /// True when node `k` was neither rewritten nor marked dead in this sweep.
  bool untouched(int k) const { return k >= 0 && !dead[k] && !touched[k]; }
  /// True when every node of a match is untouched().
  bool all_untouched(const std::vector<int>& nodes) const;
  /// Replaces a match's `nodes` by `node`, written in place of the last of them (the one producing
  /// the match's result, whose place keeps the graph's order): the others are marked dead.
  void replace(ir::Graph& graph, const std::vector<int>& nodes, ir::Node node);
  /// True when any node was changed.
  bool changed() const;
  std::vector<bool> dead;
  std::vector<bool> touched;
};

/// Node `node` of `model` (a float32 elementwise op: Add, Mul, Relu, ...) as a com.edgemm
/// ElementwiseChain of its steps, with the same name, inputs and output; nullopt for other
/// nodes. Defined in elementwise_fusion.cc.
std::optional<ir::Node> elementwise_chain_of(const ir::Model& model, int node);

/// The index of the default-domain node of type `op_type` producing `value`, or -1.
int producer_of(const GraphView& view, const ir::Graph& graph, const std::string& value, const char* op_type);

/// Declared or inferred metadata of `name` (graph input, graph output or value_info), or nullptr.
const ValueInfo* value_info(const ir::Graph& graph, const std::string& name);

/// The rank of `name` when known (initializer shape or ValueInfo), else -1.
int64_t known_rank(const ir::Graph& graph, const std::string& name);

/// The fully static shape of `name` (initializer or ValueInfo), or nullopt when any axis is
/// symbolic or unknown.
std::optional<Shape> static_shape(const ir::Graph& graph, const std::string& name);

/// True when `node` is the default-domain op `op_type`.
bool is_op(const ir::Node& node, const char* op_type);
/// True when the float `value` is within `tolerance` of `target` (absolute).
bool near(float value, float target, float tolerance = 1e-4f);

/// For a two-input node with one float32 single-element constant input: that value, and in
/// `other` the name of the other input. nullopt when neither input is such a constant.
std::optional<float> scalar_operand(const ir::Graph& graph, const ir::Node& node, std::string* other);

/// The input of the two-input `node` that is not `value` (for commutative Add/Mul), or "" when
/// `value` is not one of its inputs.
std::string other_input(const ir::Node& node, const std::string& value);

/// True when every reader of `value` is in `readers` and `value` is not a graph output.
bool only_read_by(const GraphView& view, const std::string& value, const std::vector<int>& readers);

/// Replaces `value` by `replacement` in the inputs of every node reading it. Refuses (false,
/// nothing changed) when `value` is a graph output or a reader sees it through a subgraph
/// (If/Loop/Scan bodies refer to outer values by name). Marks the readers touched.
bool replace_uses(ir::Graph& graph, const GraphView& view, Rewrite& rw, const std::string& value,
                  const std::string& replacement);

/// The single axis a ReduceMean node reduces, from its `axes` attribute (opsets < 18) or its
/// constant `axes` input (18), or nullopt when it reduces several or all axes, has keepdims 0,
/// or its axes are not constant.
std::optional<int64_t> single_reduce_axis(const ir::Graph& graph, const ir::Node& node);

/// The (min, max) bounds of a Clip node when they are constants (Clip-6 attributes or Clip-11
/// scalar inputs; an absent bound is ∓FLT_MAX), or nullopt.
std::optional<std::pair<float, float>> clip_bounds(const ir::Graph& graph, const ir::Node& clip);

/// What the graph knows of a value's shape: from graph inputs, inferred value_infos or the
/// initializer. nullopt when the rank is unknown.
std::optional<std::vector<Dim>> value_shape(const ir::Graph& graph, const std::string& value);

/// True when both shapes are known to be equal: same rank and each axis the same fixed extent
/// or the same symbol.
bool same_shape(const std::vector<Dim>& a, const std::vector<Dim>& b);

/// True when `value` is computed (directly or through other nodes) from the output of node
/// `source` (an index in graph.nodes).
bool depends_on_node(const ir::Graph& graph, const GraphView& view, const std::string& value, int source);

/// The node's input that is not `value`, for a two-input node reading `value` exactly once;
/// `first` tells whether `value` is input 0. nullopt otherwise.
std::optional<std::string> other_operand(const ir::Node& node, const std::string& value, bool* first);

}  // namespace edgemm::passes
