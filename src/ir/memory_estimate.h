#pragma once
/// \file memory_estimate.h
/// The memory one run of a model needs at given input shapes, estimated from ONNX shape
/// inference before anything is allocated; edgemm/memory_check.h refuses input shapes with it.

#include <cstdint>
#include <string>

#include "edgemm/model_estimates.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::ir {

using MemoryEstimate = edgemm::MemoryEstimate;  ///< edgemm/model_estimates.h

/// Estimates the memory of one run of the main graph from static shapes (inputs, outputs and
/// value_infos: import with the input shapes pinned): the nodes run in file order, each output
/// is allocated when its node runs and freed after its last reader (graph outputs are kept).
/// Values without a static shape count 0 and subgraphs are not walked, so the figure errs low
/// there; edgemm's fusions skip some intermediates, so it errs a little high elsewhere (PP-OCRv4
/// det at 1×3×416×640: 30.2 MB estimated, 25.5 MB planned arena + input + output).
MemoryEstimate estimate_memory(const Graph& graph);


}  // namespace edgemm::ir
