#pragma once
/// \file jpeg_check.h
/// Corruption check of a JPEG's entropy-coded data with libjpeg(-turbo), which OpenCV's decoder
/// only reports as a warning on stderr while it returns a damaged image.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::pipelines {

/// Decodes the JPEG in `bytes` at 1/8 scale (every Huffman code is still read; IDCT work is 1/64)
/// and refuses it when libjpeg raises an error or any warning: corrupt entropy data ("Corrupt
/// JPEG data: bad Huffman code", "... N extraneous bytes before marker 0xd9" after a damaged
/// scan), a premature end of data. Warnings are refused, not filtered, because libjpeg decodes past
/// them into wrong pixels and a damaged scan often shows up only as an extraneous-bytes warning.
/// Errors: kInvalidArgument "<what> is a corrupt JPEG: <libjpeg's message>". `bytes` is borrowed.
Status check_jpeg_data(const std::vector<uint8_t>& bytes, const std::string& what);

}  // namespace edgemm::pipelines
