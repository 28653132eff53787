#pragma once
/// \file compare.h
/// Runs several runtimes on the same model and inputs: each is loaded and warmed up alone
/// (its memory read from its host process), then timed runs alternate between runtimes in
/// blocks, each block starting with the next runtime in turn, so that drift on a shared
/// machine hits all alike.

#include <functional>
#include <memory>
#include <vector>

#include "bench/report.h"
#include "bench/runtimes.h"

namespace edgemm::bench {

class EnergyMeter;

/// How long and how to measure.
struct CompareOptions {
  int warmup = 2;  ///< untimed runs after the cold run
  int iters = 20;  ///< timed runs per runtime (ignored when seconds > 0)
  /// When > 0: each runtime runs until its timed runs add up to this many seconds
  /// (seconds / blocks in every block, in chunks sized from its latest per-run time).
  double seconds = 0;
  int blocks = 5;                 ///< number of alternating blocks (fewer when there are fewer runs)
  EnergyMeter* energy = nullptr;  ///< nullable; started and stopped around every block
  /// Called after each block with (timed runs done, timed runs planned), or with (block slots
  /// done, block slots) in time-budget mode, for progress bars.
  std::function<void(int, int)> progress;
};

/// Measures every runtime and returns one result each, in order. A runtime that cannot start,
/// load or run gets a result with its error and stage; the others go on. Latency statistics
/// are left for finish_point().
std::vector<RuntimeResult> compare_runtimes(std::vector<std::unique_ptr<BenchRuntime>>& runtimes,
                                            const CompareOptions& options);

}  // namespace edgemm::bench
