/// \file plugin.cc
/// load_plugin_backend (see plugin.h): the dlopen'ed library, its checked API table, and the
/// Backend / CompiledPartition adapters over it.

#include "backends/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "edgemm/plugin_abi.h"
#include "ir/onnx_export.h"

namespace edgemm::backends {
namespace {

/// Largest rank accepted from a plugin's output (ONNX sets no limit; this catches garbage).
constexpr int32_t kMaxRank = 64;

/// An open plugin library and its checked API table. dlclose runs when the last owner (the
/// backend, a partition, an output tensor) lets go.
class PluginLibrary {
 public:
  PluginLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~PluginLibrary() { dlclose(handle_); }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  void* handle() const { return handle_; }
  const std::string& path() const { return path_; }
  const EdgemmPluginApi& api() const { return *api_; }
  void set_api(const EdgemmPluginApi* api) { api_ = api; }

 private:
  void* handle_;
  std::string path_;
  const EdgemmPluginApi* api_ = nullptr;
};

using Library = std::shared_ptr<const PluginLibrary>;

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "no dlerror text";
}

/// The status code edgemm uses for a plugin's EdgemmPluginStatus (unknown codes: kInternal).
StatusCode status_code_of(int32_t code) {
  switch (code) {
    case EDGEMM_PLUGIN_INVALID_ARGUMENT:
      return StatusCode::kInvalidArgument;
    case EDGEMM_PLUGIN_INVALID_MODEL:
      return StatusCode::kInvalidModel;
    case EDGEMM_PLUGIN_UNSUPPORTED:
      return StatusCode::kUnsupported;
    case EDGEMM_PLUGIN_OUT_OF_MEMORY:
      return StatusCode::kOutOfMemory;
    case EDGEMM_PLUGIN_IO:
      return StatusCode::kIo;
    default:
      return StatusCode::kInternal;
  }
}

/// Text of a host-owned buffer the plugin wrote, NUL-terminated here whatever the plugin did.
std::string bounded_text(char* buffer, size_t capacity) {
  buffer[capacity - 1] = '\0';
  return buffer;
}

/// The error a plugin function reported with `code` (not EDGEMM_PLUGIN_OK) into `error`.
Status plugin_error(const std::string& name, const char* function, int32_t code, EdgemmPluginError& error) {
  std::string message = bounded_text(error.message, sizeof error.message);
  if (message.empty()) message = "no message";
  return Status(status_code_of(code),
                "plugin '" + name + "' " + function + " failed (code " + std::to_string(code) + "): " + message);
}

/// Opens the file with dlopen. Errors: see load_plugin_backend.
Expected<std::shared_ptr<PluginLibrary>> open_library(const std::string& path) {
  if (path.empty()) {
    return make_error(StatusCode::kInvalidArgument, "backend 'plugin' needs a plugin library (plugin_path / --plugin)");
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return make_error(StatusCode::kIo, "plugin library '" + path + "' does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(StatusCode::kIo, "plugin library '" + path + "' is a directory, not a shared library");
  }
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  void* handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return make_error(StatusCode::kUnsupported,
                      "plugin '" + path + "' is not a loadable shared library: " + dl_error_text());
  }
  return std::make_shared<PluginLibrary>(handle, path);
}

/// Calls the entry point. Errors: see load_plugin_backend.
Expected<const EdgemmPluginApi*> entry_point_api(const PluginLibrary& library) {
  dlerror();
  void* symbol = dlsym(library.handle(), EDGEMM_PLUGIN_ENTRY_POINT);
  if (symbol == nullptr) {
    return make_error(StatusCode::kUnsupported, "plugin '" + library.path() + "' does not export " +
                                                    EDGEMM_PLUGIN_ENTRY_POINT + ": " + dl_error_text());
  }
  const auto get_api = reinterpret_cast<EdgemmPluginGetApiFn>(symbol);
  const EdgemmPluginApi* api = get_api(EDGEMM_PLUGIN_ABI_VERSION);
  if (api == nullptr) {
    return make_error(StatusCode::kUnsupported, "plugin '" + library.path() +
                                                    "' returned no API table for ABI version " +
                                                    std::to_string(EDGEMM_PLUGIN_ABI_VERSION));
  }
  return api;
}

/// kUnsupported unless `names` holds `count` non-empty strings.
Status check_names(const std::string& path, const char* field, size_t count, const char* const* names) {
  if (count == 0 || names == nullptr) {
    return make_error(StatusCode::kUnsupported, "plugin '" + path + "' declares no " + field);
  }
  for (size_t i = 0; i < count; ++i) {
    if (names[i] == nullptr || names[i][0] == '\0') {
      return make_error(StatusCode::kUnsupported,
                        "plugin '" + path + "' declares an empty entry " + std::to_string(i) + " in " + field);
    }
  }
  return Status::ok();
}

/// Checks the version, size, name, devices, precisions and functions of the table.
Status check_api(const std::string& path, const EdgemmPluginApi& api) {
  if (api.abi_version != EDGEMM_PLUGIN_ABI_VERSION) {
    return make_error(StatusCode::kUnsupported, "plugin '" + path + "' has ABI version " +
                                                    std::to_string(api.abi_version) + "; this edgemm needs " +
                                                    std::to_string(EDGEMM_PLUGIN_ABI_VERSION));
  }
  if (api.struct_size < sizeof(EdgemmPluginApi)) {
    return make_error(StatusCode::kUnsupported, "plugin '" + path + "' declares an API table of " +
                                                    std::to_string(api.struct_size) + " bytes; ABI version " +
                                                    std::to_string(EDGEMM_PLUGIN_ABI_VERSION) + " needs " +
                                                    std::to_string(sizeof(EdgemmPluginApi)));
  }
  if (api.name == nullptr || api.name[0] == '\0') {
    return make_error(StatusCode::kUnsupported, "plugin '" + path + "' declares no name");
  }
  const std::vector<std::string> taken = backend_names();  // native, plugin and the registered ones
  if (std::find(taken.begin(), taken.end(), api.name) != taken.end()) {
    return make_error(StatusCode::kUnsupported, "plugin '" + path + "' declares the name '" + api.name +
                                                    "', which is one of edgemm's own backend names");
  }
  EDGEMM_RETURN_IF_ERROR(check_names(path, "devices", api.device_count, api.devices));
  EDGEMM_RETURN_IF_ERROR(check_names(path, "precisions", api.precision_count, api.precisions));
  const std::pair<const char*, bool> functions[] = {{"capability", api.capability != nullptr},
                                                    {"compile", api.compile != nullptr},
                                                    {"run", api.run != nullptr},
                                                    {"release_output", api.release_output != nullptr},
                                                    {"release_partition", api.release_partition != nullptr}};
  for (const auto& [field, present] : functions) {
    if (!present) {
      return make_error(StatusCode::kUnsupported, "plugin '" + path + "' has no " + field + " function (NULL)");
    }
  }
  return Status::ok();
}

/// Options passed to the plugin; `device` and `precision` must outlive its use.
EdgemmPluginOptions plugin_options(const std::string& device, const std::string& precision, int threads) {
  return EdgemmPluginOptions{device.c_str(), precision.c_str(), std::max(threads, 1)};
}

/// Keeps one plugin output alive; its destruction hands the tensor back to release_output (with
/// `name` NULL: the partition's name strings may be gone by then).
struct OutputLease {
  Library library;
  EdgemmPluginTensor tensor;
  ~OutputLease() {
    tensor.name = nullptr;
    library->api().release_output(&tensor);
  }
};

/// A partition compiled by the plugin; destruction calls release_partition.
class PluginPartition final : public CompiledPartition {
 public:
  PluginPartition(Library library, std::string name, EdgemmPluginPartition* handle, const ir::Graph& graph)
      : library_(std::move(library)), name_(std::move(name)), handle_(handle) {
    for (const ValueInfo& in : graph.inputs) input_names_.push_back(in.name);
    for (const ValueInfo& out : graph.outputs) output_names_.push_back(out.name);
  }
  ~PluginPartition() override { library_->api().release_partition(handle_); }
  PluginPartition(const PluginPartition&) = delete;
  PluginPartition& operator=(const PluginPartition&) = delete;

  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    if (inputs.size() != input_names_.size()) {
      return make_error(StatusCode::kInternal, "plugin '" + name_ + "' partition got " + std::to_string(inputs.size()) +
                                                   " inputs; it has " + std::to_string(input_names_.size()));
    }
    const std::vector<EdgemmPluginTensor> views = input_views(inputs);
    std::vector<EdgemmPluginTensor> outputs(output_names_.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i] = {output_names_[i].c_str(), 0, 0, nullptr, nullptr, nullptr};
    }
    EdgemmPluginError error{};
    const int32_t code =
        library_->api().run(handle_, views.data(), views.size(), outputs.data(), outputs.size(), &error);
    if (code != EDGEMM_PLUGIN_OK) return plugin_error(name_, "run", code, error);
    return adopt_all(outputs);
  }

 private:
  /// Views of `inputs` (borrowed: valid while `inputs` and input_names_ are).
  std::vector<EdgemmPluginTensor> input_views(const std::vector<Tensor>& inputs) const {
    std::vector<EdgemmPluginTensor> views;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      views.push_back({input_names_[i].c_str(), static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.rank()),
                       t.shape().data(), t.raw_data(), nullptr});
    }
    return views;
  }

  /// Takes ownership of every output of a successful run (each released exactly once, also when
  /// one of them breaks the ABI) and wraps them as Tensors.
  Expected<std::vector<Tensor>> adopt_all(const std::vector<EdgemmPluginTensor>& outputs) const {
    std::vector<std::shared_ptr<OutputLease>> leases;
    for (const EdgemmPluginTensor& out : outputs) leases.push_back(std::make_shared<OutputLease>(library_, out));
    std::vector<Tensor> result;
    for (const auto& lease : leases) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor t, adopt(lease));
      result.push_back(std::move(t));
    }
    return result;
  }

  /// Wraps a plugin output without copying, after checking what the ABI requires of it.
  Expected<Tensor> adopt(const std::shared_ptr<OutputLease>& lease) const {
    const EdgemmPluginTensor& out = lease->tensor;
    const std::string what = "plugin '" + name_ + "' returned output '" + out.name + "'";
    const auto dtype = static_cast<DataType>(out.dtype);
    if (!dtype_supported(dtype)) {
      return make_error(StatusCode::kInternal, what + " with dtype " + std::to_string(out.dtype) +
                                                   ", which is no ONNX tensor type edgemm holds");
    }
    if (out.rank < 0 || out.rank > kMaxRank || (out.rank > 0 && out.dims == nullptr)) {
      return make_error(StatusCode::kInternal, what + " with rank " + std::to_string(out.rank) +
                                                   (out.dims == nullptr ? " and no dims (NULL)" : ""));
    }
    Shape shape(out.dims, out.dims + out.rank);
    auto count = shape_element_count(shape);
    if (!count) return make_error(StatusCode::kInternal, what + " with shape " + shape_to_string(shape));
    if (*count > kMaxTensorBytes / static_cast<int64_t>(dtype_size(dtype))) {
      return make_error(StatusCode::kInternal, what + " of more than kMaxTensorBytes: " + shape_to_string(shape));
    }
    if (*count > 0 && out.data == nullptr) return make_error(StatusCode::kInternal, what + " with no data (NULL)");
    // The host only reads plugin outputs (PartitionKernel copies them); the ABI hands them over as const.
    return Tensor::from_storage(dtype, std::move(shape), lease, const_cast<void*>(out.data));
  }

  Library library_;
  std::string name_;
  EdgemmPluginPartition* handle_;
  std::vector<std::string> input_names_, output_names_;
};

/// The plugin as a Backend.
class PluginBackend final : public Backend {
 public:
  PluginBackend(Library library, const RuntimeOptions& config)
      : library_(std::move(library)),
        name_(library_->api().name),
        device_(config.device),
        precision_(config.precision),
        threads_(config.threads > 0 ? config.threads : static_cast<int>(std::thread::hardware_concurrency())) {
    const EdgemmPluginApi& api = library_->api();
    constraints_.devices.assign(api.devices, api.devices + api.device_count);
    constraints_.precisions.assign(api.precisions, api.precisions + api.precision_count);
  }

  const std::string& name() const override { return name_; }
  const BackendConstraints& constraints() const override { return constraints_; }

  std::vector<NodeSupport> capability(const ir::Model& model) const override {
    const size_t count = model.graph.nodes.size();
    auto refuse_all = [&](const std::string& reason) {
      return std::vector<NodeSupport>(count, NodeSupport{false, reason});
    };
    auto bytes = ir::export_onnx_bytes(model);
    if (!bytes) {
      return refuse_all("the model could not be serialized for plugin '" + name_ + "': " + bytes.status().message());
    }
    std::vector<EdgemmPluginVerdict> verdicts(count);
    const EdgemmPluginOptions options = plugin_options(device_, precision_, threads_);
    EdgemmPluginError error{};
    const int32_t code =
        library_->api().capability(bytes->data(), bytes->size(), &options, verdicts.data(), count, &error);
    if (code != EDGEMM_PLUGIN_OK) return refuse_all(plugin_error(name_, "capability", code, error).message());
    std::vector<NodeSupport> result;
    for (EdgemmPluginVerdict& v : verdicts) {
      std::string reason = bounded_text(v.reason, sizeof v.reason);
      if (v.supported == 0 && reason.empty()) reason = "plugin '" + name_ + "' gave no reason";
      result.push_back({v.supported != 0, v.supported != 0 ? "" : reason});
    }
    return result;
  }

  Expected<std::unique_ptr<CompiledPartition>> compile(const ir::Model& partition,
                                                       const BackendOptions& options) const override {
    EDGEMM_ASSIGN_OR_RETURN(std::string bytes, ir::export_onnx_bytes(partition));
    const EdgemmPluginOptions plugin = plugin_options(options.device, options.precision, options.threads);
    EdgemmPluginPartition* handle = nullptr;
    EdgemmPluginError error{};
    const int32_t code = library_->api().compile(bytes.data(), bytes.size(), &plugin, &handle, &error);
    if (code != EDGEMM_PLUGIN_OK) return plugin_error(name_, "compile", code, error);
    if (handle == nullptr) {
      return make_error(StatusCode::kInternal,
                        "plugin '" + name_ + "' compile reported success but returned no partition (NULL)");
    }
    return std::unique_ptr<CompiledPartition>(
        std::make_unique<PluginPartition>(library_, name_, handle, partition.graph));
  }

 private:
  Library library_;
  std::string name_;
  std::string device_, precision_;
  int threads_;
  BackendConstraints constraints_;
};

}  // namespace

Expected<std::unique_ptr<Backend>> load_plugin_backend(const RuntimeOptions& config) {
  EDGEMM_ASSIGN_OR_RETURN(std::shared_ptr<PluginLibrary> library, open_library(config.plugin_path));
  EDGEMM_ASSIGN_OR_RETURN(const EdgemmPluginApi* api, entry_point_api(*library));
  EDGEMM_RETURN_IF_ERROR(check_api(config.plugin_path, *api));
  library->set_api(api);
  return std::unique_ptr<Backend>(std::make_unique<PluginBackend>(std::move(library), config));
}

}  // namespace edgemm::backends
