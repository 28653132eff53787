/// \file probe_child.cc
/// The probe helper: runs each job through OpenCV DNN 4.6 and compares (see probe_child.h).

#include "backends/opencv/probe_child.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <opencv2/core/utils/logger.hpp>
#include <string>

#include "backends/opencv/opencv_dnn.h"
#include "backends/opencv/probe_protocol.h"

namespace edgemm::backends::opencv {
namespace {

/// Whether some element of `got` is not within kProbeTolerance of `want` (NaN and infinities
/// count as different: same_value sorts them out). A loop without branches, so it vectorizes.
bool any_far(const float* got, const float* want, int64_t count) {
  const float tolerance = static_cast<float>(kProbeTolerance);
  bool far = false;
  for (int64_t i = 0; i < count; ++i) far |= !(std::fabs(got[i] - want[i]) <= tolerance * (1 + std::fabs(want[i])));
  return far;
}

/// Within kProbeTolerance, or the same NaN or infinity.
bool same_value(float got, float want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= static_cast<float>(kProbeTolerance) * (1 + std::fabs(want));
}

/// "" when `got` (OpenCV's blobs, checked against the declared shapes) matches job.expected
/// within kProbeTolerance, else the first difference.
std::string compare(const ProbeJob& job, const std::vector<cv::Mat>& got) {
  for (size_t o = 0; o < job.expected.size() && o < got.size(); ++o) {
    const cv::Mat blob = got[o].isContinuous() ? got[o] : got[o].clone();
    const float* g = blob.ptr<float>();
    const float* w = job.expected[o].data<float>();
    const int64_t count = job.expected[o].element_count();
    if (!any_far(g, w, count)) continue;
    for (int64_t i = 0; i < count; ++i) {
      if (same_value(g[i], w[i])) continue;
      return "OpenCV DNN 4.6 computes other values: output '" + job.outputs[o].name + "' element " + std::to_string(i) +
             " is " + std::to_string(g[i]) + ", edgemm's kernel gives " + std::to_string(w[i]) +
             " (seeded inputs in [-1, 1))";
    }
  }
  return "";
}

/// What OpenCV says about the probe ("" when it runs and agrees). The net is destroyed before
/// this returns, so that heap damage found when OpenCV frees its blobs still counts.
std::string probe(const ProbeJob& job) {
  try {
    auto net = DnnNet::read(job.onnx, job.inputs, job.outputs);
    if (!net) return net.status().message();
    auto outputs = net->forward_blobs(job.input_values);
    if (!outputs) return outputs.status().message();
    return compare(job, *outputs);
  } catch (const std::exception& e) {
    return std::string("OpenCV DNN 4.6 threw while probing it: ") + e.what();
  }
}

/// Silences the helper and makes OpenCV single-threaded.
void prepare() {
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::close(null_fd);
  }
  ::setenv("LIBC_FATAL_STDERR_", "1", 1);  // glibc's heap-corruption reports go to stderr, not the tty
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  use_threads(1);
  // Blobs of every size come and go with each probe: keep them (up to glibc's largest mmap
  // threshold, 32 MiB) in the heap instead of fresh mmap()ed pages that fault in, get zeroed and
  // are unmapped again every time.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace

void probe_child_main() {
  prepare();
  const auto forever = std::chrono::steady_clock::time_point::max();
  JobMapping mapping;
  for (uint64_t size = 0; read_all(kChildSocketFd, &size, sizeof size, forever);) {
    const char* job = mapping.at_least(kChildMemFd, size, false);
    const std::string reason =
        job == nullptr ? std::string("cannot map the probe job: ") + std::strerror(errno) : probe(decode(job));
    const uint32_t length = static_cast<uint32_t>(reason.size());
    if (!send_all(kChildSocketFd, &length, sizeof length) || !send_all(kChildSocketFd, reason.data(), reason.size())) {
      break;
    }
  }
  ::_exit(0);
}

}  // namespace edgemm::backends::opencv
