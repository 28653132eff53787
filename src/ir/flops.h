#pragma once
/// \file flops.h
/// FLOPs estimate from inferred shapes: 2 × multiply-accumulates of Conv, ConvTranspose,
/// MatMul and Gemm (the convention of most papers and profilers); other ops count one FLOP
/// per output element. Requires value shapes from ONNX shape inference (fix symbolic input
/// dims first).

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace edgemm::ir {

struct FlopsEstimate {
  int64_t total = 0;                      ///< FLOPs for one run
  std::map<std::string, int64_t> by_op;   ///< op_type → FLOPs
  int unknown_nodes = 0;                  ///< nodes whose shapes were not inferred (not counted)
};

/// Estimates FLOPs of the main graph (subgraphs are not counted).
FlopsEstimate estimate_flops(const Graph& graph);

}  // namespace edgemm::ir
