#pragma once
/// \file convert_verify.h
/// The verification step of `edgemm convert`: runs the input model and the converted one on the
/// same inputs with edgemm's engine (Inferencer, with its load-time passes, as `edgemm run` runs
/// models) and with ONNX Runtime 1.30 (node, tools/reference/ort_run.js, graph optimizations
/// off so that it runs each graph as written), optionally the converted one with OpenCV DNN,
/// and reports the largest absolute difference per output and engine.

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::cli {

/// What to run the models on and with.
struct VerifyOptions {
  /// Input shapes for the random inputs: the --fix-shape and --verify-shape values; inputs not
  /// listed must have fully static declared shapes.
  std::map<std::string, Shape> shapes;
  uint32_t seed = 1;  ///< float inputs uniform in [-1, 1) from std::mt19937(seed + input index)
  /// Inputs from files (--input name=file.npy): a second input set; inputs it lacks are random.
  std::vector<std::pair<std::string, Tensor>> given;
  double tolerance = 1e-4;    ///< largest absolute difference allowed per output
  std::string reference_dir;  ///< folder of ort_run.js and node_modules/onnxruntime-node
  bool opencv = false;        ///< also run the converted model with OpenCV DNN (cv::dnn::readNetFromONNX)
  int threads = 1;            ///< edgemm and OpenCV threads
  std::function<void(const std::string&)> progress;  ///< called before each long step
};

/// One engine on one input set.
struct EngineCheck {
  std::string engine;     ///< "edgemm", "onnxruntime" or "opencv"
  std::string input_set;  ///< "random (seed 1)" or "given"
  /// What was compared: "converted vs original" (the same engine on both models) or, for
  /// OpenCV, "converted vs edgemm original".
  std::string compared;
  std::vector<std::pair<std::string, double>> max_abs_error;  ///< per output, in output order
  std::string skipped;  ///< why the engine did not run (tool missing), empty when it ran
  std::string failed;   ///< why a run failed (a load or run error), empty when it ran
  /// The largest error over the outputs (0 when nothing was compared).
  double worst() const;
};

/// All checks, and whether every engine that ran stayed within the tolerance.
struct VerifyReport {
  std::vector<EngineCheck> checks;
  double tolerance = 0;
  bool passed = true;
  /// OpenCV DNN on the input model (only with VerifyOptions::opencv): "" when it loads and
  /// runs, else its error, to show what the conversion fixed.
  std::string opencv_original;
};

/// Checks, before any work, that the random and given input sets can be made: the same errors
/// as verify_conversion.
Status check_verify_inputs(const std::string& original, const VerifyOptions& options);

/// Runs the checks. Errors (kInvalidArgument): an input with symbolic dims and no shape given
/// (names the input and dims), a given input that is not a model input. Engine failures are
/// recorded in the report (failed), not returned.
Expected<VerifyReport> verify_conversion(const std::string& original, const std::string& converted,
                                         const VerifyOptions& options);

/// One engine's int8 model against its float model, on the same real input.
struct Int8EngineCheck {
  std::string engine;   ///< "edgemm" or "onnxruntime"
  double sqnr_db = 0;   ///< all outputs concatenated: 10·log10(Σ float² / Σ (float − int8)²); +inf when equal
  std::string skipped;  ///< why the engine did not run (tool missing)
  std::string failed;   ///< why a run failed
};

/// The checks of an int8 QDQ model written beside a float one.
struct Int8VerifyReport {
  std::vector<Int8EngineCheck> checks;
  /// edgemm against ONNX Runtime on the int8 model: the share of output values within one output
  /// step, (max − min) / 255 of ONNX Runtime's output (the criterion docs/quantize.md uses), and
  /// the largest difference; NaN when either did not run.
  double within_step = NAN;
  double max_abs_error = NAN;
};

/// Runs `float_model` and `int8_model` on `feeds` with edgemm and ONNX Runtime (when
/// options.reference_dir has it) and reports the quantization error per engine and the engines'
/// agreement on the int8 model. Engine failures are recorded, not returned; errors: reading the
/// models' signatures.
Expected<Int8VerifyReport> verify_int8(const std::string& float_model, const std::string& int8_model,
                                       const std::vector<std::pair<std::string, Tensor>>& feeds,
                                       const VerifyOptions& options);

/// JSON of an int8 report: {checks[{engine, sqnr_db, skipped?, failed?}], ort_agreement{within_step, max_abs_error}}.
nlohmann::json int8_verify_json(const Int8VerifyReport& report);

/// JSON of a report: {tolerance, passed, checks[{engine, input_set, compared, outputs{name:
/// max_abs_error}, max_abs_error, skipped?, failed?}], opencv_original?}.
nlohmann::json verify_json(const VerifyReport& report);

}  // namespace edgemm::cli
