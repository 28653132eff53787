#pragma once
/// \file sensitivity.h
/// Sensitivity analysis and mixed precision for int8 QDQ: how much each quantized node alone
/// degrades the model's outputs on calibration inputs, and a plan that keeps the most
/// sensitive nodes in float until the whole model meets an error budget.
///
/// Error measure: signal-to-quantization-noise ratio of all outputs concatenated,
/// SQNR = 10 · log10(Σ ref² / Σ (ref − q)²) dB (higher is better; ∞ when equal), and their cosine
/// similarity, against the float model on the same inputs, both run by edgemm.

#include <map>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tools/quantize.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/observer.h"
#include "quant/qdq.h"

namespace edgemm::quant {

/// Ranks plan.targets by quantizing each alone (insert_qdq on a copy of `prepared` with that
/// target only) and measuring the output error on `feeds`; then keeps targets in float, most
/// sensitive first, re-measuring the whole model after each, until its SQNR reaches `budget_db`
/// or no target is left. Unnamed targets are not ranked (always quantized). Errors: those of
/// insert_qdq and of loading or running the models.
Expected<MixedPlan> plan_mixed_precision(const ir::Model& prepared, const QuantPlan& plan,
                                         const std::map<std::string, Range>& ranges, const Int8Options& options,
                                         const std::vector<Feed>& feeds, double budget_db, int threads);

/// The output error of `prepared` quantized for `plan` (insert_qdq on a copy) against the float
/// model on `feeds`. Errors: those of insert_qdq and of loading or running the models.
Expected<OutputError> measure_output_error(const ir::Model& prepared, const QuantPlan& plan,
                                           const std::map<std::string, Range>& ranges, const Int8Options& options,
                                           const std::vector<Feed>& feeds, int threads);

/// Moves the targets named in `float_nodes` from plan.targets to plan.skipped with `reason`.
void keep_in_float(QuantPlan& plan, const std::vector<std::string>& float_nodes, const std::string& reason);

}  // namespace edgemm::quant
