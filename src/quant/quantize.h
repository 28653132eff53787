#pragma once
/// \file quantize.h
/// Post-training quantization of a float ONNX model, as `edgemm quantize` runs it
/// (docs/quantize.md). Every scheme writes standard ONNX that ONNX Runtime also runs:
/// - int8: static QDQ (qdq.h) with activation ranges from a calibration run (calibrate.h);
/// - fp16: float32 initializers stored as float16, each followed by a Cast back to float32, so
///   the file halves and compute stays float32 (edgemm folds the Casts at load).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "convert/convert.h"
#include "edgemm/status.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/observer.h"
#include "quant/qdq.h"
#include "quant/sensitivity.h"
#include "quant/speed_check.h"

namespace edgemm::quant {

/// Settings of int8 quantization.
struct Int8QuantizeOptions {
  Int8Options qdq;
  CalibrationMethod method = CalibrationMethod::kMse;  // the best CER on PP-OCRv4 (docs/quantize-results.md)
  double percentile = 99.99;                           ///< for CalibrationMethod::kPercentile, in (50, 100]
  CalibrateOptions calibrate;
  /// Histograms of an earlier calibration of the same model (histogram_io.h), used instead of
  /// calibrating; they must cover every activation the plan quantizes. Null: calibrate.
  const std::map<std::string, TensorHistogram>* histograms = nullptr;
  /// Keep in int8 only the nodes that edgemm's runtime runs faster in int8 than in float on this
  /// CPU (speed_check.h), timed on the first calibration feed; off quantizes every planned node
  /// (for runtimes and NPUs that prefer int8 everywhere).
  bool speed_check = true;
  int speed_runs = 5;  ///< profiled runs per form for the speed check
  /// > 0: mixed precision (sensitivity.h): keep the most sensitive nodes in float until the
  /// outputs' SQNR against the float model reaches this many dB on `sensitivity_feeds` inputs.
  double budget_db = 0;
  /// Calibration inputs (the first samples' first feeds) the mixed-precision search and the
  /// predicted error (Int8Report::predicted) measure on.
  int sensitivity_feeds = 4;
};

/// What int8 quantization did.
struct Int8Report {
  convert::ConvertReport prepare;         ///< the simplification and opset step before calibration
  QuantPlan plan;                         ///< nodes quantized and skipped (indices refer to the prepared graph)
  std::map<std::string, Range> observed;  ///< min/max seen per calibrated tensor
  std::map<std::string, Range> ranges;    ///< range the method chose per calibrated tensor
  std::map<std::string, TensorHistogram> histograms;  ///< per calibrated tensor (for write_histograms)
  int samples_used = 0;
  int samples_skipped = 0;
  std::vector<std::string> skipped_samples;
  int64_t runs = 0;
  double calibration_seconds = 0;
  int64_t non_finite_values = 0;    ///< NaN/inf seen in calibrated tensors (not binned)
  std::vector<NodeTiming> timings;  ///< per planned node, when the speed check ran
  MixedPlan mixed;                  ///< when options.budget_db > 0 (else empty)
  /// The written model's output error against float on the measured calibration inputs (the first
  /// feeds of the first samples: options.sensitivity_feeds of them); `measured_feeds` 0 when none.
  OutputError predicted;
  int measured_feeds = 0;
};

/// Prepares `model` for quantization: passes::simplify-style folding (BatchNormalization into
/// Conv, constants, dead nodes) and an opset upgrade to 13 when it is older (per-axis QDQ), with
/// `probe` (input shapes of a real sample) helping the upgrade infer ranks
/// (ConvertOptions::rank_probe_shapes). Errors: those of convert::convert_model.
Status prepare_for_quantization(ir::Model& model, const std::map<std::string, Shape>& probe,
                                convert::ConvertReport& report);

/// Quantizes `model` to int8 QDQ in place: prepare, plan, calibrate on `samples` fed by
/// `source`, keep the nodes that are faster in int8 (options.speed_check), keep the most
/// sensitive ones in float for an error budget (options.budget_db), rewrite. Errors: kInvalidArgument when no
/// node can be quantized (the message gives the reasons by op) or percentile is outside (50, 100]; those of calibrate
/// and insert_qdq.
Status quantize_int8(ir::Model& model, const std::vector<CalibrationSample>& samples, const FeedSource& source,
                     const Int8QuantizeOptions& options, Int8Report& report);

/// Settings of int4 weight-only quantization.
struct Int4Options {
  int64_t block_size = 32;  ///< rows of K per scale and zero point: 16, 32, 64 or 128
  /// MatMulNBits' accuracy_level (0-4): 4 lets edgemm and ONNX Runtime quantize A to int8 per
  /// block (kernels/cpu/matmul_nbits_int8.h; several times faster for few rows, at int8's
  /// accuracy); 0 (unset) keeps A float32.
  int64_t accuracy_level = 0;
  std::set<std::string> exclude_nodes;  ///< MatMul node names kept in float
  /// Activation-aware scaling (awq.h) from calibration samples: a Mul by 1/s before each
  /// MatMulNBits whose weight gains from it.
  bool awq = false;
  CalibrateOptions calibrate;  ///< for awq
};

/// AWQ's choice for one MatMul.
struct AwqNode {
  std::string node;
  double alpha = 0;
  double error = 0;        ///< output error on calibration rows with the chosen scales
  double plain_error = 0;  ///< the same without scaling
};

/// What int4 weight-only quantization did.
struct Int4Report {
  convert::ConvertReport prepare;
  std::vector<std::string> quantized;  ///< MatMul nodes now com.microsoft MatMulNBits
  std::vector<SkippedNode> skipped;    ///< MatMul nodes left in float, with the reason
  std::vector<AwqNode> awq;            ///< with options.awq, per quantized node
  int samples_used = 0;                ///< with options.awq
};

/// Int4 weight-only quantization: simplifies `model` (convert --simplify, opset kept), then
/// rewrites every MatMul whose B is a float32 constant [K, N] (and A is computed) as
/// com.microsoft MatMulNBits (ONNX Runtime ContribOperators.md; bits 4, the options' block size,
/// asymmetric uint8-packed zero points: kernels::pack_matmul_nbits) that ONNX Runtime and
/// edgemm's MatMulNBits kernel run. MatMuls inside the main graph's subgraphs (Optimum's merged
/// decoders: both If branches) whose B is such a main-graph initializer are rewritten too, each
/// weight packed once into the main graph (not with options.awq). The nodes carry options.accuracy_level (4: A is
/// quantized to int8 per block when they run, 0: A stays float). With options.awq, `samples` fed by `source` calibrate
/// the activation-aware scales (unused otherwise). Errors: kInvalidArgument for a block size outside
/// {16, 32, 64, 128}, an accuracy level outside 0-4 or a model without such a MatMul (the reasons by node); those of
/// convert::convert_model and of calibration.
Status quantize_int4_weights(ir::Model& model, const Int4Options& options, Int4Report& report,
                             const std::vector<CalibrationSample>& samples = {}, const FeedSource& source = {});

/// Simplifies `model` (convert --simplify: constants folded into initializers, BatchNormalization
/// into Conv), then stores every float32 initializer of at least `min_elements` elements as
/// float16 followed by a Cast to float32 (values beyond float16's range saturate to ±65504).
/// Returns the number of initializers converted. Errors: those of convert::convert_model;
/// kInvalidArgument when the model has no such initializer.
Expected<int> store_weights_fp16(ir::Model& model, int64_t min_elements = 16);

}  // namespace edgemm::quant
