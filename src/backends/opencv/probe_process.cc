/// \file probe_process.cc
/// ProbeProcess: spawns the probe helper and talks to it (see probe_process.h and
/// probe_protocol.h).

#include "backends/opencv/probe_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

extern char** environ;

namespace edgemm::backends::opencv {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kHelperName = "edgemm-opencv-probe";

bool is_executable(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

Status io_error(const std::string& what) {
  return make_error(StatusCode::kIo, "cannot " + what + " for the OpenCV probe helper: " + std::strerror(errno));
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

Expected<std::string> probe_helper_path() {
  if (const char* env = std::getenv("EDGEMM_OPENCV_PROBE"); env != nullptr && *env != '\0') {
    if (is_executable(env)) return std::string(env);
    return make_error(StatusCode::kIo,
                      std::string("EDGEMM_OPENCV_PROBE is '") + env + "', which is not an executable file");
  }
  std::vector<std::string> places;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) places.push_back((self.parent_path() / kHelperName).string());
  places.push_back(EDGEMM_OPENCV_PROBE_BUILD_PATH);
  for (const std::string& place : places) {
    if (is_executable(place)) return place;
  }
  std::string looked = places.front();
  for (size_t i = 1; i < places.size(); ++i) looked += " and " + places[i];
  return make_error(StatusCode::kIo, std::string("cannot find the OpenCV probe helper '") + kHelperName +
                                         "' (looked at " + looked +
                                         "); build it (scripts/build.sh) or set EDGEMM_OPENCV_PROBE to its path");
}

ProbeProcess::ProbeProcess() : mapping_(std::make_unique<JobMapping>()) {}

ProbeProcess::~ProbeProcess() {
  if (pid_ > 0) stop(false);
  mapping_.reset();
  if (memfd_ >= 0) ::close(memfd_);
}

Status ProbeProcess::start() {
  auto helper = probe_helper_path();
  if (!helper) return helper.status();
  if (memfd_ < 0) {
    memfd_ = ::memfd_create("edgemm-opencv-probe", MFD_CLOEXEC);
    if (memfd_ < 0) return io_error("create the shared job file");
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return io_error("create a socket pair");
  // posix_spawn's dup2 clears close-on-exec only when source and target differ: copies above
  // both targets first, since either descriptor may already sit on one of them.
  const int socket_copy = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kChildMemFd + 1);
  const int memfd_copy = ::fcntl(memfd_, F_DUPFD_CLOEXEC, kChildMemFd + 1);
  ::close(fds[1]);
  int error = socket_copy < 0 || memfd_copy < 0 ? errno : 0;
  pid_t pid = -1;
  if (error == 0) {
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, socket_copy, kChildSocketFd);
    ::posix_spawn_file_actions_adddup2(&actions, memfd_copy, kChildMemFd);
    ::posix_spawn_file_actions_addclosefrom_np(&actions, kChildMemFd + 1);
    char* argv[] = {helper->data(), nullptr};
    error = ::posix_spawn(&pid, helper->c_str(), &actions, nullptr, argv, environ);
    ::posix_spawn_file_actions_destroy(&actions);
  }
  if (socket_copy >= 0) ::close(socket_copy);
  if (memfd_copy >= 0) ::close(memfd_copy);
  if (error != 0) {
    ::close(fds[0]);
    errno = error;
    return io_error("start " + *helper);
  }
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
  job_bytes_ = job_size(job);
  if (status.is_ok()) status = reserve(job_bytes_);
  if (status.is_ok()) {
    char* data = mapping_->at_least(memfd_, file_bytes_, true);
    if (data == nullptr) status = io_error("map the shared job file");
    if (data != nullptr) encode(job, data);
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
