#include "bench/compare.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bench/energy.h"
#include "bench/memory.h"

namespace edgemm::bench {

namespace {

/// Per-runtime state while a comparison runs.
struct Entry {
  BenchRuntime* runtime = nullptr;
  RuntimeResult result;
  int planned = 0;      ///< timed runs to do
  double energy_j = 0;  ///< joules of the timed blocks
  double energy_s = 0;  ///< seconds of the timed blocks
};

/// Records a runtime's failure; its message on one line (peers' messages span several).
void fail(Entry& e, const char* stage, const Status& status) {
  std::string message = status.message();
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  e.result.error = message;
  e.result.failed_stage = stage;
}

int runs_for_budget(double seconds, const std::vector<double>& warm_ms) {
  std::vector<double> sorted = warm_ms;
  std::sort(sorted.begin(), sorted.end());
  const double per_run = std::max(sorted[sorted.size() / 2], 1e-3);
  return static_cast<int>(std::clamp(std::floor(seconds * 1000.0 / per_run), 1.0, 100000.0));
}

/// Starts, loads, runs cold and warms up one runtime, reading its host's memory around it.
void set_up(Entry& e, const CompareOptions& options) {
  BenchRuntime& rt = *e.runtime;
  if (Status s = rt.prepare(); !s.is_ok()) return fail(e, "start", s);
  const pid_t pid = rt.host_pid();
  // Memory freed by earlier points or runtimes would otherwise be reused without showing in
  // RSS and make this runtime's "added" memory look smaller than it is.
  if (pid == 0) malloc_trim(0);
  (void)reset_peak_rss(pid);
  auto before = read_process_memory(pid);
  auto load_ms = rt.load();
  e.result.version = rt.version();
  e.result.settings = rt.settings();
  if (!load_ms) return fail(e, "load", load_ms.status());
  e.result.load_ms = *load_ms;
  auto cold = rt.run(1);
  if (!cold) return fail(e, "run", cold.status());
  e.result.cold_ms = cold->front();
  auto warm = rt.run(options.warmup);
  if (!warm) return fail(e, "run", warm.status());
  auto after = read_process_memory(pid);
  if (before && after) {
    e.result.memory = {before->rss_bytes, after->peak_rss_bytes, after->rss_bytes};
  }
  e.planned = options.seconds > 0 ? runs_for_budget(options.seconds, warm->empty() ? *cold : *warm) : options.iters;
}

/// Runs one block. With a meter, its joules cover the span between its first and last reading,
/// a little longer than the runs themselves when reading takes time (a power command takes
/// milliseconds); they are scaled to the block's own time, assuming steady power across that margin.
void run_block(Entry& e, int runs, EnergyMeter* energy) {
  using Clock = std::chrono::steady_clock;
  const bool measure = energy != nullptr && energy->available() && e.result.energy_error.empty();
  if (measure) {
    if (Status s = energy->start(); !s.is_ok()) e.result.energy_error = s.message();
  }
  const auto start = Clock::now();
  auto times = e.runtime->run(runs);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (measure && e.result.energy_error.empty()) {
    auto joules = energy->stop();
    if (joules && energy->last_seconds() > 0) {
      e.energy_j += *joules * seconds / energy->last_seconds();
      e.energy_s += seconds;
    } else if (!joules) {
      e.result.energy_error = joules.status().message();
    }
  }
  if (!times) return fail(e, "run", times.status());
  e.result.times_ms.insert(e.result.times_ms.end(), times->begin(), times->end());
}

}  // namespace

std::vector<RuntimeResult> compare_runtimes(std::vector<std::unique_ptr<BenchRuntime>>& runtimes,
                                            const CompareOptions& options) {
  std::vector<Entry> entries(runtimes.size());
  for (size_t i = 0; i < runtimes.size(); ++i) {
    entries[i].runtime = runtimes[i].get();
    entries[i].result.name = runtimes[i]->name();
    set_up(entries[i], options);
  }
  int total = 0;
  int max_planned = 0;
  for (const Entry& e : entries) {
    if (!e.result.ok()) continue;
    total += e.planned;
    max_planned = std::max(max_planned, e.planned);
  }
  const int blocks = std::clamp(options.blocks, 1, std::max(1, max_planned));
  int done = 0;
  for (int b = 0; b < blocks; ++b) {
    for (size_t k = 0; k < entries.size(); ++k) {
      Entry& e = entries[(b + k) % entries.size()];
      if (!e.result.ok()) continue;
      // Block b of a runtime with `planned` runs does runs [b·planned/blocks, (b+1)·planned/blocks).
      const int runs = (b + 1) * e.planned / blocks - b * e.planned / blocks;
      if (runs == 0) continue;
      run_block(e, runs, options.energy);
      done += runs;
      if (options.progress) options.progress(done, total);
    }
  }
  std::vector<RuntimeResult> results;
  for (Entry& e : entries) {
    if (e.result.ok() && e.result.energy_error.empty() && e.energy_s > 0 && !e.result.times_ms.empty()) {
      e.result.energy =
          RuntimeEnergy{e.energy_j / static_cast<double>(e.result.times_ms.size()), e.energy_j / e.energy_s};
    }
    results.push_back(std::move(e.result));
  }
  return results;
}

}  // namespace edgemm::bench
