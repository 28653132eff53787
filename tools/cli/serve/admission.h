#pragma once
/// \file admission.h
/// Admission control for one served model: at most `parallel` requests run on it at once and at
/// most `queue` more wait; beyond that a request is turned away at once (HTTP 429), so a burst
/// never grows memory without bound (llama-server's slots, nginx's limit_conn).

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace edgemm::cli::serve {

class Admission {
 public:
  /// `parallel` >= 1 runs at once, `queue` >= 0 waiting.
  Admission(int parallel, int queue);

  /// What acquire() got.
  enum class Result {
    kAdmitted,  ///< `lease` holds a run slot
    kFull,      ///< every slot runs and the queue is full: answer 429 with Retry-After
    kTimedOut,  ///< waited in the queue until the deadline: answer 503
  };
  /// A run slot, given back when the last copy is destroyed.
  using Lease = std::shared_ptr<void>;

  /// Takes a run slot, waiting in the queue until `deadline` when none is free.
  Result acquire(std::chrono::steady_clock::time_point deadline, Lease& lease);

  int running() const;  ///< requests holding a slot now
  int waiting() const;  ///< requests in the queue now

 private:
  void release();

  const int parallel_;
  const int queue_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int running_ = 0;
  int waiting_ = 0;
};

}  // namespace edgemm::cli::serve
