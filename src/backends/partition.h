#pragma once
/// \file partition.h
/// Splits a graph between a backend and edgemm's native CPU kernels by the backend's capability:
/// every maximal run of consecutive supported nodes in topological order (such a run is convex:
/// no path leaves it and comes back) becomes one partition, replaced in the graph by a
/// com.edgemm BackendPartition node that the runtime runs through the backend.

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "edgemm/inferencer.h"
#include "edgemm/status.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace edgemm::backends {

/// Op type (domain ir::kEdgemmDomain) of the nodes that stand for partitions; attribute
/// "partition" is the index into PartitionedGraph::partitions.
inline constexpr const char* kPartitionOp = "BackendPartition";

/// Result of partition_graph.
struct PartitionedGraph {
  /// Standalone models, one per partition: its nodes, the initializers they read, graph inputs
  /// (values from outside the partition, with their known dtype/shape) and graph outputs
  /// (values read outside it or graph outputs).
  std::vector<ir::Model> partitions;
  /// Every node of the original graph in topological order, with its backend and reason.
  std::vector<NodePlacement> placement;
};

/// Rewrites `model` so that each partition of `backend`'s supported nodes is one
/// kPartitionOp node; nodes it refuses stay as they are, placed on "native". Nodes with
/// subgraphs (If, Loop, Scan) always stay native. Sorts the graph topologically.
PartitionedGraph partition_graph(ir::Model& model, const Backend& backend);

/// A registry with the kernel of kPartitionOp nodes, which runs `compiled[partition]` and copies
/// its outputs into the node's outputs. Pass it to runtime::CompiledGraph::compile.
std::unique_ptr<kernels::KernelRegistry> partition_kernels(
    std::vector<std::shared_ptr<const CompiledPartition>> compiled, const std::string& backend_name);

/// "Conv 'a', Clip 'b' and 3 more" for warnings: the nodes of `placement` that fell back.
std::string describe_fallbacks(const std::vector<NodePlacement>& placement, const std::string& backend);

}  // namespace edgemm::backends
