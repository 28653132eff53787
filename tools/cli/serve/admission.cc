#include "admission.h"

namespace edgemm::cli::serve {

Admission::Admission(int parallel, int queue) : parallel_(parallel < 1 ? 1 : parallel), queue_(queue < 0 ? 0 : queue) {}

Admission::Result Admission::acquire(std::chrono::steady_clock::time_point deadline, Lease& lease) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (running_ >= parallel_) {
    if (waiting_ >= queue_) return Result::kFull;
    ++waiting_;
    const bool free = freed_.wait_until(lock, deadline, [this] { return running_ < parallel_; });
    --waiting_;
    if (!free) return Result::kTimedOut;
  }
  ++running_;
  lease = Lease(this, [](Admission* self) { self->release(); });
  return Result::kAdmitted;
}

void Admission::release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
  }
  freed_.notify_one();
}

int Admission::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

int Admission::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_;
}

}  // namespace edgemm::cli::serve
