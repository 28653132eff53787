#pragma once
/// \file plan.h
/// plan_conversion of edgemm/tools/targets.h (what `edgemm convert --target` does to a model for
/// one target) on ir::Model.

#include <map>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tools/targets.h"
#include "ir/graph.h"

namespace edgemm::targets {

/// plan_conversion of edgemm/tools/targets.h on an ir::Model.
Expected<ConversionPlan> plan_conversion(const ir::Model& model, const PlatformProfile& profile,
                                         const TargetReport& report, const std::map<std::string, Shape>& fixed_shapes);

}  // namespace edgemm::targets
