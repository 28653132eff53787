#pragma once
/// \file activation_patterns.h
/// Activation patterns that exporters write as several standard ops, shared by
/// recognize_activations (passes.h), which fuses them into com.edgemm ops, and by `edgemm
/// convert --simplify` (convert/simplify_extra.h), which rewrites them with standard ops.

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/graph_view.h"

namespace edgemm::passes {

/// HardSwish (ONNX HardSwish-14, x·max(0, min(1, x/6 + 1/2))) as Paddle2ONNX and PyTorch write
/// it before opset 14: x·Clip(x + 3, 0, 6)/6, the division by 6 (or multiplication by 1/6)
/// before or after the product, every intermediate value read once.
struct HardSwishMatch {
  std::vector<int> nodes;  ///< indices in graph.nodes: Add, Clip, then Mul and Div/Mul in graph order of use
  std::string input;       ///< x
  std::string output;      ///< the pattern's result
};

/// The HardSwish pattern starting at the Add node `add` (x + 3), or nullopt.
std::optional<HardSwishMatch> match_hardswish_pattern(const ir::Graph& graph, const GraphView& view,
                                                      const ir::Node& add);

}  // namespace edgemm::passes
