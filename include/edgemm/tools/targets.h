#pragma once
/// \file targets.h
/// Vendor NPU targets, as `edgemm inspect --target` and `edgemm convert --target` use them
/// (docs/platforms.md). Nothing here runs a vendor tool: verdicts are what the vendor documents say.
/// - Platform capability profiles (platforms/<name>.jsonl): what a vendor NPU converter accepts
///   (ONNX ops with attribute / input / output constraints, opset range, static-shape rule,
///   precisions), each entry with the vendor document it comes from; loaded and validated.
/// - check_model: for each node of a model's main graph, whether the converter takes it, it falls
///   back to the CPU (and why), or the documentation does not say (support unknown, counted
///   apart from both); the partitions (connected groups of nodes with the same placement), the
///   tensors crossing between them, and the edgemm rewrites that would remove each reason.
/// - plan_conversion: the edgemm/tools/convert.h options chosen from a profile and a report.
/// - Converter recipes (platforms/recipes/<target>/, docs/platform-recipes.md): recipe.json names
///   the template files to fill in and the calibration data format the vendor tool expects;
///   templates hold `{{placeholder}}`s from a fixed set (kRecipePlaceholders).
/// Library edgemm::targets.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tools/convert.h"

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
  std::string op, domain;               ///< the ONNX operator
  Verdict verdict = Verdict::kUnknown;  ///< what the vendor documents say
  std::vector<Constraint> constraints;  ///< all must hold for the NPU to take a node
  std::string note, source;             ///< a remark, and the vendor document it comes from
  int line = 0;                         ///< line in the profile file
};

/// A setting of the whole target with its source (opset range, static shapes, precision).
struct Sourced {
  std::string source;  ///< the vendor document
  int line = 0;        ///< line in the profile file
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

/// One reason a node does not go to the NPU.
struct Reason {
  /// kOp: the profile lists the op as unsupported (or lists ops exhaustively and not this one);
  /// kUnknown: the documentation says nothing (conservatively CPU); kAttribute / kInput /
  /// kOutput: a constraint fails; kDynamicShape: the target needs static shapes and a shape
  /// here is symbolic or unknown; kNoKernel: generic CPU profiles only, edgemm has no kernel.
  enum class Kind { kOp, kUnknown, kAttribute, kInput, kOutput, kDynamicShape, kNoKernel };
  Kind kind = Kind::kOp;  ///< see Kind
  std::string text;       ///< "attribute 'group' = 32, profile allows [1]"
  std::string source;     ///< the profile entry's vendor source (empty for shape rules)
  int line = 0;           ///< the profile line (0 when none)
  std::string fix;        ///< the rewrite that removes it, e.g. "fix shapes", or empty
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
  std::string node, op_type, domain;      ///< the node's name, op and domain ("" = ai.onnx)
  Placement placement = Placement::kCpu;  ///< where it goes
  bool constant = false;                  ///< a Constant node: data like an initializer, not placed
  std::vector<Reason> reasons;            ///< why not the NPU (empty for kNpu)
  int partition = -1;                     ///< index into TargetReport::partitions (-1 for constants)
};

/// A connected group of nodes with the same placement.
struct Partition {
  Placement placement = Placement::kCpu;  ///< of every node in it
  int nodes = 0;                          ///< nodes in it
};

/// A tensor produced by a node of one placement and read by a node of another (graph inputs and
/// outputs, which always go through the host, are not listed).
struct Crossing {
  std::string tensor;                                      ///< the value's name
  Placement from = Placement::kNpu, to = Placement::kCpu;  ///< its producer's and a reader's placement
  std::optional<int64_t> bytes;                            ///< when the shape and dtype are static
};

/// The report of one model on one target.
struct TargetReport {
  std::string target, title;  ///< the profile's name and title
  int64_t model_opset = 0;
  /// Whole-model problems (e.g. the opset outside the converter's range), with their fix.
  std::vector<Reason> model_issues;
  std::vector<NodeVerdict> nodes;     ///< in graph order
  std::vector<Partition> partitions;  ///< indexed by NodeVerdict::partition
  std::vector<Crossing> crossings;    ///< tensors between partitions of different placement
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
TargetReport check_model(const OnnxModel& model, const PlatformProfile& profile);

/// The rewrites for one model and target.
struct ConversionPlan {
  convert::ConvertOptions options;  ///< for convert::convert_model
  std::vector<std::string> steps;   ///< "fix shapes: x=1,3,640,640 (target needs static shapes)", ...
};

/// Chooses the rewrites: the given fixed shapes; simplification (always: folding is what turns
/// shape computations into the constants converters want); an opset inside the profile's range
/// (and within what edgemm converts, convert::kMinOpset..kMaxOpset), lowered to 16 when the
/// model has LayerNormalization that the profile does not take but whose decomposition it does.
/// Errors: kInvalidArgument naming each dynamic input when the profile requires static shapes
/// and `fixed_shapes` leaves one symbolic (with the flag to pass); kUnsupported when the
/// profile's opset range does not meet edgemm's.
Expected<ConversionPlan> plan_conversion(const OnnxModel& model, const PlatformProfile& profile,
                                         const TargetReport& report, const std::map<std::string, Shape>& fixed_shapes);

/// The placeholders a template may use (anything else is refused when it is rendered).
inline const std::vector<std::string> kRecipePlaceholders = {
    "model_file",  "model_stem",     "input_name",  "input_shape",   "input_shape_list", "input_height",
    "input_width", "input_channels", "mean_values", "std_values",    "scale_values",     "calib_list",
    "calib_dir",   "calib_count",    "quantize",    "quantize_flag", "rgb2bgr",          "input_color"};

/// How the vendor tool wants calibration samples.
struct CalibrationFormat {
  /// "image_list" (the list names image files, the tool preprocesses), "raw_float32" / "raw_uint8"
  /// (headerless preprocessed tensors), "npy" (preprocessed .npy), or "none".
  std::string format = "none";
  std::string layout;  ///< "NCHW" or "NHWC" for preprocessed formats
  /// Channel order of the samples: "RGB", "BGR" (empty: RGB), or "model" (the order the model
  /// was trained on, `convert --bgr`; the converter is told the same order).
  std::string color;
  bool required = false;  ///< the converter always quantizes: --calib images are needed
  std::string list_file;  ///< written in the folder when non-empty
  std::string dir;        ///< folder of the samples inside the deployment folder
};

/// One template to fill in.
struct RecipeTemplate {
  std::string template_file;  ///< path of the template (absolute after load_recipe)
  std::string output;         ///< file name in the deployment folder
  std::string run;            ///< the command the user runs, for the README
};

/// A target's recipe folder.
struct Recipe {
  std::string target;                         ///< the profile's name
  std::vector<RecipeTemplate> templates;      ///< files to fill in
  CalibrationFormat calibration;              ///< what the vendor tool wants as calibration data
  std::vector<std::string> sources, unknown;  ///< vendor documents; points they do not confirm
};

/// Reads `dir`/recipe.json. Errors: kIo when missing; kInvalidModel naming the file and key for
/// a malformed one (unknown calibration format or layout, no templates, a template path outside
/// `dir` or that does not exist, an output name with a path separator, two files of the folder with the same name).
Expected<Recipe> load_recipe(const std::string& dir);

/// `text` with every `{{name}}` replaced by values[name]. Errors: kInvalidModel naming
/// `what` and the placeholder when it is not in kRecipePlaceholders or has no value, or a
/// `{{` is not closed.
Expected<std::string> render_template(const std::string& text, const std::map<std::string, std::string>& values,
                                      const std::string& what);

}  // namespace edgemm::targets
