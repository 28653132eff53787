#pragma once
/// \file int8_common.h
/// What the com.edgemm Int8Conv (conv_int8.h) and Int8MatMul (matmul_int8.h) kernels share:
/// their quantization attributes, the uint8 quantization of the float input (also used by the
/// ElementwiseChain and Concat kernels that write uint8 values for them, passes::chain_int8), and
/// the checks that decide whether oneDNN's u8s8 kernels compute a node exactly on this CPU.

#include <cstdint>
#include <optional>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::kernels::int8 {

/// The attributes passes::fuse_qdq writes: the input's QuantizeLinear parameters (uint8) and
/// one symmetric int8 weight scale per output channel (Conv) or column (MatMul).
struct QdqScales {
  float x_scale = 1;
  int32_t x_zero_point = 0;
  std::vector<float> w_scales;
};

/// QuantizeLinear of a kernel's float output to uint8: saturate(round_half_to_even(v / scale) +
/// zero_point). The attributes y_scale and y_zero_point that passes::chain_int8 sets on the
/// Int8Conv and ElementwiseChain nodes whose readers all quantize their output alike.
struct OutputQuantization {
  float scale = 1;
  int32_t zero_point = 0;
};

/// Reads y_scale and y_zero_point: nullopt when both are absent. Errors: kInvalidModel naming the
/// node for one without the other, a y_scale that is not a normal float > 0 (or whose reciprocal
/// is not normal), a y_zero_point outside [0, 255].
Expected<std::optional<OutputQuantization>> read_output_quantization(const ir::Node& node);

/// Reads and checks x_scale (finite, > 0), x_zero_point (0..255) and w_scales (`channels`
/// finite values > 0). Errors: kInvalidModel naming the node and the attribute.
Expected<QdqScales> read_qdq_scales(const ir::Node& node, int64_t channels);

/// uint8 quantization of one value as QuantizeLinear: round half to even of v / scale, plus the
/// zero point, saturated (NaN gives 0). The clamp keeps the magic-number rounding exact.
inline uint8_t quantize_u8(float v, float scale, float zero_point) {
  float r = v / scale;
  r = r > -zero_point ? r : -zero_point;
  r = r < 255.0f - zero_point ? r : 255.0f - zero_point;
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23: adding and subtracting it rounds to even
  return static_cast<uint8_t>((r + kRound) - kRound + zero_point);
}

/// Quantizes `count` contiguous float32 values to uint8 exactly as quantize_u8 does (the same
/// bits), 16 at a time with AVX-512 where the CPU has it (NEON on aarch64), on the calling thread. `x` and `out`
/// are caller-owned and must not overlap.
void quantize_u8(const float* x, int64_t count, float scale, int32_t zero_point, uint8_t* out);

/// The same, with `threads` OpenMP threads sharing the range.
void quantize_u8(const float* x, int64_t count, float scale, int32_t zero_point, uint8_t* out, int threads);

/// Quantizes planar float32 channels (NCHW: `batch` images of `channels` planes of `spatial`
/// values) into interleaved uint8 (NHWC [batch, spatial, channels]), value by value as
/// quantize_u8 does; AVX-512 where the CPU has it.
void quantize_u8_nchw_to_nhwc(const float* x, int64_t batch, int64_t channels, int64_t spatial, float scale,
                              int32_t zero_point, uint8_t* out, int threads);

/// True when oneDNN's u8s8 kernels compute these int8 weights exactly on this CPU: always when
/// they run with AVX-512 VNNI (onednn::runs_avx512_vnni: not with ONEDNN_MAX_CPU_ISA=AVX2 on a
/// VNNI CPU); otherwise only weights within [−64, 64], whose uint8 × int8 pair sums fit
/// vpmaddubsw's int16 (oneDNN "Nuances of int8 Computations").
bool fits_pair_sums(const Tensor& weights);

/// True when every x_scale · w_scale and bias / (x_scale · w_scale) that oneDNN would use is a
/// normal float (a denormal weight scale makes the pre-divided bias overflow). `bias` (float32,
/// one value per w_scale) may be undefined.
bool scales_representable(const QdqScales& scales, const Tensor& bias);

/// True when every x_scale · w_scale is finite: the Arm SDOT kernels (int8_gemm_neon.h) multiply
/// their int32 sums by it (a denormal or zero product is fine there: it scales sums of tiny
/// weights, as the reference does).
bool output_scales_finite(const QdqScales& scales);

/// Prints the warning for weights that fail fits_pair_sums (the reference path runs instead).
void warn_reference_path(const ir::Node& node);

}  // namespace edgemm::kernels::int8
