#pragma once
/// \file eligibility.h
/// The eligibility check of edgemm/tools/targets.h (check_model) on ir::Model.

#include "edgemm/tools/targets.h"
#include "ir/graph.h"

namespace edgemm::targets {

/// check_model of edgemm/tools/targets.h on an ir::Model.
TargetReport check_model(const ir::Model& model, const PlatformProfile& profile);

}  // namespace edgemm::targets
