/// \file int8_common.cc
/// Attributes, oneDNN-exactness checks and the vectorized uint8 quantizers shared by Int8Conv,
/// Int8MatMul, ElementwiseChain and Concat (int8_common.h).

#include "kernels/cpu/int8_common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "kernels/cpu/onednn.h"
#include "kernels/cpu_features.h"

#if defined(__x86_64__)
// GCC 12 reports false -Wmaybe-uninitialized / -Wuninitialized inside the AVX-512 intrinsics
// that start from _mm512_undefined_*() (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define EDGEMM_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define EDGEMM_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace edgemm::kernels::int8 {
namespace {

/// Largest weight magnitude whose uint8 × int8 pair sums fit vpmaddubsw's int16 (255·64·2).
constexpr int kMaxWeightWithoutVnni = 64;

/// Values one thread quantizes at a time (a multiple of 16).
constexpr int64_t kChunk = 16384;

Status invalid(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidModel, message);
}

void quantize_scalar(const float* x, int64_t count, float scale, float zero_point, uint8_t* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = quantize_u8(x[i], scale, zero_point);
}

#if defined(__x86_64__)
/// Whether the AVX-512 loops (F, BW and VL for masked byte stores; every CPU with BW has VL)
/// run on this CPU.
bool avx512() { return cpu_features().avx512f && cpu_features().avx512bw; }

/// quantize_u8 on 16 lanes: the same division, clamp (max returns its second operand, the
/// lower bound, for NaN), round half to even and zero point, then vpmovusdb to bytes.
EDGEMM_AVX512 inline __m128i quantize16(__m512 v, __m512 scale, __m512 lo, __m512 hi, __m512 zero_point) {
  __m512 r = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(v, scale), lo), hi);
  r = _mm512_add_ps(_mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zero_point);
  return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(r));
}

EDGEMM_AVX512 void quantize_avx512(const float* x, int64_t count, float scale, float zero_point, uint8_t* out) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero_point);
  const __m512 lo = _mm512_set1_ps(-zero_point), hi = _mm512_set1_ps(255.0f - zero_point);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), quantize16(_mm512_loadu_ps(x + i), s, lo, hi, z));
  }
  if (i < count) {  // the last 1-15 values through masked loads and stores
    const __mmask16 m = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm_mask_storeu_epi8(out + i, m, quantize16(_mm512_maskz_loadu_ps(m, x + i), s, lo, hi, z));
  }
}

/// 16 pixels of `channels` planes (stride `spatial`) into 16 interleaved rows of `channels` bytes.
EDGEMM_AVX512 void quantize_planes16_avx512(const float* x, int64_t channels, int64_t spatial, float scale,
                                            float zero_point, uint8_t* tmp, uint8_t* out) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero_point);
  const __m512 lo = _mm512_set1_ps(-zero_point), hi = _mm512_set1_ps(255.0f - zero_point);
  for (int64_t c = 0; c < channels; ++c) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tmp + c * 16),
                     quantize16(_mm512_loadu_ps(x + c * spatial), s, lo, hi, z));
  }
  for (int64_t p = 0; p < 16; ++p) {
    for (int64_t c = 0; c < channels; ++c) out[p * channels + c] = tmp[c * 16 + p];
  }
}

/// Pixels [p, p + 16 · blocks) of 1-4 planes (stride `spatial`) into interleaved rows of
/// `channels` bytes, 16 pixels at a time: the planes' bytes side by side in one register, then
/// one byte permutation (vpermb: byte p · channels + c takes plane c's byte p) and a masked store.
EDGEMM_AVX512_VBMI void quantize_few_planes(const float* x, int64_t channels, int64_t spatial, int64_t blocks,
                                            float scale, float zero_point, uint8_t* out) {
  alignas(64) uint8_t index[64] = {};
  for (int64_t p = 0; p < 16; ++p) {
    for (int64_t c = 0; c < channels; ++c) index[p * channels + c] = static_cast<uint8_t>(c * 16 + p);
  }
  const __m512i order = _mm512_load_si512(index);
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero_point);
  const __m512 lo = _mm512_set1_ps(-zero_point), hi = _mm512_set1_ps(255.0f - zero_point);
  const __mmask64 bytes = channels == 4 ? ~0ull : (1ull << (16 * channels)) - 1;
  for (int64_t b = 0; b < blocks; ++b) {
    __m512i planes = _mm512_setzero_si512();
    for (int64_t c = 0; c < channels; ++c) {
      const __m128i q = quantize16(_mm512_loadu_ps(x + c * spatial + 16 * b), s, lo, hi, z);
      planes = _mm512_mask_broadcast_i32x4(planes, static_cast<__mmask16>(0xF << (4 * c)), q);
    }
    _mm512_mask_storeu_epi8(out + 16 * b * channels, bytes, _mm512_permutexvar_epi8(order, planes));
  }
}
#endif

#if defined(__aarch64__)
/// quantize_u8 on 16 values with NEON: the same division, clamp (fmaxnm and fminnm return the
/// bound for NaN, as the scalar compares do), round half to even (fcvtns), zero point, narrow.
inline uint8x16_t quantize16(const float* x, float32x4_t scale, float32x4_t lo, float32x4_t hi, int32x4_t zero_point) {
  int32x4_t q[4];
  for (int j = 0; j < 4; ++j) {
    const float32x4_t r = vminnmq_f32(vmaxnmq_f32(vdivq_f32(vld1q_f32(x + 4 * j), scale), lo), hi);
    q[j] = vaddq_s32(vcvtnq_s32_f32(r), zero_point);
  }
  const uint16x8_t lo16 = vcombine_u16(vqmovun_s32(q[0]), vqmovun_s32(q[1]));
  const uint16x8_t hi16 = vcombine_u16(vqmovun_s32(q[2]), vqmovun_s32(q[3]));
  return vcombine_u8(vqmovn_u16(lo16), vqmovn_u16(hi16));
}

struct Neon16 {
  float32x4_t scale, lo, hi;
  int32x4_t zero_point;
  Neon16(float s, float zp)
      : scale(vdupq_n_f32(s)),
        lo(vdupq_n_f32(-zp)),
        hi(vdupq_n_f32(255.0f - zp)),
        zero_point(vdupq_n_s32(static_cast<int32_t>(zp))) {}
  uint8x16_t operator()(const float* x) const { return quantize16(x, scale, lo, hi, zero_point); }
};

/// Values [0, count - count % 16) with NEON; returns how many it did.
int64_t quantize_neon(const float* x, int64_t count, float scale, float zero_point, uint8_t* out) {
  const Neon16 q(scale, zero_point);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) vst1q_u8(out + i, q(x + i));
  return i;
}

/// Pixels [p, p + 16 · blocks) of `channels` planes (stride `spatial`) into interleaved rows:
/// three or four planes with one interleaving store (st3, st4), others through 16 bytes per plane.
void quantize_planes_neon(const float* x, int64_t channels, int64_t spatial, int64_t blocks, float scale,
                          float zero_point, uint8_t* out) {
  const Neon16 q(scale, zero_point);
  std::vector<uint8_t> tmp(static_cast<size_t>(channels) * 16);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* px = x + 16 * b;
    uint8_t* dst = out + 16 * b * channels;
    if (channels == 3) {
      vst3q_u8(dst, uint8x16x3_t{{q(px), q(px + spatial), q(px + 2 * spatial)}});
    } else if (channels == 4) {
      vst4q_u8(dst, uint8x16x4_t{{q(px), q(px + spatial), q(px + 2 * spatial), q(px + 3 * spatial)}});
    } else {
      for (int64_t c = 0; c < channels; ++c) vst1q_u8(tmp.data() + c * 16, q(px + c * spatial));
      for (int64_t p = 0; p < 16; ++p) {
        for (int64_t c = 0; c < channels; ++c) dst[p * channels + c] = tmp[c * 16 + p];
      }
    }
  }
}
#endif

/// Pixels [p0, p1) of one NCHW image into NHWC bytes.
void quantize_pixels(const float* image, int64_t channels, int64_t spatial, int64_t p0, int64_t p1, float scale,
                     float zero_point, uint8_t* out_image) {
  int64_t p = p0;
#if defined(__x86_64__)
  if (avx512() && cpu_features().avx512_vbmi && channels <= 4) {
    const int64_t blocks = (p1 - p) / 16;
    quantize_few_planes(image + p, channels, spatial, blocks, scale, zero_point, out_image + p * channels);
    p += 16 * blocks;
  } else if (avx512()) {
    std::vector<uint8_t> tmp(static_cast<size_t>(channels) * 16);
    for (; p + 16 <= p1; p += 16) {
      quantize_planes16_avx512(image + p, channels, spatial, scale, zero_point, tmp.data(), out_image + p * channels);
    }
  }
#elif defined(__aarch64__)
  const int64_t blocks = (p1 - p) / 16;
  quantize_planes_neon(image + p, channels, spatial, blocks, scale, zero_point, out_image + p * channels);
  p += 16 * blocks;
#endif
  for (; p < p1; ++p) {
    for (int64_t c = 0; c < channels; ++c) {
      out_image[p * channels + c] = quantize_u8(image[c * spatial + p], scale, zero_point);
    }
  }
}

}  // namespace

Expected<QdqScales> read_qdq_scales(const ir::Node& node, int64_t channels) {
  if (!node.has_attr("x_scale") || !node.has_attr("x_zero_point") || !node.has_attr("w_scales")) {
    return invalid(node, "attributes x_scale, x_zero_point and w_scales are required");
  }
  QdqScales s;
  EDGEMM_ASSIGN_OR_RETURN(s.x_scale, node.attr_float("x_scale", 0));
  EDGEMM_ASSIGN_OR_RETURN(const int64_t zp, node.attr_int("x_zero_point", 0));
  EDGEMM_ASSIGN_OR_RETURN(s.w_scales, node.attr_floats("w_scales"));
  if (!(s.x_scale > 0) || !std::isfinite(s.x_scale)) {
    return invalid(node, "attribute x_scale must be finite and > 0, got " + std::to_string(s.x_scale));
  }
  if (zp < 0 || zp > 255) return invalid(node, "attribute x_zero_point must be in [0, 255], got " + std::to_string(zp));
  s.x_zero_point = static_cast<int32_t>(zp);
  if (static_cast<int64_t>(s.w_scales.size()) != channels) {
    return invalid(node, "attribute w_scales has " + std::to_string(s.w_scales.size()) + " values for " +
                             std::to_string(channels) + " output channels");
  }
  for (float w : s.w_scales) {
    if (!(w > 0) || !std::isfinite(w))
      return invalid(node, "attribute w_scales has " + std::to_string(w) + " (must be > 0)");
  }
  return s;
}

Expected<std::optional<OutputQuantization>> read_output_quantization(const ir::Node& node) {
  if (!node.has_attr("y_scale") && !node.has_attr("y_zero_point")) return std::optional<OutputQuantization>();
  if (!node.has_attr("y_scale") || !node.has_attr("y_zero_point")) {
    return invalid(node, "attributes y_scale and y_zero_point go together");
  }
  OutputQuantization q;
  EDGEMM_ASSIGN_OR_RETURN(q.scale, node.attr_float("y_scale", 0));
  EDGEMM_ASSIGN_OR_RETURN(const int64_t zp, node.attr_int("y_zero_point", 0));
  if (!(q.scale > 0) || !std::isnormal(q.scale) || !std::isnormal(1.0f / q.scale)) {
    return invalid(node, "attribute y_scale must be a normal float > 0, got " + std::to_string(q.scale));
  }
  if (zp < 0 || zp > 255) return invalid(node, "attribute y_zero_point must be in [0, 255], got " + std::to_string(zp));
  q.zero_point = static_cast<int32_t>(zp);
  return std::optional<OutputQuantization>(q);
}

void quantize_u8(const float* x, int64_t count, float scale, int32_t zero_point, uint8_t* out) {
  const float z = static_cast<float>(zero_point);
#if defined(__x86_64__)
  if (avx512()) return quantize_avx512(x, count, scale, z, out);
#elif defined(__aarch64__)
  const int64_t done = quantize_neon(x, count, scale, z, out);
  x += done;
  out += done;
  count -= done;
#endif
  quantize_scalar(x, count, scale, z, out);
}

void quantize_u8(const float* x, int64_t count, float scale, int32_t zero_point, uint8_t* out, int threads) {
  const int64_t chunks = (count + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t begin = k * kChunk;
    quantize_u8(x + begin, std::min(kChunk, count - begin), scale, zero_point, out + begin);
  }
}

void quantize_u8_nchw_to_nhwc(const float* x, int64_t batch, int64_t channels, int64_t spatial, float scale,
                              int32_t zero_point, uint8_t* out, int threads) {
  const float z = static_cast<float>(zero_point);
  const int64_t pixels_per_chunk = std::max<int64_t>(16, kChunk / std::max<int64_t>(channels, 1) / 16 * 16);
  const int64_t chunks_per_image = (spatial + pixels_per_chunk - 1) / pixels_per_chunk;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t k = 0; k < batch * chunks_per_image; ++k) {
    const int64_t b = k / chunks_per_image, p0 = (k % chunks_per_image) * pixels_per_chunk;
    quantize_pixels(x + b * channels * spatial, channels, spatial, p0, std::min(spatial, p0 + pixels_per_chunk), scale,
                    z, out + b * spatial * channels);
  }
}

bool fits_pair_sums(const Tensor& weights) {
  if (cpu_features().avx512_vnni && onednn::runs_avx512_vnni()) return true;
  const int8_t* v = weights.data<int8_t>();
  for (int64_t i = 0; i < weights.element_count(); ++i) {
    if (std::abs(static_cast<int>(v[i])) > kMaxWeightWithoutVnni) return false;
  }
  return true;
}

bool scales_representable(const QdqScales& scales, const Tensor& bias) {
  for (size_t c = 0; c < scales.w_scales.size(); ++c) {
    const float s = scales.x_scale * scales.w_scales[c];
    if (!std::isnormal(s)) return false;
    if (bias.defined() && !std::isfinite(bias.data<float>()[c] / s)) return false;
  }
  return true;
}

bool output_scales_finite(const QdqScales& scales) {
  for (float w : scales.w_scales) {
    if (!std::isfinite(scales.x_scale * w)) return false;
  }
  return true;
}

void warn_reference_path(const ir::Node& node) {
  std::cerr << "edgemm: warning: " << node.describe()
            << ": int8 weights beyond [-64, 64] would saturate oneDNN's u8s8 kernels on this CPU (no AVX-512 VNNI); "
               "running the slow reference path (edgemm quantize writes 7-bit weights unless --full-range)"
            << std::endl;
}

}  // namespace edgemm::kernels::int8

#undef EDGEMM_AVX512
#undef EDGEMM_AVX512_VBMI
