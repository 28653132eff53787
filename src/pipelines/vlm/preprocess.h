#pragma once
/// \file preprocess.h
/// Idefics3 / SmolVLM image preprocessing and prompt expansion, as transformers.js 4.3.1 does it
/// (src/models/idefics3/image_processing_idefics3.js and processing_idefics3.js).

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "edgemm/pipelines/vlm.h"

namespace edgemm::vlm {

/// The frames of one image: float32 [frames, 3, S, S] (RGB, CHW, S = max_image_size), and the
/// split grid (rows = cols = 0 when the image was not split).
struct ImageFrames {
  Tensor pixels;
  int rows = 0;
  int cols = 0;
};

/// Preprocesses an 8-bit RGB image (OpenCV matrix, RGB order): resize by `size` with the
/// processor's resample, rescale and normalize, then (do_image_splitting) resize the float image
/// bilinearly so both sides are multiples of max_image_size and cut it into a rows × cols grid
/// of S × S frames followed by the whole image resized to S × S; or (no splitting, or an image
/// no larger than S) the image resized to S × S alone. Bilinear float resizes follow ONNX Resize
/// (linear, half_pixel), which transformers.js' interpolate_4d runs.
Expected<ImageFrames> preprocess_image(const cv::Mat& rgb, const VlmConfig& config);

/// The text that replaces one "<image>" in the prompt: for a split image, per grid cell
/// "<fake_token_around_image><row_R_col_C>" + image_seq_len × "<image>", a newline after each
/// row, then "\n<fake_token_around_image><global-img>" + image_seq_len × "<image>" +
/// "<fake_token_around_image>"; without a grid only the global part (no leading newline).
std::string image_prompt(const ImageFrames& frames, int image_seq_len);

/// `prompt` with its i-th "<image>" replaced by image_prompt(frames[i]). Errors: kInvalidArgument
/// when the prompt holds a different number of "<image>" than there are images (naming both).
Expected<std::string> expand_image_tokens(const std::string& prompt, const std::vector<ImageFrames>& frames,
                                          int image_seq_len);

}  // namespace edgemm::vlm
