#include "kernels/cpu_features.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <mutex>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "kernels/cpu/int8_gemm_neon.h"
#include "kernels/cpu/matmul_nbits.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/xnnpack.h"

namespace edgemm::kernels {
namespace {

[[maybe_unused]] const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse4.1";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

}  // namespace
}  // namespace edgemm::kernels

namespace edgemm {

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__)
    f.arch = "x86_64";
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = __builtin_cpu_supports("f16c");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512_vnni = __builtin_cpu_supports("avx512vnni");
    f.avx512_vbmi = __builtin_cpu_supports("avx512vbmi");
    f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
#elif defined(__aarch64__)
    f.arch = "aarch64";
#if defined(__linux__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    f.asimd = (hwcap & HWCAP_ASIMD) != 0;
    f.asimdhp = (hwcap & HWCAP_ASIMDHP) != 0;
    f.asimddp = (hwcap & HWCAP_ASIMDDP) != 0;
    f.sve = (hwcap & HWCAP_SVE) != 0;
#if defined(HWCAP2_I8MM)
    f.i8mm = (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
#endif
#endif
#else
    f.arch = "other";
#endif
    return f;
  }();
  return features;
}

std::vector<std::string> kernel_selection() {
  using namespace kernels;  // each kernel family's own queries
  const CpuFeatures& f = cpu_features();
  std::string cpu = "CPU: " + f.arch;
  for (const auto& [on, name] :
       {std::pair{f.avx2, "avx2"}, std::pair{f.fma, "fma"}, std::pair{f.f16c, "f16c"}, std::pair{f.avx512f, "avx512f"},
        std::pair{f.avx512bw, "avx512bw"}, std::pair{f.avx512_vnni, "avx512_vnni"},
        std::pair{f.avx512_vbmi, "avx512_vbmi"}, std::pair{f.asimd, "asimd"}, std::pair{f.asimdhp, "asimdhp"},
        std::pair{f.asimddp, "asimddp"}, std::pair{f.sve, "sve"}, std::pair{f.i8mm, "i8mm"}}) {
    if (on) cpu += std::string(" ") + name;
  }
  std::vector<std::string> lines = {cpu};
  if (onednn::enabled()) {
    const dnnl_version_t* v = dnnl_version();
    lines.push_back(
        "Conv, ConvTranspose, MatMul, Gemm, FusedConv, FusedMatMul: oneDNN " + std::to_string(v->major) + "." +
        std::to_string(v->minor) + "." + std::to_string(v->patch) +
#if defined(__x86_64__)
        " jit " + isa_name(dnnl::get_effective_cpu_isa()) +
#else
        " (" + f.arch + ": oneDNN's own choice of JIT or reference kernels)" +
#endif
        (onednn::prefers_nhwc() ? ", convolution chains in NHWC" : ", convolution chains in blocked nChw8c"));
  } else {
    lines.push_back("Conv, ConvTranspose, MatMul, Gemm, FusedConv, FusedMatMul: reference loops (EDGEMM_ONEDNN=0)");
  }
#if defined(__aarch64__)
  if (onednn::enabled()) {
    lines.push_back(
        std::string("Conv 2-D (float32, constant weights): ") +
        (xnnpack::enabled() ? "f32_conv__xnnpack (XNNPACK, NHWC)" : "oneDNN (the CPU has SVE: JIT kernels)"));
    lines.push_back(std::string("Int8Conv, Int8MatMul: ") +
                    (int8_neon::enabled() ? "u8s8_conv__neon_dot, u8s8_matmul__neon_dot (SDOT)" : "oneDNN u8s8"));
    lines.push_back(std::string("precision fp16: ") + (xnnpack::fp16_enabled()
                                                           ? "f16_conv__xnnpack, f16_matmul__xnnpack (FP16 arithmetic)"
                                                           : "as fp32 (no FP16 arithmetic)"));
  }
#endif
  if (onednn::enabled()) {
    lines.push_back(
        "ConvTranspose 2-D with kernel == strides (float32, constant weights): "
        "f32_conv_transpose_strided__edgemm");
#if defined(__aarch64__)
    if (xnnpack::enabled()) {
      lines.push_back("ConvTranspose 2-D, other (float32, constant weights): f32_conv_transpose__xnnpack (XNNPACK, NHWC)");
    }
#endif
  }
  const MatMulNBitsVariant nbits = onednn::enabled() ? matmul_nbits_best_variant() : MatMulNBitsVariant::kReference;
  MatMulNBitsShape int8_a;
  int8_a.accuracy_level = 4;
  lines.push_back(std::string("MatMulNBits: ") + matmul_nbits_variant_name(nbits) +
                  "; accuracy_level 4 (A in int8): " + matmul_nbits_kernel_name(nbits, int8_a));
  lines.push_back(
      onednn::enabled() && matmul_panels_available()
          ? "MatMul with constant weights, up to 256 rows: f32_matmul__avx512_panels"
      : onednn::enabled() && xnnpack::enabled()
          ? "MatMul, Gemm (float32): f32_matmul__xnnpack, f32_gemm__xnnpack (constant B, XNNPACK fully connected), "
            "f32_matmul__neon (B computed)"
          : "MatMul with constant weights: oneDNN or the reference loops");
  lines.push_back(onednn::enabled() && matmul_panels_available(PanelFormat::kBfloat16)
                      ? "MatMul at precision bf16: bf16_matmul__avx512_panels (AVX512_BF16)"
                      : "MatMul at precision bf16: as at fp32 (no AVX512_BF16)");
#if defined(__x86_64__)
  lines.push_back(std::string("ElementwiseChain: ") + (f.avx2 ? "avx2" : "baseline") +
                  " step loops (chosen at load by target_clones)");
#else
  lines.push_back("ElementwiseChain: NEON clamps and exponentials, other steps compiler-vectorized (" +
                  std::string(f.asimd ? "NEON" : "no SIMD") + ")");
#endif
  return lines;
}

}  // namespace edgemm

namespace edgemm::kernels {

void log_kernel_selection_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("EDGEMM_VERBOSE");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "0") == 0) return;
    for (const std::string& line : kernel_selection()) std::fprintf(stderr, "edgemm: %s\n", line.c_str());
  });
}

}  // namespace edgemm::kernels
