/// \file fork_pool.cc
/// The children and their scheduling (fork_pool.h).

#include "fork_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace edgemm::conformance {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

/// An item waiting to run: its position in `items`, and whether it must run in a child of its own.
struct Pending {
  size_t pos;
  bool alone;
};

struct Child {
  pid_t pid = -1;
  int result_fd = -1, output_fd = -1;
  std::vector<size_t> batch;  ///< positions in `items`
  bool alone = false;
  std::vector<ItemResult> reported;  ///< one per reported item, in batch order
  bool leaked = false;
  std::string lines, output;  ///< unparsed report bytes; the end of stdout + stderr
  Clock::time_point item_start, deadline;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(const std::vector<size_t>& items, const std::vector<size_t>& batch,
                             const ForkPoolOptions& options, const std::function<std::string(size_t)>& run_item,
                             int result_fd, int output_fd) {
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
#if !defined(__SANITIZE_ADDRESS__)
  if (options.memory_limit_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(options.memory_limit_mb) << 20;
    rlimit limit{bytes, bytes};
    ::setrlimit(RLIMIT_AS, &limit);
  }
#endif
  for (size_t pos : batch) {
    std::string line = run_item(items[pos]);
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::fflush(nullptr);
    write_all(result_fd, "R " + line + "\n");
  }
#if defined(__SANITIZE_ADDRESS__)
  // Everything the batch allocated is released by now; what is still reachable from nowhere leaked.
  if (__lsan_do_recoverable_leak_check() != 0) write_all(result_fd, "L\n");
#endif
  std::fflush(nullptr);
  ::_exit(0);
}

/// Reads what is available; closes the descriptor (sets it to -1) at end of file.
void drain(int* fd, std::string* into, size_t keep_tail) {
  if (*fd < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
      if (keep_tail && into->size() > 2 * keep_tail) into->erase(0, into->size() - keep_tail);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    ::close(*fd);
    *fd = -1;
    return;
  }
}

/// Takes the complete report lines out of c.lines.
void parse_reports(Child& c, double timeout_s) {
  for (size_t nl; (nl = c.lines.find('\n')) != std::string::npos;) {
    const std::string line = c.lines.substr(0, nl);
    c.lines.erase(0, nl + 1);
    if (line == "L") {
      c.leaked = true;
      continue;
    }
    if (line.rfind("R ", 0) != 0 || c.reported.size() >= c.batch.size()) continue;
    const auto now = Clock::now();
    c.reported.push_back({ItemEnd::kReported, line.substr(2),
                          std::chrono::duration<double, std::milli>(now - c.item_start).count(), ""});
    c.item_start = now;
    c.deadline = now + seconds(timeout_s);
  }
}

/// The last 1000 bytes of a child's output on one line, for crash reports.
std::string output_tail(const std::string& out) {
  std::string tail = out.size() > 1000 ? out.substr(out.size() - 1000) : out;
  std::replace(tail.begin(), tail.end(), '\n', ' ');
  const size_t begin = tail.find_first_not_of(" \t\r");
  return begin == std::string::npos ? "" : tail.substr(begin, tail.find_last_not_of(" \t\r") - begin + 1);
}

std::string death_message(int wait_status, const std::string& output) {
  std::string message;
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(sig);
    message = "killed by signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") + ")";
  } else {
    message = "exited with status " + std::to_string(WEXITSTATUS(wait_status)) + " without a result";
  }
  const std::string tail = output_tail(output);
  return tail.empty() ? message : message + "; output: ..." + tail;
}

class Pool {
 public:
  Pool(const std::vector<size_t>& items, const ForkPoolOptions& options,
       const std::function<std::string(size_t)>& run_item,
       const std::function<void(size_t, const ItemResult&)>& on_done)
      : items_(items), options_(options), run_item_(run_item), on_done_(on_done), results_(items.size()) {
    for (size_t pos = 0; pos < items.size(); ++pos) pending_.push_back({pos, options.batch <= 1});
  }

  std::vector<ItemResult> run() {
    while (!pending_.empty() || !children_.empty()) {
      while (children_.size() < static_cast<size_t>(options_.jobs) && !pending_.empty()) spawn(next_batch());
      wait_for_news();
      for (size_t k = 0; k < children_.size();) {
        if (reap(children_[k])) {
          children_.erase(children_.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          ++k;
        }
      }
    }
    return std::move(results_);
  }

 private:
  /// The next child's items: one that must run alone, or up to `batch` that need not.
  std::pair<std::vector<size_t>, bool> next_batch() {
    std::vector<size_t> batch{pending_.front().pos};
    const bool alone = pending_.front().alone;
    pending_.pop_front();
    while (!alone && batch.size() < static_cast<size_t>(options_.batch) && !pending_.empty() &&
           !pending_.front().alone) {
      batch.push_back(pending_.front().pos);
      pending_.pop_front();
    }
    return {std::move(batch), alone};
  }

  void finish(size_t pos, ItemResult result) {
    results_[pos] = std::move(result);
    on_done_(items_[pos], results_[pos]);
  }

  void spawn(std::pair<std::vector<size_t>, bool> next) {
    auto& [batch, alone] = next;
    int res_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
    pid_t pid = -1;
    if (::pipe2(res_pipe, O_CLOEXEC) == 0 && ::pipe2(out_pipe, O_CLOEXEC) == 0) {
      std::fflush(nullptr);
      pid = ::fork();
    }
    if (pid < 0) {
      const std::string why = std::string("runner: fork/pipe failed: ") + std::strerror(errno);
      for (int fd : {res_pipe[0], res_pipe[1], out_pipe[0], out_pipe[1]}) {
        if (fd >= 0) ::close(fd);
      }
      for (size_t pos : batch) finish(pos, {ItemEnd::kNotRun, why, 0, ""});
      return;
    }
    if (pid == 0) child_main(items_, batch, options_, run_item_, res_pipe[1], out_pipe[1]);
    ::close(res_pipe[1]);
    ::close(out_pipe[1]);
    ::fcntl(res_pipe[0], F_SETFL, O_NONBLOCK);
    ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
    Child c;
    c.pid = pid;
    c.result_fd = res_pipe[0];
    c.output_fd = out_pipe[0];
    c.alone = alone;
    c.batch = std::move(batch);
    c.item_start = Clock::now();
    c.deadline = c.item_start + seconds(options_.timeout_s);
    children_.push_back(std::move(c));
  }

  /// Sleeps until a child writes, a deadline passes, or (polling every millisecond) a child whose
  /// pipes are closed may have exited; 200 ms bounds the wait for one that exits with them open.
  void wait_for_news() {
    std::vector<pollfd> fds;
    auto wake = Clock::now() + std::chrono::milliseconds(200);
    for (const Child& c : children_) {
      if (c.result_fd >= 0) fds.push_back({c.result_fd, POLLIN, 0});
      if (c.output_fd >= 0) fds.push_back({c.output_fd, POLLIN, 0});
      if (c.result_fd < 0 && c.output_fd < 0) wake = std::min(wake, Clock::now() + std::chrono::milliseconds(1));
      wake = std::min(wake, c.deadline);
    }
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 1)));
  }

  /// Reads the child's news; returns true once it has ended and its items are settled.
  bool reap(Child& c) {
    drain(&c.result_fd, &c.lines, 0);
    drain(&c.output_fd, &c.output, 8192);
    parse_reports(c, options_.timeout_s);
    int status = 0;
    pid_t ended = ::waitpid(c.pid, &status, WNOHANG);
    bool timed_out = false;
    if (ended == 0 && Clock::now() >= c.deadline) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, &status, 0);
      timed_out = true;
      ended = c.pid;
    }
    if (ended == 0) return false;
    drain(&c.result_fd, &c.lines, 0);
    drain(&c.output_fd, &c.output, 8192);
    parse_reports(c, options_.timeout_s);
    for (int fd : {c.result_fd, c.output_fd}) {
      if (fd >= 0) ::close(fd);
    }
    settle(c, status, timed_out);
    return true;
  }

  void settle(Child& c, int status, bool timed_out) {
    const bool clean = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean && c.reported.size() == c.batch.size()) {
      if (c.leaked && !c.alone) {  // find the item that leaked: each runs again on its own
        for (auto it = c.batch.rbegin(); it != c.batch.rend(); ++it) pending_.push_front({*it, true});
        return;
      }
      for (size_t k = 0; k < c.batch.size(); ++k) {
        if (c.leaked) {
          c.reported[k].end = ItemEnd::kLeaked;
          c.reported[k].output = output_tail(c.output);
        }
        finish(c.batch[k], std::move(c.reported[k]));
      }
      return;
    }
    // The item running when the child died or hung (the last one when it died after them all)
    // gets the blame; those before it keep their reports, those after it run again.
    const size_t failed = std::min(c.reported.size(), c.batch.size() - 1);
    for (size_t k = 0; k < failed; ++k) finish(c.batch[k], std::move(c.reported[k]));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - c.item_start).count();
    if (timed_out) {
      char text[64];
      std::snprintf(text, sizeof text, "no result within %g s; killed", options_.timeout_s);
      finish(c.batch[failed], {ItemEnd::kTimedOut, text, ms, ""});
    } else {
      finish(c.batch[failed], {ItemEnd::kCrashed, death_message(status, c.output), ms, ""});
    }
    for (size_t k = c.batch.size(); k-- > failed + 1;) pending_.push_front({c.batch[k], c.alone});
  }

  const std::vector<size_t>& items_;
  const ForkPoolOptions& options_;
  const std::function<std::string(size_t)>& run_item_;
  const std::function<void(size_t, const ItemResult&)>& on_done_;
  std::vector<ItemResult> results_;
  std::deque<Pending> pending_;
  std::vector<Child> children_;
};

}  // namespace

std::vector<ItemResult> run_in_children(const std::vector<size_t>& items, const ForkPoolOptions& options,
                                        const std::function<std::string(size_t)>& run_item,
                                        const std::function<void(size_t, const ItemResult&)>& on_done) {
  return Pool(items, options, run_item, on_done).run();
}

}  // namespace edgemm::conformance
