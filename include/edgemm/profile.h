#pragma once
/// \file profile.h
/// Per-node timing records of a profiled run (Inferencer::run_profiled, `edgemm profile`) and
/// their Chrome trace.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"

namespace edgemm {

/// One node execution of a profiled run (Inferencer::run_profiled).
/// Times are wall-clock (steady clock) microseconds with sub-microsecond resolution.
/// `flops` follows ir::node_flops (src/ir/flops.h) on the run's actual shapes: 2 × MACs for
/// Conv, ConvTranspose, MatMul and Gemm, one FLOP per element of the first output otherwise.
/// `bytes` is the size of the node's input tensors (weights included, once per input position)
/// plus the outputs it computed: a lower bound on its memory traffic that ignores caches,
/// re-reads of weights or inputs, prepacked weight copies and kernel scratch.
struct NodeProfile {
  std::string node;                  ///< ONNX node name (may be empty in the model)
  std::string op_type;               ///< ONNX op, e.g. "Conv"
  std::string kernel;                ///< kernel that ran it, e.g. "f32_conv__onednn"
  std::vector<Shape> output_shapes;  ///< shapes of the outputs it computed, in node order
  double start_us = 0;               ///< start, since the beginning of the run
  double duration_us = 0;            ///< wall time of the node (includes its subgraphs)
  int64_t flops = 0;                 ///< 0 when the first output was not computed
  int64_t bytes = 0;                 ///< input bytes read + output bytes written
  int depth = 0;                     ///< 0 for the main graph, 1+ inside If/Loop/Scan bodies
  bool operator==(const NodeProfile&) const = default;
};

/// Outputs of a profiled run and its node executions in the order they finished (a subgraph's
/// nodes come before the If/Loop/Scan node that ran them).
struct ProfiledRun {
  std::vector<Tensor> outputs;     ///< as run() returns them
  std::vector<NodeProfile> nodes;  ///< one entry per node execution
};

/// Chrome trace JSON of node executions ("Trace Event Format": complete events "ph":"X",
/// ts/dur in microseconds, pid 1, tid 1 + depth; args op_type, kernel, output_shapes as text
/// like "[1,16,320,320][1,16]", flops, bytes). Opens in chrome://tracing and Perfetto.
std::string chrome_trace_json(const std::vector<NodeProfile>& events);

}  // namespace edgemm
