#pragma once
/// \file profile.h
/// Platform capability profiles (platforms/<name>.jsonl, format in docs/platforms.md): what a
/// vendor NPU converter accepts (ONNX ops with attribute / input / output constraints, opset
/// range, static-shape rule, precisions), each entry with the vendor document it comes from.
/// Loaded and validated here; `targets::check_model` (eligibility.h) applies one to a model.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::targets {

/// A profile entry's verdict: the vendor documents the op as supported, as unsupported, or
/// says nothing (unknown). kNative (unlisted_ops only) defers to edgemm's kernel registry.
enum class Verdict { kSupported, kUnsupported, kUnknown, kNative };

/// "supported", "unsupported", "unknown" or "native".
const char* verdict_name(Verdict verdict);

/// One condition a node must meet for the NPU to take it (all of an op's must hold).
/// Exactly one subject: an attribute (`attr`), input / output `index` of the node, or the
/// model's batch (dim 0 of every model input of rank >= 2, the axis RKNN's rknn_batch_size
/// scales and its op table's "batchsize: 1" remarks refer to).
struct Constraint {
  enum class Subject { kAttribute, kInput, kOutput, kModelBatch };
  Subject subject = Subject::kAttribute;
  std::string attr;  ///< kAttribute: the ONNX attribute name
  int index = 0;     ///< kInput / kOutput: position in the node's inputs / outputs
  /// kAttribute: the value (every element of a list) must be one of these (ints or strings).
  std::vector<std::variant<int64_t, std::string>> one_of;
  std::optional<double> min, max;  ///< bounds: attribute value/elements, dim `axis`, or the model batch
  std::optional<int64_t> axis;     ///< kInput / kOutput: the bounded dimension
  std::optional<int64_t> rank_min, rank_max;
  std::vector<std::string> dtypes;  ///< kInput / kOutput: allowed ONNX element types
  bool constant = false;            ///< kInput: must be an initializer (or Constant output)
  /// kAttribute 'group' only: a depthwise convolution also passes (group = input channels =
  /// output channels: weight [group, 1, kH, kW]) when the value is not in `one_of`.
  bool or_depthwise = false;
  std::string note;
  int line = 0;  ///< line in the profile file, for messages

  /// "attribute 'group' in [1]", "input 1 constant", "input 0 rank <= 4", "model batch <= 1", ...
  /// for reports.
  std::string describe() const;
};

/// A profile's entry for one operator (domain "" = ai.onnx).
struct OpRule {
  std::string op, domain;
  Verdict verdict = Verdict::kUnknown;
  std::vector<Constraint> constraints;
  std::string note, source;
  int line = 0;
};

/// A setting of the whole target with its source (opset range, static shapes, precision).
struct Sourced {
  std::string source;
  int line = 0;
};

/// One target's profile.
struct PlatformProfile {
  std::string name;       ///< "rk3588", the file's stem
  std::string title;      ///< "Rockchip RK3588 NPU (RKNPU2)"
  std::string converter;  ///< "rknn-toolkit2 2.3"
  std::string source;     ///< of the target line
  std::string path;       ///< the file it was read from

  std::optional<int64_t> opset_min, opset_max;  ///< ai.onnx opsets accepted; unset = undocumented
  Sourced opset_source;
  /// Whether every shape must be static: true, false, or unset = unknown.
  std::optional<bool> static_shapes;
  Sourced static_shapes_source;
  std::string preferred_precision;      ///< "int8", "fp16", ... (empty = undocumented)
  std::vector<std::string> precisions;  ///< computed on the NPU
  Sourced precision_source;
  Verdict unlisted = Verdict::kUnknown;  ///< for ops without an entry
  Sourced unlisted_source;
  std::vector<OpRule> ops;

  /// The entry for (domain, op), or null. Domain "" and "ai.onnx" are the same.
  const OpRule* find(const std::string& domain, const std::string& op) const;
};

/// Reads and validates a profile file. Errors: kIo when it is not a readable file; kInvalidModel naming
/// the file and line for anything outside the format: not JSON, unknown `kind` or key, missing
/// or empty `source`, an op name that is not an ONNX operator (checked against libonnx's schema
/// registry and the ops of opsets 18-23 it predates), a constraint with no or two subjects, a second
/// line of a setting kind, constraint bounds that cannot hold, unknown precision names, op lines in
/// a 'native' profile, no target line, or a file over 16 MiB.
Expected<PlatformProfile> load_profile(const std::string& path);

/// Names of the profiles in `dir` (the stems of its *.jsonl files), sorted.
std::vector<std::string> known_targets(const std::string& dir);

/// Loads `dir`/`name`.jsonl. Errors: kIo when `dir` is not a folder; kInvalidArgument for an
/// unknown name, listing the known ones; those of load_profile.
Expected<PlatformProfile> load_target(const std::string& dir, const std::string& name);

}  // namespace edgemm::targets
