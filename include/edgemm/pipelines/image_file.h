#pragma once
/// \file image_file.h
/// Image files decoded the way every pipeline decodes them (OcrPipeline::run_file, clip::ClipModel,
/// vlm::VlmModel), for programs that prepare model inputs themselves, e.g. calibration samples.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/image_view.h"
#include "edgemm/status.h"

namespace edgemm {

/// An 8-bit, 3-channel image in B, G, R order (OpenCV's), owned: `height` rows of `width`
/// pixels, each row width × 3 bytes with no padding.
struct Image {
  int width = 0;                ///< pixels per row
  int height = 0;               ///< rows
  std::vector<uint8_t> pixels;  ///< height × width × 3 bytes
  /// A view of the pixels, valid while the image lives unchanged.
  ImageView view() const { return ImageView{pixels.data(), width, height, 3, int64_t{width} * 3, ChannelOrder::kBgr}; }
};

/// Reads and decodes an image file (PNG, JPEG, BMP and the other formats OpenCV's imgcodecs reads;
/// "-" reads standard input): gray is expanded to B, G, R, 16-bit samples are scaled to 8 bits
/// (v / 257), an alpha channel is composited onto white (onto black when the visible pixels are
/// mostly light), a JPEG's EXIF orientation is applied, a multi-page file gives its first page.
/// Errors: kIo naming the path (missing or unreadable file, a folder); kInvalidArgument naming
/// the path for a zero-byte file, data that does not decode, a truncated or corrupt JPEG, or more
/// than 2^28 pixels.
Expected<Image> read_image(const std::string& path);

}  // namespace edgemm
