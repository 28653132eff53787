#pragma once
/// \file stats.h
/// Latency statistics of a benchmark: the summary every runtime in a report gets.

#include <vector>

namespace edgemm::bench {

/// Summary of timed runs, all in milliseconds except `count`.
struct LatencyStats {
  int count = 0;
  double mean = 0;
  double median = 0;
  double p90 = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
  double stddev = 0;  ///< sample standard deviation (n − 1 in the denominator); 0 for one run
};

/// The q-quantile (q in [0, 1]) of ascending `sorted` values by linear interpolation between
/// closest ranks: position q·(n − 1), the default of NumPy's percentile (Hyndman and Fan's
/// definition 7). Precondition: `sorted` is non-empty and ascending.
double quantile(const std::vector<double>& sorted, double q);

/// Summarizes `times_ms` (any order). An empty input gives all zeros with count 0.
LatencyStats summarize(const std::vector<double>& times_ms);

}  // namespace edgemm::bench
