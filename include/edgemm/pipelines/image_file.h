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

/// An 8-bit image in B, G, R order (OpenCV's), owned: `height` rows of `width` pixels, each row
/// width × channels bytes with no padding; 3 channels, or 4 (B, G, R, alpha) from decode_image
/// with keep_alpha.
struct Image {
  int width = 0;                ///< pixels per row
  int height = 0;               ///< rows
  int channels = 3;             ///< 3, or 4 with an alpha channel
  std::vector<uint8_t> pixels;  ///< height × width × channels bytes
  /// A view of the pixels, valid while the image lives unchanged.
  ImageView view() const {
    return ImageView{pixels.data(), width, height, channels, int64_t{width} * channels, ChannelOrder::kBgr};
  }
};

/// Reads and decodes an image file (PNG, JPEG, BMP and the other formats OpenCV's imgcodecs reads;
/// "-" reads standard input): gray is expanded to B, G, R, 16-bit samples are scaled to 8 bits
/// (v / 257), an alpha channel is composited onto white (onto black when the visible pixels are
/// mostly light), a JPEG's EXIF orientation is applied, a multi-page file gives its first page.
/// Errors: kIo naming the path (missing or unreadable file, a folder); kInvalidArgument naming
/// the path for a zero-byte file, data that does not decode, a truncated or corrupt JPEG, or more
/// than 2^28 pixels.
Expected<Image> read_image(const std::string& path);

/// Decodes an image file's bytes held in memory (`size` bytes at `data`, e.g. an HTTP request's
/// body) as read_image() decodes a file; `what` names them in errors ("image in the request").
/// With `keep_alpha` an image with an alpha channel stays 4 channels (B, G, R, alpha), so that
/// each pipeline treats it as it treats the file: OCR composites it, CLIP and the VLM drop it.
/// Errors: kInvalidArgument naming `what` as read_image's (empty, undecodable, truncated JPEG,
/// more than 2^28 pixels, checked from the header before decoding).
Expected<Image> decode_image(const uint8_t* data, size_t size, const std::string& what, bool keep_alpha = false);

}  // namespace edgemm
