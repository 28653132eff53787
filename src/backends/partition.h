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
#include "edgemm/runtime_options.h"
#include "edgemm/status.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace edgemm::backends {

/// Op type (domain ir::kEdgemmDomain) of the nodes that stand for partitions; attribute
/// "partition" is the index into PartitionedGraph::compiled.
inline constexpr const char* kPartitionOp = "BackendPartition";

/// Prepares `model` for a backend: passes::simplify (standard ops only) and ONNX shape
/// inference in turns, until a round folds nothing more. Shape inference at import cannot see
/// through shape computations (Shape → Cast → Slice → Concat → Reshape in PP-OCRv4 rec) that
/// folding later turns into constants; the next round infers the shapes behind them, and then
/// Shape nodes on those values fold too. The shapes go into value_infos (and graph outputs),
/// where capability() reads them. Inference runs on a copy whose initializers of more than 64
/// elements are graph inputs of the same type (their values cannot change a shape), so the
/// weights are not serialized. A round whose inference fails keeps the value_infos it had.
void simplify_for_backend(ir::Model& model);

/// Result of partition_graph.
struct PartitionedGraph {
  /// The compiled partitions, indexed by the kPartitionOp nodes' "partition" attribute. Each was
  /// compiled from a standalone model: its nodes, the initializers they read, graph inputs
  /// (values from outside the partition, with their known dtype/shape) and graph outputs
  /// (values read outside it or graph outputs).
  std::vector<std::shared_ptr<const CompiledPartition>> compiled;
  /// Every node of the original graph in topological order, with its backend and reason.
  std::vector<NodePlacement> placement;
  /// One line per partition the backend failed to compile (its nodes run on native), for the
  /// warning: "<count> nodes: <the backend's error>".
  std::vector<std::string> compile_failures;
};

/// Splits `model` between `backend` and the native kernels: every maximal run of nodes the
/// backend accepts is compiled with backend.compile(options) and, when that succeeds, replaced by
/// one kPartitionOp node. Nodes it refuses stay as they are, placed on "native" with its reason;
/// nodes with subgraphs (If, Loop, Scan) always stay native. A run that fails to compile also
/// stays native (never an error, never silent): each of its nodes gets the reason "its partition
/// of <count> nodes failed to compile: <error>", and compile_failures gets a line. Other runs are
/// not affected, since runs are separated by refused nodes. Sorts the graph topologically.
PartitionedGraph partition_graph(ir::Model& model, const Backend& backend, const BackendOptions& options);

/// A registry with the kernel of kPartitionOp nodes, which runs `compiled[partition]` and copies
/// its outputs into the node's outputs. Pass it to runtime::CompiledGraph::compile.
std::unique_ptr<kernels::KernelRegistry> partition_kernels(
    std::vector<std::shared_ptr<const CompiledPartition>> compiled, const std::string& backend_name);

/// "Conv 'a', Clip 'b' and 3 more" for warnings: the nodes of `placement` that fell back.
std::string describe_fallbacks(const std::vector<NodePlacement>& placement, const std::string& backend);

}  // namespace edgemm::backends
