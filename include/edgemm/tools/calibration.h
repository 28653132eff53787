#pragma once
/// \file calibration.h
/// Calibration for post-training quantization (edgemm/tools/quantize.h) and head scoring
/// (edgemm/tools/head_scoring.h): data sets (files tagged with a scene) and a seeded, stratified
/// draw of the samples; the FeedSource that turns a sample into model inputs; the streaming
/// histograms calibration keeps per tensor, saved and read back; the range methods. Only paths
/// are handled here: decoding (images, .npy) and preprocessing belong to the FeedSource, so
/// that calibration sees what inference sees. Library edgemm::quant.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::quant {

/// One calibration sample: a file and its scene tag.
struct CalibrationSample {
  std::string path;   ///< absolute or relative to the working directory
  std::string scene;  ///< e.g. "indoor", "page"; "default" when the set gives none
};

/// File extensions a calibration directory is searched for (lower case, with the dot).
const std::vector<std::string>& calibration_extensions();

/// Lists a calibration set, sorted by path:
/// - a directory: files with calibration_extensions() in it (scene "default") and in its
///   immediate subdirectories (scene = the subdirectory's name);
/// - a JSON manifest `{"samples": [{"path": "a.jpg", "scene": "indoor"}, ...]}` ("scene" optional),
///   paths relative to the manifest's folder.
/// Errors: kIo (missing or unreadable path), kInvalidArgument (manifest that is not valid JSON of
/// that form, naming the entry), and kInvalidArgument when the set has no sample at all.
Expected<std::vector<CalibrationSample>> load_calibration_set(const std::string& dir_or_manifest);

/// How samples are drawn.
struct SamplingOptions {
  int count = 256;    ///< samples to draw (all of them when the set has fewer)
  uint64_t seed = 0;  ///< the draw is a function of (set, options) only
  /// Share of each scene in the draw (normalized; e.g. indoor 0.4, outdoor 0.6). Empty: each
  /// scene in proportion to its size.
  std::map<std::string, double> scene_weights;
};

/// What the draw did, for reports.
struct SamplingReport {
  std::map<std::string, int> available;  ///< samples per scene in the set
  std::map<std::string, int> drawn;      ///< samples per scene drawn
  std::vector<std::string> warnings;     ///< fewer samples than asked, scenes without weight
};

/// Stratified sampling without replacement: scene quotas = count × weight (largest remainders,
/// summing to count), each scene's quota drawn by a seeded Fisher–Yates shuffle (mt19937_64);
/// a scene with fewer samples than its quota gives all it has, with a warning. The result is
/// sorted by path. Errors: kInvalidArgument for count < 1, a negative or non-finite weight,
/// weights summing to 0, or a weighted scene the set does not have (the message lists the
/// set's scenes).
Expected<std::vector<CalibrationSample>> stratified_sample(const std::vector<CalibrationSample>& set,
                                                           const SamplingOptions& options, SamplingReport& report);

/// Parses "indoor=0.4,outdoor=0.6". Errors: kInvalidArgument naming the bad entry.
Expected<std::map<std::string, double>> parse_scene_weights(const std::string& text);

/// Streaming min/max and histogram of float values: exact minimum and maximum, and a fixed number
/// of bins whose range doubles (merging bins pairwise, exactly) when a value falls outside, so
/// memory stays bins × 8 bytes whatever the data set's size. Not thread-safe.
class TensorHistogram {
 public:
  /// `bins` must be even and at least 2 (2048 by default, as TensorRT and ONNX Runtime use).
  explicit TensorHistogram(int bins = 2048);

  /// A histogram in the state the accessors below describe (e.g. one saved by
  /// write_histograms()). Errors: kInvalidArgument when the state is inconsistent (odd or
  /// fewer than 2 bins, a non-positive width with values, counts that do not add up to `count`,
  /// min > max, or [min, max] outside the bins' range).
  static Expected<TensorHistogram> restore(std::vector<int64_t> bins, double lo, double bin_width, float min, float max,
                                           int64_t non_finite);

  /// Adds `n` values. NaN and ±inf are not binned; they are counted in non_finite().
  void add(const float* values, int64_t n);

  int64_t count() const { return count_; }            ///< finite values added
  int64_t non_finite() const { return non_finite_; }  ///< NaN and ±inf values added (not binned)
  float min() const { return min_; }                  ///< smallest finite value; 0 before any
  float max() const { return max_; }                  ///< largest finite value; 0 before any
  /// Lower edge of bin 0; bin i covers [lo + i·width, lo + (i+1)·width).
  double lo() const { return lo_; }
  double bin_width() const { return width_; }                 ///< 0 before any finite value
  const std::vector<int64_t>& bins() const { return bins_; }  ///< counts per bin

 private:
  // Doubles the histogram's range towards lower values (keeping the upper edge) or higher ones.
  void grow(bool downwards);

  std::vector<int64_t> bins_;
  double lo_ = 0, width_ = 0;
  float min_ = 0, max_ = 0;
  int64_t count_ = 0, non_finite_ = 0;
};

/// How a tensor's quantization range is chosen from its histogram: minmax the observed [min,
/// max]; percentile the p-th and (100 − p)-th percentiles; entropy the clipping threshold
/// minimizing the KL divergence between the histogram of |x| and its quantized version (Migacz,
/// "8-bit Inference with TensorRT", GTC 2017); mse the scaled range [min·s, max·s] minimizing the
/// expected squared uint8 quantization error. Details: src/quant/observer.h.
enum class CalibrationMethod { kMinMax, kPercentile, kEntropy, kMse };

/// "minmax", "percentile", "entropy", "mse".
const char* method_name(CalibrationMethod method);
/// Parses a method_name(). Errors: kInvalidArgument listing the valid names.
Expected<CalibrationMethod> parse_method(const std::string& name);

/// A real-valued range [lo, hi] with lo <= hi.
struct Range {
  float lo = 0;  ///< lower bound
  float hi = 0;  ///< upper bound
};

/// One run's inputs: graph input name → tensor.
using Feed = std::vector<std::pair<std::string, Tensor>>;

/// The runs one sample stands for (e.g. one det input per image; one rec input per text-line
/// batch of the image), built by the same preprocessing as inference. An error skips the sample
/// (counted and reported), e.g. an image that does not decode; kOutOfMemory (a sample whose
/// shapes cannot fit, check_shapes_fit_memory) stops the calibration with that error.
using FeedSource = std::function<Expected<std::vector<Feed>>(const CalibrationSample&)>;

/// The FeedSource of .npy samples for a model with one input (the model at `model_path`, loaded
/// as `model`): each file, read with read_npy (edgemm/npy.h), is that input; each new shape is
/// checked against the memory limit (check_shapes_fit_memory, edgemm/memory_check.h) before it
/// runs. Errors: kInvalidArgument when the model has not exactly one input (naming the count).
Expected<FeedSource> npy_feed_source(const std::string& model_path, const OnnxModel& model);

/// Settings of a calibration run.
struct CalibrateOptions {
  int threads = 0;  ///< intra-op threads of the model (0 = all cores)
  int bins = 2048;  ///< histogram bins per tensor
  /// Called after each sample with (samples done, total); may be empty.
  std::function<void(size_t, size_t)> progress;
};

/// Writes `histograms` (tensor name → histogram) to `path`, whole or not at all
/// (edgemm/atomic_file.h), so that one calibration run serves several methods or experiments
/// (`edgemm quantize --save-histograms` / `--histograms`). The file is JSON: {"format":
/// "edgemm-histograms", "version": 1, "tensors": {NAME: {"lo", "bin_width", "min", "max",
/// "non_finite", "bins": [counts...]}}}, the state TensorHistogram's accessors give.
/// Errors: kIo naming the path when it cannot be written.
Status write_histograms(const std::string& path, const std::map<std::string, TensorHistogram>& histograms);

/// Reads a file write_histograms() wrote; the histograms are restored exactly
/// (TensorHistogram::restore). Errors: kIo when it cannot be read; kInvalidArgument when it is
/// not such a file or a histogram's state is inconsistent (the message names the tensor).
Expected<std::map<std::string, TensorHistogram>> read_histograms(const std::string& path);

}  // namespace edgemm::quant
