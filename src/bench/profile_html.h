#pragma once
/// \file profile_html.h
/// A profile as a self-contained HTML page (`edgemm profile --report out.html`): the summary,
/// charts of the per-op-type breakdown (time share, achieved GFLOP/s) and of the slowest nodes,
/// then the op-type and node tables.

#include <string>

#include "bench/profile.h"

namespace edgemm::bench {

/// The page. Every string from the report (model path, node names) is escaped.
std::string profile_to_html(const ProfileReport& report);

}  // namespace edgemm::bench
