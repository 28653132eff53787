#include "request_image.h"

#include <functional>
#include <string_view>

#include "data_url.h"

namespace edgemm::cli::serve {

namespace {

std::string key_of(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  return std::to_string(std::hash<std::string_view>{}(bytes)) + ":" + std::to_string(size);
}

Expected<RequestImage> decode(const uint8_t* data, size_t size, const std::string& where) {
  RequestImage out;
  EDGEMM_ASSIGN_OR_RETURN(out.image, decode_image(data, size, "the image in " + where, /*keep_alpha=*/true));
  out.key = key_of(data, size);
  return out;
}

}  // namespace

Expected<RequestImage> decode_image_url(const Json& value, const std::string& where) {
  const Json* url = &value;
  if (value.is_object()) {
    auto it = value.find("url");
    if (it == value.end()) return Status(StatusCode::kInvalidArgument, where + " has no \"url\"");
    url = &*it;
  }
  if (!url->is_string()) {
    return Status(StatusCode::kInvalidArgument,
                  where + " must be a data: URL string or {\"url\": \"data:...\"}, not " + url->type_name());
  }
  auto parsed = parse_data_url(url->get_ref<const std::string&>());
  if (!parsed.has_value()) return Status(StatusCode::kInvalidArgument, where + ": " + parsed.status().message());
  return decode(parsed->bytes.data(), parsed->bytes.size(), where);
}

Expected<std::vector<RequestImage>> decode_image_urls(const std::vector<ImageUrl>& urls) {
  constexpr int64_t kMaxPixels = int64_t{1} << 28;
  int64_t pixels = 0;
  std::vector<RequestImage> images;
  for (const auto& [url, where] : urls) {
    EDGEMM_ASSIGN_OR_RETURN(RequestImage image, decode_image_url(url, where));
    pixels += int64_t{image.image.width} * image.image.height;
    if (pixels > kMaxPixels) {
      return Status(StatusCode::kInvalidArgument, "the request's images have more than 2^28 pixels together (at " +
                                                      where + "): send fewer or smaller");
    }
    images.push_back(std::move(image));
  }
  return images;
}

Expected<RequestImage> decode_image_bytes(const std::string& bytes, const std::string& where) {
  return decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), where);
}

}  // namespace edgemm::cli::serve
