#pragma once
/// \file eligibility.h
/// Applies a platform profile (profile.h) to a model: for each node of the main graph, whether
/// the target's NPU converter takes it, it falls back to the CPU (and why), or the documentation
/// does not say (support unknown, counted apart from both); the partitions (connected groups of
/// nodes with the same placement) and the tensors crossing between them; and the edgemm rewrites that would remove each
/// reason (`edgemm convert
/// --target`). Nothing here runs a vendor tool: verdicts are what the vendor documents say.

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "targets/profile.h"

namespace edgemm::targets {

/// One reason a node does not go to the NPU.
struct Reason {
  /// kOp: the profile lists the op as unsupported (or lists ops exhaustively and not this one);
  /// kUnknown: the documentation says nothing (conservatively CPU); kAttribute / kInput /
  /// kOutput: a constraint fails; kDynamicShape: the target needs static shapes and a shape
  /// here is symbolic or unknown; kNoKernel: generic CPU profiles only, edgemm has no kernel.
  enum class Kind { kOp, kUnknown, kAttribute, kInput, kOutput, kDynamicShape, kNoKernel };
  Kind kind = Kind::kOp;
  std::string text;    ///< "attribute 'group' = 32, profile allows [1]"
  std::string source;  ///< the profile entry's vendor source (empty for shape rules)
  int line = 0;        ///< the profile line (0 when none)
  std::string fix;     ///< the rewrite that removes it, e.g. "fix shapes", or empty
};

/// "op", "unknown", "attribute", "input", "output", "dynamic_shape" or "no_kernel".
const char* reason_kind_name(Reason::Kind kind);

/// Where a node goes: the NPU (no reasons), the CPU (at least one reason that is not
/// kUnknown: a documented refusal, a failed constraint, a shape to fix), or unknown (every
/// reason is kUnknown: the documentation is silent, so neither is promised).
enum class Placement { kNpu, kCpu, kUnknown };

/// "npu", "cpu" or "unknown".
const char* placement_name(Placement placement);

/// The verdict of one node.
struct NodeVerdict {
  std::string node, op_type, domain;
  Placement placement = Placement::kCpu;
  bool constant = false;  ///< a Constant node: data like an initializer, not placed
  std::vector<Reason> reasons;
  int partition = -1;  ///< index into TargetReport::partitions (-1 for constants)
};

/// A connected group of nodes with the same placement.
struct Partition {
  Placement placement = Placement::kCpu;
  int nodes = 0;
};

/// A tensor produced by a node of one placement and read by a node of another (graph inputs and
/// outputs, which always go through the host, are not listed).
struct Crossing {
  std::string tensor;
  Placement from = Placement::kNpu, to = Placement::kCpu;
  std::optional<int64_t> bytes;  ///< when the shape and dtype are static
};

/// The report of one model on one target.
struct TargetReport {
  std::string target, title;
  int64_t model_opset = 0;
  /// Whole-model problems (e.g. the opset outside the converter's range), with their fix.
  std::vector<Reason> model_issues;
  std::vector<NodeVerdict> nodes;  ///< in graph order
  std::vector<Partition> partitions;
  std::vector<Crossing> crossings;
  /// Nodes per placement; they add up to the non-Constant nodes (Constant nodes are in none).
  int npu_nodes = 0, cpu_nodes = 0, unknown_nodes = 0;
  int constant_nodes = 0;
  /// Distinct fixes named by the reasons, with how many node reasons each removes.
  std::vector<std::pair<std::string, int>> fixes;

  /// Partitions of `placement`.
  int partition_count(Placement placement) const;
  /// Crossings between the NPU and the CPU (`known`), or with an unknown side (!`known`).
  int crossing_count(bool known) const;
  /// Bytes of the NPU<->CPU crossings with static shapes.
  int64_t crossing_bytes() const;
};

/// Checks every node of `model`'s main graph against `profile`. Shapes come from the model's
/// inputs, initializers and value_info (ONNX shape inference at import). Subgraphs (If/Loop
/// bodies) are not inspected: their parent node is judged by its own op's entry.
TargetReport check_model(const ir::Model& model, const PlatformProfile& profile);

}  // namespace edgemm::targets
