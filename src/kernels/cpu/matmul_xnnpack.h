#pragma once
/// \file matmul_xnnpack.h
/// float32 MatMul / FusedMatMul on XNNPACK's `fully_connected_nc_f32` operator
/// (`f32_matmul__xnnpack`), only where xnnpack::enabled() (aarch64 without SVE,
/// kernels/cpu/xnnpack.h), where oneDNN 2.6 runs its reference GEMM (at the "fp16" precision a
/// constant B runs `fully_connected_nc_f16`, `f16_matmul__xnnpack`, as conv_xnnpack.h says):
/// - a constant 2-D B [K, N]: one operator made with the kernel (XnnpackFullyConnected), every row
///   of A (A's batch axes folded into the rows), plus an optional bias [N];
/// - B computed at run time (attention's Q·Kᵀ and scores·V) or batched: not here (this XNNPACK
///   snapshot has no operator with dynamic weights) but neon_matmul (matmul_neon.h).

#include <cstdint>
#include <mutex>

#include "edgemm/status.h"
#include "ir/graph.h"
#include "kernels/cpu/matmul_reference.h"
#include "kernels/cpu/xnnpack.h"

namespace edgemm::kernels {

#if defined(__aarch64__)

/// One MatMul node's XNNPACK operator, created (B and the bias packed by XNNPACK) with the kernel;
/// set up and run under a mutex, so one kernel may run on several threads at once (one at a time).
class XnnpackFullyConnected {
 public:
  /// Packs `b` (float32 [K, N], row-major) and `bias` (float32 [N], or null); neither is retained.
  /// `fp16`: rounded to half for the half-precision operator (callers check
  /// xnnpack::fp16_enabled()). Check ok() afterwards: XNNPACK may refuse (out of memory).
  XnnpackFullyConnected(const float* b, int64_t k, int64_t n, const float* bias, bool fp16);
  ~XnnpackFullyConnected();
  XnnpackFullyConnected(const XnnpackFullyConnected&) = delete;
  XnnpackFullyConnected& operator=(const XnnpackFullyConnected&) = delete;

  /// Whether the operator was created.
  bool ok() const { return op_ != nullptr; }
  /// Bytes of XNNPACK's packed copy of B, counted as K x N elements of the operator's precision
  /// (XNNPACK does not report its packed size; its padding is left out).
  int64_t packed_bytes() const { return k_ * n_ * (fp16_ ? 2 : 4); }

  /// y [rows, N] = a [rows, K] · B (+ bias), float32 in and out, on `threads` pthreadpool workers. Errors:
  /// XNNPACK's own refusals (Internal), naming `node`.
  Status run(const ir::Node& node, const float* a, int64_t rows, float* y, int threads) const;

 private:
  mutable std::mutex mutex_;
  xnn_operator_t op_ = nullptr;
  int64_t k_, n_;
  bool fp16_;
};

#endif

}  // namespace edgemm::kernels
