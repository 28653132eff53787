// The conformance runner's child processes (tests/conformance/fork_pool.h): a crash or a hang is
// charged to the item that was running and the rest of its batch runs again; under ASan a leak is
// charged to the item that made it.

#include "fork_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace edgemm::conformance {
namespace {

std::vector<size_t> first(size_t n) {
  std::vector<size_t> items(n);
  for (size_t i = 0; i < n; ++i) items[i] = i;
  return items;
}

/// Runs items 0..n-1 with `run_item`, in batches of `batch`; returns the results by item and
/// checks on_done saw each item once.
std::map<size_t, ItemResult> run(size_t n, int batch, double timeout_s,
                                 const std::function<std::string(size_t)>& run_item) {
  ForkPoolOptions options;
  options.jobs = 2;
  options.batch = batch;
  options.timeout_s = timeout_s;
  std::map<size_t, ItemResult> seen;
  const std::vector<size_t> items = first(n);
  const std::vector<ItemResult> results = run_in_children(items, options, run_item, [&](size_t i, const ItemResult& r) {
    EXPECT_EQ(seen.count(i), 0u) << "item " << i << " finished twice";
    seen[i] = r;
  });
  EXPECT_EQ(results.size(), n);
  EXPECT_EQ(seen.size(), n);
  for (size_t i = 0; i < results.size() && i < n; ++i) {
    EXPECT_EQ(results[i].end, seen[i].end) << i;
    EXPECT_EQ(results[i].text, seen[i].text) << i;
  }
  return seen;
}

TEST(ForkPool, EveryItemReportsFromAChild) {
  for (int batch : {1, 3, 50}) {
    const pid_t parent = ::getpid();
    auto seen = run(7, batch, 10, [parent](size_t i) {
      return std::to_string(i * i) + (::getpid() == parent ? " in the parent" : "");
    });
    for (size_t i = 0; i < 7; ++i) {
      EXPECT_EQ(seen[i].end, ItemEnd::kReported) << "batch " << batch;
      EXPECT_EQ(seen[i].text, std::to_string(i * i)) << "batch " << batch;
    }
  }
}

TEST(ForkPool, ACrashIsChargedToItsItemAndTheRestOfTheBatchRunsAgain) {
  auto seen = run(6, 6, 10, [](size_t i) {
    if (i == 2) std::abort();
    return std::string("ok ") + std::to_string(i);
  });
  EXPECT_EQ(seen[2].end, ItemEnd::kCrashed);
  EXPECT_NE(seen[2].text.find("SIGABRT"), std::string::npos) << seen[2].text;
  for (size_t i : {0, 1, 3, 4, 5}) {
    EXPECT_EQ(seen[i].end, ItemEnd::kReported) << i;
    EXPECT_EQ(seen[i].text, "ok " + std::to_string(i));
  }
}

TEST(ForkPool, AHangIsKilledAfterTheTimeoutAndTheNextItemsRun) {
  // Each item has its own timeout, counted from the previous item's report: four 0.4 s items in
  // one batch with a 1 s timeout all pass.
  auto seen = run(6, 6, 1.0, [](size_t i) {
    if (i == 1) ::pause();
    if (i >= 2) ::usleep(400000);
    return std::string("ok");
  });
  EXPECT_EQ(seen[1].end, ItemEnd::kTimedOut);
  EXPECT_NE(seen[1].text.find("killed"), std::string::npos) << seen[1].text;
  for (size_t i : {0, 2, 3, 4, 5}) EXPECT_EQ(seen[i].end, ItemEnd::kReported) << i;
}

#if defined(__SANITIZE_ADDRESS__)
[[gnu::noinline]] void lose_memory() {
  auto* lost = new std::vector<int>(1000, 7);
  asm volatile("" : : "r"(lost) : "memory");
}

TEST(ForkPool, UnderAsanALeakIsChargedToTheItemThatMadeIt) {
  auto seen = run(5, 5, 30, [](size_t i) {
    if (i == 3) lose_memory();
    return std::string("pass");
  });
  EXPECT_EQ(seen[3].end, ItemEnd::kLeaked);
  EXPECT_NE(seen[3].output.find("byte(s) leaked"), std::string::npos) << seen[3].output;
  for (size_t i : {0, 1, 2, 4}) EXPECT_EQ(seen[i].end, ItemEnd::kReported) << i;
}
#endif

}  // namespace
}  // namespace edgemm::conformance
