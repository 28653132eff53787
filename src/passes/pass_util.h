#pragma once
/// \file pass_util.h
/// Small matchers shared by the fusion passes: Clip bounds, static shapes of values, and
/// whether one value depends on another.

#include <optional>
#include <string>
#include <utility>

#include "edgemm/inferencer.h"
#include "ir/graph.h"
#include "passes/graph_view.h"

namespace edgemm::passes {

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
std::optional<std::string> other_input(const ir::Node& node, const std::string& value, bool* first);

}  // namespace edgemm::passes
