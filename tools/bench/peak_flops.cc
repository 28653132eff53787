// edgemm_peak_flops: measures this CPU's float32 FMA peak, the ceiling docs/benchmarks.md sets
// achieved GFLOP/s against. Each thread runs independent 8-wide fused multiply-adds (AVX2 + FMA,
// 12 accumulators to cover the FMA latency of two pipes) for about 0.3 s; the peak is the best
// of 5 rounds. Where the CPU has AVX-512 the same loop runs 16 wide too. Prints JSON:
// {"isa":"avx2+fma","threads":[1,2,..],"gflops":[..]} plus "avx512f_gflops":[..] with AVX-512.
// Usage: edgemm_peak_flops [MAX_THREADS]  (default: all cores). x86-64 only.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr int kAccumulators = 12;
constexpr long kIterations = 20'000'000;  // 12 FMAs × 8 lanes × 2 FLOPs each per iteration

__attribute__((target("avx2,fma"))) float fma_loop(long iterations, float seed) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(seed + static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0];
}

/// fma_loop 16 wide.
__attribute__((target("avx512f"))) float fma_loop16(long iterations, float seed) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(seed + static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}

/// GFLOP/s of `threads` threads running fma_loop (`lanes` 8) or fma_loop16 (16) together (best
/// of 5 rounds).
double measure(int threads, int lanes) {
  double best = 0;
  [[maybe_unused]] volatile float keep = 0;  // the sums are stored so that the loops cannot be dropped
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += lanes == 16 ? fma_loop16(kIterations / 4, static_cast<float>(omp_get_thread_num()))
                        : fma_loop(kIterations / 4, static_cast<float>(omp_get_thread_num()));
    keep = sink;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double flops = 2.0 * lanes * kAccumulators * static_cast<double>(kIterations / 4) * threads;
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "edgemm_peak_flops: this CPU has no AVX2+FMA; nothing to measure\n");
    return 1;
  }
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : omp_get_num_procs();
  if (max_threads < 1) {
    std::fprintf(stderr, "usage: edgemm_peak_flops [MAX_THREADS >= 1]\n");
    return 2;
  }
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::string threads = "[", gflops = "[", gflops16 = "[";
  for (int t = 1; t <= max_threads; ++t) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.1f", t > 1 ? "," : "", measure(t, 8));
    gflops += buf;
    if (avx512) {
      std::snprintf(buf, sizeof buf, "%s%.1f", t > 1 ? "," : "", measure(t, 16));
      gflops16 += buf;
    }
    threads += (t > 1 ? "," : "") + std::to_string(t);
  }
  std::printf("{\"isa\":\"avx2+fma\",\"threads\":%s],\"gflops\":%s]%s}\n", threads.c_str(), gflops.c_str(),
              avx512 ? (",\"avx512f_gflops\":" + gflops16 + "]").c_str() : "");
  return 0;
}
