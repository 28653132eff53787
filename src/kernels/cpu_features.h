#pragma once
/// \file cpu_features.h
/// The CPU features that choose kernel variants, detected once per process, and the kernel
/// selection they lead to, for logs (EDGEMM_VERBOSE=1), `edgemm inspect` and reports.

#include <string>
#include <vector>

namespace edgemm::kernels {

/// SIMD features of the running CPU (each false on the other architecture).
struct CpuFeatures {
  std::string arch;  ///< "x86_64", "aarch64", ...
  // x86-64
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512_vnni = false, avx512_vbmi = false;
  bool avx512_bf16 = false;  ///< VDPBF16PS, VCVTNE2PS2BF16 (AVX512_BF16)
  // aarch64 (names as in /proc/cpuinfo): NEON, fp16 arithmetic, dot product, SVE, int8 matrix multiply
  bool asimd = false, asimdhp = false, asimddp = false, sve = false, i8mm = false;
};

/// Detected on first call (x86-64: cpuid through __builtin_cpu_supports; aarch64 Linux:
/// getauxval(AT_HWCAP/AT_HWCAP2)); thread-safe.
const CpuFeatures& cpu_features();

/// One line per kernel family naming the implementation this process runs, e.g.
/// "Conv, ConvTranspose, MatMul, Gemm: oneDNN 2.6.3, jit avx2, convolution chains in blocked nChw8c". Reflects
/// EDGEMM_ONEDNN=0 (the reference loops, the portable path).
std::vector<std::string> kernel_selection();

/// Writes kernel_selection() to stderr, once per process, when the environment variable
/// EDGEMM_VERBOSE is set to a non-empty value other than "0". Called by Inferencer::create.
void log_kernel_selection_once();

}  // namespace edgemm::kernels
