#pragma once
/// \file runner.h
/// The threads a model runs on. Every run of a model happens on one of a few long-lived threads,
/// not on whichever HTTP worker took the request: each thread that starts OpenMP work gets its
/// own team of OpenMP threads, and teams left idle by other workers spin on the same cores,
/// which halved OCR throughput at 2 clients on 2 cores (docs/serve.md "Threads").

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace edgemm::cli::serve {

class Runner {
 public:
  /// Starts `threads` >= 1 threads.
  explicit Runner(int threads);
  /// Finishes the queued jobs, then joins the threads.
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Runs `job` on one of the threads and returns when it has finished (rethrowing what it
  /// threw). The caller bounds how many jobs wait (Admission), so the queue here never grows past
  /// the admitted requests.
  void run(const std::function<void()>& job);

  /// run() for a job with a result (an Expected<T>, usually).
  template <typename F>
  auto call(F&& f) -> decltype(f()) {
    std::optional<decltype(f())> out;
    run([&] { out.emplace(f()); });
    return std::move(*out);
  }

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::deque<const std::function<void()>*> jobs_;
  std::vector<std::pair<const std::function<void()>*, std::exception_ptr>> done_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace edgemm::cli::serve
