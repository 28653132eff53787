#pragma once
/// \file preprocess.h
/// CLIP image preprocessing on OpenCV matrices: the resize of transformers.js 4.3.1 in node (libvips
/// affine through sharp), center crop, rescale and normalize (docs/clip.md, "Preprocessing").

#include <opencv2/core.hpp>

#include "edgemm/pipelines/clip.h"

namespace edgemm::clip {

/// Resizes an 8-bit RGB image to `width` × `height` as sharp's affine() does for transformers.js'
/// RawImage.resize: output pixel x samples the input at x × (in_width / width) (corner-aligned, no
/// antialiasing), with a Catmull-Rom cubic (fractional positions on libvips' 1/64 grid), a
/// triangle (bilinear) or nearest kernel; taps outside the image read black (0), unnormalized.
/// Rounded to 8 bits. Returns `rgb` itself when the size is unchanged.
cv::Mat resize_like_transformers_js(const cv::Mat& rgb, int width, int height, Resample resample);

/// Center crop to `width` × `height` as transformers.js' RawImage.center_crop: offset
/// floor((in - out) / 2) per axis, black padding where the crop reaches past the image.
cv::Mat center_crop(const cv::Mat& rgb, int width, int height);

/// The whole preprocessing of an 8-bit RGB image: resize (resize_output_size), center crop,
/// rescale, normalize, written as float32 planes R, G, B (CHW) at `out` (3 × H × W floats, H × W
/// the final size, which must equal `height` × `width`). Errors: kInvalidArgument when the
/// processed size differs from height × width (a package whose crop size differs from the model's
/// static input).
Status preprocess_rgb_into(const cv::Mat& rgb, const ImageProcessorConfig& config, int width, int height, float* out);

}  // namespace edgemm::clip
