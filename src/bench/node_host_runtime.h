#pragma once
/// \file node_host_runtime.h
/// A peer that lives in a long-lived node process (tools/reference/*_server.js), spoken to in
/// JSON lines: the host first prints {"ok":true,"ready":true,"version":V,"node":N}; then each
/// request line {"op":"load",...} / {"op":"run","iters":K} / {"op":"quit"} gets one reply line,
/// {"ok":true,"load_ms":...}, {"ok":true,"times_ms":[K numbers]} or {"ok":false,"error":E}.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/runtimes.h"

namespace edgemm::bench {

/// What differs between node-hosted peers.
struct NodeHostSpec {
  std::string runtime_name;  ///< name in reports, e.g. "onnxruntime"
  std::string script;        ///< server script in the reference folder, e.g. "ort_server.js"
  std::string package;       ///< npm package the script needs, checked under node_modules
  nlohmann::json settings;   ///< settings for reports (the host's node version is added)
  /// Builds the load request's fields (without "op"); may write files into `work_dir`, a
  /// temporary folder removed with the runtime.
  std::function<Expected<nlohmann::json>(const std::string& work_dir)> load_request;
};

/// Creates a node-hosted peer; the host starts in prepare(). `timeout_s` bounds every wait for
/// a reply (a hung host fails the runtime instead of hanging the benchmark).
std::unique_ptr<BenchRuntime> make_node_host_runtime(NodeHostSpec spec, const std::string& reference_dir,
                                                     double timeout_s);

}  // namespace edgemm::bench
