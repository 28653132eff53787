/// \file vector_math.h
/// Scalar float32 math written so that GCC vectorizes loops calling it (compile such files with
/// -fno-trapping-math, see CMakeLists.txt, or the clamps stay branches), and the attribute that
/// also compiles such loops for AVX2. Shared by the elementwise-chain and softmax kernels.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/// On x86-64 GCC, marks a loop function to be compiled twice, for AVX2 (8 floats a vector) and
/// for the baseline (SSE2, 4 floats); the loader picks one per process (GCC `target_clones`).
/// No FMA in either variant, so both round alike. Empty elsewhere (aarch64 compiles NEON loops).
/// EDGEMM_AVX512_CLONES adds an AVX-512F variant (16 floats a vector) for loops measured faster
/// with it (softmax's exponentials: 0.32 -> 0.23 ms on [40, 6625]; PP-OCRv4's elementwise chains
/// measured slower, 0.40 -> 0.70 ms for x·sigmoid(x) on 640×640), with floating-point contraction
/// off: AVX-512F implies FMA, which would round differently from the other variants.
#if defined(__x86_64__) && defined(__GNUC__)
#define EDGEMM_AVX2_CLONES [[gnu::target_clones("avx2", "default")]]
#define EDGEMM_AVX512_CLONES [[gnu::target_clones("avx512f", "avx2", "default"), gnu::optimize("fp-contract=off")]]
#else
#define EDGEMM_AVX2_CLONES
#define EDGEMM_AVX512_CLONES
#endif

namespace edgemm::kernels {

/// True when EDGEMM_AVX512_CLONES functions run their AVX-512F variant in this process.
inline bool avx512_clones_selected() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

/// True when EDGEMM_AVX2_CLONES functions run their AVX2 variant in this process.
inline bool avx2_clones_selected() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

/// 2^k as a float for k in [-126, 127] (built from the exponent bits).
inline float pow2(int32_t k) { return std::bit_cast<float>(static_cast<uint32_t>(k + 127) << 23); }

/// e^x: x = n·ln 2 + r with n = round(x·log2 e) and |r| <= ln2/2 (ln 2 in two parts, Cody–Waite),
/// e^r by its degree-7 Taylor polynomial (truncation < 6e-9 relative), 2^n applied as two
/// factors 2^(n/2) so that overflow gives inf and underflow goes through denormals to 0.
/// NaN propagates. Within ~3e-7 relative of std::exp.
inline float exp_approx(float x) {
  constexpr float kRound = 12582912.f;  // 1.5·2^23: adding it rounds to an integer
  x = x < -104.f ? -104.f : x;          // e^-104 rounds to 0, e^89 to inf
  x = x > 89.f ? 89.f : x;
  const float t = x * 1.44269504088896341f + kRound;
  const float n = t - kRound;
  const int32_t ni = static_cast<int32_t>(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kRound));
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.f / 5040;
  p = p * r + 1.f / 720;
  p = p * r + 1.f / 120;
  p = p * r + 1.f / 24;
  p = p * r + 1.f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  const int32_t half = ni >> 1;
  return p * pow2(half) * pow2(ni - half);
}

#if defined(__aarch64__)
/// exp_approx on four lanes with NEON, the same operations in the same order. GCC vectorizes
/// exp_approx's clamps as NaN-aware compare-and-select sequences on aarch64 (about 19
/// instructions a value); FMAX and FMIN propagate NaN as the clamps do, in one instruction each.
inline float32x4_t exp_approx4(float32x4_t x) {
  constexpr float kRound = 12582912.f;
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.f)), vdupq_n_f32(89.f));
  const float32x4_t round = vdupq_n_f32(kRound);
  const float32x4_t t = vfmaq_f32(round, x, vdupq_n_f32(1.44269504088896341f));
  const float32x4_t n = vsubq_f32(t, round);
  const int32x4_t ni = vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(round));
  const float32x4_t r = vfmaq_f32(vfmsq_f32(x, n, vdupq_n_f32(0.693359375f)), n, vdupq_n_f32(2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.f / 5040);
  for (const float c : {1.f / 720, 1.f / 120, 1.f / 24, 1.f / 6, 0.5f, 1.f, 1.f}) p = vfmaq_f32(vdupq_n_f32(c), p, r);
  const int32x4_t half = vshrq_n_s32(ni, 1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t a = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(half, bias), 23));
  const float32x4_t b = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(ni, half), bias), 23));
  return vmulq_f32(vmulq_f32(p, a), b);
}
#endif

/// 1 / (1 + e^-v) through exp_approx.
inline float sigmoid_approx(float v) { return 1.f / (1.f + exp_approx(-v)); }

/// tanh(x): for |x| < 0.625 its Maclaurin series to x^21 (truncation < 2e-8 relative); above,
/// (e − 1) / (e + 1) with e = exp_approx(2|x|), |x| capped at 9 (tanh 9 rounds to 1), sign
/// restored. NaN propagates. Within ~7e-7 relative of std::tanh.
inline float tanh_approx(float x) {
  const float a = x < 0.f ? -x : x;
  const float e = exp_approx(2.f * (a < 9.f ? a : 9.f));
  const float large = (e - 1.f) / (e + 1.f);
  const float x2 = a * a;
  float p = 0.0000969154f;
  p = p * x2 - 0.000239129f;
  p = p * x2 + 0.000590027f;
  p = p * x2 - 0.001455834f;
  p = p * x2 + 0.003592128f;
  p = p * x2 - 0.008863236f;
  p = p * x2 + 0.021869489f;
  p = p * x2 - 0.053968254f;
  p = p * x2 + 0.133333333f;
  p = p * x2 - 0.333333333f;
  const float small = a + a * x2 * p;
  const float t = a < 0.625f ? small : large;
  const float signed_t = x < 0.f ? -t : t;
  return x != x ? x : signed_t;
}

}  // namespace edgemm::kernels
