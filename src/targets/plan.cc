#include "targets/plan.h"

#include <algorithm>

#include "ir/onnx_model_access.h"

namespace edgemm::targets {

namespace {

std::string shape_text(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s;
}

/// Inputs left with a symbolic or unknown dim after `fixed`.
std::vector<const ValueInfo*> dynamic_inputs(const ir::Graph& g, const std::map<std::string, Shape>& fixed) {
  std::vector<const ValueInfo*> out;
  for (const ValueInfo& v : g.inputs) {
    if (fixed.count(v.name)) continue;
    const bool dynamic =
        !v.rank_known || std::any_of(v.shape.begin(), v.shape.end(), [](const Dim& d) { return !d.is_static(); });
    if (dynamic) out.push_back(&v);
  }
  return out;
}

bool wants_layer_norm_decomposition(const TargetReport& report) {
  for (const NodeVerdict& v : report.nodes) {
    for (const Reason& r : v.reasons) {
      if (v.op_type == "LayerNormalization" && r.fix.find("decompose LayerNormalization") != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Expected<ConversionPlan> plan_conversion(const ir::Model& model, const PlatformProfile& profile,
                                         const TargetReport& report, const std::map<std::string, Shape>& fixed_shapes) {
  ConversionPlan plan;
  plan.options.fixed_shapes = fixed_shapes;
  const std::vector<const ValueInfo*> dynamic = dynamic_inputs(model.graph, fixed_shapes);
  if (profile.static_shapes.value_or(false) && !dynamic.empty()) {
    std::string names, flags;
    for (const ValueInfo* v : dynamic) {
      names += (names.empty() ? "'" : ", '") + v->name + "' " + dims_to_string(v->shape);
      flags += " --fix-shape " + v->name + "=...";
    }
    return Status(StatusCode::kInvalidArgument, "target '" + profile.name + "' needs static shapes (" +
                                                    profile.static_shapes_source.source + "); input " + names +
                                                    " is dynamic: pass" + flags);
  }
  for (const auto& [name, shape] : fixed_shapes) {
    plan.steps.push_back("fix shape " + name + "=" + shape_text(shape) +
                         (profile.static_shapes.value_or(false) ? " (the target needs static shapes)" : ""));
  }
  plan.options.simplify = true;
  plan.options.strict_runtime_rewrites = false;
  plan.steps.push_back("simplify: fold constants and shape computations, drop dead nodes");

  const int64_t lo = std::max(profile.opset_min.value_or(convert::kMinOpset), convert::kMinOpset);
  const int64_t hi = std::min(profile.opset_max.value_or(convert::kMaxOpset), convert::kMaxOpset);
  if (lo > hi) {
    return Status(StatusCode::kUnsupported,
                  "target '" + profile.name + "' accepts opsets " + std::to_string(profile.opset_min.value_or(0)) +
                      ".." + std::to_string(profile.opset_max.value_or(0)) + "; edgemm converts between " +
                      std::to_string(convert::kMinOpset) + " and " + std::to_string(convert::kMaxOpset));
  }
  const int64_t current = model.opset("");
  int64_t target = std::clamp(current, lo, hi);
  const auto bound = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("?"); };
  std::string why = target != current
                        ? "the target accepts " + bound(profile.opset_min) + ".." + bound(profile.opset_max) +
                              ", edgemm converts to " + std::to_string(convert::kMinOpset) + ".." +
                              std::to_string(convert::kMaxOpset)
                        : "";
  if (wants_layer_norm_decomposition(report) && std::min(target, int64_t{16}) >= lo && target > 16) {
    target = 16;
    why = "LayerNormalization-17 is decomposed into ops the target takes";
  }
  if (target != current) {
    plan.options.target_opset = target;
    plan.steps.push_back("convert opset " + std::to_string(current) + " -> " + std::to_string(target) + " (" + why +
                         ")");
  }
  return plan;
}

Expected<ConversionPlan> plan_conversion(const OnnxModel& model, const PlatformProfile& profile,
                                         const TargetReport& report, const std::map<std::string, Shape>& fixed_shapes) {
  return plan_conversion(ir::model_of(model), profile, report, fixed_shapes);
}

}  // namespace edgemm::targets
