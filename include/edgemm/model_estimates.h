#pragma once
/// \file model_estimates.h
/// What one run of a model costs, estimated from ONNX shape inference before anything runs:
/// floating-point operations and memory. edgemm/tools/inspect.h reports both; the memory figure
/// is also what edgemm/memory_check.h compares with edgemm/memory_limit.h's limit.

#include <cstdint>
#include <map>
#include <string>

namespace edgemm {

/// FLOPs of one run of a main graph (subgraphs are not counted): 2 × multiply-accumulates of
/// Conv, ConvTranspose, MatMul, Gemm and their integer and quantized forms (the convention of
/// most papers and profilers, integer operations counted alike), one FLOP per element of the
/// first output for every other op.
struct FlopsEstimate {
  int64_t total = 0;                     ///< FLOPs of one run
  std::map<std::string, int64_t> by_op;  ///< op_type → FLOPs
  int unknown_nodes = 0;                 ///< nodes whose first output shape was not inferred (not counted)
};

/// Bytes one run of a main graph holds, by kind: nodes run in file order, each output allocated
/// when its node runs and freed after its last reader (graph outputs kept). Values without a
/// static shape count 0 and subgraphs are not walked, so the figure errs low there; edgemm's
/// fusions skip some intermediates, so it errs a little high elsewhere.
struct MemoryEstimate {
  int64_t weight_bytes = 0;      ///< initializers and Constant-node tensors
  int64_t input_bytes = 0;       ///< graph inputs with static shapes (held by the caller through the run)
  int64_t activation_bytes = 0;  ///< most intermediate and output bytes alive at once
  std::string largest_value;     ///< the largest intermediate or output ("" when none has a known size)
  int64_t largest_bytes = 0;     ///< its size
  /// Weights, inputs and intermediate tensors at their peak.
  int64_t total() const { return weight_bytes + input_bytes + activation_bytes; }
};

}  // namespace edgemm
