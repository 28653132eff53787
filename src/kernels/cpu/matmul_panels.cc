/// \file matmul_panels.cc
/// The panel-packed float32 matmul of matmul_panels.h: packing, the AVX-512 register tiles with
/// the next panel's prefetch, and the split of panels over threads.

#include "kernels/cpu/matmul_panels.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/cpu/onednn.h"
#include "kernels/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edgemm::kernels {

namespace {

constexpr int64_t kMaxTileRows = 14;  // 14 x 2 accumulators + 2 B vectors + 1 broadcast of 32 registers
constexpr int64_t kDepth = 256;       // K steps per pass: a [256, 32] slice of a panel is 32 KiB, in L1
constexpr int64_t kLineBytes = 64;
constexpr int64_t kParallelWork = 32768;  // multiply-adds below which one thread does it all (as parallel_for)

}  // namespace

void PackedPanels::FreeAligned::operator()(float* p) const { std::free(p); }

PackedPanels::PackedPanels(const float* b, int64_t k, int64_t n) : k_(k), n_(n) {
  const size_t bytes = static_cast<size_t>(panels() * k * kPanelColumns) * sizeof(float);
  float* data = static_cast<float*>(std::aligned_alloc(kLineBytes, bytes));  // bytes: a multiple of 128
  if (data == nullptr) throw std::bad_alloc();
  data_.reset(data);
  std::memset(data, 0, bytes);
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t col0 = p * kPanelColumns;
    const int64_t cols = std::min(kPanelColumns, n - col0);
    float* dst = data + p * k * kPanelColumns;
    for (int64_t r = 0; r < k; ++r) std::memcpy(dst + r * kPanelColumns, b + r * n + col0, cols * sizeof(float));
  }
}

#if defined(__x86_64__)

namespace {

#define EDGEMM_AVX512 __attribute__((target("avx512f,avx2,fma")))

/// Prefetch of the next panel's cache lines [next, end) into L2: `per_step` lines every `every`
/// steps of the K loop, so that the lines are spread over the tile's work.
struct Prefetch {
  const char* next = nullptr;
  const char* end = nullptr;
  int64_t every = 1;
  int64_t per_step = 0;
};

/// Output columns [col0, col0 + 32) of rows [0, MR): y = a x panel rows [0, k) (+ y when
/// `accumulate`) (+ bias when not null). `a` is the row block packed K-major ([k, MR]); `masks`
/// select the columns of the 16-float halves that exist (fewer past N at the last panel).
template <int MR>
EDGEMM_AVX512 void tile(const float* a, const float* panel, int64_t k, bool accumulate, const float* bias, float* y,
                        int64_t ldy, const __mmask16* masks, Prefetch pf) {
  constexpr int kVectors = kPanelColumns / 16;
  __m512 acc[MR][kVectors];
#pragma GCC unroll 14
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(masks[v], y + r * ldy + 16 * v) : _mm512_setzero_ps();
    }
  }
  int64_t countdown = pf.every;
  for (int64_t kk = 0; kk < k; ++kk) {
    __m512 b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = _mm512_load_ps(panel + kk * kPanelColumns + 16 * v);
#pragma GCC unroll 14
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[kk * MR + r]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]);
    }
    if (--countdown == 0) {
      countdown = pf.every;
      for (int64_t i = 0; i < pf.per_step && pf.next < pf.end; ++i, pf.next += kLineBytes) {
        _mm_prefetch(pf.next, _MM_HINT_T1);
      }
    }
  }
  __m512 bias_v[kVectors];
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    bias_v[v] = bias != nullptr ? _mm512_maskz_loadu_ps(masks[v], bias + 16 * v) : _mm512_setzero_ps();
  }
#pragma GCC unroll 14
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      _mm512_mask_storeu_ps(y + r * ldy + 16 * v, masks[v], _mm512_add_ps(acc[r][v], bias_v[v]));
    }
  }
}

using TileFn = void (*)(const float*, const float*, int64_t, bool, const float*, float*, int64_t, const __mmask16*,
                        Prefetch);

constexpr TileFn kTiles[kMaxTileRows + 1] = {nullptr, tile<1>, tile<2>,  tile<3>,  tile<4>,  tile<5>,  tile<6>, tile<7>,
                                             tile<8>, tile<9>, tile<10>, tile<11>, tile<12>, tile<13>, tile<14>};

__mmask16 half_mask(int64_t columns) {
  if (columns <= 0) return 0;
  return columns >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << columns) - 1);
}

/// Prefetch plan for `lines` lines over `steps` K steps (see Prefetch).
Prefetch spread(const char* begin, int64_t lines, int64_t steps) {
  Prefetch pf;
  if (lines <= 0 || steps <= 0) return pf;
  pf.next = begin;
  pf.end = begin + lines * kLineBytes;
  pf.per_step = (lines + steps - 1) / steps;
  pf.every = std::max<int64_t>(1, steps * pf.per_step / lines);
  return pf;
}

/// Row blocks of nearly equal size, at most kMaxTileRows rows each.
struct RowBlocks {
  int64_t count, m;
  int64_t rows(int64_t i) const { return m / count + (i < m % count ? 1 : 0); }
  int64_t first(int64_t i) const { return i * (m / count) + std::min(i, m % count); }
};

/// Copies row block i of `a` K-major into `packed` (at first(i) * k, [k, rows(i)]), so that a
/// tile reads its A values as one sequential stream.
void pack_block(const float* a, int64_t lda, int64_t k, const RowBlocks& blocks, int64_t i, float* packed) {
  const int64_t rows = blocks.rows(i);
  const float* src = a + blocks.first(i) * lda;
  float* dst = packed + blocks.first(i) * k;
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t r = 0; r < rows; ++r) dst[kk * rows + r] = src[r * lda + kk];
  }
}

/// Panels [p0, p1) for all row blocks, in passes of kDepth K steps so that the panel's slice
/// stays in L1 while every row block uses it. The tile calls of a panel prefetch the next panel
/// (none after p1 - 1) in equal slices.
void run_panels(const PackedPanels& b, const float* packed_a, const RowBlocks& blocks, const float* bias, float* y,
                int64_t p0, int64_t p1) {
  const int64_t k = b.k(), n = b.n();
  const int64_t panel_lines = k * kPanelColumns * static_cast<int64_t>(sizeof(float)) / kLineBytes;
  const int64_t passes = (k + kDepth - 1) / kDepth, calls = passes * blocks.count;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t col0 = p * kPanelColumns;
    __mmask16 masks[kPanelColumns / 16];
    for (int64_t v = 0; v < kPanelColumns / 16; ++v) masks[v] = half_mask(n - col0 - 16 * v);
    const char* next = p + 1 < p1 ? reinterpret_cast<const char*>(b.panel(p + 1)) : nullptr;
    int64_t call = 0;
    for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
      const int64_t depth = std::min(kDepth, k - k0);
      const bool last = k0 + depth == k;
      for (int64_t i = 0; i < blocks.count; ++i, ++call) {
        const int64_t line0 = panel_lines * call / calls, line1 = panel_lines * (call + 1) / calls;
        const Prefetch pf = next != nullptr ? spread(next + line0 * kLineBytes, line1 - line0, depth) : Prefetch{};
        const int64_t first = blocks.first(i), rows = blocks.rows(i);
        kTiles[rows](packed_a + first * k + k0 * rows, b.panel(p) + k0 * kPanelColumns, depth, k0 > 0,
                     last && bias != nullptr ? bias + col0 : nullptr, y + first * n + col0, n, masks, pf);
      }
    }
  }
}

}  // namespace

bool matmul_panels_available() { return cpu_features().avx512f && cpu_features().fma; }

void matmul_panels(const PackedPanels& b, const float* a, int64_t lda, int64_t m, const float* bias, float* y,
                   int threads) {
  if (m <= 0) return;
  const RowBlocks blocks{(m + kMaxTileRows - 1) / kMaxTileRows, m};
  float* packed_a = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kSrc, m * b.k() * sizeof(float)));
  const int64_t panels = b.panels();
  const bool small = panels * m * b.k() * kPanelColumns < kParallelWork;
  const int team = small ? 1 : static_cast<int>(std::clamp<int64_t>(threads, 1, panels));
  // One parallel region: the team packs the row blocks, waits for all of them, then splits the panels.
#pragma omp parallel num_threads(team)
  {
    const int id = omp_get_thread_num(), count = omp_get_num_threads();
    for (int64_t i = id; i < blocks.count; i += count) pack_block(a, lda, b.k(), blocks, i, packed_a);
#pragma omp barrier
    const int64_t chunk = (panels + count - 1) / count, p0 = std::min(panels, id * chunk);
    run_panels(b, packed_a, blocks, bias, y, p0, std::min(panels, p0 + chunk));
  }
}

#else

bool matmul_panels_available() { return false; }

void matmul_panels(const PackedPanels&, const float*, int64_t, int64_t, const float*, float*, int) {}

#endif

}  // namespace edgemm::kernels
