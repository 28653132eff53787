/// \file matmul_panels.cc
/// The panel-packed matmul of matmul_panels.h: packing (float32 or bfloat16 pairs), the AVX-512
/// register tiles with the next panel's prefetch, and the split of panels over threads.

#include "kernels/cpu/matmul_panels.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "core/long_lived_memory.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edgemm::kernels {

namespace {

constexpr int64_t kMaxTileRows = 14;  // 14 x 2 accumulators + 2 B vectors + 1 broadcast of 32 registers
constexpr int64_t kDepth = 256;       // K steps per pass: 256 steps of a panel are 32 KiB, in L1
constexpr int64_t kLineBytes = 64;
constexpr int64_t kParallelWork = 32768;  // multiply-adds below which one thread does it all (as parallel_for)
constexpr int64_t kGroupBytes = 384 << 10;  // packed A of one row group, kept in L2 while every panel uses it
constexpr int64_t kMinGroupRows = 128;      // but at least this many rows: each group reads all of B again

/// The bfloat16 nearest to x (ties to even), as its 16 bits; NaN stays a quiet NaN.
uint16_t to_bfloat16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

float round_to_bfloat16(float x) {
  const uint32_t bits = static_cast<uint32_t>(to_bfloat16(x)) << 16;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

PackedPanels::PackedPanels(const float* b, int64_t k, int64_t n, PanelFormat format) : k_(k), n_(n), format_(format) {
  const size_t bytes = static_cast<size_t>(panels() * steps() * kPanelStepBytes);
  data_ = core::allocate_long_lived(bytes);  // zero-filled: columns past n stay zero
  if (data_ == nullptr) throw std::bad_alloc();
  char* data = static_cast<char*>(data_.get());
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t col0 = p * kPanelColumns;
    const int64_t cols = std::min(kPanelColumns, n - col0);
    char* dst = data + p * steps() * kPanelStepBytes;
    for (int64_t r = 0; r < k; ++r) {
      if (format == PanelFormat::kFloat32) {
        std::memcpy(dst + r * kPanelStepBytes, b + r * n + col0, cols * sizeof(float));
        continue;
      }
      auto* pairs = reinterpret_cast<uint16_t*>(dst + (r / 2) * kPanelStepBytes);
      for (int64_t c = 0; c < cols; ++c) pairs[2 * c + r % 2] = to_bfloat16(b[r * n + col0 + c]);
    }
  }
}

void PackedPanels::unpack(float* b) const {
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t col0 = p * kPanelColumns;
    const int64_t cols = std::min(kPanelColumns, n_ - col0);
    const char* src = panel(p);
    for (int64_t r = 0; r < k_; ++r) {
      if (format_ == PanelFormat::kFloat32) {
        std::memcpy(b + r * n_ + col0, src + r * kPanelStepBytes, cols * sizeof(float));
        continue;
      }
      const auto* pairs = reinterpret_cast<const uint16_t*>(src + (r / 2) * kPanelStepBytes);
      for (int64_t c = 0; c < cols; ++c) {
        const uint32_t bits = static_cast<uint32_t>(pairs[2 * c + r % 2]) << 16;
        std::memcpy(b + r * n_ + col0 + c, &bits, sizeof(float));
      }
    }
  }
}

#if defined(__x86_64__)

namespace {

// One attribute for both formats' tiles: the float32 tiles use no AVX512_BF16 instruction (GCC
// emits bfloat16 conversions and dot products only where the code asks for them), so they also
// run on CPUs without it.
#define EDGEMM_AVX512 __attribute__((target("avx512f,avx512bf16,avx2,fma")))

/// Prefetch of the next panel's cache lines [next, end) into L2: `per_step` lines every `every`
/// steps of the K loop, so that the lines are spread over the tile's work.
struct Prefetch {
  const char* next = nullptr;
  const char* end = nullptr;
  int64_t every = 1;
  int64_t per_step = 0;
};

/// A's value type in a K step: one float32, or a bfloat16 pair (first K index in the low half).
template <PanelFormat F>
using AStep = std::conditional_t<F == PanelFormat::kFloat32, float, uint32_t>;

/// Output columns [col0, col0 + 32) of rows [0, MR): y = a x panel steps [0, steps) (+ y when
/// `accumulate`) (+ bias when not null). `a` is the row block packed K-major ([steps, MR]);
/// `masks` select the columns of the 16-float halves that exist (fewer past N at the last panel).
/// float32: one FMA per step and column; bfloat16: one VDPBF16PS (two products) per step and column.
template <int MR, PanelFormat F>
EDGEMM_AVX512 void tile(const AStep<F>* a, const char* panel, int64_t steps, bool accumulate, const float* bias,
                        float* y, int64_t ldy, const __mmask16* masks, Prefetch pf) {
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
  for (int64_t kk = 0; kk < steps; ++kk) {
    __m512i b[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) b[v] = _mm512_load_si512(panel + kk * kPanelStepBytes + 64 * v);
#pragma GCC unroll 14
    for (int r = 0; r < MR; ++r) {
      if constexpr (F == PanelFormat::kFloat32) {
        const __m512 x = _mm512_set1_ps(a[kk * MR + r]);
#pragma GCC unroll 4
        for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(x, _mm512_castsi512_ps(b[v]), acc[r][v]);
      } else {
        const __m512i x = _mm512_set1_epi32(static_cast<int>(a[kk * MR + r]));
#pragma GCC unroll 4
        for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)x, (__m512bh)b[v]);
      }
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

template <PanelFormat F>
using TileFn = void (*)(const AStep<F>*, const char*, int64_t, bool, const float*, float*, int64_t, const __mmask16*,
                        Prefetch);

/// tile<MR, F> for MR = 1..kMaxTileRows (index MR; 0 unused).
template <PanelFormat F, int... MR>
constexpr std::array<TileFn<F>, kMaxTileRows + 1> tile_table(std::integer_sequence<int, 0, MR...>) {
  return {nullptr, tile<MR, F>...};
}

template <PanelFormat F>
constexpr auto kTiles = tile_table<F>(std::make_integer_sequence<int, kMaxTileRows + 1>());

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

/// Copies row block i of `a` K-major into `packed` (at first(i) * steps, [steps, rows(i)]), so that
/// a tile reads its A values as one sequential stream; bfloat16 pairs for that format.
template <PanelFormat F>
void pack_block(const float* a, int64_t lda, int64_t k, const RowBlocks& blocks, int64_t i, AStep<F>* packed) {
  const int64_t rows = blocks.rows(i);
  const float* src = a + blocks.first(i) * lda;
  if constexpr (F == PanelFormat::kFloat32) {
    float* dst = packed + blocks.first(i) * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t r = 0; r < rows; ++r) dst[kk * rows + r] = src[r * lda + kk];
    }
  } else {
    const int64_t steps = (k + 1) / 2;
    uint32_t* dst = packed + blocks.first(i) * steps;
    for (int64_t j = 0; j < steps; ++j) {
      for (int64_t r = 0; r < rows; ++r) {
        const uint32_t low = to_bfloat16(src[r * lda + 2 * j]);
        const uint32_t high = 2 * j + 1 < k ? to_bfloat16(src[r * lda + 2 * j + 1]) : 0u;
        dst[j * rows + r] = low | high << 16;
      }
    }
  }
}

/// Panels [p0, p1) for all row blocks. The row blocks go in groups whose packed A (all K steps)
/// fits in kGroupBytes, so that it stays in L2 while every panel of the range uses it (one group
/// up to max(kMinGroupRows, kGroupBytes / (4 K)) rows, e.g. 128 at K = 768 and 3072); B is read
/// once per group, from L3 after the first. Within a group each panel runs in passes of kDepth K steps, so that the panel's
/// slice stays in L1 while every row block of the group uses it, and the tile calls of a panel
/// prefetch the next panel (none after the range's last) in equal slices.
template <PanelFormat F>
void run_panels(const PackedPanels& b, const AStep<F>* packed_a, const RowBlocks& blocks, const float* bias, float* y,
                int64_t p0, int64_t p1) {
  const int64_t steps = b.steps(), n = b.n();
  const int64_t panel_lines = steps * kPanelStepBytes / kLineBytes;
  const int64_t group_rows = std::max<int64_t>(kMinGroupRows, kGroupBytes / (steps * sizeof(AStep<F>)));
  const int64_t group_blocks = std::max<int64_t>(1, group_rows / kMaxTileRows);
  const int64_t passes = (steps + kDepth - 1) / kDepth;
  for (int64_t g0 = 0; g0 < blocks.count; g0 += group_blocks) {
    const int64_t g1 = std::min(blocks.count, g0 + group_blocks), calls = passes * (g1 - g0);
    const bool last_group = g1 == blocks.count;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t col0 = p * kPanelColumns;
      __mmask16 masks[kPanelColumns / 16];
      for (int64_t v = 0; v < kPanelColumns / 16; ++v) masks[v] = half_mask(n - col0 - 16 * v);
      const char* next = p + 1 < p1 ? b.panel(p + 1) : (last_group || p0 == p1 - 1 ? nullptr : b.panel(p0));
      int64_t call = 0;
      for (int64_t k0 = 0; k0 < steps; k0 += kDepth) {
        const int64_t depth = std::min(kDepth, steps - k0);
        const bool last = k0 + depth == steps;
        for (int64_t i = g0; i < g1; ++i, ++call) {
          const int64_t line0 = panel_lines * call / calls, line1 = panel_lines * (call + 1) / calls;
          const Prefetch pf = next != nullptr ? spread(next + line0 * kLineBytes, line1 - line0, depth) : Prefetch{};
          const int64_t first = blocks.first(i), rows = blocks.rows(i);
          kTiles<F>[rows](packed_a + first * steps + k0 * rows, b.panel(p) + k0 * kPanelStepBytes, depth, k0 > 0,
                          last && bias != nullptr ? bias + col0 : nullptr, y + first * n + col0, n, masks, pf);
        }
      }
    }
  }
}

template <PanelFormat F>
void run(const PackedPanels& b, const float* a, int64_t lda, int64_t m, const float* bias, float* y, int threads) {
  const RowBlocks blocks{(m + kMaxTileRows - 1) / kMaxTileRows, m};
  auto* packed_a = static_cast<AStep<F>*>(onednn::thread_buffer(onednn::Slot::kSrc, m * b.steps() * sizeof(AStep<F>)));
  const int64_t panels = b.panels();
  const bool small = panels * m * b.k() * kPanelColumns < kParallelWork;
  const int team = small ? 1 : static_cast<int>(std::clamp<int64_t>(threads, 1, panels));
  // One parallel region: the team packs the row blocks, waits for all of them, then splits the panels.
#pragma omp parallel num_threads(team)
  {
    const int id = omp_get_thread_num(), count = omp_get_num_threads();
    for (int64_t i = id; i < blocks.count; i += count) pack_block<F>(a, lda, b.k(), blocks, i, packed_a);
#pragma omp barrier
    const int64_t chunk = (panels + count - 1) / count, p0 = std::min(panels, id * chunk);
    run_panels<F>(b, packed_a, blocks, bias, y, p0, std::min(panels, p0 + chunk));
  }
}

}  // namespace

void pack_panel_rows(const float* a, int64_t lda, int64_t m, int64_t k, float* packed) {
  const RowBlocks blocks{(m + kMaxTileRows - 1) / kMaxTileRows, m};
  for (int64_t i = 0; i < blocks.count; ++i) pack_block<PanelFormat::kFloat32>(a, lda, k, blocks, i, packed);
}

void pack_panel_columns(const float* at, int64_t ld, int64_t m, int64_t k, float* packed) {
  const RowBlocks blocks{(m + kMaxTileRows - 1) / kMaxTileRows, m};
  for (int64_t i = 0; i < blocks.count; ++i) {
    const int64_t first = blocks.first(i), rows = blocks.rows(i);
    float* dst = packed + first * k;
    for (int64_t kk = 0; kk < k; ++kk) std::memcpy(dst + kk * rows, at + kk * ld + first, rows * sizeof(float));
  }
}

void matmul_panel(const float* panel, int64_t k, int64_t k0, int64_t depth, int64_t cols, const float* packed_a,
                  int64_t m, const float* bias, float* y, int64_t ldy) {
  const RowBlocks blocks{(m + kMaxTileRows - 1) / kMaxTileRows, m};
  __mmask16 masks[kPanelColumns / 16];
  for (int64_t v = 0; v < kPanelColumns / 16; ++v) masks[v] = half_mask(cols - 16 * v);
  const char* bytes = reinterpret_cast<const char*>(panel);
  for (int64_t s0 = 0; s0 < depth; s0 += kDepth) {
    const int64_t steps = std::min(kDepth, depth - s0), first_k = k0 + s0;
    const bool last = first_k + steps == k;
    for (int64_t i = 0; i < blocks.count; ++i) {
      const int64_t first = blocks.first(i), rows = blocks.rows(i);
      kTiles<PanelFormat::kFloat32>[rows](packed_a + first * k + first_k * rows, bytes + s0 * kPanelStepBytes, steps,
                                          first_k > 0, last ? bias : nullptr, y + first * ldy, ldy, masks, Prefetch{});
    }
  }
}

bool matmul_panels_available(PanelFormat format) {
  const CpuFeatures& f = cpu_features();
  return f.avx512f && f.fma && (format == PanelFormat::kFloat32 || f.avx512_bf16);
}

void matmul_panels(const PackedPanels& b, const float* a, int64_t lda, int64_t m, const float* bias, float* y,
                   int threads) {
  if (m <= 0) return;
  if (b.format() == PanelFormat::kFloat32) {
    run<PanelFormat::kFloat32>(b, a, lda, m, bias, y, threads);
  } else {
    run<PanelFormat::kBfloat16>(b, a, lda, m, bias, y, threads);
  }
}

#undef EDGEMM_AVX512
#else

bool matmul_panels_available(PanelFormat) { return false; }

void matmul_panels(const PackedPanels&, const float*, int64_t, int64_t, const float*, float*, int) {}

void pack_panel_rows(const float*, int64_t, int64_t, int64_t, float*) {}

void pack_panel_columns(const float*, int64_t, int64_t, int64_t, float*) {}

void matmul_panel(const float*, int64_t, int64_t, int64_t, int64_t, const float*, int64_t, const float*, float*,
                  int64_t) {}

#endif

}  // namespace edgemm::kernels
