/// \file registry.cc
/// The backend registry and make_backend (see backend.h).

#include <algorithm>
#include <map>
#include <mutex>

#include "backends/backend.h"
#include "backends/plugin.h"

namespace edgemm::backends {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> factories;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

/// kInvalidArgument unless `value` is one of `accepted`.
Status check_one_of(const std::string& backend, const std::string& what, const std::string& value,
                    const std::vector<std::string>& accepted) {
  if (std::find(accepted.begin(), accepted.end(), value) != accepted.end()) return Status::ok();
  return make_error(StatusCode::kInvalidArgument, "backend '" + backend + "' does not support " + what + " '" + value +
                                                      "' (it supports: " + join(accepted) + ")");
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[name] = std::move(factory);
}

Expected<std::unique_ptr<Backend>> make_backend(const RuntimeOptions& config) {
  if (config.backend != "plugin" && !config.plugin_path.empty()) {
    return make_error(StatusCode::kInvalidArgument, "a plugin ('" + config.plugin_path +
                                                        "') is given but the backend is '" + config.backend +
                                                        "'; choose backend 'plugin' to load it");
  }
  if (config.backend == "native") {
    EDGEMM_RETURN_IF_ERROR(check_one_of("native", "device", config.device, {"cpu"}));
    EDGEMM_RETURN_IF_ERROR(check_one_of("native", "precision", config.precision, {"fp32", "bf16", "fp16"}));
    return std::unique_ptr<Backend>();
  }
  BackendFactory factory;
  if (config.backend == "plugin") {
    factory = load_plugin_backend;
  } else {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.factories.find(config.backend);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    return make_error(StatusCode::kInvalidArgument,
                      "unknown backend '" + config.backend + "' (available: " + join(backend_names()) + ")");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, factory(config));
  const BackendConstraints& c = backend->constraints();
  EDGEMM_RETURN_IF_ERROR(check_one_of(backend->name(), "device", config.device, c.devices));
  EDGEMM_RETURN_IF_ERROR(check_one_of(backend->name(), "precision", config.precision, c.precisions));
  return backend;
}

}  // namespace edgemm::backends

namespace edgemm {

std::vector<std::string> backend_names() {
  backends::Registry& r = backends::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names = {"native", "plugin"};
  for (const auto& [name, factory] : r.factories) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Status check_runtime_options(const RuntimeOptions& options) {
  return backends::make_backend(options).status();
}

}  // namespace edgemm
