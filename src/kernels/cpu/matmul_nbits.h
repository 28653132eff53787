#pragma once
/// \file matmul_nbits.h
/// com.microsoft MatMulNBits (ONNX Runtime docs/ContribOperators.md, "com.microsoft.MatMulNBits",
/// since version 1): Y = A x dequantize(B)^T (+ bias), with B a weight [N, K] quantized to `bits`
/// bits block-wise along K. Layouts:
///
/// - A: float32 [..., K]; Y: float32 [..., N].
/// - B: uint8 [N, k_blocks, blob_size], k_blocks = ceil(K / block_size), blob_size =
///   block_size * bits / 8. Codes are packed along K inside each block; with 4 bits the code of
///   the lower K index is in the low nibble of its byte. A last block past K is padding.
/// - scales: float32 [N, k_blocks] (or flat [N * k_blocks]), one per block.
/// - zero_points (optional): uint8 packed like B, [N, ceil(k_blocks * bits / 8)] (or flat), the
///   lower block index in the low nibble; or float32 [N, k_blocks]. Absent: 2^(bits - 1).
/// - Weight of output column n at row k: (code(n, k) - zero_point(n, k / block_size)) *
///   scale(n, k / block_size).
///
/// This file exposes the compute routine (all variants, for the kernel, tests and benchmarks)
/// and the packing of a float32 weight into that layout (for quantizers that write such files).

#include <cstdint>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::kernels {

/// The attributes that fix the weight layout: K and N (> 0), bits (4 or 8 here; the spec also
/// has 2), block_size (a power of two >= 16); and accuracy_level, the minimum accuracy of A
/// (0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8).
struct MatMulNBitsShape {
  int64_t k = 0;
  int64_t n = 0;
  int64_t bits = 4;
  int64_t block_size = 32;
  int64_t accuracy_level = 0;
  /// The zero points are float32 (MatMulNBitsWeights::float_zero_points).
  bool float_zero_points = false;
  /// accuracy_level 4 with uint8 or default zero points: A is quantized to int8 per block
  /// (matmul_nbits_int8.h), as ONNX Runtime 1.30 does; otherwise (float zero points included,
  /// which ONNX Runtime 1.30 also computes in float32) the product is float32.
  bool int8_activations() const { return accuracy_level == 4 && !float_zero_points; }
  /// ceil(K / block_size): blocks per output column.
  int64_t k_blocks() const { return (k + block_size - 1) / block_size; }
  /// block_size * bits / 8: bytes of one block of codes.
  int64_t blob_size() const { return block_size * bits / 8; }
  /// Bytes per output column of packed uint8 zero points: ceil(k_blocks * bits / 8).
  int64_t zero_point_row_bytes() const { return (k_blocks() * bits + 7) / 8; }
};

/// Read-only views of the quantized weight (not owned; must outlive the call). At most one of
/// the two zero point pointers is set; both null means the default 2^(bits - 1).
struct MatMulNBitsWeights {
  const uint8_t* b = nullptr;                ///< [N, k_blocks, blob_size]
  const float* scales = nullptr;             ///< [N, k_blocks]
  const uint8_t* zero_points = nullptr;      ///< packed, [N, zero_point_row_bytes()] or null
  const float* float_zero_points = nullptr;  ///< [N, k_blocks] or null
  const float* bias = nullptr;               ///< [N] or null
};

/// Implementations of the product. kReference evaluates the formula element by element (fp32
/// accumulation in K order); kPortable dequantizes tiles of columns to fp32 and runs plain
/// (compiler-vectorized) dot loops; kAvx2 (x86-64 with AVX2 and FMA) unpacks codes in registers
/// for 1-2 rows and, for more, runs a 3x4 register-tiled FMA loop on dequantized column tiles;
/// kAvx512 (AVX-512F as well; matmul_nbits_avx512.h), when block_size is a multiple of 32, looks
/// 4-bit weights up in a per-block table, 32 at a time, in register tiles of up to 4 rows for up
/// to 16 rows, and above that dequantizes 32-column float32 panels for matmul_panels.h's register
/// tiles (otherwise, and for 8 bits, it runs the kAvx2 code); kNeon
/// (aarch64 with Advanced SIMD) unpacks codes in registers for up to 4 rows, tiles as kPortable.
enum class MatMulNBitsVariant { kReference, kPortable, kAvx2, kAvx512, kNeon };

/// Whether `variant` can run on this CPU (kAvx2 needs x86-64 AVX2 and FMA, kAvx512 also AVX-512F,
/// kNeon aarch64 Advanced SIMD; the others always can).
bool matmul_nbits_available(MatMulNBitsVariant variant);

/// The variant a kernel uses here: the first available of kAvx512, kAvx2, kNeon, kPortable.
MatMulNBitsVariant matmul_nbits_best_variant();

/// Profile name of a variant: "f32_matmul_nbits__reference", "__portable", "__avx2", "__avx512" or
/// "__neon".
const char* matmul_nbits_variant_name(MatMulNBitsVariant variant);

/// Profile name of what matmul_nbits() runs for `shape` with `variant`: the variant's name, or
/// with int8 activations "i8_matmul_nbits__avx512_vnni" (kAvx512 on a CPU with AVX-512 BW and
/// VNNI), "__avx2" (kAvx2, or kAvx512 without VNNI), "__neon_dot" (kNeon on an Arm CPU with dot
/// product) or "__reference" (every other case: kReference, kPortable, kNeon without dot product,
/// 4-bit codes in blocks of 16).
const char* matmul_nbits_kernel_name(MatMulNBitsVariant variant, const MatMulNBitsShape& shape);

/// y[m, n] = sum_k a[m, k] * weight(n, k) (+ bias[n]) for `m` rows: a is float32 [m, K] and y
/// float32 [m, N], both row-major. `shape` and `w` must be consistent (the kernel checks them);
/// `variant` must be available. With shape.int8_activations(), A is quantized to int8 per block
/// first (matmul_nbits_int8.h). Parallel over N on up to `threads` OpenMP threads. Uses
/// per-thread workspaces (onednn::thread_buffer slots kSrc, kWeights and, for int8 activations,
/// kExtra); allocates nothing after warm-up. Thread-safe.
void matmul_nbits(MatMulNBitsVariant variant, const MatMulNBitsShape& shape, const MatMulNBitsWeights& w,
                  const float* a, int64_t m, float* y, int threads);

/// A float32 weight quantized into MatMulNBits' 4-bit layout (owned copies).
struct PackedNBits {
  MatMulNBitsShape shape;            ///< bits = 4
  std::vector<uint8_t> b;            ///< [N, k_blocks, blob_size]
  std::vector<float> scales;         ///< [N, k_blocks]
  std::vector<uint8_t> zero_points;  ///< [N, ceil(k_blocks / 2)]; an unused high nibble is 0
};

/// Quantizes `weight` (float32 [K, N] row-major, as a MatMul's B) to 4 bits, asymmetric, per
/// block of `block_size` rows of each column: the block range [lo, hi] is its min/max widened
/// to include 0, scale = (hi - lo) / 15, zero_point = clamp(round(-lo / scale), 0, 15),
/// code = clamp(round(w / scale) + zero_point, 0, 15) (round half to even). A block whose range
/// is 0 (all zeros) gets scale 1 and zero point 0, so nothing divides by zero. Padding codes of
/// a last partial block are the zero point (they dequantize to 0). Per-element error is at most
/// scale / 2 for finite weights. Errors: InvalidArgument when K or N < 1 or block_size is not a
/// power of two >= 16. Pure; thread-safe.
Expected<PackedNBits> pack_matmul_nbits(const float* weight, int64_t k, int64_t n, int64_t block_size);

/// Helpers shared by the variants' files (matmul_nbits*.cc).
namespace nbits {

/// How far ahead of the codes being read the gemv paths prefetch them (bytes): the hardware
/// prefetcher alone left the decode MatMuls of a SmolVLM-shaped INT4 decoder waiting on loads.
inline constexpr int64_t kPrefetchBytes = 4096;

/// Code `i` of a block's blob (4 bits: two a byte, lower index in the low nibble; 8 bits: a byte).
inline int code_at(const uint8_t* blob, int64_t i, int64_t bits) {
  if (bits == 8) return blob[i];
  return (blob[i >> 1] >> ((i & 1) * 4)) & 0x0F;
}

/// Threads for `work` multiply-adds: one below ~32k (a parallel region costs more than that).
inline int threads_for(int threads, int64_t work) { return work < 32768 || threads < 1 ? 1 : threads; }

/// y[r, c] += bias[c] for y float32 [m, n] row-major; nothing when bias is null.
inline void add_bias(const float* bias, int64_t m, int64_t n, float* y) {
  if (bias == nullptr) return;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) y[r * n + c] += bias[c];
  }
}

}  // namespace nbits

}  // namespace edgemm::kernels
