#pragma once
/// \file calibrate.h
/// Runs a float model over a calibration set and streams chosen intermediate tensors into
/// TensorHistograms (bounded memory: one histogram per tensor; each sample's tensors are
/// released before the next sample).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/tools/calibration.h"  // CalibrationSample, Feed, FeedSource, CalibrateOptions
#include "ir/graph.h"
#include "quant/observer.h"

namespace edgemm::quant {

/// What a calibration run observed.
struct CalibrationResult {
  std::map<std::string, TensorHistogram> histograms;  ///< per observed tensor
  int samples_used = 0;
  int samples_skipped = 0;
  std::vector<std::string> skipped;  ///< "path: reason" of the first 10 skipped samples
  int64_t runs = 0;                  ///< model runs (feeds)
  double seconds = 0;                ///< wall time of the whole run
};

/// Loads an in-memory model into edgemm's runtime (with its passes) through a temporary file,
/// removed before returning. Errors: those of ir::export_onnx_file and Inferencer::create.
Expected<std::unique_ptr<Inferencer>> make_inferencer(const ir::Model& model, int threads);

/// Called with the index in `values` and the float32 tensor of each observed value, per run.
using ValueVisitor = std::function<void(size_t, const Tensor&)>;

/// Runs `model` with `values` added to its graph outputs on every feed of every sample and shows
/// each value's tensor to `visit` (valid during the call). Counts used and skipped samples in the
/// result (histograms stay empty). Errors: as calibrate().
Expected<CalibrationResult> observe(const ir::Model& model, const std::vector<std::string>& values,
                                    const std::vector<CalibrationSample>& samples, const FeedSource& source,
                                    const CalibrateOptions& options, const ValueVisitor& visit);

/// Runs `model` (float; its graph outputs extended with `values`) on every feed of every sample
/// and adds each of `values` (float32 tensors) to its histogram. The model is compiled with
/// edgemm's passes, which keep every graph output's value.
/// Errors: kInvalidArgument when a value is not in the graph or not float32 at run time, when
/// every sample was skipped (the message gives the first reasons); kOutOfMemory from the source;
/// errors of the model's runs
/// (a feed the model refuses is a setup error, not a bad sample).
Expected<CalibrationResult> calibrate(const ir::Model& model, const std::vector<std::string>& values,
                                      const std::vector<CalibrationSample>& samples, const FeedSource& source,
                                      const CalibrateOptions& options);

}  // namespace edgemm::quant
