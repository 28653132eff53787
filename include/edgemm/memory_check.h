#pragma once
/// \file memory_check.h
/// The check every command that takes input shapes from its user makes before it loads or runs
/// a model: absurd shapes are refused in milliseconds instead of growing until the allocator or
/// the OOM killer stops the process.

#include <map>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm {

/// Refuses input shapes whose run cannot fit: imports `model_path` with `shapes` pinned (by
/// input name; no ONNX checker), estimates the memory of one run from ONNX shape inference
/// (weights, inputs, and intermediate tensors at their peak, nodes in file order, each output
/// freed after its last reader) and compares the total with what this process may use
/// (physical memory + swap, or a cgroup or RLIMIT_AS limit when lower). OK when `shapes` is
/// empty or the model cannot be imported with them (loading then reports why). Errors:
/// kOutOfMemory, e.g. "input shapes x=[1,3,20000,20000]: one run needs an estimated 38.1 GiB
/// (weights ..., inputs ..., intermediate tensors ... at their peak, the largest 'name' ...),
/// more than the 21.5 GiB this process may use (physical memory + swap); give smaller shapes".
Status check_shapes_fit_memory(const std::string& model_path, const std::map<std::string, Shape>& shapes);

}  // namespace edgemm
