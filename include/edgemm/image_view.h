#pragma once
/// \file image_view.h
/// `ImageView`: an 8-bit image in caller memory, the in-memory input every pipeline accepts
/// beside a file path (OcrPipeline::run, clip::ClipModel::preprocess / embed_image,
/// vlm::VlmModel::generate). Pipelines copy what they need during the call; nothing is kept.

#include <cstdint>

namespace edgemm {

/// Order of the colour channels of a 3- or 4-channel image: OpenCV's BGR(A), or RGB(A) as PIL,
/// numpy images from most decoders, and browsers give them.
enum class ChannelOrder { kBgr, kRgb };

/// An 8-bit image in memory, borrowed for the duration of a call: `height` rows of `width` pixels,
/// each pixel `channels` interleaved bytes (1 gray, 3 colour, 4 colour + alpha, in `order`),
/// `row_bytes` apart (0 = width × channels). Pipelines check it and return kInvalidArgument for a
/// null pointer, a side < 1, more than 2^28 pixels, 2 or more than 4 channels, or row_bytes smaller
/// than width × channels, naming the value.
struct ImageView {
  const uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  int channels = 3;
  int64_t row_bytes = 0;
  ChannelOrder order = ChannelOrder::kBgr;
};

}  // namespace edgemm
