#pragma once
/// \file child_process.h
/// A child process spoken to in lines of text: its stdin and stdout are connected to us, its
/// stderr goes to a file. Used for peers that live in another runtime (ONNX Runtime in node).

#include <sys/types.h>

#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::bench {

/// Owns a running child; destroying it closes stdin, waits briefly, then kills the child.
/// Not thread-safe.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// Starts `argv[0]` (looked up on PATH) with arguments `argv`, stderr appended to
  /// `stderr_path`. Errors: kIo when the program cannot be started (e.g. not installed).
  Status start(const std::vector<std::string>& argv, const std::string& stderr_path);
  /// Writes `line` and a newline to the child's stdin. Errors: kIo (child gone).
  Status write_line(const std::string& line);
  /// Reads one line (without its newline) from the child's stdout, waiting at most
  /// `timeout_s` seconds. Errors: kIo when the child exits or closes stdout first, or on timeout.
  Expected<std::string> read_line(double timeout_s);
  /// Process id, 0 before start().
  pid_t pid() const { return pid_; }
  /// Closes stdin, waits up to one second for the child to exit, then kills it.
  void stop();

 private:
  pid_t pid_ = 0;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
};

}  // namespace edgemm::bench
