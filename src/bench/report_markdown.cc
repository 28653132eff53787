#include "bench/report_markdown.h"

#include <algorithm>
#include <set>

#include "bench/format.h"

namespace edgemm::bench {

namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// One line per distinct runtime: version and settings, or the error it gave.
std::string peers_section(const BenchReport& r) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      const std::string line = "- **" + rt.name + "** " + rt.version + ": " + rt.settings.dump() + "\n";
      if (seen.insert(line).second) out += line;
      if (!rt.energy_error.empty()) {
        out += "  - energy failed at threads " + std::to_string(p.threads) + ": " + rt.energy_error + "\n";
      }
      if (!rt.ok()) {
        out += "  - could not " + rt.failed_stage + " at threads " + std::to_string(p.threads) + ": " + rt.error + "\n";
      }
    }
  }
  return out;
}

std::string energy_cell(const RuntimeResult& rt) {
  if (!rt.energy_error.empty()) return "failed";
  if (!rt.energy) return "–";
  return fixed(rt.energy->joules_per_run, 3) + " J (" + fixed(rt.energy->average_watts, 1) + " W)";
}

/// A Markdown table row; empty cells stay "| |".
std::string table_row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += c.empty() ? " |" : " " + c + " |";
  return out + "\n";
}

std::string results_table(const BenchReport& r) {
  const std::vector<std::string> header = results_header(has_sweep(r));
  std::string out = table_row(header) + "|";
  for (size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) out += table_row(results_row(p, rt));
  }
  return out;
}

/// Per-stage medians of pipeline runs, when any runtime has them.
std::string stages_table(const BenchReport& r) {
  const std::vector<std::string> stages = stage_names(r);
  if (stages.empty()) return "";
  std::string out = "\nMedian per stage (ms):\n\n| threads | runtime | " + join(stages, " | ") + " |\n|---|---|";
  for (size_t i = 0; i < stages.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      if (rt.stage_median_ms.empty()) continue;
      out += "| " + std::to_string(p.threads) + " | " + rt.name + " |";
      for (const auto& s : stages) out += " " + stage_cell(rt, s) + " |";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string mib(int64_t bytes) { return fixed(static_cast<double>(bytes) / 1048576.0, 1); }

std::string machine_summary(const BenchReport& r) {
  const MachineInfo& m = r.machine;
  return m.cpu + ", " + std::to_string(m.logical_cpus) + " logical CPUs (" + m.arch +
         (m.isa.empty() ? "" : "; " + join(m.isa, ", ")) + "), " + fixed(m.memory_bytes / 1073741824.0, 1) + " GiB, " +
         m.os + ", Linux " + m.kernel + "; load average " + fixed(m.load_average_1m, 2) + " at start, " +
         fixed(r.load_average_end, 2) + " at end";
}

std::string runs_summary(const BenchReport& r) {
  const BenchSettings& s = r.settings;
  const bool pipeline = r.kind == "pipeline";
  const std::string run = pipeline ? " (one image each)" : "";
  std::string runs = s.seconds > 0 ? "timed runs filling " + fixed(s.seconds, 1) + " s per runtime"
                                   : std::to_string(s.iters) + " timed runs per runtime";
  return runs + run + " in " + std::to_string(s.blocks) +
         " alternating blocks (each after one untimed settle run), after 1 cold and " + std::to_string(s.warmup) +
         " warm-up runs" + (pipeline ? "" : "; synthetic inputs seeded with " + std::to_string(s.seed));
}

std::string inputs_summary(const BenchReport& r) {
  std::string inputs;
  for (const auto& p : r.points) {
    if (inputs.find(p.inputs) == std::string::npos) inputs += (inputs.empty() ? "" : "; ") + p.inputs;
  }
  return inputs;
}

bool has_sweep(const BenchReport& r) { return !r.points.empty() && !r.points[0].sweep_key.empty(); }

std::vector<std::string> results_header(bool sweep) {
  std::vector<std::string> header = {"threads"};
  if (sweep) header.push_back("sweep");
  for (const char* h : {"runtime", "median ms", "mean ± sd ms", "p90", "p99", "min", "max", "runs/s", "load ms",
                        "cold ms", "peak RSS added MiB", "GFLOP/s", "energy/run", "vs edgemm"}) {
    header.push_back(h);
  }
  return header;
}

std::vector<std::string> results_row(const BenchPoint& p, const RuntimeResult& rt) {
  std::vector<std::string> row = {std::to_string(p.threads)};
  if (!p.sweep_key.empty()) row.push_back(p.sweep_key + " " + std::to_string(p.sweep_value));
  row.push_back(rt.name);
  if (!rt.ok()) {
    row.push_back("failed (" + rt.failed_stage + ")");
    row.resize(row.size() + 12);
    return row;
  }
  const LatencyStats& l = rt.latency;
  for (const std::string& cell :
       {fixed(l.median, 2), fixed(l.mean, 2) + " ± " + fixed(l.stddev, 2), fixed(l.p90, 2), fixed(l.p99, 2),
        fixed(l.min, 2), fixed(l.max, 2), fixed(rt.runs_per_s, 1), fixed(rt.load_ms, 1), fixed(rt.cold_ms, 1),
        mib(rt.memory.peak_added()), rt.gflops > 0 ? fixed(rt.gflops, 1) : "–", energy_cell(rt),
        rt.edgemm_speedup > 0 ? fixed(rt.edgemm_speedup, 2) : "–"}) {
    row.push_back(cell);
  }
  return row;
}

std::vector<std::string> stage_names(const BenchReport& r) {
  std::vector<std::string> stages;
  for (const auto& p : r.points) {
    for (const auto& rt : p.runtimes) {
      for (const auto& [stage, ms] : rt.stage_median_ms) {
        if (std::find(stages.begin(), stages.end(), stage) == stages.end()) stages.push_back(stage);
      }
    }
  }
  return stages;
}

std::string stage_cell(const RuntimeResult& rt, const std::string& stage) {
  auto it = std::find_if(rt.stage_median_ms.begin(), rt.stage_median_ms.end(),
                         [&](const auto& entry) { return entry.first == stage; });
  return it == rt.stage_median_ms.end() ? "–" : fixed(it->second, 2);
}

std::string to_markdown(const BenchReport& r) {
  std::string out = "## edgemm bench: " + r.subject + "\n\n";
  out += "- Machine: " + machine_summary(r) + "\n";
  out += "- Inputs: " + inputs_summary(r) + "\n";
  out += "- Runs: " + runs_summary(r) + "\n";
  out += "- " + r.energy_note + "\n";
  out += "- Command: `" + r.command + "`\n\n";
  out += peers_section(r) + "\n";
  out += results_table(r);
  out += stages_table(r);
  out += std::string("\n") + kResultsNote + "\n";
  return out;
}

}  // namespace edgemm::bench
