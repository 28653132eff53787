#pragma once
/// \file request_image.h
/// Images carried in requests: OpenAI's image_url parts ({"url": "data:..."} or the URL string)
/// decoded the way the pipelines decode files.

#include <string>
#include <utility>
#include <vector>

#include "edgemm/pipelines/image_file.h"
#include "edgemm/status.h"
#include "http_json.h"

namespace edgemm::cli::serve {

/// A decoded image and a key of its bytes (hash and size) for recognising it again.
struct RequestImage {
  Image image;
  std::string key;
};

/// Decodes an image_url value (a data: URL string, or an object whose "url" is one); `where`
/// names it in errors ("messages[0].content[1].image_url"). Alpha is kept (decode_image).
/// Errors: kInvalidArgument naming `where` for another type, a missing url, an http(s) URL, bad
/// base64 or undecodable bytes.
Expected<RequestImage> decode_image_url(const Json& value, const std::string& where);

/// An image_url value of a request and where it stands in it (its `where` for errors).
using ImageUrl = std::pair<Json, std::string>;

/// Decodes every image_url of a request, in order. All of them together may have as many pixels
/// as one image may (2^28, the CLI's limit): kInvalidArgument naming the first one past it;
/// otherwise the errors of decode_image_url.
Expected<std::vector<RequestImage>> decode_image_urls(const std::vector<ImageUrl>& urls);

/// Decodes raw image bytes (a request body).
Expected<RequestImage> decode_image_bytes(const std::string& bytes, const std::string& where);

}  // namespace edgemm::cli::serve
