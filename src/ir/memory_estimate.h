#pragma once
/// \file memory_estimate.h
/// The memory one run of a model needs at given input shapes, estimated from ONNX shape
/// inference before anything is allocated, and the one check every command that takes input
/// shapes from its user makes with it (check_shapes_fit_memory): absurd shapes are refused in
/// milliseconds instead of growing until the allocator or the OOM killer stops the process.

#include <cstdint>
#include <map>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::ir {

/// Bytes one run holds, by kind.
struct MemoryEstimate {
  int64_t weight_bytes = 0;      ///< initializers and Constant-node tensors
  int64_t input_bytes = 0;       ///< graph inputs with static shapes (held by the caller through the run)
  int64_t activation_bytes = 0;  ///< most intermediate and output bytes alive at once (see estimate_memory)
  std::string largest_value;     ///< the largest intermediate or output ("" when none has a known size)
  int64_t largest_bytes = 0;
  int64_t total() const { return weight_bytes + input_bytes + activation_bytes; }
};

/// Estimates the memory of one run of the main graph from static shapes (inputs, outputs and
/// value_infos: import with the input shapes pinned): the nodes run in file order, each output
/// is allocated when its node runs and freed after its last reader (graph outputs are kept).
/// Values without a static shape count 0 and subgraphs are not walked, so the figure errs low
/// there; edgemm's fusions skip some intermediates, so it errs a little high elsewhere (PP-OCRv4
/// det at 1×3×416×640: 30.2 MB estimated, 25.5 MB planned arena + input + output).
MemoryEstimate estimate_memory(const Graph& graph);

/// Refuses input shapes whose run cannot fit: imports `model_path` with `shapes` pinned (no
/// checker), estimates its memory and compares the total with process_memory_limit()
/// (core/memory_limit.h). OK when `shapes` is empty or the model cannot be imported with them
/// (the caller's own checks then report why). Errors: kOutOfMemory, one message for every
/// command: "input shapes x=[1,3,20000,20000]: one run needs an estimated 38.1 GiB (weights ...,
/// inputs ..., intermediate tensors ... at their peak, the largest 'name' ...), more than the
/// 21.5 GiB this process may use (physical memory + swap); give smaller shapes".
Status check_shapes_fit_memory(const std::string& model_path, const std::map<std::string, Shape>& shapes);

}  // namespace edgemm::ir
