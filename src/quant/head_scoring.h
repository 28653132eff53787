#pragma once
/// \file head_scoring.h
/// Head scoring (edgemm/tools/head_scoring.h) on ir::Model.

#include <vector>

#include "edgemm/status.h"
#include "edgemm/tools/head_scoring.h"
#include "ir/graph.h"
#include "passes/head_pruning.h"
#include "quant/calibrate.h"

namespace edgemm::quant {

/// score_heads of edgemm/tools/head_scoring.h on an ir::Model: finds the layers with
/// passes::find_attention_layers() and observes their head outputs with quant::observe(); the
/// same errors.
Expected<HeadScores> score_heads(const ir::Model& model, const std::vector<CalibrationSample>& samples,
                                 const FeedSource& source, const CalibrateOptions& options);

}  // namespace edgemm::quant
