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
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/observer.h"
#include "quant/qdq.h"

namespace edgemm::quant {

/// Output error of a quantized model against the float one.
struct OutputError {
  double sqnr_db = 0;  ///< +inf when the outputs are identical
  double cosine = 1;
};

/// Below this output SQNR against float (noise above ~30 % of the signal's RMS) an int8 model is
/// warned about (`edgemm quantize`, `edgemm convert --target --int8`). PP-OCRv4 rec with the
/// default mse ranges measures ~15 dB and reads as well as float; with entropy ranges 5 dB, and
/// reads nothing (docs/quantize.md).
inline constexpr double kPoorSqnrDb = 10.0;

/// The error of `quantized` against `reference` (per input, the model's outputs, in the same
/// order), over the float32 outputs (others are ignored) and the elements both have.
OutputError output_error(const std::vector<std::vector<Tensor>>& reference,
                         const std::vector<std::vector<Tensor>>& quantized);

/// One node quantized alone.
struct LayerSensitivity {
  std::string node;  ///< node name
  std::string op_type;
  OutputError error;
};

/// The mixed-precision search's result.
struct MixedPlan {
  std::vector<LayerSensitivity> layers;  ///< every target, most sensitive (lowest SQNR) first
  OutputError all_int8;                  ///< every target quantized
  OutputError final_error;               ///< with `float_nodes` kept in float
  std::vector<std::string> float_nodes;  ///< kept in float, in the order they were moved
  bool budget_met = false;
};

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
