#pragma once
/// \file xnnpack.h
/// XNNPACK (Debian's libxnnpack, snapshot 2022-02-16) as the convolution library of aarch64 CPUs
/// without SVE, where oneDNN 2.6 has no JIT convolution and runs `gemm:ref` (docs/aarch64.md). The
/// aarch64 build always links it (a required dependency there); x86 builds never do.

#if defined(__aarch64__)
#include <pthreadpool.h>
#include <xnnpack.h>

#include "edgemm/status.h"
#include "ir/graph.h"
#endif

namespace edgemm::kernels::xnnpack {

/// Whether XNNPACK operators run on this CPU: an aarch64 build, a CPU with Advanced
/// SIMD (asimd) and without SVE (oneDNN has JIT kernels for SVE), the environment variable
/// EDGEMM_XNNPACK not "0", and xnn_initialize() succeeded. Decided on the first call; thread-safe.
bool enabled();

/// Whether XNNPACK's half-precision operators run here (the native backend's "fp16" precision):
/// enabled() and a CPU with FP16 arithmetic (asimdhp, Armv8.2-A; the Cortex-A76 and A55 have it).
bool fp16_enabled();

#if defined(__aarch64__)
/// The pthreadpool for `threads` workers, or null for 1 (XNNPACK then runs on the calling thread).
/// One pool per thread count, created on first use and kept for the process; pthreadpool
/// serializes concurrent parallel sections, so callers may share it.
pthreadpool_t threadpool(int threads);

/// OK for xnn_status_success; otherwise an Internal error naming `node`, the operator kind `what`
/// ("convolution", ...) and XNNPACK's status ("xnn_status_invalid_parameter", ...).
Status check(const ir::Node& node, xnn_status status, const char* what);

/// `count` float32 values rounded to IEEE 754 binary16 (round to nearest even, FCVTN; beyond
/// 65504 they become infinities), stored as their bits; and back (exact). For the f16 operators'
/// activations. Per-thread scratch of at least `count` halves: half_buffer(slot, count), slot 0 or 1.
void to_half(const float* x, uint16_t* out, int64_t count);

/// Whether weights keep their values in half precision: for each of `channels` output channels
/// (element i of channel c at w[c * channel_stride + i * element_stride], `per_channel` of them),
/// the L1 norm of the rounding error stays within 1e-3 of the channel's L1 norm (IEEE half rounds
/// each value within 4.9e-4 of itself while it is normal: 6.1e-5 to 65504) and no value exceeds
/// 65504. Folded BatchNorm scales can leave a channel's weights below half's normal range
/// (PP-OCRv4 det's head: ~1e-6), where half keeps only a few bits; such a node stays float32.
bool half_keeps(const float* w, int64_t channels, int64_t per_channel, int64_t channel_stride, int64_t element_stride);
void from_half(const uint16_t* x, float* out, int64_t count);
uint16_t* half_buffer(int slot, int64_t count);
#endif

}  // namespace edgemm::kernels::xnnpack
