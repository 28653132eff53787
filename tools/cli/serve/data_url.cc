#include "data_url.h"

#include <array>
#include <cctype>

namespace edgemm::cli::serve {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of each base64 character, -1 for the rest.
std::array<int8_t, 256> decoding_table() {
  std::array<int8_t, 256> table;
  table.fill(-1);
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Expected<std::vector<uint8_t>> percent_decode(std::string_view text) {
  std::vector<uint8_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(static_cast<uint8_t>(text[i]));
      continue;
    }
    const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return Status(StatusCode::kInvalidArgument,
                    "bad percent escape at offset " + std::to_string(i) + " of the data: URL's data");
    }
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::string base64_encode(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (i + 1 == size) {
    const uint32_t v = uint32_t{data[i]} << 16;
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == size) {
    const uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8);
    out += {kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

Expected<std::vector<uint8_t>> base64_decode(std::string_view text) {
  static const std::array<int8_t, 256> table = decoding_table();
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t bits = 0;
  int count = 0;  // 6-bit groups in `bits`
  size_t padding_at = std::string_view::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isspace(c)) continue;
    if (c == '=') {
      if (padding_at == std::string_view::npos) padding_at = i;
      continue;
    }
    if (table[c] < 0 || padding_at != std::string_view::npos) {
      return Status(StatusCode::kInvalidArgument,
                    "bad base64: character " +
                        (std::isprint(c) ? "'" + std::string(1, c) + "'" : "0x" + std::to_string(c)) + " at offset " +
                        std::to_string(i));
    }
    bits = (bits << 6) | static_cast<uint32_t>(table[c]);
    if (++count == 4) {
      out.push_back(static_cast<uint8_t>(bits >> 16));
      out.push_back(static_cast<uint8_t>(bits >> 8));
      out.push_back(static_cast<uint8_t>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1) return Status(StatusCode::kInvalidArgument, "bad base64: its length is not a multiple of 4");
  if (count == 2) out.push_back(static_cast<uint8_t>(bits >> 4));
  if (count == 3) {
    out.push_back(static_cast<uint8_t>(bits >> 10));
    out.push_back(static_cast<uint8_t>(bits >> 2));
  }
  return out;
}

Expected<DataUrl> parse_data_url(std::string_view url) {
  if (starts_with_ci(url, "http://") || starts_with_ci(url, "https://")) {
    return Status(StatusCode::kInvalidArgument,
                  "image URLs are not fetched (the server makes no outbound requests): send the image as a "
                  "data: URL, e.g. data:image/png;base64,...");
  }
  if (!starts_with_ci(url, "data:")) {
    const std::string shown(url.substr(0, std::min<size_t>(url.size(), 24)));
    return Status(StatusCode::kInvalidArgument,
                  "'" + shown + (url.size() > 24 ? "...'" : "'") + " is not a data: URL (data:image/png;base64,...)");
  }
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "the data: URL has no ',' before its data");
  }
  std::string_view header = url.substr(5, comma - 5);
  DataUrl result;
  bool base64 = false;
  if (header.size() >= 7 && starts_with_ci(header.substr(header.size() - 7), ";base64")) {
    base64 = true;
    header.remove_suffix(7);
  }
  const std::string_view type = header.substr(0, header.find(';'));
  result.media_type = type.empty() ? "text/plain" : std::string(type);
  const std::string_view data = url.substr(comma + 1);
  if (base64) {
    EDGEMM_ASSIGN_OR_RETURN(result.bytes, base64_decode(data));
  } else {
    EDGEMM_ASSIGN_OR_RETURN(result.bytes, percent_decode(data));
  }
  return result;
}

}  // namespace edgemm::cli::serve
