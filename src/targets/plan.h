#pragma once
/// \file plan.h
/// What `edgemm convert --target` does to a model for one target: the convert::ConvertOptions
/// chosen from the platform profile and the model's report (eligibility.h), with the reason for
/// each step, for the deployment folder's README and JSON.

#include <map>
#include <string>
#include <vector>

#include "convert/convert.h"
#include "edgemm/status.h"
#include "ir/graph.h"
#include "targets/eligibility.h"
#include "targets/profile.h"

namespace edgemm::targets {

/// The rewrites for one model and target.
struct ConversionPlan {
  convert::ConvertOptions options;
  std::vector<std::string> steps;  ///< "fix shapes: x=1,3,640,640 (target needs static shapes)", ...
};

/// Chooses the rewrites: the given fixed shapes; simplification (always: folding is what turns
/// shape computations into the constants converters want); an opset inside the profile's range
/// (and within what edgemm converts, convert::kMinOpset..kMaxOpset), lowered to 16 when the
/// model has LayerNormalization that the profile does not take but whose decomposition it does.
/// Errors: kInvalidArgument naming each dynamic input when the profile requires static shapes
/// and `fixed_shapes` leaves one symbolic (with the flag to pass); kUnsupported when the
/// profile's opset range does not meet edgemm's.
Expected<ConversionPlan> plan_conversion(const ir::Model& model, const PlatformProfile& profile,
                                         const TargetReport& report, const std::map<std::string, Shape>& fixed_shapes);

}  // namespace edgemm::targets
