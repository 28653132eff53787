#pragma once
/// \file inspect.h
/// What a model file holds and costs, as `edgemm inspect` shows it: opsets, inputs and outputs,
/// nodes per op, parameters, FLOPs and memory of one run, and optionally what edgemm's load-time
/// passes (the graph edgemm runs) rewrite. Library edgemm::passes.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "edgemm/model_estimates.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/value_info.h"

namespace edgemm::passes {

/// What edgemm's graph passes changed.
struct PassReport {
  int nodes_before = 0;   ///< main-graph nodes before the passes
  int nodes_after = 0;    ///< and after
  int folded_nodes = 0;   ///< nodes replaced by constants
  int removed_nodes = 0;  ///< dead nodes dropped
  /// Patterns rewritten, by name (e.g. "BatchNormalization→Conv": 3, "HardSwish": 24).
  std::map<std::string, int> patterns;
  /// Nodes the fusion and clean-up rewrites replaced (neither folded nor dropped as dead).
  int rewritten_nodes() const { return nodes_before - nodes_after - folded_nodes - removed_nodes; }
};

/// What to inspect.
struct InspectOptions {
  /// Input name → full static shape, pinned before ONNX shape inference (FLOPs and memory need
  /// static shapes). Check them first with edgemm/tools/convert.h validate_fixed_shapes.
  std::map<std::string, Shape> shapes;
  /// Also run the load-time passes (those Inferencer runs: folding, fusions, layouts for this
  /// CPU's kernels) and describe the graph they leave.
  bool optimized = false;
};

/// A model's description. With InspectOptions::optimized, nodes, op_histogram, parameters,
/// flops and shapes_known describe the optimized graph; memory is always the file's graph's.
struct ModelSummary {
  int64_t ir_version = 0;                   ///< ModelProto.ir_version
  std::string producer_name;                ///< ModelProto.producer_name
  std::map<std::string, int64_t> opsets;    ///< domain ("" = ai.onnx) → version
  std::vector<ValueInfo> inputs;            ///< after shape pinning and inference
  std::vector<ValueInfo> outputs;           ///< with their inferred shapes
  size_t nodes = 0;                         ///< main-graph nodes
  std::map<std::string, int> op_histogram;  ///< "Conv", or "<domain>.<op>" outside ai.onnx
  /// Ops, named as in op_histogram, that no edgemm CPU kernel runs at the model's opset of their
  /// domain, subgraphs (If, Loop, Scan bodies) included: the native backend refuses to load a
  /// model with any; the others run natively.
  std::set<std::string> ops_without_kernel;
  int64_t parameters = 0;               ///< elements of initializers and Constant-node tensors
  int64_t parameter_bytes = 0;          ///< their bytes
  bool shapes_known = false;            ///< every input has a known rank and static dims
  FlopsEstimate flops;                  ///< meaningful when shapes_known
  MemoryEstimate memory;                ///< meaningful when shapes_known
  std::optional<PassReport> optimized;  ///< with InspectOptions::optimized
};

/// Reads `path` (ONNX checker and shape inference, `options.shapes` pinned) and describes it.
/// Errors: those of edgemm::OnnxModel::load (kIo naming a missing or unreadable file,
/// kInvalidModel for a corrupt one or a checker failure, kUnsupported for an ai.onnx opset above 21).
Expected<ModelSummary> inspect_model(const std::string& path, const InspectOptions& options = {});

}  // namespace edgemm::passes
