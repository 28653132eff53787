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

#if defined(__aarch64__)
/// The pthreadpool for `threads` workers, or null for 1 (XNNPACK then runs on the calling thread).
/// One pool per thread count, created on first use and kept for the process; pthreadpool
/// serializes concurrent parallel sections, so callers may share it.
pthreadpool_t threadpool(int threads);

/// OK for xnn_status_success; otherwise an Internal error naming `node`, the operator kind `what`
/// ("convolution", ...) and XNNPACK's status ("xnn_status_invalid_parameter", ...).
Status check(const ir::Node& node, xnn_status status, const char* what);
#endif

}  // namespace edgemm::kernels::xnnpack
