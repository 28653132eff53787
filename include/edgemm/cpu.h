#pragma once
/// \file cpu.h
/// The CPU features that choose edgemm's kernel variants at run time, and the kernel selection
/// they lead to: what `edgemm inspect` prints and EDGEMM_VERBOSE=1 logs when an Inferencer is
/// created.

#include <string>
#include <vector>

namespace edgemm {

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
/// getauxval(AT_HWCAP/AT_HWCAP2)); thread-safe; the reference lives for the process.
const CpuFeatures& cpu_features();

/// One line per kernel family naming the implementation this process runs, e.g.
/// "Conv, ConvTranspose, MatMul, Gemm: oneDNN 2.6.3, jit avx2, convolution chains in blocked
/// nChw8c", after a first line listing the CPU's features. Reflects EDGEMM_ONEDNN=0 (the
/// reference loops, the portable path). Thread-safe.
std::vector<std::string> kernel_selection();

}  // namespace edgemm
