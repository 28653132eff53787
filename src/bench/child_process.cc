#include "bench/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace edgemm::bench {

ChildProcess::~ChildProcess() { stop(); }

Status ChildProcess::start(const std::vector<std::string>& argv, const std::string& stderr_path) {
  // stdin is a socket so that writing to a dead child fails with EPIPE (send with
  // MSG_NOSIGNAL) instead of killing us with SIGPIPE.
  int in_pair[2];
  int out_pipe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    return make_error(StatusCode::kIo, std::string("socketpair failed: ") + std::strerror(errno));
  }
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pair[0]);
    close(in_pair[1]);
    return make_error(StatusCode::kIo, std::string("pipe failed: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pair[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pair[1]);
  close(out_pipe[1]);
  if (rc != 0) {
    close(in_pair[0]);
    close(out_pipe[0]);
    pid_ = 0;
    return make_error(StatusCode::kIo, "cannot start '" + argv[0] + "': " + std::strerror(rc));
  }
  stdin_fd_ = in_pair[0];
  stdout_fd_ = out_pipe[0];
  return Status::ok();
}

Status ChildProcess::write_line(const std::string& line) {
  const std::string data = line + "\n";
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(stdin_fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(StatusCode::kIo, std::string("cannot write to the child: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Expected<std::string> ChildProcess::read_line(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  size_t scanned = 0;  // bytes of buffer_ already searched for a newline
  while (true) {
    const size_t newline = buffer_.find('\n', scanned);
    scanned = buffer_.size();
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
      return make_error(StatusCode::kIo, std::string("the child sent no reply within ") + seconds + " s");
    }
    pollfd p{stdout_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return make_error(StatusCode::kIo, std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(StatusCode::kIo, "the child exited or closed its output");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void ChildProcess::stop() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
  if (pid_ > 0) {
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  pid_ = 0;
  if (stdout_fd_ >= 0) close(stdout_fd_);
  stdout_fd_ = -1;
}

}  // namespace edgemm::bench
