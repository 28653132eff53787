#include "bench/compare.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bench/energy.h"
#include "edgemm/process_memory.h"
#include "bench/stats.h"

namespace edgemm::bench {

namespace {

/// Per-runtime state while a comparison runs.
struct Entry {
  BenchRuntime* runtime = nullptr;
  RuntimeResult result;
  int planned = 0;           ///< timed runs to do (run-count mode)
  double per_run_ms = 1e-3;  ///< estimate from warm-up (time-budget mode)
  double energy_j = 0;       ///< joules of the timed blocks
  double energy_s = 0;       ///< seconds of the timed blocks
};

/// Records a runtime's failure; its message on one line (peers' messages span several).
void fail(Entry& e, const char* stage, const Status& status) {
  std::string message = status.message();
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  e.result.error = message;
  e.result.failed_stage = stage;
  e.result.failed_code = status.code();
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
  e.result.settings = rt.settings();  // again: what loading and the first runs set up (edgemm's memory)
  if (before && after) {
    e.result.memory = {before->rss_bytes, after->peak_rss_bytes, after->rss_bytes};
  }
  e.planned = options.iters;
  e.per_run_ms = std::max(summarize(warm->empty() ? *cold : *warm).median, 1e-3);
}

/// One untimed run at the start of a block. It absorbs the switch from the other runtime (its
/// thread pool still spinning, caches and idle cores cold), which otherwise slowed the first
/// timed run of a block by up to 2x at 2 threads (docs/benchmarks.md). False when it failed.
bool settle(Entry& e) {
  auto run = e.runtime->run(1);
  if (!run) fail(e, "run", run.status());
  return run.has_value();
}

/// Runs `runs` timed runs of one block. With a meter, its joules cover the span between its
/// first and last reading, a little longer than the runs themselves when reading takes time (a
/// power command takes milliseconds); they are scaled to the block's own time, assuming steady
/// power across that margin.
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
    if (joules && !std::isfinite(*joules)) {
      e.result.energy_error = "the energy counter gave a non-finite reading";
    } else if (joules && energy->last_seconds() > 0) {
      e.energy_j += *joules * seconds / energy->last_seconds();
      e.energy_s += seconds;
    } else if (!joules) {
      e.result.energy_error = joules.status().message();
    }
  }
  if (!times) return fail(e, "run", times.status());
  e.result.times_ms.insert(e.result.times_ms.end(), times->begin(), times->end());
}

/// Run-count mode: each runtime's `planned` runs spread over the blocks, block b of a runtime
/// doing runs [b·planned/blocks, (b+1)·planned/blocks), each block starting with runtime b.
void run_counted(std::vector<Entry>& entries, const CompareOptions& options) {
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
      const int runs = (b + 1) * e.planned / blocks - b * e.planned / blocks;
      if (runs == 0 || !settle(e)) continue;
      run_block(e, runs, options.energy);
      done += runs;
      if (options.progress) options.progress(done, total);
    }
  }
}

/// Time-budget mode: in each block every runtime runs until its timed runs in that block add
/// up to seconds / blocks, in chunks sized from its latest per-run estimate.
void run_time_budget(std::vector<Entry>& entries, const CompareOptions& options) {
  const int blocks = std::max(1, options.blocks);
  const double budget_ms = options.seconds * 1000.0 / blocks;
  const int total = blocks * static_cast<int>(entries.size());
  int done = 0;
  for (int b = 0; b < blocks; ++b) {
    for (size_t k = 0; k < entries.size(); ++k) {
      Entry& e = entries[(b + k) % entries.size()];
      double spent = 0;
      while (e.result.ok() && spent < budget_ms && (spent > 0 || settle(e))) {
        const int runs = static_cast<int>(std::clamp(std::floor((budget_ms - spent) / e.per_run_ms), 1.0, 100000.0));
        const size_t before = e.result.times_ms.size();
        run_block(e, runs, options.energy);
        if (!e.result.ok() || e.result.times_ms.size() == before) break;
        double chunk = 0;
        for (size_t i = before; i < e.result.times_ms.size(); ++i) chunk += e.result.times_ms[i];
        spent += chunk;
        e.per_run_ms = std::max(chunk / static_cast<double>(e.result.times_ms.size() - before), 1e-3);
      }
      if (options.progress) options.progress(++done, total);
    }
  }
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
  if (options.seconds > 0) {
    run_time_budget(entries, options);
  } else {
    run_counted(entries, options);
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
