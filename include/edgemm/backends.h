#pragma once
/// \file backends.h
/// The backends a program can run models on, and the check of RuntimeOptions' backend, device and
/// precision that loading a model makes, without a model (docs/backends.md).

#include <string>
#include <vector>

#include "edgemm/runtime_options.h"
#include "edgemm/status.h"

namespace edgemm {

/// Names of the backends this program can use, sorted: "native", "plugin", and the registered
/// ones ("opencv" in programs that link the edgemm_backend_opencv object library). Thread-safe.
std::vector<std::string> backend_names();

/// Checks options.backend, options.device and options.precision as Inferencer::create does; for
/// "plugin" it loads options.plugin_path and checks the plugin's ABI and declarations. Errors:
/// kInvalidArgument for an unknown backend (listing backend_names()), a device or precision the
/// backend does not declare (listing the accepted ones), "plugin" without a plugin_path or a
/// plugin_path with another backend; kIo / kUnsupported from loading a plugin.
Status check_runtime_options(const RuntimeOptions& options);

}  // namespace edgemm
