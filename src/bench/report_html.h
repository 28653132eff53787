#pragma once
/// \file report_html.h
/// A bench report as one self-contained HTML page (inline CSS and SVG, no script, no external
/// resources, print-friendly): machine, settings and energy note, the command, each runtime's
/// version and settings, failures with their errors, the results table of the Markdown report,
/// and charts (docs/benchmarks.md, "Reports"). The page is also well-formed XML.

#include <string>

#include "bench/report.h"

namespace edgemm::bench {

/// The whole report as an HTML page. Charts, each one <svg>: a latency box-and-strip plot per
/// point; median latency relative to edgemm as bars when a peer ran; when the report sweeps
/// an input size or has several thread counts, median latency and peak RSS added as lines over
/// the swept value (or the threads); for pipelines, the median per stage as bars per point and
/// runtime. Every string from the report is escaped.
std::string to_html(const BenchReport& report);

}  // namespace edgemm::bench
