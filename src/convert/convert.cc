#include "convert/convert.h"

#include <sstream>

#include "convert/onnx_checks.h"
#include "convert/opset_downgrade.h"
#include "convert/simplify_extra.h"
#include "ir/onnx_model_access.h"
#include "passes/passes.h"

namespace edgemm::convert {

namespace {

/// More rounds than any real model needs (each folds one more level of shape arithmetic).
constexpr int kMaxRounds = 16;

std::string dims_text(const ValueInfo& info) {
  std::string text = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    const Dim& d = info.shape[i];
    text += (i ? "," : "") + (d.is_static() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol));
  }
  return text + "]";
}

Status invalid_argument(const std::string& message) { return make_error(StatusCode::kInvalidArgument, message); }

/// Pins the input shapes in the IR and lets shape inference propagate them.
Status pin_inputs(ir::Model& model, const std::map<std::string, Shape>& fixed) {
  for (ValueInfo& input : model.graph.inputs) {
    auto it = fixed.find(input.name);
    if (it == fixed.end()) continue;
    input.shape.clear();
    for (int64_t d : it->second) input.shape.push_back(Dim{d, ""});
    input.rank_known = true;
  }
  return reinfer_shapes(model);
}

void add_pass_report(const passes::PassReport& pass, ConvertReport& report) {
  report.folded_nodes += pass.folded_nodes;
  report.removed_nodes += pass.removed_nodes;
  for (const auto& [name, n] : pass.patterns) report.rewrites[name] += n;
}

/// Folds (and with `simplify`, simplifies) and re-infers shapes until the graph stops changing.
Status fold_until_stable(ir::Model& model, bool simplify, bool strict_runtime_rewrites, ConvertReport& report) {
  for (int round = 0; round < kMaxRounds; ++round) {
    const size_t nodes = model.graph.nodes.size();
    const size_t constants = model.graph.initializers.size();
    passes::PassReport pass;
    if (simplify) {
      passes::simplify(model, pass);
      if (strict_runtime_rewrites) simplify_extra(model, pass.patterns);
    } else {
      passes::fold_constants(model, pass, /*keep_dequantize=*/true);
      passes::eliminate_dead_nodes(model.graph, pass);
    }
    add_pass_report(pass, report);
    EDGEMM_RETURN_IF_ERROR(reinfer_shapes(model));
    ++report.rounds;
    if (model.graph.nodes.size() == nodes && model.graph.initializers.size() == constants && pass.patterns.empty())
      break;
  }
  return Status::ok();
}

// Adds the ranks that shape inference finds in a copy of `model` pinned to `probe` (and folded,
// so that shape computations become constants) for values whose rank is unknown in `model`
// (dims unknown). A probe the model cannot take adds nothing.
void annotate_ranks(ir::Model& model, const std::map<std::string, Shape>& probe) {
  if (probe.empty()) return;
  ir::Model pinned = model;
  ConvertReport ignored;
  if (!pin_inputs(pinned, probe).is_ok() || !fold_until_stable(pinned, false, false, ignored).is_ok()) return;
  for (const auto& [name, info] : pinned.graph.value_infos) {
    auto known = model.graph.value_infos.find(name);
    if (!info.rank_known || (known != model.graph.value_infos.end() && known->second.rank_known)) continue;
    ValueInfo ranked;
    ranked.name = name;
    ranked.dtype = info.dtype;
    ranked.rank_known = true;
    ranked.shape.assign(info.shape.size(), Dim{});
    model.graph.value_infos[name] = ranked;
  }
}

Status convert_opset(ir::Model& model, int64_t target, const std::map<std::string, Shape>& probe,
                     ConvertReport& report) {
  const int64_t source = model.opset("");
  if (target > source) {
    annotate_ranks(model, probe);
    EDGEMM_RETURN_IF_ERROR(upgrade_opset(model, target));
    report.rewrites["libonnx version converter " + std::to_string(source) + "→" + std::to_string(target)] += 1;
  } else if (target < source) {
    EDGEMM_RETURN_IF_ERROR(downgrade_opset(model, target, report.rewrites));
  }
  return reinfer_shapes(model);
}

}  // namespace

Status check_target_opset(int64_t target) {
  if (target >= kMinOpset && target <= kMaxOpset) return Status::ok();
  return make_error(StatusCode::kUnsupported, "target opset " + std::to_string(target) + " is outside the range " +
                                                  std::to_string(kMinOpset) + "–" + std::to_string(kMaxOpset) +
                                                  " edgemm converts between");
}

std::map<std::string, int> op_histogram(const ir::Graph& graph) {
  std::map<std::string, int> ops;
  for (const auto& node : graph.nodes) ++ops[node.domain.empty() ? node.op_type : node.domain + ":" + node.op_type];
  return ops;
}

Status validate_fixed_shapes(const ir::Graph& graph, const std::map<std::string, Shape>& fixed,
                             const std::string& option) {
  for (const auto& [name, shape] : fixed) {
    const ValueInfo* input = nullptr;
    std::string names;
    for (const ValueInfo& in : graph.inputs) {
      names += (names.empty() ? "" : ", ") + in.name + " " + dims_text(in);
      if (in.name == name) input = &in;
    }
    if (input == nullptr) {
      return invalid_argument(option + " names '" + name + "', which is not an input of the model (inputs: " + names +
                              ")");
    }
    const std::string given = option + " " + name + "=" + shape_to_string(shape);
    if (input->rank_known && input->shape.size() != shape.size()) {
      return invalid_argument(given + " has rank " + std::to_string(shape.size()) + " but input '" + name +
                              "' has rank " + std::to_string(input->shape.size()) + " " + dims_text(*input));
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 1) {
        return invalid_argument(given + ": extent " + std::to_string(shape[i]) + " of axis " + std::to_string(i) +
                                " must be at least 1");
      }
      if (input->rank_known && input->shape[i].is_static() && input->shape[i].value != shape[i]) {
        return invalid_argument(given + ": axis " + std::to_string(i) + " of input '" + name + "' is fixed to " +
                                std::to_string(input->shape[i].value) + " by the model " + dims_text(*input));
      }
    }
    if (!shape_element_count(shape).has_value()) {
      return invalid_argument(given + " has more elements than int64 can count");
    }
  }
  return Status::ok();
}

Status convert_model(ir::Model& model, const ConvertOptions& options, ConvertReport& report) {
  report.source_opset = model.opset("");
  report.target_opset = options.target_opset == 0 ? report.source_opset : options.target_opset;
  report.nodes_before = static_cast<int>(model.graph.nodes.size());
  report.ops_before = op_histogram(model.graph);
  EDGEMM_RETURN_IF_ERROR(validate_fixed_shapes(model.graph, options.fixed_shapes));
  if (options.target_opset != 0) EDGEMM_RETURN_IF_ERROR(check_target_opset(options.target_opset));
  if (!options.fixed_shapes.empty()) EDGEMM_RETURN_IF_ERROR(pin_inputs(model, options.fixed_shapes));
  if (!options.fixed_shapes.empty() || options.simplify) {
    EDGEMM_RETURN_IF_ERROR(fold_until_stable(model, options.simplify, options.strict_runtime_rewrites, report));
  }
  if (report.target_opset != report.source_opset) {
    EDGEMM_RETURN_IF_ERROR(convert_opset(model, report.target_opset, options.rank_probe_shapes, report));
    // What the opset rewrites wrote (a decomposed LayerNormalization) may be simplified in turn.
    if (options.simplify)
      EDGEMM_RETURN_IF_ERROR(fold_until_stable(model, true, options.strict_runtime_rewrites, report));
  }
  if (Status strict = check_strict(model); !strict.is_ok()) {
    if (options.fixed_shapes.empty()) return strict;
    std::string fixed;
    for (const auto& [name, shape] : options.fixed_shapes) fixed += " " + name + "=" + shape_to_string(shape);
    return invalid_argument("with --fix-shape" + fixed + " the model is inconsistent (" + strict.message() +
                            "); the extents may not suit it, e.g. sizes its strides and upsampling do not divide "
                            "evenly (PP-OCR det needs multiples of 32)");
  }
  report.nodes_after = static_cast<int>(model.graph.nodes.size());
  report.ops_after = op_histogram(model.graph);
  return Status::ok();
}

Status validate_fixed_shapes(const OnnxModel& model, const std::map<std::string, Shape>& fixed,
                             const std::string& option) {
  return validate_fixed_shapes(ir::model_of(model).graph, fixed, option);
}

Expected<ConvertReport> convert_model(OnnxModel& model, const ConvertOptions& options) {
  ConvertReport report;
  EDGEMM_RETURN_IF_ERROR(convert_model(ir::model_of(model), options, report));
  return report;
}

}  // namespace edgemm::convert
