#pragma once
/// \file report_markdown.h
/// A bench report as Markdown: machine and settings, each peer's version and settings (or
/// why it could not run), and one table row per point and runtime. Also the terminal output.

#include <string>

#include "bench/report.h"

namespace edgemm::bench {

/// The whole report as a Markdown document (GitHub-flavoured tables).
std::string to_markdown(const BenchReport& report);

/// Bytes as MiB with one decimal ("512.0").
std::string mib(int64_t bytes);

}  // namespace edgemm::bench
