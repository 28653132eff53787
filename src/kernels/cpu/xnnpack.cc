/// \file xnnpack.cc
/// XNNPACK's process-wide state: initialization, the choice to use it, thread pools.

#include "kernels/cpu/xnnpack.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

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

bool fp16_enabled() {
#if defined(__aarch64__)
  return enabled() && cpu_features().asimdhp;
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

void to_half(const float* x, uint16_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  for (; i < count; ++i) {
    const __fp16 h = static_cast<__fp16>(x[i]);
    std::memcpy(out + i, &h, sizeof h);
  }
}

void from_half(const uint16_t* x, float* out, int64_t count) {
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) vst1q_f32(out + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(x + i))));
  for (; i < count; ++i) {
    __fp16 h;
    std::memcpy(&h, x + i, sizeof h);
    out[i] = static_cast<float>(h);
  }
}

bool half_keeps(const float* w, int64_t channels, int64_t per_channel, int64_t channel_stride, int64_t element_stride) {
  constexpr double kMaxHalf = 65504.0, kLoss = 1e-3;
  for (int64_t c = 0; c < channels; ++c) {
    double norm = 0, error = 0;
    for (int64_t i = 0; i < per_channel; ++i) {
      const float v = w[c * channel_stride + i * element_stride];
      if (!(std::fabs(v) <= kMaxHalf)) return false;  // NaN too
      norm += std::fabs(v);
      error += std::fabs(static_cast<double>(v) - static_cast<double>(static_cast<float>(static_cast<__fp16>(v))));
    }
    if (error > kLoss * norm) return false;
  }
  return true;
}

uint16_t* half_buffer(int slot, int64_t count) {
  thread_local std::vector<uint16_t> buffers[2];
  std::vector<uint16_t>& b = buffers[slot];
  if (static_cast<int64_t>(b.size()) < count) b.resize(static_cast<size_t>(count));
  return b.data();
}
#endif

}  // namespace edgemm::kernels::xnnpack
