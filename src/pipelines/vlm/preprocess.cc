#include "pipelines/vlm/preprocess.h"

#include <opencv2/imgproc.hpp>

#include "pipelines/clip/preprocess.h"

namespace edgemm::vlm {
namespace {

using Planes = std::array<cv::Mat, 3>;  // R, G, B as CV_32F

/// Bilinear resize of each plane: ONNX Resize (linear, half_pixel, no antialias) = cv::INTER_LINEAR.
Planes resize_planes(const Planes& in, int width, int height) {
  if (in[0].cols == width && in[0].rows == height) return in;
  Planes out;
  for (int c = 0; c < 3; ++c) cv::resize(in[c], out[c], cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
  return out;
}

void write_frame(const Planes& planes, const cv::Rect& box, float* out) {
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < box.height; ++y) {
      const float* row = planes[c].ptr<float>(box.y + y) + box.x;
      std::copy(row, row + box.width, out + (static_cast<size_t>(c) * box.height + y) * box.width);
    }
  }
}

/// transformers.js' get_resize_for_vision_encoder: both sides up to multiples of `side`, keeping
/// the aspect ratio through the longer side.
std::array<int, 2> split_size(int width, int height, int side) {
  const double aspect = static_cast<double>(width) / height;
  auto up = [side](double v) { return static_cast<int>(std::ceil(v / side)) * side; };
  if (width >= height) {
    const int w = up(width);
    return {w, up(std::floor(w / aspect))};
  }
  const int h = up(height);
  return {up(std::floor(h * aspect)), h};
}

}  // namespace

Expected<ImageFrames> preprocess_image(const cv::Mat& rgb, const VlmConfig& config) {
  const clip::ImageProcessorConfig& p = config.image_processor;
  const auto [rw, rh] = clip::resize_output_size(p, rgb.cols, rgb.rows);
  std::vector<float> chw(static_cast<size_t>(3) * rw * rh);
  EDGEMM_RETURN_IF_ERROR(clip::preprocess_rgb_into(rgb, p, rw, rh, chw.data()));
  Planes planes;
  for (int c = 0; c < 3; ++c) planes[c] = cv::Mat(rh, rw, CV_32F, chw.data() + static_cast<size_t>(c) * rw * rh);

  const int side = config.max_image_size;
  ImageFrames frames;
  std::vector<Planes> crops;
  std::vector<cv::Rect> boxes;
  if (config.do_image_splitting) {
    const auto [sw, sh] = split_size(rw, rh, side);
    Planes resized = resize_planes(planes, sw, sh);
    if (sw > side || sh > side) {
      frames.rows = (sh + side - 1) / side;
      frames.cols = (sw + side - 1) / side;
      const int fh = (sh + frames.rows - 1) / frames.rows, fw = (sw + frames.cols - 1) / frames.cols;
      for (int r = 0; r < frames.rows; ++r) {
        for (int c = 0; c < frames.cols; ++c) {
          const int y = r == frames.rows - 1 ? sh - fh : r * fh;
          const int x = c == frames.cols - 1 ? sw - fw : c * fw;
          crops.push_back(resized);
          boxes.emplace_back(x, y, fw, fh);
        }
      }
    }
    planes = resized;
  }
  crops.push_back(resize_planes(planes, side, side));
  boxes.emplace_back(0, 0, side, side);
  const int64_t n = static_cast<int64_t>(crops.size());
  EDGEMM_ASSIGN_OR_RETURN(frames.pixels, Tensor::create(DataType::kFloat32, {n, 3, side, side}));
  for (int64_t i = 0; i < n; ++i) {
    write_frame(crops[i], boxes[i], frames.pixels.data<float>() + i * 3 * side * side);
  }
  return frames;
}

std::string image_prompt(const ImageFrames& frames, int image_seq_len) {
  std::string tokens;
  for (int i = 0; i < image_seq_len; ++i) tokens += "<image>";
  const std::string fake = "<fake_token_around_image>";
  std::string text;
  for (int r = 0; r < frames.rows; ++r) {
    for (int c = 0; c < frames.cols; ++c) {
      text += fake + "<row_" + std::to_string(r + 1) + "_col_" + std::to_string(c + 1) + ">" + tokens;
    }
    text += "\n";
  }
  if (frames.rows > 0 || frames.cols > 0) text += "\n";
  return text + fake + "<global-img>" + tokens + fake;
}

Expected<std::string> expand_image_tokens(const std::string& prompt, const std::vector<ImageFrames>& frames,
                                          int image_seq_len) {
  const std::string token = "<image>";
  std::string out;
  size_t start = 0, count = 0;
  for (size_t at = prompt.find(token); at != std::string::npos; at = prompt.find(token, start)) {
    out += prompt.substr(start, at - start);
    if (count < frames.size()) out += image_prompt(frames[count], image_seq_len);
    ++count;
    start = at + token.size();
  }
  if (count != frames.size()) {
    return Status(StatusCode::kInvalidArgument, "the prompt holds " + std::to_string(count) + " \"<image>\" but " +
                                                    std::to_string(frames.size()) + " images were given");
  }
  return out + prompt.substr(start);
}

}  // namespace edgemm::vlm
