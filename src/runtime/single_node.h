#pragma once
/// \file single_node.h
/// Runs one node on given inputs through the full runtime (kernel lookup, allocation,
/// validation). Used by kernel unit tests and by constant folding.

#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::runtime {

/// Creates the node's kernel from the CPU registry for `opset` and runs it once.
/// `inputs[i]` matches node.inputs[i]; an undefined Tensor stands for an absent optional
/// input. Inputs are also offered to the kernel factory as compile-time constants.
/// Errors: kUnsupported when no kernel exists; whatever the kernel returns.
Expected<std::vector<Tensor>> run_node(const ir::Node& node, const std::vector<Tensor>& inputs,
                                       int64_t opset, int threads = 1);

}  // namespace edgemm::runtime
