#pragma once
/// \file fork_pool.h
/// Runs work items in forked children, `batch` items per child one after another, `jobs`
/// children at a time, so that a crash or a hang in one item cannot stop the run.
///
/// A child reports each item through a pipe as one line as soon as it finishes; the parent gives
/// each item `timeout_s` from the previous item's report (SIGKILL after). When a child dies or is
/// killed, the item it was running gets the crash or timeout, and the items after it in its batch
/// start again in a new child. Under AddressSanitizer a child runs LeakSanitizer once, after its
/// batch; when it finds leaks the batch runs again one item per child, so the leak is charged to
/// the item that made it. Batches amortize what each child costs to start (fork's copy-on-write
/// faults, and under ASan the allocator's and LeakSanitizer's scans).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace edgemm::conformance {

struct ForkPoolOptions {
  int jobs = 1;                 ///< children at a time
  int batch = 1;                ///< items per child
  double timeout_s = 10.0;      ///< seconds an item may take
  int64_t memory_limit_mb = 0;  ///< address-space limit of each child (0 = none; ignored under ASan)
};

/// How an item ended.
enum class ItemEnd {
  kReported,  ///< the child reported it: `text` is run_item's line
  kCrashed,   ///< the child died while running it: `text` says how, with the end of its output
  kTimedOut,  ///< no report within timeout_s: the child was killed
  kLeaked,    ///< it ran alone and LeakSanitizer found leaks: `text` is run_item's line
  kNotRun,    ///< the runner could not fork: `text` says why
};

struct ItemResult {
  ItemEnd end = ItemEnd::kNotRun;
  std::string text;
  double ms = 0.0;     ///< wall-clock time from the item's start to its report or end
  std::string output;  ///< for kLeaked: the end of the child's output (LeakSanitizer's report)
};

/// Runs run_item(i) for every i in `items`, each in a child process; run_item returns a report
/// without newlines. on_done(i, result) is called in the parent as each item ends. Returns the
/// results in the order of `items`.
std::vector<ItemResult> run_in_children(const std::vector<size_t>& items, const ForkPoolOptions& options,
                                        const std::function<std::string(size_t)>& run_item,
                                        const std::function<void(size_t, const ItemResult&)>& on_done);

}  // namespace edgemm::conformance
