/// \file xnnpack.cc
/// XNNPACK's process-wide state: initialization, the choice to use it, thread pools.

#include "kernels/cpu/xnnpack.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "kernels/cpu_features.h"

namespace edgemm::kernels::xnnpack {

bool enabled() {
#if defined(__aarch64__)
  static const bool on = [] {
    const char* env = std::getenv("EDGEMM_XNNPACK");
    if (env != nullptr && std::strcmp(env, "0") == 0) return false;
    if (!cpu_features().asimd || cpu_features().sve) return false;
    return xnn_initialize(nullptr) == xnn_status_success;
  }();
  return on;
#else
  return false;
#endif
}

#if defined(__aarch64__)
pthreadpool_t threadpool(int threads) {
  if (threads <= 1) return nullptr;
  static std::mutex mutex;
  static std::map<int, pthreadpool_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  pthreadpool_t& pool = pools[threads];
  if (pool == nullptr) pool = pthreadpool_create(static_cast<size_t>(threads));
  return pool;
}

namespace {

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "xnn_status_success";
    case xnn_status_uninitialized:
      return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter:
      return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state:
      return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter:
      return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware:
      return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory:
      return "xnn_status_out_of_memory";
  }
  return "xnn_status (unknown)";
}

}  // namespace

Status check(const ir::Node& node, xnn_status status, const char* what) {
  if (status == xnn_status_success) return Status::ok();
  return ir::node_error(node, StatusCode::kInternal,
                        std::string("XNNPACK ") + what + " failed: " + status_name(status));
}
#endif

}  // namespace edgemm::kernels::xnnpack
