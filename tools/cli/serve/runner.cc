#include "runner.h"

#include <algorithm>

namespace edgemm::cli::serve {

Runner::Runner(int threads) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { work(); });
}

Runner::~Runner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Runner::run(const std::function<void()>& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.push_back(&job);
  queued_.notify_one();
  auto mine = [&] { return std::find_if(done_.begin(), done_.end(), [&](const auto& d) { return d.first == &job; }); };
  finished_.wait(lock, [&] { return mine() != done_.end(); });
  const std::exception_ptr error = mine()->second;
  done_.erase(mine());
  if (error) std::rethrow_exception(error);
}

void Runner::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    const std::function<void()>* job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job)();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    done_.emplace_back(job, error);
    finished_.notify_all();
  }
}

}  // namespace edgemm::cli::serve
