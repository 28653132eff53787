#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace edgemm::bench {

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

LatencyStats summarize(const std::vector<double>& times_ms) {
  LatencyStats s;
  if (times_ms.empty()) return s;
  std::vector<double> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  s.count = static_cast<int>(sorted.size());
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  s.median = quantile(sorted, 0.5);
  s.p90 = quantile(sorted, 0.9);
  s.p99 = quantile(sorted, 0.99);
  s.min = sorted.front();
  s.max = sorted.back();
  if (sorted.size() > 1) {
    double sq = 0;
    for (double t : sorted) sq += (t - s.mean) * (t - s.mean);
    s.stddev = std::sqrt(sq / (n - 1));
  }
  return s;
}

}  // namespace edgemm::bench
