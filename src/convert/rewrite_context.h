#pragma once
/// \file rewrite_context.h
/// What the opset rewrites (opset_downgrade.h and its per-op-family files) share: the graph
/// being rewritten, the source and target opsets, fresh names, new constants, the known rank and
/// dtype of values (from ONNX shape inference), and the list of nodes that replaces the graph's.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::convert {

/// State of one pass over a graph that replaces each node by zero or more nodes.
/// Not thread-safe; one per graph pass.
class RewriteContext {
 public:
  /// `graph` is rewritten in place by finish(); its value_infos are read for ranks and dtypes.
  RewriteContext(ir::Graph& graph, int64_t source_opset, int64_t target_opset);

  /// The model's ai.onnx opset before the rewrite.
  int64_t source_opset() const { return source_; }
  /// The opset the emitted nodes must satisfy.
  int64_t target_opset() const { return target_; }

  /// Appends a node (a copy of an original or a new one) to the replacement list.
  void emit(ir::Node node);
  /// Appends a new default-domain node named `<base>/<op_type>` (made unique) and returns it;
  /// the reference is valid until the next emit.
  ir::Node& emit(const std::string& op_type, const std::string& base, std::vector<std::string> inputs,
                 std::vector<std::string> outputs);
  /// A value name not used in the graph, derived from `hint`.
  std::string fresh_name(const std::string& hint);
  /// Adds an initializer under a fresh name derived from `hint` and returns the name.
  std::string add_constant(const std::string& hint, Tensor value);
  /// Adds a 1-D int64 initializer.
  std::string add_int64s(const std::string& hint, const std::vector<int64_t>& values);
  /// Adds a scalar (rank 0) initializer of float dtype `dtype` (float32 or float64) holding
  /// `value`. Errors: kUnsupported for other dtypes.
  Expected<std::string> add_float_scalar(const std::string& hint, double value, DataType dtype);

  /// The initializer behind `name`, or nullptr (absent inputs, computed values).
  const Tensor* constant(const std::string& name) const;
  /// The int64/int32 values of a constant, or nullopt when `name` is not a constant of those dtypes.
  std::optional<std::vector<int64_t>> constant_ints(const std::string& name) const;
  /// The single float value of a one-element float32/float64 constant, or nullopt.
  std::optional<double> constant_scalar(const std::string& name) const;
  /// Rank of `name` from initializers, graph inputs/outputs or inferred value_infos; -1 if unknown.
  int64_t rank(const std::string& name) const;
  /// Size of axis `axis` (≥ 0) of `name` when known statically, else -1.
  int64_t dim(const std::string& name, int64_t axis) const;
  /// Element type of `name` (kUndefined when unknown).
  DataType dtype(const std::string& name) const;

  /// Counts one application of the rewrite `name` (ConvertReport::rewrites).
  void count(const std::string& name) { ++counts_[name]; }
  /// Rewrites counted so far, by name.
  const std::map<std::string, int>& counts() const { return counts_; }

  /// Replaces the graph's nodes by the emitted ones.
  void finish();

 private:
  ir::Graph& graph_;
  int64_t source_;
  int64_t target_;
  std::vector<ir::Node> out_;
  std::unordered_set<std::string> used_names_;
  std::map<std::string, int> counts_;
};

/// An INT attribute.
ir::Attribute int_attribute(int64_t value);
/// An INTS attribute.
ir::Attribute ints_attribute(std::vector<int64_t> values);
/// A FLOAT attribute.
ir::Attribute float_attribute(float value);
/// A STRING attribute.
ir::Attribute string_attribute(std::string value);

/// kUnsupported "<Op> '<name>': <message> (converting to opset <target>)".
Status cannot_convert(const ir::Node& node, int64_t target_opset, const std::string& message);

/// Makes `node`'s `axis` / `axes` attribute non-negative (negative axes exist from opset 11 and
/// count from the end): adds the rank of input 0, or for Unsqueeze that of its output (input
/// rank + number of axes, Operators.md Unsqueeze-11). Errors: cannot_convert when a negative
/// axis meets an input of unknown rank.
Status make_axes_non_negative(const RewriteContext& ctx, ir::Node& node);

}  // namespace edgemm::convert
