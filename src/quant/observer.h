#pragma once
/// \file observer.h
/// Calibration observers: streaming statistics of one float tensor over a calibration set, and
/// the calibration methods that turn them into a quantization range.
///
/// One pass over the data serves every method: TensorHistogram keeps the exact minimum and
/// maximum and a fixed-size histogram whose range doubles (merging bins pairwise, exactly) when
/// a value falls outside, so memory stays bounded (bins × 8 bytes per tensor) whatever the set
/// size. Methods (choose_range):
/// - minmax: the observed [min, max];
/// - percentile: the p-th and (100 − p)-th percentiles (bin edges), p = 99.99 by default;
/// - entropy: the clipping threshold T minimizing the KL divergence between the histogram of
///   |x| and its quantized version (Migacz, "8-bit Inference with TensorRT", GTC 2017), range
///   [max(min, −T), min(max, T)]. As NVIDIA's pytorch-quantization (calib/histogram.py) does:
///   |x| is quantized to 128 levels for symmetric int8 activations and 256 for uint8 ones, and
///   the first bin (the exact zeros of ReLU-like outputs) counts as the second, so that the
///   zero spike does not pull T down to the search's lower bound;
/// - mse: the range [min·s, max·s], s in (0, 1], minimizing the expected squared quantization
///   error of the histogram's values under uint8 affine quantization.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::quant {

/// Streaming min/max and histogram of float values. Not thread-safe.
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

  int64_t count() const { return count_; }  ///< finite values added
  int64_t non_finite() const { return non_finite_; }
  float min() const { return min_; }  ///< 0 before any finite value
  float max() const { return max_; }
  /// Lower edge of bin 0; bin i covers [lo + i·width, lo + (i+1)·width).
  double lo() const { return lo_; }
  double bin_width() const { return width_; }
  const std::vector<int64_t>& bins() const { return bins_; }

 private:
  // Doubles the histogram's range towards lower values (keeping the upper edge) or higher ones.
  void grow(bool downwards);

  std::vector<int64_t> bins_;
  double lo_ = 0, width_ = 0;
  float min_ = 0, max_ = 0;
  int64_t count_ = 0, non_finite_ = 0;
};

/// How a tensor's quantization range is chosen from its statistics.
enum class CalibrationMethod { kMinMax, kPercentile, kEntropy, kMse };

/// "minmax", "percentile", "entropy", "mse".
const char* method_name(CalibrationMethod method);
/// Parses a method_name(). Errors: kInvalidArgument listing the valid names.
Expected<CalibrationMethod> parse_method(const std::string& name);

/// A real-valued range [lo, hi] with lo <= hi.
struct Range {
  float lo = 0;
  float hi = 0;
};

/// The range `method` picks for `h` (see the file comment). `percentile` is p in (50, 100] for
/// kPercentile; `symmetric` says the activations are symmetric int8 (else asymmetric uint8),
/// which kEntropy uses. The result lies within [min, max]; an empty histogram gives [0, 0].
Range choose_range(const TensorHistogram& h, CalibrationMethod method, double percentile = 99.99,
                   bool symmetric = false);

/// Scale and zero point of linear quantization, q = saturate(round(x / scale) + zero_point)
/// (ONNX QuantizeLinear).
struct QuantParams {
  float scale = 1;
  int32_t zero_point = 0;
};

/// Asymmetric uint8 parameters for `r`, widened to contain 0 so that zero (padding) is exact:
/// scale = (hi − lo) / 255, zero_point = round(−lo / scale) in [0, 255]. A zero-width range
/// gives scale 1, zero point 0 (ONNX Runtime's convention).
QuantParams asymmetric_uint8(Range r);

/// Symmetric signed parameters for `r`: zero_point 0, scale = max(|lo|, |hi|) / qmax (127 for
/// int8; 64 for weights kept to 7 bits, see QuantizeOptions::reduce_range). All-zero gives scale 1.
QuantParams symmetric_int8(Range r, int qmax = 127);

}  // namespace edgemm::quant
