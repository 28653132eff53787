#pragma once
/// \file backend.h
/// The backend interface (version kBackendInterfaceVersion): what a runtime other than edgemm's
/// own CPU kernels implements so that Inferencer can hand it part of a graph. A backend says
/// which nodes it can run (with a reason for each refusal), compiles a partition (a standalone
/// model of standard ONNX ops), runs it, and releases it (destroying the CompiledPartition).
/// Modelled on ONNX Runtime's execution-provider GetCapability/Compile split and ggml's backend
/// registry. Vendor runtimes reach it through the C plugin ABI (edgemm/plugin_abi.h, plugin.cc).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/backends.h"
#include "edgemm/runtime_options.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::backends {

/// Version of this interface; bumped when Backend or CompiledPartition change incompatibly.
inline constexpr int kBackendInterfaceVersion = 1;

/// A backend's verdict on one node.
struct NodeSupport {
  bool supported = false;
  std::string reason;  ///< why not, naming the op, attribute, dtype or shape (empty when supported)
};

/// What a backend accepts in RuntimeOptions; Inferencer::create() refuses anything else by name.
struct BackendConstraints {
  std::vector<std::string> devices;     ///< e.g. {"cpu"}
  std::vector<std::string> precisions;  ///< e.g. {"fp32"}
};

/// Settings a partition is compiled with (validated against BackendConstraints first).
struct BackendOptions {
  std::string device = "cpu";
  std::string precision = "fp32";
  int threads = 1;  ///< intra-op threads (>= 1)
};

/// A compiled partition. Destroying it releases the backend's resources.
class CompiledPartition {
 public:
  virtual ~CompiledPartition() = default;
  /// Runs the partition on its inputs (in the order of the partition model's graph inputs) and
  /// returns its outputs (in graph-output order), owning their memory. Must be thread-safe:
  /// Inferencer::run may call it from several threads at once.
  virtual Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const = 0;
};

/// A runtime that can take over parts of a graph.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The name used in RuntimeOptions::backend and in placement reports.
  virtual const std::string& name() const = 0;
  virtual const BackendConstraints& constraints() const = 0;
  /// One verdict per node of model.graph.nodes, in the same order. The graph holds standard ONNX
  /// ops only, with value_infos from shape inference.
  virtual std::vector<NodeSupport> capability(const ir::Model& model) const = 0;
  /// Compiles a partition: a standalone model (standard ops, graph inputs with dtypes and the
  /// shapes known at load, the initializers it reads). Errors name the partition's nodes.
  virtual Expected<std::unique_ptr<CompiledPartition>> compile(const ir::Model& partition,
                                                               const BackendOptions& options) const = 0;
};

/// Makes a backend for a config (called once per Inferencer::create). Errors: kInvalidArgument
/// for settings it cannot honour, kIo/kUnsupported from loading it.
using BackendFactory = std::function<Expected<std::unique_ptr<Backend>>(const RuntimeOptions& config)>;

/// Registers a backend under `name` (a later registration of the same name replaces it).
/// Backends outside the core (OpenCV) register from a static initializer of their object library.
void register_backend(const std::string& name, BackendFactory factory);

/// The backend config.backend names: nullptr for "native" (edgemm's own kernels run
/// everything), the plugin at config.plugin_path for "plugin", else the registered one.
/// Checks config.device and config.precision against its constraints.
/// Errors: kInvalidArgument for an unknown name (listing the known ones), an unsupported device
/// or precision (listing the accepted ones), "plugin" without a plugin_path, a plugin_path with
/// another backend; the factory's.
Expected<std::unique_ptr<Backend>> make_backend(const RuntimeOptions& config);

}  // namespace edgemm::backends
