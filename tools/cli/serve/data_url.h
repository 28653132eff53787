#pragma once
/// \file data_url.h
/// RFC 2397 `data:` URLs and RFC 4648 base64, as OpenAI's API carries images
/// ("data:image/png;base64,...") and base64 embeddings.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::cli::serve {

/// The standard base64 alphabet with '=' padding.
std::string base64_encode(const uint8_t* data, size_t size);

/// Decodes standard base64 (padding optional, ASCII whitespace ignored). Errors: kInvalidArgument
/// naming the offset of the first character outside the alphabet, or a length that cannot be
/// base64 (one character past a multiple of four).
Expected<std::vector<uint8_t>> base64_decode(std::string_view text);

/// A decoded data: URL.
struct DataUrl {
  std::string media_type;      ///< e.g. "image/png"; "text/plain" when the URL names none
  std::vector<uint8_t> bytes;  ///< the payload, base64-decoded or percent-decoded
};

/// Parses "data:[<media type>][;base64],<data>". Errors: kInvalidArgument for an http(s) URL
/// (edgemm makes no outbound requests: the message says to send a data: URL), any other scheme,
/// no comma, or bad base64 / percent escapes.
Expected<DataUrl> parse_data_url(std::string_view url);

}  // namespace edgemm::cli::serve
