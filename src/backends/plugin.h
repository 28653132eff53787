#pragma once
/// \file plugin.h
/// The "plugin" backend: a vendor runtime in a shared library that implements the C ABI of
/// edgemm/plugin_abi.h, loaded with dlopen and adapted to backends::Backend. Models and
/// partitions reach the plugin as ONNX bytes (ir::export_onnx_bytes), tensors as
/// EdgemmPluginTensor views. Follows ONNX Runtime's EP ABI and ggml's dynamic backend loading.

#include <memory>

#include "backends/backend.h"
#include "edgemm/runtime_options.h"
#include "edgemm/status.h"

namespace edgemm::backends {

/// Loads the plugin at config.plugin_path (dlopen, RTLD_NOW | RTLD_LOCAL; a relative path is
/// taken from the working directory, never searched for) and returns it as a Backend named by
/// the plugin's declared name, with its declared devices and precisions as constraints.
/// capability() and compile() pass config.device and config.precision to the plugin.
/// The library stays loaded while the Backend, a partition it compiled or an output tensor the
/// plugin allocated is alive; it is unloaded (dlclose) after the last of them.
/// Errors (each message names the file):
/// - kInvalidArgument: config.plugin_path is empty;
/// - kIo: the file does not exist;
/// - kUnsupported: the file is not a loadable shared library, does not export
///   EDGEMM_PLUGIN_ENTRY_POINT (both with dlerror's text), returns no API table, has another
///   ABI version ("plugin F has ABI version N; this edgemm needs M"), a table smaller than this
///   version's, no name, the reserved name "native", no devices or precisions, or a NULL
///   function pointer (naming the field).
/// Errors of the adapted Backend: compile() and CompiledPartition::run() return the plugin's
/// status code and message; a misbehaving plugin (a NULL partition or output pointer, an
/// unknown dtype, negative extents) is reported as kInternal naming the plugin and the value.
/// capability() cannot fail: when the plugin reports an error, every node is refused with
/// that message as the reason (and runs on native).
Expected<std::unique_ptr<Backend>> load_plugin_backend(const RuntimeOptions& config);

}  // namespace edgemm::backends
