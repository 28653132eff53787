#pragma once
/// \file passes.h
/// Graph passes run at load: constant folding (including Shape/Size of values whose shape
/// ONNX shape inference fixed) and dead-node elimination.

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// What the passes changed.
struct PassReport {
  int nodes_before = 0;
  int nodes_after = 0;
  int folded_nodes = 0;   ///< nodes replaced by constants
  int removed_nodes = 0;  ///< dead nodes dropped
};

/// Replaces every deterministic node whose inputs are all constant by its outputs (computed
/// with the CPU kernels), and Shape/Size nodes whose input has a fully static inferred shape.
/// Nodes whose kernel fails are left in place (the error surfaces when the model runs).
void fold_constants(ir::Model& model, PassReport& report);

/// Removes nodes none of whose outputs reach a graph output, and unused initializers.
void eliminate_dead_nodes(ir::Graph& graph, PassReport& report);

/// Runs all load-time passes in order.
void optimize(ir::Model& model, PassReport& report);

}  // namespace edgemm::passes
