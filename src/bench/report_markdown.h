#pragma once
/// \file report_markdown.h
/// A bench report as Markdown: machine and settings, each peer's version and settings (or
/// why it could not run), and one table row per point and runtime. Also the terminal output.
/// The summaries and table cells are shared with the HTML report (report_html.h).

#include <string>
#include <vector>

#include "bench/report.h"

namespace edgemm::bench {

/// What the results table's "vs edgemm" and "peak RSS added" columns mean.
inline constexpr const char* kResultsNote =
    "\"vs edgemm\" is the runtime's median over edgemm's: above 1, edgemm is faster. \"peak RSS added\" is the "
    "host process's high-water mark over load, cold run and warm-up, minus its RSS before the model loaded.";

/// The whole report as a Markdown document (GitHub-flavoured tables).
std::string to_markdown(const BenchReport& report);

/// Bytes as MiB with one decimal ("512.0").
std::string mib(int64_t bytes);

/// The machine in one line: CPU, logical CPUs, architecture and ISA, memory in GiB, OS,
/// kernel, and the 1-minute load average at the start and end of the benchmark.
std::string machine_summary(const BenchReport& report);

/// How the runs were made: timed runs (or time budget) per runtime, blocks, cold and warm-up
/// runs, and the seed of the synthetic inputs.
std::string runs_summary(const BenchReport& report);

/// Every distinct input description of the report's points, joined with "; ".
std::string inputs_summary(const BenchReport& report);

/// True when the report's points come from a sweep (then tables get a "sweep" column).
bool has_sweep(const BenchReport& report);

/// The results table's column names: threads, [sweep,] runtime, median ms, ..., vs edgemm.
std::vector<std::string> results_header(bool sweep);

/// One results-table row, as many cells as results_header(); times in ms with two decimals.
/// A failed runtime gives "failed (STAGE)" in the median column and empty cells after it.
std::vector<std::string> results_row(const BenchPoint& point, const RuntimeResult& runtime);

/// The pipeline stages any runtime of the report has, in first-seen order; empty for models.
std::vector<std::string> stage_names(const BenchReport& report);

/// A runtime's median for `stage` in ms with two decimals, or "–" when it has none.
std::string stage_cell(const RuntimeResult& runtime, const std::string& stage);

}  // namespace edgemm::bench
