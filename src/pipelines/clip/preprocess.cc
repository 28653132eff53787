#include "pipelines/clip/preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pipelines/image.h"

namespace edgemm::clip {
namespace {

/// Taps of the output coordinates along one axis: `n` source indices and weights per output.
struct Taps {
  int n = 0;
  std::vector<int> index;     // outputs × n, clamped into the image
  std::vector<float> weight;  // outputs × n, 0 for taps outside the image (they read black)
};

constexpr int kMaxTaps = 4;  // of the affine kernels

double sinc(double x) {
  if (x == 0) return 1;
  x *= M_PI;
  return std::sin(x) / x;
}

/// Lanczos-3 with antialiasing (the kernel widened by the downscale factor, weights normalized),
/// as PIL's ImagingResample and libvips' reduce run it for sharp's resize(kernel: lanczos3).
Taps lanczos_taps(int out_size, int in_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 3 * filter_scale;
  Taps taps;
  taps.n = static_cast<int>(std::ceil(support)) * 2 + 1;
  taps.index.assign(static_cast<size_t>(out_size) * taps.n, 0);
  taps.weight.assign(static_cast<size_t>(out_size) * taps.n, 0.0f);
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    const int first = std::max(static_cast<int>(center - support + 0.5), 0);
    const int last = std::min(static_cast<int>(center + support + 0.5), in_size);
    std::vector<double> w;
    double sum = 0;
    for (int i = first; i < last && static_cast<int>(w.size()) < taps.n; ++i) {
      const double t = (i - center + 0.5) / filter_scale;
      w.push_back(std::fabs(t) < 3 ? sinc(t) * sinc(t / 3) : 0.0);
      sum += w.back();
    }
    for (size_t k = 0; k < w.size(); ++k) {
      taps.index[o * taps.n + k] = first + static_cast<int>(k);
      taps.weight[o * taps.n + k] = static_cast<float>(sum != 0 ? w[k] / sum : 0.0);
    }
  }
  return taps;
}

/// Catmull-Rom (Keys' cubic with a = -0.5), the kernel of libvips' bicubic interpolator.
double catmull_rom(double t) {
  t = std::fabs(t);
  if (t <= 1) return (1.5 * t - 2.5) * t * t + 1;
  if (t < 2) return ((-0.5 * t + 2.5) * t - 4) * t + 2;
  return 0;
}

Taps make_taps(int out_size, int in_size, Resample resample) {
  if (resample == Resample::kLanczos) return lanczos_taps(out_size, in_size);
  Taps taps{kMaxTaps, std::vector<int>(static_cast<size_t>(out_size) * kMaxTaps, 0),
            std::vector<float>(static_cast<size_t>(out_size) * kMaxTaps, 0.0f)};
  const double scale = static_cast<double>(in_size) / out_size;
  for (int o = 0; o < out_size; ++o) {
    const double x = o * scale;  // corner-aligned: sharp's affine() with zero offsets
    int base = static_cast<int>(std::floor(x));
    double frac = x - base;
    double w[kMaxTaps] = {0, 0, 0, 0};
    int first = base;
    switch (resample) {
      case Resample::kLanczos:  // lanczos_taps
      case Resample::kNearest:
        w[0] = 1;
        break;
      case Resample::kBilinear:
        w[0] = 1 - frac;
        w[1] = frac;
        break;
      case Resample::kBicubic:
        // libvips positions interpolators on a 1/64-pixel grid (VIPS_TRANSFORM_SCALE).
        frac = std::round(frac * 64) / 64;
        if (frac >= 1) {
          ++base;
          frac = 0;
        }
        first = base - 1;
        for (int k = 0; k < 4; ++k) w[k] = catmull_rom(frac + 1 - k);
        break;
    }
    for (int k = 0; k < kMaxTaps; ++k) {
      const int i = first + k;
      const bool inside = i >= 0 && i < in_size;
      taps.index[o * kMaxTaps + k] = std::clamp(i, 0, in_size - 1);
      taps.weight[o * kMaxTaps + k] = inside ? static_cast<float>(w[k]) : 0.0f;
    }
  }
  return taps;
}

}  // namespace

cv::Mat resize_like_transformers_js(const cv::Mat& rgb, int width, int height, Resample resample) {
  CV_Assert(rgb.type() == CV_8UC3 && width > 0 && height > 0);
  if (rgb.cols == width && rgb.rows == height) return rgb;
  const Taps tx = make_taps(width, rgb.cols, resample);
  const Taps ty = make_taps(height, rgb.rows, resample);
  // Horizontal pass into float rows (only the source rows some output row reads), then vertical.
  std::vector<char> needed(static_cast<size_t>(rgb.rows), 0);
  for (size_t i = 0; i < ty.index.size(); ++i) needed[ty.index[i]] |= ty.weight[i] != 0.0f;
  std::vector<float> rows(static_cast<size_t>(rgb.rows) * width * 3, 0.0f);
  for (int y = 0; y < rgb.rows; ++y) {
    if (!needed[y]) continue;
    const uint8_t* src = rgb.ptr<uint8_t>(y);
    float* dst = rows.data() + static_cast<size_t>(y) * width * 3;
    for (int x = 0; x < width; ++x) {
      float acc[3] = {0, 0, 0};
      for (int k = 0; k < tx.n; ++k) {
        const float w = tx.weight[x * tx.n + k];
        if (w == 0.0f) continue;
        const uint8_t* p = src + 3 * tx.index[x * tx.n + k];
        for (int c = 0; c < 3; ++c) acc[c] += w * p[c];
      }
      for (int c = 0; c < 3; ++c) dst[3 * x + c] = acc[c];
    }
  }
  cv::Mat out(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    uint8_t* dst = out.ptr<uint8_t>(y);
    for (int i = 0; i < width * 3; ++i) {
      float acc = 0;
      for (int k = 0; k < ty.n; ++k) {
        const float w = ty.weight[y * ty.n + k];
        if (w != 0.0f) acc += w * rows[static_cast<size_t>(ty.index[y * ty.n + k]) * width * 3 + i];
      }
      dst[i] = cv::saturate_cast<uint8_t>(acc);  // rounds to nearest
    }
  }
  return out;
}

cv::Mat center_crop(const cv::Mat& rgb, int width, int height) {
  if (rgb.cols == width && rgb.rows == height) return rgb;
  cv::Mat out(height, width, rgb.type(), cv::Scalar::all(0));
  auto axis = [](int in, int want, int& src, int& dst, int& n) {
    if (in >= want) {
      src = (in - want) / 2;  // floor of a non-negative half
      dst = 0;
      n = want;
    } else {
      src = 0;
      dst = (want - in) / 2;
      n = in;
    }
  };
  int sx, dx, nx, sy, dy, ny;
  axis(rgb.cols, width, sx, dx, nx);
  axis(rgb.rows, height, sy, dy, ny);
  rgb(cv::Rect(sx, sy, nx, ny)).copyTo(out(cv::Rect(dx, dy, nx, ny)));
  return out;
}

Status preprocess_rgb_into(const cv::Mat& rgb, const ImageProcessorConfig& config, int width, int height, float* out) {
  const auto [rw, rh] = resize_output_size(config, rgb.cols, rgb.rows);
  if (config.do_resize && int64_t{rw} * rh > pipelines::kMaxImagePixels) {
    // A shortest_edge resize of a thin strip (1 x 60000 to 224 x 13.4M) before the crop.
    return Status(StatusCode::kInvalidArgument,
                  "resizing the " + std::to_string(rgb.cols) + "x" + std::to_string(rgb.rows) + " image to " +
                      std::to_string(rw) + "x" + std::to_string(rh) +
                      " (preprocessor_config.json size) would make more than 2^28 pixels: its aspect ratio is too "
                      "extreme");
  }
  cv::Mat image = config.do_resize ? resize_like_transformers_js(rgb, rw, rh, config.resample) : rgb;
  if (config.do_center_crop) image = center_crop(image, config.crop_width, config.crop_height);
  if (image.cols != width || image.rows != height) {
    return Status(StatusCode::kInvalidArgument,
                  "preprocessing gives a " + std::to_string(image.cols) + "x" + std::to_string(image.rows) +
                      " image but the vision model takes " + std::to_string(width) + "x" + std::to_string(height) +
                      " (preprocessor_config.json: crop_size / size vs the model's pixel_values shape)");
  }
  // Same float32 steps as transformers.js: v = f32(rescale_factor · p), then f32((v − mean) / std)
  // computed in double.
  const size_t plane = static_cast<size_t>(width) * height;
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = image.ptr<uint8_t>(y);
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        float v = row[3 * x + c];
        if (config.do_rescale) v = static_cast<float>(config.rescale_factor * v);
        if (config.do_normalize) v = static_cast<float>((v - config.image_mean[c]) / config.image_std[c]);
        out[c * plane + static_cast<size_t>(y) * width + x] = v;
      }
    }
  }
  return Status::ok();
}

}  // namespace edgemm::clip
