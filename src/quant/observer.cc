/// \file observer.cc
/// TensorHistogram and the calibration methods (see observer.h).

#include "quant/observer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgemm::quant {

TensorHistogram::TensorHistogram(int bins) : bins_(static_cast<size_t>(std::max(2, bins + bins % 2)), 0) {}

Expected<TensorHistogram> TensorHistogram::restore(std::vector<int64_t> bins, double lo, double bin_width, float min,
                                                   float max, int64_t non_finite) {
  int64_t count = 0;
  for (int64_t b : bins) {
    if (b < 0) return make_error(StatusCode::kInvalidArgument, "histogram: negative bin count");
    count += b;
  }
  const double hi = lo + bin_width * static_cast<double>(bins.size());
  if (bins.size() < 2 || bins.size() % 2 != 0) {
    return make_error(StatusCode::kInvalidArgument, "histogram: the bin count must be even and at least 2");
  }
  if (non_finite < 0 || !std::isfinite(lo) || !std::isfinite(bin_width) ||
      (count > 0 && (!(bin_width > 0) || !(min <= max) || min < lo || max > hi))) {
    return make_error(StatusCode::kInvalidArgument, "histogram: inconsistent range, width or min/max");
  }
  TensorHistogram h(static_cast<int>(bins.size()));
  h.bins_ = std::move(bins);
  h.lo_ = lo;
  h.width_ = bin_width;
  h.min_ = count > 0 ? min : 0.0f;
  h.max_ = count > 0 ? max : 0.0f;
  h.count_ = count;
  h.non_finite_ = non_finite;
  return h;
}

void TensorHistogram::add(const float* values, int64_t n) {
  float bmin = std::numeric_limits<float>::infinity(), bmax = -bmin;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = values[i];
    if (!std::isfinite(v)) continue;
    bmin = std::min(bmin, v);
    bmax = std::max(bmax, v);
    ++finite;
  }
  non_finite_ += n - finite;
  if (finite == 0) return;
  const double nbins = static_cast<double>(bins_.size());
  if (count_ == 0) {
    min_ = bmin;
    max_ = bmax;
    // A constant first batch still gets a positive width, relative to its magnitude.
    const double span = bmax > bmin ? static_cast<double>(bmax) - bmin : std::max(1e-6, std::abs(bmin) * 1e-3);
    lo_ = bmin;
    width_ = span / nbins;
  } else {
    min_ = std::min(min_, bmin);
    max_ = std::max(max_, bmax);
  }
  while (bmin < lo_) grow(true);
  while (bmax > lo_ + width_ * nbins) grow(false);
  const int64_t last = static_cast<int64_t>(bins_.size()) - 1;
  for (int64_t i = 0; i < n; ++i) {
    const float v = values[i];
    if (!std::isfinite(v)) continue;
    const auto b = static_cast<int64_t>((static_cast<double>(v) - lo_) / width_);
    ++bins_[static_cast<size_t>(std::clamp<int64_t>(b, 0, last))];
  }
  count_ += finite;
}

void TensorHistogram::grow(bool downwards) {
  const size_t n = bins_.size();
  std::vector<int64_t> merged(n, 0);
  // Growing down keeps the upper edge: old bin i lands in new bin (n + i) / 2; growing up keeps
  // the lower edge: old bin i lands in i / 2. n is even, so old bins pair up exactly.
  for (size_t i = 0; i < n; ++i) merged[downwards ? (n + i) / 2 : i / 2] += bins_[i];
  if (downwards) lo_ -= width_ * static_cast<double>(n);
  width_ *= 2;
  bins_ = std::move(merged);
}

const char* method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax:
      return "minmax";
    case CalibrationMethod::kPercentile:
      return "percentile";
    case CalibrationMethod::kEntropy:
      return "entropy";
    case CalibrationMethod::kMse:
      return "mse";
  }
  return "?";
}

Expected<CalibrationMethod> parse_method(const std::string& name) {
  for (CalibrationMethod m : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy,
                              CalibrationMethod::kMse}) {
    if (name == method_name(m)) return m;
  }
  return make_error(StatusCode::kInvalidArgument,
                    "unknown calibration method '" + name + "' (expected minmax, percentile, entropy or mse)");
}

namespace {

// Center of bin i of h.
double bin_center(const TensorHistogram& h, size_t i) {
  return h.lo() + (static_cast<double>(i) + 0.5) * h.bin_width();
}

Range clamp_to_observed(const TensorHistogram& h, double lo, double hi) {
  Range r;
  r.lo = static_cast<float>(std::clamp<double>(lo, h.min(), h.max()));
  r.hi = static_cast<float>(std::clamp<double>(hi, r.lo, h.max()));
  return r;
}

Range percentile_range(const TensorHistogram& h, double p) {
  const double total = static_cast<double>(h.count());
  const double lower_target = total * (100.0 - p) / 100.0, upper_target = total * p / 100.0;
  const std::vector<int64_t>& bins = h.bins();
  double lo = h.min(), hi = h.max();
  double cumulative = 0;
  bool lo_found = false;
  for (size_t i = 0; i < bins.size(); ++i) {
    cumulative += static_cast<double>(bins[i]);
    if (!lo_found && cumulative > lower_target) {
      lo = h.lo() + static_cast<double>(i) * h.bin_width();
      lo_found = true;
    }
    if (cumulative >= upper_target) {
      hi = h.lo() + static_cast<double>(i + 1) * h.bin_width();
      break;
    }
  }
  return clamp_to_observed(h, lo, hi);
}

// KL(P || Q) of the reference distribution P (bins [0, i) of `abs_bins`, the rest added to the
// last one) and its quantization Q into `levels` groups spread back over P's non-empty bins.
double kl_divergence(const std::vector<double>& abs_bins, size_t i, int levels) {
  std::vector<double> p(abs_bins.begin(), abs_bins.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t j = i; j < abs_bins.size(); ++j) p[i - 1] += abs_bins[j];
  std::vector<double> q(i, 0.0);
  const double per_level = static_cast<double>(i) / levels;
  for (int l = 0; l < levels; ++l) {
    const auto begin = static_cast<size_t>(std::floor(l * per_level));
    const auto end = l + 1 == levels ? i : static_cast<size_t>(std::floor((l + 1) * per_level));
    double sum = 0;
    int nonzero = 0;
    for (size_t j = begin; j < end; ++j) {
      sum += abs_bins[j];
      nonzero += abs_bins[j] > 0;
    }
    if (nonzero == 0) continue;
    for (size_t j = begin; j < end; ++j) q[j] = abs_bins[j] > 0 ? sum / nonzero : 0.0;
  }
  double p_total = 0, q_total = 0;
  for (size_t j = 0; j < i; ++j) {
    p_total += p[j];
    q_total += q[j];
  }
  if (p_total <= 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
  constexpr double kEpsilon = 1e-12;  // Q is zero where P only has the outliers
  double kl = 0;
  for (size_t j = 0; j < i; ++j) {
    if (p[j] <= 0) continue;
    const double pj = p[j] / p_total, qj = std::max(q[j] / q_total, kEpsilon);
    kl += pj * std::log(pj / qj);
  }
  return kl;
}

Range entropy_range(const TensorHistogram& h, bool symmetric) {
  const double amax = std::max(std::abs(static_cast<double>(h.min())), std::abs(static_cast<double>(h.max())));
  if (amax == 0) return {0, 0};
  const size_t n = h.bins().size();
  const double abs_width = amax / static_cast<double>(n);
  std::vector<double> abs_bins(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    if (h.bins()[i] == 0) continue;
    const auto j = static_cast<size_t>(std::abs(bin_center(h, i)) / abs_width);
    abs_bins[std::min(j, n - 1)] += static_cast<double>(h.bins()[i]);
  }
  abs_bins[0] = abs_bins[1];  // the zero spike (see the header)
  const int levels = symmetric ? 128 : 256;
  size_t best = n;
  double best_kl = std::numeric_limits<double>::infinity();
  for (size_t i = static_cast<size_t>(levels); i <= n; ++i) {
    const double kl = kl_divergence(abs_bins, i, levels);
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  const double t = static_cast<double>(best) * abs_width;
  return clamp_to_observed(h, -t, t);
}

// Expected squared error of uint8 affine quantization over `r` for the histogram's values
// (each bin's count at its center).
double quantization_mse(const TensorHistogram& h, Range r) {
  const QuantParams q = asymmetric_uint8(r);
  double error = 0;
  for (size_t i = 0; i < h.bins().size(); ++i) {
    if (h.bins()[i] == 0) continue;
    const double x = bin_center(h, i);
    const double level = std::clamp(std::nearbyint(x / q.scale) + q.zero_point, 0.0, 255.0);
    const double d = x - (level - q.zero_point) * q.scale;
    error += static_cast<double>(h.bins()[i]) * d * d;
  }
  return error;
}

Range mse_range(const TensorHistogram& h) {
  constexpr int kSteps = 100;  // s = 1, 0.99, ..., 0.01
  Range best{h.min(), h.max()};
  double best_error = quantization_mse(h, best);
  for (int k = 1; k < kSteps; ++k) {
    const double s = 1.0 - static_cast<double>(k) / kSteps;
    const Range r = clamp_to_observed(h, h.min() * s, h.max() * s);
    const double e = quantization_mse(h, r);
    if (e < best_error) {
      best_error = e;
      best = r;
    }
  }
  return best;
}

}  // namespace

Range choose_range(const TensorHistogram& h, CalibrationMethod method, double percentile, bool symmetric) {
  if (h.count() == 0) return {0, 0};
  switch (method) {
    case CalibrationMethod::kMinMax:
      return {h.min(), h.max()};
    case CalibrationMethod::kPercentile:
      return percentile_range(h, percentile);
    case CalibrationMethod::kEntropy:
      return entropy_range(h, symmetric);
    case CalibrationMethod::kMse:
      return mse_range(h);
  }
  return {h.min(), h.max()};
}

QuantParams asymmetric_uint8(Range r) {
  const double lo = std::min(0.0, static_cast<double>(r.lo)), hi = std::max(0.0, static_cast<double>(r.hi));
  if (hi - lo <= 0) return {1.0f, 0};
  QuantParams q;
  q.scale = static_cast<float>((hi - lo) / 255.0);
  q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / q.scale), 0.0, 255.0));
  return q;
}

QuantParams symmetric_int8(Range r, int qmax) {
  const double amax = std::max(std::abs(static_cast<double>(r.lo)), std::abs(static_cast<double>(r.hi)));
  if (amax <= 0) return {1.0f, 0};
  return {static_cast<float>(amax / qmax), 0};
}

}  // namespace edgemm::quant
