#pragma once
/// \file matmul_panels.h
/// Float32 Y = A x B (+ bias) for a constant B and few rows of A (a transformer's tokens at
/// batch 1), on AVX-512F, with B packed once into column panels of float32 or, for the native
/// backend's "bf16" precision, of bfloat16 pairs (AVX512_BF16).
///
/// Why: with few rows the weights are read from memory once per call and the product is about as
/// long as that read. oneDNN 2.6's brgemm matmul reads each weight panel when it first needs it,
/// so the core waits for memory, then computes: on this machine (1 thread) 1.44 ms with B in cache
/// and 2.0 ms with B from memory for [50, 768] x [768, 3072]. Here the tile loop prefetches the
/// next panel into L2 while it computes on the current one, spread evenly over the current
/// panel's work, so the read and the arithmetic overlap: 1.6 ms from memory (the GotoBLAS
/// packing scheme, K. Goto and R. van de Geijn, "Anatomy of High-Performance Matrix
/// Multiplication", ACM TOMS 2008, with the prefetch of the next B panel added).

#include <cstdint>
#include <memory>

namespace edgemm::kernels {

/// Columns per panel: two 16-float AVX-512 vectors.
inline constexpr int64_t kPanelColumns = 32;

/// Bytes of one K step of a panel: 32 float32 columns, or 32 columns of a bfloat16 pair.
inline constexpr int64_t kPanelStepBytes = 128;

/// Rows of A above which float32 MatMul uses oneDNN instead (from memory, [M, 768] x [768, 3072]
/// at 1 thread: the panels are 1.2x faster at M = 197 and 0.9x at M = 400 and 1024); the kernel
/// then keeps oneDNN's layout only, for every row count. bfloat16 panels take every row count.
inline constexpr int64_t kPanelMaxRows = 256;

/// Element format of the packed B and of the products.
enum class PanelFormat {
  /// float32: one K step is one row of B; products and sums in float32.
  kFloat32,
  /// bfloat16 pairs for AVX512_BF16's VDPBF16PS: one K step is rows 2j and 2j + 1 of B, each
  /// column's two values side by side (the second zero past an odd K). B and A are rounded to
  /// bfloat16 (round to nearest even, Intel "BFLOAT16 - Hardware Numerics Definition", 2018),
  /// products summed in float32: 8 significant bits (2-3 decimal digits) per factor instead of
  /// 24; VDPBF16PS reads subnormal inputs as zero and flushes subnormal results.
  kBfloat16,
};

/// x rounded to the nearest bfloat16 (ties to even; NaN stays NaN), widened back to float32: the
/// value the bfloat16 format computes with (for reference checks).
float round_to_bfloat16(float x);

/// B [K, N] (row-major float32) packed as ceil(N / 32) panels, panel p holding columns
/// 32p..32p+31 as steps() K steps of kPanelStepBytes each (see PanelFormat), zero past N.
/// 64-byte aligned, from core::allocate_long_lived (freed pages go back to the system at once), on
/// ordinary pages: asking Linux for transparent huge pages (madvise) made one run in five take
/// 2-5x longer on a paravirtualized AMD EPYC VM (see docs/benchmarks.md); owns its storage;
/// throws std::bad_alloc when out of memory.
class PackedPanels {
 public:
  /// Packs `b` ([k, n], row-major; read only during the call). k and n must be > 0.
  PackedPanels(const float* b, int64_t k, int64_t n, PanelFormat format = PanelFormat::kFloat32);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  PanelFormat format() const { return format_; }
  /// K steps per panel: k for float32, ceil(k / 2) for bfloat16 pairs.
  int64_t steps() const { return format_ == PanelFormat::kFloat32 ? k_ : (k_ + 1) / 2; }
  /// Number of panels: ceil(n / 32).
  int64_t panels() const { return (n_ + kPanelColumns - 1) / kPanelColumns; }
  /// Bytes of all panels: panels() x steps() x kPanelStepBytes.
  int64_t bytes() const { return panels() * steps() * kPanelStepBytes; }
  /// Panel p's steps() x kPanelStepBytes bytes.
  const char* panel(int64_t p) const { return static_cast<const char*>(data_.get()) + p * steps() * kPanelStepBytes; }
  /// Writes B back as [k, n] row-major float32 into `b` (k * n floats): the packed values, exact
  /// for kFloat32, B rounded to bfloat16 for kBfloat16.
  void unpack(float* b) const;

 private:
  int64_t k_, n_;
  PanelFormat format_;
  std::shared_ptr<void> data_;
};

/// Whether matmul_panels() can run B packed in `format` here: x86-64 with AVX-512F and FMA
/// (float32), with AVX512_BF16 too (bfloat16) (cpu_features()).
bool matmul_panels_available(PanelFormat format = PanelFormat::kFloat32);

/// y[m, n] = sum_k a[m, k] * B[k, n] (+ bias[n] when bias is not null) for `m` rows: a is
/// float32 [m, K] row-major with row stride `lda` (>= K), y float32 [m, N] row-major (row stride
/// N). Register tiles of up to 14 rows x 32 columns, K in passes of 256 steps, float32
/// accumulation in K order (in pairs for bfloat16). Up to `threads` OpenMP threads first copy A
/// K-major per row block (rounded to bfloat16 pairs for that format) into the calling thread's
/// onednn::thread_buffer (slot kSrc), then split the panels. Needs
/// matmul_panels_available(b.format()); thread-safe.
void matmul_panels(const PackedPanels& b, const float* a, int64_t lda, int64_t m, const float* bias, float* y,
                   int threads);

/// Rows of A packed K-major for matmul_panel(): rows [0, m) of `a` (row stride `lda`, `k`
/// columns) in blocks of at most 14 rows of nearly equal size, block i's [k, rows(i)] values
/// stored one after the other in `packed` (m * k floats). x86-64 builds only (a no-op elsewhere).
void pack_panel_rows(const float* a, int64_t lda, int64_t m, int64_t k, float* packed);

/// pack_panel_rows for A given transposed: `at` is Aᵀ ([k, m], row stride `ld`), and `packed`
/// gets the same layout as pack_panel_rows(A) (contiguous copies, no transposition).
void pack_panel_columns(const float* at, int64_t ld, int64_t m, int64_t k, float* packed);

/// A K slice of one float32 panel that the caller built (MatMulNBits dequantizes its 4-bit codes
/// into one, a slice at a time, so that the slice stays in L1): for rows [0, m) and columns
/// [0, cols) (cols <= 32; y's row stride `ldy`), y[r, c] = sum over k in [k0, k0 + depth) of
/// a[r, k] * panel[(k - k0) * 32 + c], added to y unless k0 = 0, plus bias[c] when bias is not
/// null and k0 + depth = k. Columns past `cols` are neither read from bias nor written. `panel`
/// is depth steps of 32 floats, 64-byte aligned; `packed_a` comes from pack_panel_rows(a, lda,
/// m, k, packed_a). The register tiles of matmul_panels(), on the calling thread. Needs
/// matmul_panels_available().
void matmul_panel(const float* panel, int64_t k, int64_t k0, int64_t depth, int64_t cols, const float* packed_a,
                  int64_t m, const float* bias, float* y, int64_t ldy);

}  // namespace edgemm::kernels
