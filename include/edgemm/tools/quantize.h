#pragma once
/// \file quantize.h
/// Post-training quantization of a float ONNX model, as `edgemm quantize` runs it
/// (docs/quantize.md). Every scheme writes standard ONNX that ONNX Runtime also runs:
/// - int8: static QDQ (ONNX QuantizeLinear / DequantizeLinear 13) with activation ranges from a
///   calibration run (edgemm/tools/calibration.h), placed as TensorRT's explicit-quantization
///   guide recommends: the inputs of Conv / MatMul / Gemm quantized, their outputs float;
///   weights symmetric int8 per output channel or per tensor, activations per-tensor uint8
///   (or symmetric int8);
/// - int4-weight: MatMul weights as com.microsoft MatMulNBits (ONNX Runtime ContribOperators.md);
/// - fp16: float32 initializers stored as float16, each followed by a Cast back to float32, so
///   the file halves and compute stays float32 (edgemm folds the Casts at load).
/// Library edgemm::quant.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/convert.h"

namespace edgemm::quant {

/// Choices of the int8 rewrite.
struct Int8Options {
  std::set<std::string> op_types = {"Conv", "MatMul", "Gemm"};  ///< ops to quantize
  bool per_channel = true;  ///< per-output-channel weight scales (else one per tensor)
  /// Weights in [−64, 64] (7 bits) instead of [−127, 127]: x86 CPUs without AVX-512 VNNI
  /// multiply uint8 × int8 pairs with vpmaddubsw, whose int16 sums saturate beyond 7-bit weights
  /// (oneDNN "Nuances of int8 Computations"; ONNX Runtime's reduce_range; docs/quantize.md).
  bool reduce_range = true;
  /// Quantize depthwise convolutions too. Off by default: on AVX2 oneDNN 2.6's int8 depthwise
  /// Conv is slower than its float one (docs/quantize.md); `edgemm quantize` turns it on for CPUs
  /// with AVX-512 VNNI, where uint8 values between int8 convolutions make it gain.
  bool quantize_depthwise = false;
  bool symmetric_activations = false;   ///< int8 activations with zero point 0 instead of uint8
  std::set<std::string> exclude_nodes;  ///< node names kept in float
};

/// A node the rewrite quantizes.
struct QuantTarget {
  size_t index = 0;         ///< in the prepared graph's nodes when planned
  std::string node;         ///< "<OpType> '<name>'"
  std::string name;         ///< node name (may be empty)
  std::string op_type;      ///< "Conv", "MatMul" or "Gemm"
  std::string activation;   ///< the computed input that gets a Q/DQ pair (Conv X, MatMul/Gemm A)
  std::string weight;       ///< the constant float32 input that is stored as int8
  int64_t weight_axis = 0;  ///< output-channel axis of the weight
};

/// A node of a quantizable op type left in float, and why.
struct SkippedNode {
  std::string node;     ///< "<OpType> '<name>'"
  std::string op_type;  ///< "Conv", "MatMul" or "Gemm"
  std::string reason;   ///< a sentence, e.g. "weight is not a constant"
};

/// Which nodes the int8 rewrite quantizes and which it leaves in float.
struct QuantPlan {
  std::vector<QuantTarget> targets;  ///< in graph order
  std::vector<SkippedNode> skipped;  ///< in graph order
  /// Activation tensors to calibrate (each once, in graph order).
  std::vector<std::string> activations() const;
};

/// Output error of a quantized model against the float one: signal-to-quantization-noise ratio
/// of all outputs concatenated, SQNR = 10 · log10(Σ ref² / Σ (ref − q)²) dB (higher is better),
/// and their cosine similarity.
struct OutputError {
  double sqnr_db = 0;  ///< +inf when the outputs are identical, −inf when NaN or inf differ
  double cosine = 1;   ///< cosine similarity of the concatenated outputs, in [-1, 1]
};

/// Below this output SQNR against float (noise above ~30 % of the signal's RMS) an int8 model is
/// warned about (`edgemm quantize`, `edgemm convert --target --int8`). PP-OCRv4 rec with the
/// default mse ranges measures ~15 dB and reads as well as float; with entropy ranges 5 dB, and
/// reads nothing (docs/quantize.md).
inline constexpr double kPoorSqnrDb = 10.0;

/// The error of `quantized` against `reference` (per input, the model's outputs, in the same
/// order), over the float32 outputs (others are ignored) and the elements both have. An element
/// that is NaN in either, or infinite in one and not equal in the other, makes the error the
/// worst there is (sqnr_db −inf, cosine 0): no finite measure says the outputs agree.
OutputError output_error(const std::vector<std::vector<Tensor>>& reference,
                         const std::vector<std::vector<Tensor>>& quantized);

/// One node quantized alone.
struct LayerSensitivity {
  std::string node;     ///< node name
  std::string op_type;  ///< "Conv", "MatMul" or "Gemm"
  OutputError error;    ///< of the model with this node alone quantized
};

/// The mixed-precision search's result.
struct MixedPlan {
  std::vector<LayerSensitivity> layers;  ///< every target, most sensitive (lowest SQNR) first
  OutputError all_int8;                  ///< every target quantized
  OutputError final_error;               ///< with `float_nodes` kept in float
  std::vector<std::string> float_nodes;  ///< kept in float, in the order they were moved
  bool budget_met = false;               ///< final_error reaches the budget
};

/// Median time of one node in the float model and in the int8 model, in microseconds, as
/// edgemm's runtime runs them on this CPU (the int8 time includes the node's activation
/// QuantizeLinear / DequantizeLinear that still run).
struct NodeTiming {
  std::string node;     ///< node name
  double float_us = 0;  ///< in the float model
  double int8_us = 0;   ///< in the int8 model
};

/// Settings of int8 quantization.
struct Int8QuantizeOptions {
  Int8Options qdq;
  CalibrationMethod method = CalibrationMethod::kMse;  ///< the best CER on PP-OCRv4 (docs/quantize-results.md)
  double percentile = 99.99;                           ///< for CalibrationMethod::kPercentile, in (50, 100]
  CalibrateOptions calibrate;                          ///< threads, bins, progress of the calibration runs
  /// Histograms of an earlier calibration of the same model (read_histograms), used instead of
  /// calibrating; they must cover every activation the plan quantizes. Null: calibrate. Borrowed
  /// for the call.
  const std::map<std::string, TensorHistogram>* histograms = nullptr;
  /// Keep in int8 only the nodes that edgemm's runtime runs faster in int8 than in float on this
  /// CPU, timed on the first calibration feed; off quantizes every planned node (for runtimes and
  /// NPUs that prefer int8 everywhere).
  bool speed_check = true;
  int speed_runs = 5;  ///< profiled runs per form for the speed check
  /// > 0: mixed precision: keep the most sensitive nodes in float until the outputs' SQNR
  /// against the float model reaches this many dB on `sensitivity_feeds` inputs.
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
  int samples_used = 0;                               ///< calibration samples that gave at least one run
  int samples_skipped = 0;                            ///< samples whose FeedSource failed
  std::vector<std::string> skipped_samples;           ///< "path: reason" of the first skipped samples
  int64_t runs = 0;                                   ///< model runs (feeds)
  double calibration_seconds = 0;                     ///< wall time of the calibration runs
  int64_t non_finite_values = 0;                      ///< NaN/inf seen in calibrated tensors (not binned)
  std::vector<NodeTiming> timings;                    ///< per planned node, when the speed check ran
  MixedPlan mixed;                                    ///< when options.budget_db > 0 (else empty)
  /// The written model's output error against float on the measured calibration inputs (the first
  /// feeds of the first samples: options.sensitivity_feeds of them); `measured_feeds` 0 when none.
  OutputError predicted;
  int measured_feeds = 0;  ///< inputs `predicted` was measured on
};

/// Quantizes `model` to int8 QDQ in place: prepares it (simplification, opset upgraded to 13
/// when older, for per-axis QDQ), plans the nodes, calibrates on `samples` fed by `source`,
/// keeps the nodes that are faster in int8 (options.speed_check), keeps the most sensitive ones
/// in float for an error budget (options.budget_db), rewrites. Errors: kInvalidArgument when no
/// node can be quantized (the message gives the reasons by op), percentile is outside (50, 100],
/// every sample was skipped (naming the first reasons), saved histograms miss an activation, or
/// an activation saw only NaN or infinite values (naming it);
/// kOutOfMemory from the source; those of convert_model and of the model's runs. On error the
/// model may be partly rewritten.
Expected<Int8Report> quantize_int8(OnnxModel& model, const std::vector<CalibrationSample>& samples,
                                   const FeedSource& source, const Int8QuantizeOptions& options);

/// Settings of int4 weight-only quantization.
struct Int4Options {
  int64_t block_size = 32;  ///< rows of K per scale and zero point: 16, 32, 64 or 128
  /// MatMulNBits' accuracy_level (0-4): 4 lets edgemm and ONNX Runtime quantize A to int8 per
  /// block (faster for few rows, at int8's accuracy); 0 (unset) keeps A float32.
  int64_t accuracy_level = 0;
  std::set<std::string> exclude_nodes;  ///< MatMul node names kept in float
  /// Activation-aware scaling (AWQ, Lin et al., MLSys 2024) from calibration samples: a Mul by
  /// 1/s before each MatMulNBits whose weight gains from it.
  bool awq = false;
  CalibrateOptions calibrate;  ///< for awq
};

/// AWQ's choice for one MatMul.
struct AwqNode {
  std::string node;  ///< the MatMul's name
  /// The exponent chosen: s_k = m_k^α / sqrt(max m^α · min m^α), m_k the mean |x_k| over
  /// calibration (src/quant/awq.h); 0 means no scaling was better.
  double alpha = 0;
  double error = 0;        ///< squared output error on calibration rows with the chosen scales
  double plain_error = 0;  ///< the same without scaling
};

/// What int4 weight-only quantization did.
struct Int4Report {
  convert::ConvertReport prepare;      ///< the simplification before the rewrite
  std::vector<std::string> quantized;  ///< MatMul nodes now com.microsoft MatMulNBits
  std::vector<SkippedNode> skipped;    ///< MatMul nodes left in float, with the reason
  std::vector<AwqNode> awq;            ///< with options.awq, per quantized node
  int samples_used = 0;                ///< with options.awq
};

/// Int4 weight-only quantization in place: simplifies `model` (opset kept), then rewrites every
/// MatMul whose B is a float32 constant [K, N] (and A is computed) as com.microsoft MatMulNBits
/// (bits 4, the options' block size, asymmetric uint8-packed zero points) that ONNX Runtime and
/// edgemm run; MatMuls inside the main graph's subgraphs whose B is a main-graph initializer too
/// (not with options.awq). The nodes carry options.accuracy_level. With options.awq, `samples`
/// fed by `source` calibrate the activation-aware scales (unused otherwise). Errors:
/// kInvalidArgument for a block size outside {16, 32, 64, 128}, an accuracy level outside 0-4 or
/// a model without such a MatMul (the reasons by node); those of convert_model and of calibration.
Expected<Int4Report> quantize_int4_weights(OnnxModel& model, const Int4Options& options,
                                           const std::vector<CalibrationSample>& samples = {},
                                           const FeedSource& source = {});

/// Simplifies `model` (constants folded into initializers, BatchNormalization into Conv), then
/// stores every float32 initializer of at least `min_elements` elements as float16 followed by a
/// Cast to float32 (values beyond float16's range saturate to ±65504). Returns the number of
/// initializers converted. Errors: those of convert_model; kInvalidArgument when the model has
/// no such initializer.
Expected<int> store_weights_fp16(OnnxModel& model, int64_t min_elements = 16);

}  // namespace edgemm::quant
