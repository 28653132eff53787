#include <onnx/defs/schema.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "edgemm/tools/targets.h"

namespace edgemm::targets {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

/// Profiles are a few hundred lines; anything far larger is not one.
constexpr uintmax_t kMaxProfileBytes = uintmax_t{16} << 20;

/// Error for line `line` of `path`.
Status line_error(const std::string& path, int line, const std::string& message) {
  return Status(StatusCode::kInvalidModel, path + ":" + std::to_string(line) + ": " + message);
}

/// Reads one line's JSON objects; each getter names the key in its error.
class LineReader {
 public:
  LineReader(const Json& j, std::string path, int line) : j_(j), path_(std::move(path)), line_(line) {}

  Status error(const std::string& message) const { return line_error(path_, line_, message); }

  /// Fails for keys outside `allowed`.
  Status only_keys(const Json& obj, std::initializer_list<const char*> allowed, const std::string& what) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; })) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return error("unknown key '" + it.key() + "' in " + what + " (allowed: " + list + ")");
      }
    }
    return Status::ok();
  }

  Expected<std::string> string(const Json& obj, const char* key, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end() || (it->is_null() && !required)) {
      if (required) return error(std::string("missing '") + key + "'");
      return std::string();
    }
    if (!it->is_string()) return error(std::string("'") + key + "' must be a string");
    return it->get<std::string>();
  }

  Expected<std::optional<int64_t>> integer(const Json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
    if (!it->is_number_integer()) return error(std::string("'") + key + "' must be an integer or null");
    return std::optional<int64_t>(it->get<int64_t>());
  }

  Expected<std::optional<double>> number(const Json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return std::optional<double>();
    if (!it->is_number()) return error(std::string("'") + key + "' must be a number");
    return std::optional<double>(it->get<double>());
  }

  Expected<std::vector<std::string>> strings(const Json& obj, const char* key) const {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end()) return out;
    if (!it->is_array()) return error(std::string("'") + key + "' must be a list of strings");
    for (const Json& v : *it) {
      if (!v.is_string()) return error(std::string("'") + key + "' must be a list of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

  /// The line's non-empty `source`.
  Expected<Sourced> sourced() const {
    EDGEMM_ASSIGN_OR_RETURN(std::string source, string(j_, "source", true));
    if (source.find_first_not_of(" \t") == std::string::npos) return error("'source' is empty");
    return Sourced{source, line_};
  }

  const Json& json() const { return j_; }
  int line() const { return line_; }

 private:
  const Json& j_;
  std::string path_;
  int line_;
};

/// ai.onnx operators added after opset 17, which Debian 12's libonnx 1.12 does not know (ONNX
/// Changelog.md: opset 18 = ONNX 1.13, 19 = 1.14, 20 = 1.15, 23 = 1.18).
const std::set<std::string> kOpsAfterLibonnx = {
    "BitwiseAnd", "BitwiseNot",         "BitwiseOr",      "BitwiseXor",   "CenterCropPad",
    "Col2Im",     "GroupNormalization", "Mish",           "DeformConv",   "AffineGrid",
    "Gelu",       "ImageDecoder",       "RegexFullMatch", "StringConcat", "StringSplit",
    "Attention",  "RMSNormalization",   "RotaryEmbedding"};

const std::set<std::string> kDtypes = {"float32", "float16", "bfloat16", "float64", "int8",   "uint8", "int16",
                                       "uint16",  "int32",   "uint32",   "int64",   "uint64", "bool",  "string"};

Expected<Verdict> parse_verdict(const LineReader& r, const std::string& text, bool allow_native) {
  if (text == "supported") return Verdict::kSupported;
  if (text == "unsupported") return Verdict::kUnsupported;
  if (text == "unknown") return Verdict::kUnknown;
  if (text == "native" && allow_native) return Verdict::kNative;
  return r.error("'verdict' is '" + text + "'; expected supported, unsupported or unknown" +
                 (allow_native ? " (or native)" : ""));
}

Status check_dtypes(const LineReader& r, const std::vector<std::string>& dtypes) {
  for (const std::string& d : dtypes) {
    if (kDtypes.count(d) == 0)
      return r.error("unknown dtype '" + d + "' (ONNX element type names: float32, int8, ...)");
  }
  return Status::ok();
}

/// The checks of an attribute constraint ({"attr": A, "in" | "min"/"max", "or_depthwise"}).
Status parse_attribute_constraint(const LineReader& r, const Json& c, Constraint& k) {
  k.subject = Constraint::Subject::kAttribute;
  EDGEMM_ASSIGN_OR_RETURN(k.attr, r.string(c, "attr", true));
  for (const char* key : {"axis", "rank_min", "rank_max", "dtype_in", "constant"}) {
    if (c.contains(key)) return r.error(std::string("'") + key + "' applies to an input or output, not to 'attr'");
  }
  if (auto in = c.find("in"); in != c.end()) {
    if (!in->is_array() || in->empty()) return r.error("'in' must be a non-empty list");
    for (const Json& v : *in) {
      if (v.is_number_integer()) {
        k.one_of.emplace_back(v.get<int64_t>());
      } else if (v.is_string()) {
        k.one_of.emplace_back(v.get<std::string>());
      } else {
        return r.error("'in' holds integers or strings");
      }
    }
  }
  if (auto d = c.find("or_depthwise"); d != c.end()) {
    if (!d->is_boolean()) return r.error("'or_depthwise' must be true or false");
    k.or_depthwise = d->get<bool>();
    if (k.or_depthwise && (k.attr != "group" || k.one_of.empty())) {
      return r.error("'or_depthwise' applies to a constraint on 'group' with 'in'");
    }
  }
  if (k.one_of.empty() && !k.min && !k.max) {
    return r.error("constraint on '" + k.attr + "' has no 'in', 'min' or 'max'");
  }
  if (!k.one_of.empty() && (k.min || k.max)) return r.error("a constraint has either 'in' or 'min'/'max', not both");
  if (k.min && k.max && *k.min > *k.max) return r.error("'min' is above 'max'");
  return Status::ok();
}

/// The checks of a model-batch constraint ({"model_batch": true, "min"/"max"}).
Status parse_batch_constraint(const LineReader& r, const Json& c, Constraint& k) {
  k.subject = Constraint::Subject::kModelBatch;
  if (c.at("model_batch") != true) return r.error("'model_batch' must be true");
  for (const char* key : {"in", "axis", "rank_min", "rank_max", "dtype_in", "constant", "or_depthwise"}) {
    if (c.contains(key)) return r.error(std::string("'") + key + "' does not apply to 'model_batch'");
  }
  if (!k.min && !k.max) return r.error("'model_batch' needs 'min' or 'max'");
  if (k.min && k.max && *k.min > *k.max) return r.error("'min' is above 'max'");
  return Status::ok();
}

Expected<Constraint> parse_constraint(const LineReader& r, const Json& c) {
  if (!c.is_object()) return r.error("a constraint must be a JSON object");
  EDGEMM_RETURN_IF_ERROR(r.only_keys(c,
                                     {"attr", "input", "output", "model_batch", "in", "min", "max", "axis", "rank_min",
                                      "rank_max", "dtype_in", "constant", "or_depthwise", "note"},
                                     "a constraint"));
  Constraint k;
  k.line = r.line();
  const int subjects = static_cast<int>(c.contains("attr")) + static_cast<int>(c.contains("input")) +
                       static_cast<int>(c.contains("output")) + static_cast<int>(c.contains("model_batch"));
  if (subjects != 1) return r.error("a constraint needs exactly one of 'attr', 'input', 'output', 'model_batch'");
  EDGEMM_ASSIGN_OR_RETURN(k.note, r.string(c, "note", false));
  EDGEMM_ASSIGN_OR_RETURN(k.min, r.number(c, "min"));
  EDGEMM_ASSIGN_OR_RETURN(k.max, r.number(c, "max"));
  if (c.contains("attr")) {
    EDGEMM_RETURN_IF_ERROR(parse_attribute_constraint(r, c, k));
    return k;
  }
  if (c.contains("model_batch")) {
    EDGEMM_RETURN_IF_ERROR(parse_batch_constraint(r, c, k));
    return k;
  }
  const bool input = c.contains("input");
  k.subject = input ? Constraint::Subject::kInput : Constraint::Subject::kOutput;
  EDGEMM_ASSIGN_OR_RETURN(std::optional<int64_t> index, r.integer(c, input ? "input" : "output"));
  if (!index || *index < 0) return r.error(std::string("'") + (input ? "input" : "output") + "' must be an index >= 0");
  k.index = static_cast<int>(*index);
  if (c.contains("in")) return r.error("'in' applies to 'attr' constraints");
  if (c.contains("or_depthwise")) return r.error("'or_depthwise' applies to 'attr' constraints");
  EDGEMM_ASSIGN_OR_RETURN(k.axis, r.integer(c, "axis"));
  EDGEMM_ASSIGN_OR_RETURN(k.rank_min, r.integer(c, "rank_min"));
  EDGEMM_ASSIGN_OR_RETURN(k.rank_max, r.integer(c, "rank_max"));
  EDGEMM_ASSIGN_OR_RETURN(k.dtypes, r.strings(c, "dtype_in"));
  EDGEMM_RETURN_IF_ERROR(check_dtypes(r, k.dtypes));
  if (auto it = c.find("constant"); it != c.end()) {
    if (!it->is_boolean()) return r.error("'constant' must be true or false");
    k.constant = it->get<bool>();
    if (k.constant && !input) return r.error("'constant' applies to inputs");
  }
  if ((k.min || k.max) && !k.axis) return r.error("'min'/'max' on an input or output need 'axis'");
  if (k.min && k.max && *k.min > *k.max) return r.error("'min' is above 'max'");
  if (k.rank_min && k.rank_max && *k.rank_min > *k.rank_max) return r.error("'rank_min' is above 'rank_max'");
  if (k.axis && !k.min && !k.max) return r.error("'axis' needs 'min' or 'max'");
  if (!k.axis && !k.rank_min && !k.rank_max && k.dtypes.empty() && !k.constant) {
    return r.error("constraint on " + std::string(input ? "input " : "output ") + std::to_string(k.index) +
                   " has nothing to check");
  }
  return k;
}

Status parse_op(const LineReader& r, PlatformProfile& p) {
  const Json& j = r.json();
  EDGEMM_RETURN_IF_ERROR(
      r.only_keys(j, {"kind", "op", "domain", "verdict", "constraints", "note", "source"}, "an op line"));
  OpRule rule;
  rule.line = r.line();
  EDGEMM_ASSIGN_OR_RETURN(rule.op, r.string(j, "op", true));
  EDGEMM_ASSIGN_OR_RETURN(rule.domain, r.string(j, "domain", false));
  if (rule.domain == "ai.onnx") rule.domain.clear();
  if (!rule.domain.empty()) {
    return r.error("domain '" + rule.domain + "': profiles list ONNX default-domain operators (domain \"\")");
  }
  if (onnx::OpSchemaRegistry::Schema(rule.op, "") == nullptr && kOpsAfterLibonnx.count(rule.op) == 0) {
    return r.error("'" + rule.op +
                   "' is not an ONNX operator (neither libonnx's schema registry nor the newer ops know it)");
  }
  if (p.find("", rule.op) != nullptr) return r.error("second entry for op '" + rule.op + "'");
  EDGEMM_ASSIGN_OR_RETURN(std::string verdict, r.string(j, "verdict", true));
  EDGEMM_ASSIGN_OR_RETURN(rule.verdict, parse_verdict(r, verdict, false));
  EDGEMM_ASSIGN_OR_RETURN(rule.note, r.string(j, "note", false));
  EDGEMM_ASSIGN_OR_RETURN(Sourced s, r.sourced());
  rule.source = s.source;
  if (auto c = j.find("constraints"); c != j.end()) {
    if (!c->is_array()) return r.error("'constraints' must be a list");
    for (const Json& one : *c) {
      EDGEMM_ASSIGN_OR_RETURN(Constraint k, parse_constraint(r, one));
      rule.constraints.push_back(std::move(k));
    }
  }
  p.ops.push_back(std::move(rule));
  return Status::ok();
}

Status parse_setting(const LineReader& r, const std::string& kind, PlatformProfile& p) {
  const Json& j = r.json();
  EDGEMM_ASSIGN_OR_RETURN(Sourced s, r.sourced());
  if (kind == "target") {
    EDGEMM_RETURN_IF_ERROR(r.only_keys(j, {"kind", "name", "title", "converter", "note", "source"}, "the target line"));
    EDGEMM_ASSIGN_OR_RETURN(std::string name, r.string(j, "name", true));
    if (name != p.name) return r.error("target name '" + name + "' differs from the file name '" + p.name + ".jsonl'");
    EDGEMM_ASSIGN_OR_RETURN(p.title, r.string(j, "title", true));
    EDGEMM_ASSIGN_OR_RETURN(p.converter, r.string(j, "converter", true));
    p.source = s.source;
  } else if (kind == "opset") {
    EDGEMM_RETURN_IF_ERROR(r.only_keys(j, {"kind", "min", "max", "note", "source"}, "the opset line"));
    EDGEMM_ASSIGN_OR_RETURN(p.opset_min, r.integer(j, "min"));
    EDGEMM_ASSIGN_OR_RETURN(p.opset_max, r.integer(j, "max"));
    if (p.opset_min && p.opset_max && *p.opset_min > *p.opset_max) return r.error("opset 'min' is above 'max'");
    p.opset_source = s;
  } else if (kind == "static_shapes") {
    EDGEMM_RETURN_IF_ERROR(r.only_keys(j, {"kind", "required", "note", "source"}, "the static_shapes line"));
    auto it = j.find("required");
    if (it == j.end()) return r.error("missing 'required'");
    if (it->is_boolean()) {
      p.static_shapes = it->get<bool>();
    } else if (!(it->is_string() && *it == "unknown")) {
      return r.error("'required' must be true, false or \"unknown\"");
    }
    p.static_shapes_source = s;
  } else if (kind == "precision") {
    EDGEMM_RETURN_IF_ERROR(r.only_keys(j, {"kind", "preferred", "supported", "note", "source"}, "the precision line"));
    EDGEMM_ASSIGN_OR_RETURN(p.preferred_precision, r.string(j, "preferred", false));
    EDGEMM_ASSIGN_OR_RETURN(p.precisions, r.strings(j, "supported"));
    const std::set<std::string> names = {"int4", "int8", "uint8", "int16", "fp16", "bf16", "fp32"};
    for (const std::string& name : p.precisions) {
      if (names.count(name) == 0)
        return r.error("unknown precision '" + name + "' (int4, int8, uint8, int16, fp16, bf16, fp32)");
    }
    if (!p.preferred_precision.empty() &&
        std::find(p.precisions.begin(), p.precisions.end(), p.preferred_precision) == p.precisions.end()) {
      return r.error("preferred precision '" + p.preferred_precision + "' is not in 'supported'");
    }
    p.precision_source = s;
  } else if (kind == "unlisted_ops") {
    EDGEMM_RETURN_IF_ERROR(r.only_keys(j, {"kind", "verdict", "note", "source"}, "the unlisted_ops line"));
    EDGEMM_ASSIGN_OR_RETURN(std::string verdict, r.string(j, "verdict", true));
    EDGEMM_ASSIGN_OR_RETURN(p.unlisted, parse_verdict(r, verdict, true));
    p.unlisted_source = s;
  } else {
    return r.error("unknown kind '" + kind + "' (target, opset, static_shapes, precision, unlisted_ops, op)");
  }
  return Status::ok();
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSupported:
      return "supported";
    case Verdict::kUnsupported:
      return "unsupported";
    case Verdict::kNative:
      return "native";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

std::string Constraint::describe() const {
  std::ostringstream out;
  if (subject == Subject::kAttribute) {
    out << "attribute '" << attr << "'";
    if (!one_of.empty()) {
      out << " in [";
      for (size_t i = 0; i < one_of.size(); ++i) {
        out << (i ? ", " : "");
        if (const auto* v = std::get_if<int64_t>(&one_of[i])) {
          out << *v;
        } else {
          out << '"' << std::get<std::string>(one_of[i]) << '"';
        }
      }
      out << "]";
    }
    if (or_depthwise) out << " or depthwise (group = input channels = output channels)";
  } else if (subject == Subject::kModelBatch) {
    out << "model batch (dim 0 of the model's inputs)";
  } else {
    out << (subject == Subject::kInput ? "input " : "output ") << index;
    if (constant) out << " constant";
    if (rank_min) out << " rank >= " << *rank_min;
    if (rank_max) out << " rank <= " << *rank_max;
    if (axis) out << " dim " << *axis;
    if (!dtypes.empty()) {
      out << " dtype in [";
      for (size_t i = 0; i < dtypes.size(); ++i) out << (i ? ", " : "") << dtypes[i];
      out << "]";
    }
  }
  if (min) out << " >= " << *min;
  if (max) out << " <= " << *max;
  return out.str();
}

const OpRule* PlatformProfile::find(const std::string& domain, const std::string& op) const {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const OpRule& r : ops) {
    if (r.domain == d && r.op == op) return &r;
  }
  return nullptr;
}

Expected<PlatformProfile> load_profile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return Status(StatusCode::kIo, "the platform profile '" + path + "' is not a file");
  if (fs::file_size(path, ec) > kMaxProfileBytes) {
    return Status(StatusCode::kInvalidModel, "the platform profile '" + path + "' is larger than " +
                                                 std::to_string(kMaxProfileBytes >> 20) + " MiB");
  }
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIo, "cannot read the platform profile '" + path + "'");
  PlatformProfile p;
  p.path = path;
  p.name = fs::path(path).stem().string();
  bool have_target = false;
  std::set<std::string> settings_seen;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte order mark
    const size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#') continue;
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return line_error(path, line, "not a JSON object");
    const LineReader r(j, path, line);
    EDGEMM_ASSIGN_OR_RETURN(std::string kind, r.string(j, "kind", true));
    if (!have_target && kind != "target") return r.error("the first entry must be the target line");
    if (have_target && kind == "target") return r.error("second target line");
    if (kind == "target") have_target = true;
    if (kind != "op" && !settings_seen.insert(kind).second) return r.error("second '" + kind + "' line");
    EDGEMM_RETURN_IF_ERROR(kind == "op" ? parse_op(r, p) : parse_setting(r, kind, p));
    if (p.unlisted == Verdict::kNative && !p.ops.empty()) {
      return r.error("a profile whose unlisted_ops verdict is 'native' (edgemm's kernels decide) lists no ops");
    }
  }
  if (in.bad()) return Status(StatusCode::kIo, "cannot read the platform profile '" + path + "'");
  if (!have_target) return Status(StatusCode::kInvalidModel, path + ": no target line");
  return p;
}

std::vector<std::string> known_targets(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".jsonl") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Expected<PlatformProfile> load_target(const std::string& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status(StatusCode::kIo,
                  "the profile folder '" + dir +
                      "' does not exist (the edgemm CLI takes another with --platforms DIR or EDGEMM_PLATFORMS_DIR)");
  const std::vector<std::string> names = known_targets(dir);
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return Status(StatusCode::kInvalidArgument,
                  "unknown target '" + name + "' (known in '" + dir + "': " + (list.empty() ? "none" : list) + ")");
  }
  return load_profile((fs::path(dir) / (name + ".jsonl")).string());
}

}  // namespace edgemm::targets
