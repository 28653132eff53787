// edgemm_read_bandwidth: measures how fast this machine's cores can read memory, the ceiling
// of a memory-bound decode step (docs/benchmarks.md: every weight byte is read once per token).
// Each thread sums its own slice of a buffer far larger than the caches (default 1 GiB in all,
// 64-bit integer adds, which vectorize without reassociating floats); the bandwidth is the
// bytes read over the wall time, the best of 7 rounds after one untimed pass that faults the
// pages in. Prints JSON: {"bytes":N,"threads":[1,2,..],"gb_per_s":[..]} (GB = 1e9 bytes).
// Usage: edgemm_read_bandwidth [MAX_THREADS] [MIB]  (defaults: all cores, 1024).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// The sum of words [begin, end): four independent accumulators so the adds do not wait on each other.
uint64_t sum_words(const uint64_t* begin, const uint64_t* end) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (const uint64_t* p = begin; p + 4 <= end; p += 4) {
    a += p[0];
    b += p[1];
    c += p[2];
    d += p[3];
  }
  return a + b + c + d;
}

/// GB/s of `threads` threads each reading an equal slice of `words` (best of 7 rounds).
double measure(const std::vector<uint64_t>& words, int threads) {
  double best = 0;
  volatile uint64_t sink = 0;
  for (int round = 0; round < 8; ++round) {
    uint64_t total = 0;
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const size_t slice = words.size() / threads, begin = slice * omp_get_thread_num();
      total += sum_words(words.data() + begin, words.data() + begin + slice);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sink = sink + total;
    if (round > 0) best = std::max(best, static_cast<double>(words.size() * sizeof(uint64_t)) / seconds / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : omp_get_num_procs();
  const long mib = argc > 2 ? std::atol(argv[2]) : 1024;
  if (max_threads < 1 || mib < 64 || mib > 16384) {
    std::fprintf(stderr, "usage: edgemm_read_bandwidth [MAX_THREADS >= 1] [MIB in 64..16384]\n");
    return 2;
  }
  std::vector<uint64_t> words(static_cast<size_t>(mib) * (1 << 20) / sizeof(uint64_t));
  for (size_t i = 0; i < words.size(); ++i) words[i] = i;
  std::string threads = "[", rates = "[";
  for (int t = 1; t <= max_threads; ++t) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.2f", t > 1 ? "," : "", measure(words, t));
    rates += buf;
    threads += (t > 1 ? "," : "") + std::to_string(t);
  }
  std::printf("{\"bytes\":%zu,\"threads\":%s],\"gb_per_s\":%s]}\n", words.size() * sizeof(uint64_t), threads.c_str(),
              rates.c_str());
  return 0;
}
