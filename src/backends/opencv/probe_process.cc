/// \file probe_process.cc
/// ProbeProcess (see probe_process.h). Protocol over one socket pair: the parent writes a job
/// into the shared file and sends its size (uint64); the child answers [uint32 length][reason].
/// Job layout in the shared file (native byte order, tensor data at 64-byte offsets):
///   u64 onnx size, onnx bytes; u64 input count, per input: name, shape, float32 data;
///   u64 output count, per output: name, shape; u64 has_expected, per output: float32 data.
/// Names are u64 length + bytes, shapes u64 rank + int64 extents.

#include "backends/opencv/probe_process.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <opencv2/core/utils/logger.hpp>
#include <utility>

namespace edgemm::backends::opencv {

/// A shared mapping of the job file that is only replaced when a job outgrows it, so that its
/// pages fault in once rather than once per probe.
class JobMapping {
 public:
  ~JobMapping() { unmap(); }
  /// At least `size` bytes of `fd` mapped (read-only unless `writable`), or nullptr.
  char* at_least(int fd, size_t size, bool writable) {
    if (size <= bytes_) return data_;
    unmap();
    void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return nullptr;
    data_ = static_cast<char*>(p);
    bytes_ = size;
    return data_;
  }

 private:
  void unmap() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = nullptr;
    bytes_ = 0;
  }
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

namespace {

using Clock = std::chrono::steady_clock;

/// Counts (data == nullptr) or writes the bytes of a job.
struct Writer {
  char* data = nullptr;
  size_t pos = 0;
  void bytes(const void* p, size_t n) {
    if (data != nullptr && n > 0) std::memcpy(data + pos, p, n);
    pos += n;
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void text(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void shape(const Shape& s) {
    u64(s.size());
    bytes(s.data(), s.size() * sizeof(int64_t));
  }
  void tensor(const Tensor& t) {
    pos = (pos + 63) / 64 * 64;
    bytes(t.raw_data(), t.byte_size());
  }
};

void encode(const ProbeJob& job, Writer& w) {
  w.text(job.onnx);
  w.u64(job.inputs.size());
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    w.text(job.inputs[i].name);
    w.shape(job.inputs[i].shape);
    w.tensor(job.input_values[i]);
  }
  w.u64(job.outputs.size());
  for (const NamedShape& out : job.outputs) {
    w.text(out.name);
    w.shape(out.shape);
  }
  w.u64(job.expected.empty() ? 0 : 1);
  for (const Tensor& t : job.expected) w.tensor(t);
}

/// Reads a job from the child's mapping of the shared file; tensors borrow the mapping.
struct Reader {
  const char* data;
  size_t pos = 0;
  uint64_t u64() {
    uint64_t v;
    std::memcpy(&v, data + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string text() {
    const size_t n = u64();
    std::string s(data + pos, n);
    pos += n;
    return s;
  }
  Shape shape() {
    Shape s(u64());
    std::memcpy(s.data(), data + pos, s.size() * sizeof(int64_t));
    pos += s.size() * sizeof(int64_t);
    return s;
  }
  Tensor tensor(const Shape& shape) {
    pos = (pos + 63) / 64 * 64;
    Tensor t = Tensor::borrow(DataType::kFloat32, shape, const_cast<char*>(data + pos));
    pos += t.byte_size();
    return t;
  }
};

ProbeJob decode(const char* data) {
  Reader r{data};
  ProbeJob job;
  job.onnx = r.text();
  for (uint64_t n = r.u64(), i = 0; i < n; ++i) {
    NamedShape in{r.text(), r.shape()};
    job.input_values.push_back(r.tensor(in.shape));
    job.inputs.push_back(std::move(in));
  }
  for (uint64_t n = r.u64(), i = 0; i < n; ++i) job.outputs.push_back({r.text(), r.shape()});
  if (r.u64() != 0) {
    for (const NamedShape& out : job.outputs) job.expected.push_back(r.tensor(out.shape));
  }
  return job;
}

bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Reads exactly `size` bytes unless the peer closes or `deadline` passes (then false).
bool read_all(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Whether some element of `got` is not within kProbeTolerance of `want` (NaN and infinities
/// count as different: same_values sorts them out). A loop without branches, so it vectorizes.
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

constexpr int kChildSocketFd = 3;
constexpr int kChildMemFd = 4;

/// Silences the child, keeps only its socket and the shared file open, and makes OpenCV
/// single-threaded.
void prepare_child(int socket_fd, int memfd) {
  // Moved above both targets first: either may already sit on the other's target.
  const int high_socket = ::fcntl(socket_fd, F_DUPFD, kChildMemFd + 1);
  const int high_memfd = ::fcntl(memfd, F_DUPFD, kChildMemFd + 1);
  ::dup2(high_socket, kChildSocketFd);
  ::dup2(high_memfd, kChildMemFd);
  ::close_range(kChildMemFd + 1, ~0U, 0);
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

/// The child: answers jobs until the parent closes the socket, then _exit (no atexit handlers,
/// no flushing of the parent's stdio buffers).
[[noreturn]] void child_main(int socket_fd, int memfd) {
  prepare_child(socket_fd, memfd);
  const auto forever = Clock::time_point::max();
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

Status io_error(const std::string& what) {
  return make_error(StatusCode::kIo, "cannot " + what + " for the OpenCV probe process: " + std::strerror(errno));
}

/// Why a child that gave no answer ended.
std::string describe_end(int status, bool timed_out) {
  if (timed_out) {
    return "OpenCV DNN 4.6 did not finish probing it within " + std::to_string(kProbeTimeoutSeconds) + " s";
  }
  if (status != -1 && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::sigdescr_np(sig);
    return "OpenCV DNN 4.6 crashed probing it (signal " + std::to_string(sig) + ", " + (name ? name : "unknown") + ")";
  }
  if (status != -1 && WIFEXITED(status)) {
    return "OpenCV DNN 4.6 ended the probe process with exit code " + std::to_string(WEXITSTATUS(status));
  }
  return "the probe process ended without an answer";
}

}  // namespace

ProbeProcess::ProbeProcess() : mapping_(std::make_unique<JobMapping>()) {}

ProbeProcess::~ProbeProcess() {
  if (pid_ > 0) stop(false);
  mapping_.reset();
  if (memfd_ >= 0) ::close(memfd_);
}

Status ProbeProcess::start() {
  if (memfd_ < 0) {
    memfd_ = ::memfd_create("edgemm-opencv-probe", MFD_CLOEXEC);
    if (memfd_ < 0) return io_error("create the shared job file");
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return io_error("create a socket pair");
  std::unique_lock<std::mutex> lock(import_mutex());
  const pid_t pid = ::fork();
  if (pid == 0) {
    lock.release();
    reset_import_mutex_in_child();
    ::close(fds[0]);
    child_main(fds[1], memfd_);
  }
  lock.unlock();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return io_error("fork");
  }
  ::close(fds[1]);
  pid_ = pid;
  socket_fd_ = fds[0];
  return Status::ok();
}

int ProbeProcess::stop(bool kill_first) {
  if (socket_fd_ >= 0) ::close(socket_fd_);
  socket_fd_ = -1;
  if (kill_first) ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t waited = -1;
  do {
    waited = ::waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  const bool known = waited == pid_;
  pid_ = -1;
  return known ? status : -1;
}

Status ProbeProcess::submit(const ProbeJob& job) {
  failed_.clear();
  Status status = pid_ < 0 ? start() : Status::ok();
  Writer size;
  encode(job, size);
  job_bytes_ = size.pos;
  if (status.is_ok()) status = reserve(job_bytes_);
  if (status.is_ok()) {
    Writer writer{mapping_->at_least(memfd_, file_bytes_, true)};
    if (writer.data == nullptr) status = io_error("map the shared job file");
    if (writer.data != nullptr) encode(job, writer);
  }
  if (status.is_ok()) status = send();
  if (!status.is_ok()) failed_ = status.message();
  return status;
}

Status ProbeProcess::reserve(size_t bytes) {
  if (bytes <= file_bytes_) return Status::ok();
  const size_t grown = std::max(bytes, 2 * file_bytes_);
  if (::ftruncate(memfd_, static_cast<off_t>(grown)) != 0) return io_error("size the shared job file");
  file_bytes_ = grown;
  return Status::ok();
}

Status ProbeProcess::send() {
  const uint64_t size = job_bytes_;
  if (!send_all(socket_fd_, &size, sizeof size)) return io_error("send a job");
  return Status::ok();
}

std::string ProbeProcess::receive(End* end) {
  const auto deadline = Clock::now() + std::chrono::seconds(kProbeTimeoutSeconds);
  uint32_t length = 0;
  std::string answer;
  bool answered = read_all(socket_fd_, &length, sizeof length, deadline);
  if (answered) {
    answer.resize(length);
    answered = read_all(socket_fd_, answer.data(), answer.size(), deadline);
  }
  if (answered) {
    *end = End::kAnswered;
    return answer;
  }
  const bool timed_out = Clock::now() >= deadline;
  const int status = stop(timed_out);
  *end = !timed_out && status != -1 && WIFSIGNALED(status) ? End::kCrashed : End::kOther;
  return describe_end(status, timed_out);
}

ProbeAnswer ProbeProcess::wait() {
  if (!failed_.empty()) return {std::exchange(failed_, ""), false};
  End end = End::kAnswered;
  std::string answer = receive(&end);
  if (end != End::kCrashed) return {answer, true};
  // A crash may come from damage an earlier probe did to the child's heap: the probe is
  // blamed only when it crashes a fresh child too.
  if (Status s = start(); !s.is_ok()) return {s.message(), false};
  if (Status s = send(); !s.is_ok()) return {s.message(), false};
  return {receive(&end), true};
}

}  // namespace edgemm::backends::opencv
