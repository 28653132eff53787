// The uint8 quantizers of the int8 kernels (kernels/cpu/int8_common.h) against QuantizeLinear's
// definition written here (ONNX QuantizeLinear-13: saturate(round_half_to_even(x / y_scale) +
// y_zero_point)), on ties, saturation, NaN and infinities, every tail length of the 16-lane
// loop, and planar-to-interleaved layouts (1-4 planes: one byte permutation where the CPU has
// AVX-512 VBMI; more: a byte transpose).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/int8_common.h"

namespace edgemm {
namespace kernels_int8_quantize_test {  // named for the file: unity batches merge anonymous namespaces

/// QuantizeLinear to uint8 as the ONNX spec defines it; NaN gives 0 (edgemm's choice).
uint8_t quantize_linear(float x, float scale, int32_t zero_point) {
  const float r = x / scale;
  if (std::isnan(r)) return 0;
  const double q = std::nearbyint(static_cast<double>(r)) + zero_point;  // default mode: half to even
  return static_cast<uint8_t>(std::min(255.0, std::max(0.0, q)));
}

std::vector<float> test_values(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(-40.0f, 40.0f);
  std::uniform_int_distribution<int> tie(-600, 600);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            1e30f,
                            -1e30f,
                            std::numeric_limits<float>::denorm_min()};
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) {
    if (i % 7 == 3) {
      v[i] = specials[(i / 7) % 8];
    } else if (i % 3 == 0) {
      v[i] = 0.25f * static_cast<float>(tie(rng));  // x / 0.5 lands on k + 0.5: a tie
    } else {
      v[i] = wide(rng);
    }
  }
  return v;
}

TEST(KernelsInt8Quantize, ContiguousMatchesQuantizeLinearForEveryTail) {
  for (const auto& [scale, zero_point] :
       std::vector<std::pair<float, int32_t>>{{0.5f, 128}, {0.0731f, 37}, {0.5f, 0}, {2.0f, 255}}) {
    for (int64_t count : {0, 1, 15, 16, 17, 31, 33, 100, 16384 + 5, 40000}) {
      const std::vector<float> x = test_values(static_cast<size_t>(count), static_cast<uint32_t>(count + 1));
      for (int threads : {1, 2}) {
        std::vector<uint8_t> got(static_cast<size_t>(count), 7);
        kernels::int8::quantize_u8(x.data(), count, scale, zero_point, got.data(), threads);
        for (int64_t i = 0; i < count; ++i) {
          ASSERT_EQ(got[i], quantize_linear(x[i], scale, zero_point))
              << "x=" << x[i] << " scale=" << scale << " zp=" << zero_point << " i=" << i << " count=" << count;
        }
      }
    }
  }
}

TEST(KernelsInt8Quantize, PlanarChannelsBecomeInterleavedRows) {
  const float scale = 0.5f;
  const int32_t zero_point = 100;
  for (int64_t channels : {1, 2, 3, 4, 5, 16, 20}) {
    for (int64_t spatial : {1, 15, 16, 47, 2000}) {
      const int64_t batch = 2;
      const std::vector<float> x =
          test_values(static_cast<size_t>(batch * channels * spatial), static_cast<uint32_t>(channels * spatial));
      std::vector<uint8_t> got(x.size(), 7);
      kernels::int8::quantize_u8_nchw_to_nhwc(x.data(), batch, channels, spatial, scale, zero_point, got.data(), 2);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t p = 0; p < spatial; ++p) {
          for (int64_t c = 0; c < channels; ++c) {
            const float v = x[(b * channels + c) * spatial + p];
            ASSERT_EQ(got[(b * spatial + p) * channels + c], quantize_linear(v, scale, zero_point))
                << "b=" << b << " p=" << p << " c=" << c << " channels=" << channels << " spatial=" << spatial;
          }
        }
      }
    }
  }
}

}  // namespace kernels_int8_quantize_test
}  // namespace edgemm
