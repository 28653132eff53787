#pragma once
/// \file cpu_features.h
/// The kernel selection's log line (the features and the selection are public: edgemm/cpu.h).

#include "edgemm/cpu.h"

namespace edgemm::kernels {

/// Writes kernel_selection() to stderr, once per process, when the environment variable
/// EDGEMM_VERBOSE is set to a non-empty value other than "0". Called by Inferencer::create.
void log_kernel_selection_once();

}  // namespace edgemm::kernels
