#include "targets/eligibility.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "ir/onnx_model_access.h"
#include "kernels/kernel.h"

namespace edgemm::targets {

namespace {

const char* kFixShapes = "fix shapes (convert --fix-shape)";
const char* kInferShapes = "infer shapes (convert --fix-shape --simplify)";
const char* kFold = "fold constants (convert --simplify)";
const char* kFoldedAway = "folded away (convert --fix-shape --simplify)";
const char* kDecomposeLayerNorm = "decompose LayerNormalization (convert --opset 16)";

/// Types and shapes of the main graph's values: inputs, outputs, value_info, initializers.
class Values {
 public:
  explicit Values(const ir::Graph& g) {
    for (const ValueInfo& v : g.inputs) infos_[v.name] = v;
    for (const auto& [name, v] : g.value_infos) infos_[name] = v;
    for (const ValueInfo& v : g.outputs) {
      if (v.rank_known || infos_.count(v.name) == 0) infos_[v.name] = v;
    }
    for (const auto& [name, t] : g.initializers) {
      ValueInfo v{name, t.dtype(), {}, true};
      for (int64_t d : t.shape()) v.shape.push_back(Dim{d, ""});
      infos_[name] = v;
      constants_.insert(name);
    }
    for (const ir::Node& n : g.nodes) {
      if (n.op_type == "Constant" && n.domain.empty() && !n.outputs.empty()) constants_.insert(n.outputs[0]);
    }
  }

  const ValueInfo* find(const std::string& name) const {
    auto it = infos_.find(name);
    return it == infos_.end() ? nullptr : &it->second;
  }
  bool constant(const std::string& name) const { return constants_.count(name) != 0; }
  static bool fully_static(const ValueInfo* v) {
    if (v == nullptr || !v->rank_known) return false;
    for (const Dim& d : v->shape) {
      if (!d.is_static()) return false;
    }
    return true;
  }

 private:
  std::map<std::string, ValueInfo> infos_;
  std::set<std::string> constants_;
};

/// Values that become constants once every input shape is fixed: initializers, Constant
/// outputs, Shape / Size outputs, and outputs of nodes (without subgraphs) reading only those.
std::set<std::string> foldable_values(const ir::Graph& g, const Values& values) {
  std::set<std::string> foldable;
  for (const auto& [name, t] : g.initializers) foldable.insert(name);
  for (const ir::Node& n : g.nodes) {
    bool all = n.domain.empty() && std::none_of(n.attributes.begin(), n.attributes.end(), [](const auto& a) {
                 return a.second.kind == ir::Attribute::Kind::kGraph;
               });
    if (all && !(n.op_type == "Shape" || n.op_type == "Size" || n.op_type == "Constant")) {
      for (const std::string& in : n.inputs) {
        if (!in.empty() && foldable.count(in) == 0 && !values.constant(in)) all = false;
      }
    }
    if (all) foldable.insert(n.outputs.begin(), n.outputs.end());
  }
  return foldable;
}

/// The value of attribute `name` as numbers or strings: the node's, else the schema's default.
struct AttrValue {
  bool present = false;
  std::vector<double> numbers;
  std::vector<std::string> strings;
  std::string text;
};

AttrValue attribute_value(const ir::Node& node, const std::string& name, int64_t opset) {
  AttrValue v;
  auto it = node.attributes.find(name);
  if (it != node.attributes.end()) {
    const ir::Attribute& a = it->second;
    v.present = true;
    switch (a.kind) {
      case ir::Attribute::Kind::kInt:
        v.numbers = {static_cast<double>(a.i)};
        break;
      case ir::Attribute::Kind::kFloat:
        v.numbers = {a.f};
        break;
      case ir::Attribute::Kind::kInts:
        v.numbers.assign(a.ints.begin(), a.ints.end());
        break;
      case ir::Attribute::Kind::kFloats:
        v.numbers.assign(a.floats.begin(), a.floats.end());
        break;
      case ir::Attribute::Kind::kString:
        v.strings = {a.s};
        break;
      case ir::Attribute::Kind::kStrings:
        v.strings = a.strings;
        break;
      default:
        v.present = false;
        return v;
    }
  } else if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(opset), "")) {
    auto at = schema->attributes().find(name);
    if (at == schema->attributes().end() || !at->second.default_value.has_type()) return v;
    const onnx::AttributeProto& d = at->second.default_value;
    v.present = true;
    if (d.has_i()) v.numbers = {static_cast<double>(d.i())};
    if (d.has_f()) v.numbers = {d.f()};
    if (d.has_s()) v.strings = {d.s()};
    for (int64_t x : d.ints()) v.numbers.push_back(static_cast<double>(x));
  } else {
    return v;
  }
  std::ostringstream out;
  if (v.numbers.size() + v.strings.size() > 1) out << "[";
  for (size_t i = 0; i < v.numbers.size(); ++i) out << (i ? "," : "") << v.numbers[i];
  for (size_t i = 0; i < v.strings.size(); ++i) out << (i ? "," : "") << '"' << v.strings[i] << '"';
  if (v.numbers.size() + v.strings.size() > 1) out << "]";
  v.text = out.str();
  return v;
}

/// Whether every element of `v` satisfies `c` (an attribute constraint).
bool attribute_holds(const Constraint& c, const AttrValue& v) {
  for (double x : v.numbers) {
    if (c.min && x < *c.min) return false;
    if (c.max && x > *c.max) return false;
    if (!c.one_of.empty() && std::none_of(c.one_of.begin(), c.one_of.end(), [&](const auto& o) {
          return std::holds_alternative<int64_t>(o) && static_cast<double>(std::get<int64_t>(o)) == x;
        })) {
      return false;
    }
  }
  for (const std::string& s : v.strings) {
    if (!c.one_of.empty() && std::none_of(c.one_of.begin(), c.one_of.end(), [&](const auto& o) {
          return std::holds_alternative<std::string>(o) && std::get<std::string>(o) == s;
        })) {
      return false;
    }
  }
  return true;
}

/// NPU without reasons; unknown when the documentation is silent on every reason; else CPU.
Placement placement_of(const std::vector<Reason>& reasons) {
  if (reasons.empty()) return Placement::kNpu;
  const bool silent =
      std::all_of(reasons.begin(), reasons.end(), [](const Reason& r) { return r.kind == Reason::Kind::kUnknown; });
  return silent ? Placement::kUnknown : Placement::kCpu;
}

/// Whether Conv `node` is depthwise: weight (input 1) [group, 1, kH, kW] with a static shape,
/// so that input channels = output channels = group.
bool depthwise(const ir::Node& node, const AttrValue& group, const Values& values) {
  if (node.inputs.size() < 2 || group.numbers.size() != 1) return false;
  const ValueInfo* w = values.find(node.inputs[1]);
  if (!Values::fully_static(w) || w->shape.size() < 3) return false;
  return w->shape[1].value == 1 && static_cast<double>(w->shape[0].value) == group.numbers[0];
}

class Checker {
 public:
  Checker(const ir::Model& model, const PlatformProfile& profile, const Values& values)
      : model_(model), profile_(profile), values_(values), foldable_(foldable_values(model.graph, values_)) {}

  NodeVerdict check(const ir::Node& node) const {
    NodeVerdict v{node.name, node.op_type, node.domain, Placement::kCpu, false, {}, -1};
    if (node.op_type == "Constant" && node.domain.empty()) {
      v.constant = true;
      return v;
    }
    op_reasons(node, v.reasons);
    if (profile_.static_shapes.value_or(false)) shape_reasons(node, v.reasons);
    const bool folds =
        !node.outputs.empty() && std::all_of(node.outputs.begin(), node.outputs.end(),
                                             [&](const auto& o) { return o.empty() || foldable_.count(o) != 0; });
    if (folds) {
      for (Reason& r : v.reasons) r.fix = kFoldedAway;
    }
    v.placement = placement_of(v.reasons);
    return v;
  }

 private:
  void op_reasons(const ir::Node& node, std::vector<Reason>& out) const {
    const int64_t opset = model_.opset(node.domain);
    if (profile_.unlisted == Verdict::kNative) {
      if (kernels::cpu_registry().find(node.domain, node.op_type, opset) == nullptr) {
        out.push_back({Reason::Kind::kNoKernel,
                       "edgemm has no CPU kernel for " + node.op_type + " at opset " + std::to_string(opset),
                       profile_.unlisted_source.source, profile_.unlisted_source.line, ""});
      }
      return;
    }
    const OpRule* rule = profile_.find(node.domain, node.op_type);
    if (rule == nullptr) {
      const bool unknown = profile_.unlisted != Verdict::kUnsupported;
      out.push_back({unknown ? Reason::Kind::kUnknown : Reason::Kind::kOp,
                     node.op_type + (unknown ? " is not in the documented op list (support unknown)"
                                             : " is not in the vendor's op list"),
                     profile_.unlisted_source.source, profile_.unlisted_source.line, op_fix(node)});
      return;
    }
    if (rule->verdict != Verdict::kSupported) {
      const bool unknown = rule->verdict == Verdict::kUnknown;
      out.push_back({unknown ? Reason::Kind::kUnknown : Reason::Kind::kOp,
                     node.op_type + (unknown ? ": support unknown" : " is unsupported") +
                         (rule->note.empty() ? "" : " (" + rule->note + ")"),
                     rule->source, rule->line, op_fix(node)});
      return;
    }
    for (const Constraint& c : rule->constraints) constraint_reason(node, opset, *rule, c, out);
    subgraph_reason(node, out);
  }

  /// Only the main graph is checked: a node with subgraphs (If, Loop, Scan) that the profile
  /// supports is still unknown, as its bodies may hold anything.
  static void subgraph_reason(const ir::Node& node, std::vector<Reason>& out) {
    for (const auto& [name, a] : node.attributes) {
      if (a.kind != ir::Attribute::Kind::kGraph) continue;
      out.push_back({Reason::Kind::kUnknown,
                     "subgraph '" + name + "' is not checked (edgemm checks the main graph only)", "", 0, ""});
    }
  }

  /// The rewrite that replaces the op with supported ones, when edgemm has one.
  std::string op_fix(const ir::Node& node) const {
    if (node.op_type != "LayerNormalization" || !node.domain.empty()) return "";
    for (const char* op : {"ReduceMean", "Sub", "Pow", "Add", "Sqrt", "Div", "Mul"}) {
      const OpRule* r = profile_.find("", op);
      if (r == nullptr || r->verdict != Verdict::kSupported) return "";
    }
    return kDecomposeLayerNorm;
  }

  void constraint_reason(const ir::Node& node, int64_t opset, const OpRule& rule, const Constraint& c,
                         std::vector<Reason>& out) const {
    auto fail = [&](Reason::Kind kind, const std::string& text, const std::string& fix) {
      out.push_back({kind, text + "; profile: " + c.describe() + (c.note.empty() ? "" : " (" + c.note + ")"),
                     rule.source, c.line, fix});
    };
    if (c.subject == Constraint::Subject::kAttribute) {
      const AttrValue v = attribute_value(node, c.attr, opset);
      if (v.present && !attribute_holds(c, v) && !(c.or_depthwise && depthwise(node, v, values_))) {
        fail(Reason::Kind::kAttribute, "'" + c.attr + "' = " + v.text, "");
      }
      return;
    }
    if (c.subject == Constraint::Subject::kModelBatch) {
      batch_reasons(c, fail);
      return;
    }
    const bool input = c.subject == Constraint::Subject::kInput;
    const auto& names = input ? node.inputs : node.outputs;
    if (c.index >= static_cast<int>(names.size()) || names[c.index].empty()) return;
    const std::string& name = names[c.index];
    const std::string what = std::string(input ? "input " : "output ") + std::to_string(c.index) + " '" + name + "'";
    const Reason::Kind kind = input ? Reason::Kind::kInput : Reason::Kind::kOutput;
    if (c.constant && !values_.constant(name)) {
      fail(kind, what + " is not a constant", foldable_.count(name) ? kFold : "");
    }
    const ValueInfo* info = values_.find(name);
    if (!c.dtypes.empty() && info != nullptr && info->dtype != DataType::kUndefined &&
        std::find(c.dtypes.begin(), c.dtypes.end(), dtype_name(info->dtype)) == c.dtypes.end()) {
      fail(kind, what + " has dtype " + dtype_name(info->dtype), "");
    }
    if (!c.rank_min && !c.rank_max && !c.axis) return;
    if (info == nullptr || !info->rank_known) {
      fail(Reason::Kind::kDynamicShape, what + " has an unknown shape", kInferShapes);
      return;
    }
    const int64_t rank = static_cast<int64_t>(info->shape.size());
    if ((c.rank_min && rank < *c.rank_min) || (c.rank_max && rank > *c.rank_max)) {
      fail(kind, what + " has rank " + std::to_string(rank) + " " + dims_to_string(info->shape), "");
    }
    if (c.axis) {
      const int64_t axis = *c.axis < 0 ? *c.axis + rank : *c.axis;
      if (axis < 0 || axis >= rank) return;
      const Dim& d = info->shape[axis];
      if (!d.is_static()) {
        fail(Reason::Kind::kDynamicShape,
             what + " dim " + std::to_string(axis) + " is symbolic " + dims_to_string(info->shape), kFixShapes);
      } else if ((c.min && d.value < *c.min) || (c.max && d.value > *c.max)) {
        fail(
            kind,
            what + " dim " + std::to_string(axis) + " = " + std::to_string(d.value) + " " + dims_to_string(info->shape),
            "");
      }
    }
  }

  /// The model batch (dim 0 of every model input of rank >= 2) against `c`'s bounds; `fail`
  /// records a reason naming the input.
  template <typename Fail>
  void batch_reasons(const Constraint& c, const Fail& fail) const {
    for (const ValueInfo& in : model_.graph.inputs) {
      if (values_.constant(in.name)) continue;
      const std::string what = "model input '" + in.name + "'";
      if (!in.rank_known) {
        fail(Reason::Kind::kDynamicShape, what + " has an unknown rank, so its batch is unknown", kInferShapes);
      } else if (in.shape.size() < 2) {
        continue;  // a scalar or a vector has no batch axis
      } else if (!in.shape[0].is_static()) {
        fail(Reason::Kind::kDynamicShape, what + " has a symbolic batch " + dims_to_string(in.shape), kFixShapes);
      } else if ((c.min && in.shape[0].value < *c.min) || (c.max && in.shape[0].value > *c.max)) {
        fail(Reason::Kind::kInput,
             what + " has batch " + std::to_string(in.shape[0].value) + " " + dims_to_string(in.shape), "");
      }
    }
  }

  void shape_reasons(const ir::Node& node, std::vector<Reason>& out) const {
    for (const auto* names : {&node.inputs, &node.outputs}) {
      for (const std::string& name : *names) {
        if (name.empty() || values_.constant(name)) continue;
        const ValueInfo* info = values_.find(name);
        if (Values::fully_static(info)) continue;
        const bool known = info != nullptr && info->rank_known;
        out.push_back({Reason::Kind::kDynamicShape,
                       "'" + name + "' has " + (known ? "shape " + dims_to_string(info->shape) : "an unknown shape") +
                           "; the target needs static shapes",
                       profile_.static_shapes_source.source, profile_.static_shapes_source.line,
                       known ? kFixShapes : kInferShapes});
        return;
      }
    }
  }

  const ir::Model& model_;
  const PlatformProfile& profile_;
  const Values& values_;
  std::set<std::string> foldable_;
};

/// Union-find over node indices.
int root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/// Groups connected nodes of the same placement and lists the tensors crossing placements.
void partition(const ir::Graph& g, const Values& values, TargetReport& report) {
  const int n = static_cast<int>(report.nodes.size());
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& o : g.nodes[i].outputs) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::set<std::pair<std::string, Placement>> crossed;  // a tensor read on two other placements crosses twice
  for (int i = 0; i < n; ++i) {
    if (report.nodes[i].constant) continue;
    for (const std::string& in : g.nodes[i].inputs) {
      auto p = producer.find(in);
      if (p == producer.end() || report.nodes[p->second].constant) continue;  // graph inputs, initializers
      const Placement from = report.nodes[p->second].placement, to = report.nodes[i].placement;
      if (from == to) {
        parent[root(parent, i)] = root(parent, p->second);
      } else if (crossed.insert({in, to}).second) {
        report.crossings.push_back({in, from, to, std::nullopt});
      }
    }
  }
  std::map<int, int> index;
  for (int i = 0; i < n; ++i) {
    if (report.nodes[i].constant) continue;
    const int r = root(parent, i);
    auto [it, added] = index.emplace(r, static_cast<int>(report.partitions.size()));
    if (added) report.partitions.push_back({report.nodes[i].placement, 0});
    report.nodes[i].partition = it->second;
    ++report.partitions[it->second].nodes;
  }
  for (Crossing& c : report.crossings) {
    const ValueInfo* v = values.find(c.tensor);
    if (!Values::fully_static(v) || dtype_size(v->dtype) == 0) continue;
    int64_t bytes = static_cast<int64_t>(dtype_size(v->dtype));
    bool overflow = false;
    for (const Dim& d : v->shape) overflow = overflow || __builtin_mul_overflow(bytes, d.value, &bytes);
    if (!overflow) c.bytes = bytes;
  }
}

bool known_crossing(const Crossing& c) { return c.from != Placement::kUnknown && c.to != Placement::kUnknown; }

}  // namespace

const char* reason_kind_name(Reason::Kind kind) {
  switch (kind) {
    case Reason::Kind::kOp:
      return "op";
    case Reason::Kind::kUnknown:
      return "unknown";
    case Reason::Kind::kAttribute:
      return "attribute";
    case Reason::Kind::kInput:
      return "input";
    case Reason::Kind::kOutput:
      return "output";
    case Reason::Kind::kDynamicShape:
      return "dynamic_shape";
    case Reason::Kind::kNoKernel:
      break;
  }
  return "no_kernel";
}

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::kNpu:
      return "npu";
    case Placement::kCpu:
      return "cpu";
    case Placement::kUnknown:
      break;
  }
  return "unknown";
}

int TargetReport::partition_count(Placement placement) const {
  return static_cast<int>(std::count_if(partitions.begin(), partitions.end(),
                                        [placement](const Partition& p) { return p.placement == placement; }));
}

int TargetReport::crossing_count(bool known) const {
  return static_cast<int>(std::count_if(crossings.begin(), crossings.end(),
                                        [known](const Crossing& c) { return known_crossing(c) == known; }));
}

int64_t TargetReport::crossing_bytes() const {
  int64_t total = 0;
  for (const Crossing& c : crossings) total += known_crossing(c) ? c.bytes.value_or(0) : 0;
  return total;
}

TargetReport check_model(const ir::Model& model, const PlatformProfile& profile) {
  TargetReport report;
  report.target = profile.name;
  report.title = profile.title;
  report.model_opset = model.opset("");
  if ((profile.opset_min && report.model_opset < *profile.opset_min) ||
      (profile.opset_max && report.model_opset > *profile.opset_max)) {
    const int64_t to =
        profile.opset_max && report.model_opset > *profile.opset_max ? *profile.opset_max : *profile.opset_min;
    report.model_issues.push_back({Reason::Kind::kOp,
                                   "model opset " + std::to_string(report.model_opset) +
                                       " is outside the converter's " + std::to_string(profile.opset_min.value_or(1)) +
                                       ".." + (profile.opset_max ? std::to_string(*profile.opset_max) : "?"),
                                   profile.opset_source.source, profile.opset_source.line,
                                   "convert opset (convert --opset " + std::to_string(to) + ")"});
  }
  const Values values(model.graph);
  const Checker checker(model, profile, values);
  std::map<std::string, int> fixes;
  for (const ir::Node& node : model.graph.nodes) {
    NodeVerdict v = checker.check(node);
    if (v.constant) {
      ++report.constant_nodes;
    } else {
      ++(v.placement == Placement::kNpu   ? report.npu_nodes
         : v.placement == Placement::kCpu ? report.cpu_nodes
                                          : report.unknown_nodes);
    }
    for (const Reason& r : v.reasons) {
      if (!r.fix.empty()) ++fixes[r.fix];
    }
    report.nodes.push_back(std::move(v));
  }
  for (const Reason& r : report.model_issues) ++fixes[r.fix];
  report.fixes.assign(fixes.begin(), fixes.end());
  partition(model.graph, values, report);
  return report;
}

TargetReport check_model(const OnnxModel& model, const PlatformProfile& profile) {
  return check_model(ir::model_of(model), profile);
}

}  // namespace edgemm::targets
