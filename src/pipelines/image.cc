#include "pipelines/image.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>
#include <vector>

#include "edgemm/pipelines/image_file.h"
#include "pipelines/jpeg_check.h"

namespace edgemm::pipelines {
namespace {

/// Most bytes read from standard input for one image (an endless pipe is refused, not buffered).
constexpr size_t kMaxStandardInputBytes = size_t{1} << 31;

Status check_pixel_count(int64_t width, int64_t height, const std::string& what) {
  if (width <= 0 || height <= 0) {
    return Status(StatusCode::kInvalidArgument,
                  what + " has an empty size " + std::to_string(width) + "x" + std::to_string(height));
  }
  if (width * height > kMaxImagePixels) {
    return Status(StatusCode::kInvalidArgument, what + " is " + std::to_string(width) + "x" + std::to_string(height) +
                                                    " pixels, more than the limit of " +
                                                    std::to_string(kMaxImagePixels) + " pixels");
  }
  return Status::ok();
}

uint32_t big_endian(const std::vector<uint8_t>& b, size_t at, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | b[at + i];
  return value;
}

/// Width and height declared in a PNG or JPEG header, read before decoding so that a tiny file
/// claiming a huge image is refused without allocating it; {0, 0} for other formats or a
/// header that cannot be read (OpenCV then applies its own 2^30-pixel limit).
std::pair<int64_t, int64_t> declared_size(const std::vector<uint8_t>& b) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (b.size() >= 24 && std::equal(kPng, kPng + 8, b.begin())) return {big_endian(b, 16, 4), big_endian(b, 20, 4)};
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return {0, 0};
  size_t at = 2;  // JPEG: walk the marker segments up to a start-of-frame (SOF0..SOF15 but DHT, JPG, DAC)
  while (at + 9 < b.size() && b[at] == 0xFF) {
    const uint8_t marker = b[at + 1];
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      return {big_endian(b, at + 7, 2), big_endian(b, at + 5, 2)};
    }
    at += 2 + big_endian(b, at + 2, 2);
  }
  return {0, 0};
}

/// BGRA → BGR over a plain background chosen to contrast with the visible pixels: white under
/// dark content (black text on a transparent page), black under light content (white text).
cv::Mat composite_alpha(const cv::Mat& bgra) {
  double luma_sum = 0, alpha_sum = 0;
  for (int y = 0; y < bgra.rows; ++y) {
    const uint8_t* p = bgra.ptr<uint8_t>(y);
    for (int x = 0; x < bgra.cols; ++x, p += 4) {
      luma_sum += (0.114 * p[0] + 0.587 * p[1] + 0.299 * p[2]) * p[3];
      alpha_sum += p[3];
    }
  }
  const int background = alpha_sum > 0 && luma_sum / alpha_sum > 127.5 ? 0 : 255;
  cv::Mat bgr(bgra.rows, bgra.cols, CV_8UC3);
  for (int y = 0; y < bgra.rows; ++y) {
    const uint8_t* src = bgra.ptr<uint8_t>(y);
    uint8_t* dst = bgr.ptr<uint8_t>(y);
    for (int x = 0; x < bgra.cols; ++x, src += 4, dst += 3) {
      const int alpha = src[3];
      for (int c = 0; c < 3; ++c) {
        dst[c] = static_cast<uint8_t>((src[c] * alpha + background * (255 - alpha) + 127) / 255);
      }
    }
  }
  return bgr;
}

/// 8-bit BGR from any decoded matrix: 16-bit → 8-bit, gray → BGR, BGRA composited on white.
cv::Mat to_bgr8(const cv::Mat& decoded, Alpha alpha = Alpha::kComposite) {
  cv::Mat eight_bit = decoded;
  if (decoded.depth() == CV_16U) {
    decoded.convertTo(eight_bit, CV_8U, 1.0 / 257.0);
  } else if (decoded.depth() != CV_8U) {
    cv::normalize(decoded, eight_bit, 0, 255, cv::NORM_MINMAX, CV_8U);
  }
  cv::Mat bgr;
  switch (eight_bit.channels()) {
    case 1:
      cv::cvtColor(eight_bit, bgr, cv::COLOR_GRAY2BGR);
      return bgr;
    case 3:
      return eight_bit;
    default:
      if (alpha == Alpha::kKeep) return eight_bit;
      if (alpha == Alpha::kDrop) {
        cv::cvtColor(eight_bit, bgr, cv::COLOR_BGRA2BGR);
        return bgr;
      }
      return composite_alpha(eight_bit);
  }
}

/// True when a JPEG's last scan (from its last SOS marker, FF DA) reaches an end-of-image
/// marker (FF D9) — false for a truncated file, which libjpeg would decode partially, filling the
/// missing rows with gray, with only a warning (ITU-T T.81, B.2: inside entropy-coded data an FF
/// byte is always followed by 00 or a restart marker, so FF DA / FF D9 there are real markers).
bool jpeg_has_end_marker(const std::vector<uint8_t>& bytes) {
  size_t last_scan = bytes.size();
  for (size_t i = bytes.size(); i-- > 1;) {
    if (bytes[i - 1] == 0xFF && bytes[i] == 0xDA) {
      last_scan = i;
      break;
    }
  }
  if (last_scan == bytes.size()) return false;
  for (size_t i = last_scan + 1; i + 1 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xD9) return true;
  }
  return false;
}

/// The bytes of an image file. Errors: kIo (missing, a directory, unreadable),
/// kInvalidArgument (a pipe, device or socket: it could block or never end).
Expected<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return Status(StatusCode::kIo, "cannot open image '" + path + "': no such file");
  }
  if (status.type() == std::filesystem::file_type::directory) {
    return Status(StatusCode::kIo, "image '" + path + "' is a directory");
  }
  if (!ec && status.type() != std::filesystem::file_type::regular) {
    return Status(StatusCode::kInvalidArgument, "image '" + path + "' is not a regular file (pipe, device or socket)");
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return Status(StatusCode::kIo, "cannot open image '" + path + "'");
  std::vector<uint8_t> bytes(static_cast<size_t>(std::max<std::streamoff>(file.tellg(), 0)));
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    return Status(StatusCode::kIo, "cannot read image '" + path + "'");
  }
  return bytes;
}

/// Standard input to its end, read on the first call and kept: an image given as "-" is read
/// again by `ocr --draw`. Errors: kInvalidArgument when standard input is a terminal (nothing
/// was piped in), kIo when reading fails.
Expected<std::vector<uint8_t>> standard_input_bytes() {
  static std::mutex mutex;
  static std::optional<Expected<std::vector<uint8_t>>> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached) return *cached;
  if (isatty(STDIN_FILENO) == 1) {
    return Status(StatusCode::kInvalidArgument,
                  "the image '-' is read from standard input, which is a terminal: pipe or redirect an image into it");
  }
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      cached =
          Status(StatusCode::kIo, std::string("cannot read the image from standard input: ") + std::strerror(errno));
      return *cached;
    }
    if (bytes.size() + static_cast<size_t>(n) > kMaxStandardInputBytes) {
      cached = Status(StatusCode::kInvalidArgument, "the image on standard input is larger than " +
                                                        std::to_string(kMaxStandardInputBytes) + " bytes");
      return *cached;
    }
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  cached = bytes;
  return *cached;
}

bool is_png(const std::vector<uint8_t>& b) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return b.size() >= 8 && std::equal(kPng, kPng + 8, b.begin());
}

/// The PNG without the ancillary chunks OpenCV's decoder does not use (color profiles, text,
/// times, physical size ...), whose oddities libpng reports as warnings on stderr ("iCCP: known
/// incorrect sRGB profile") although the pixels decode correctly. Critical chunks (IHDR, PLTE,
/// IDAT, IEND, any unknown uppercase one) and tRNS (transparency, which makes the alpha channel)
/// are kept, so a damaged image still fails to decode. The walk stops at a chunk whose length
/// runs past the data, leaving the rest to libpng (PNG 1.2 spec, sections 3.2-3.3: a chunk is
/// length, type, data, CRC; bit 5 of the type's first byte set = ancillary).
std::vector<uint8_t> without_unused_png_chunks(const std::vector<uint8_t>& b) {
  std::vector<uint8_t> out(b.begin(), b.begin() + 8);
  size_t at = 8;
  while (at + 12 <= b.size()) {
    const size_t length = big_endian(b, at, 4);
    if (length > b.size() - at - 12) break;
    const bool ancillary = (b[at + 4] & 0x20) != 0;
    const bool transparency = std::equal(b.begin() + at + 4, b.begin() + at + 8, "tRNS");
    if (!ancillary || transparency) out.insert(out.end(), b.begin() + at, b.begin() + at + 12 + length);
    at += 12 + length;
  }
  out.insert(out.end(), b.begin() + at, b.end());
  return out;
}

}  // namespace

Expected<cv::Mat> read_image_bgr(const std::string& path, Alpha alpha) {
  std::vector<uint8_t> bytes;
  if (path == "-") {
    EDGEMM_ASSIGN_OR_RETURN(bytes, standard_input_bytes());
  } else {
    EDGEMM_ASSIGN_OR_RETURN(bytes, read_file_bytes(path));
  }
  const std::string what = path == "-" ? "image on standard input" : "image '" + path + "'";
  if (bytes.empty()) {
    return Status(StatusCode::kInvalidArgument, what + (path == "-" ? " is empty" : " is an empty (zero-byte) file"));
  }
  return decode_image_bgr(std::move(bytes), what, alpha);
}

Expected<cv::Mat> decode_image_bgr(std::vector<uint8_t> bytes, const std::string& what, Alpha alpha) {
  if (bytes.empty()) return Status(StatusCode::kInvalidArgument, what + " is empty (zero bytes)");
  if (const auto [width, height] = declared_size(bytes); width * height > kMaxImagePixels) {
    EDGEMM_RETURN_IF_ERROR(check_pixel_count(width, height, what));
  }
  const bool jpeg = bytes.size() > 2 && bytes[0] == 0xFF && bytes[1] == 0xD8;
  if (jpeg && !jpeg_has_end_marker(bytes)) {
    return Status(StatusCode::kInvalidArgument,
                  what + " is a truncated or corrupt JPEG: its last scan has no end-of-image marker");
  }
  if (jpeg) EDGEMM_RETURN_IF_ERROR(check_jpeg_data(bytes, what));
  if (is_png(bytes)) bytes = without_unused_png_chunks(bytes);
  cv::Mat decoded;
  try {
    // JPEG has no alpha and may carry an EXIF orientation, which IMREAD_COLOR applies (phones
    // store portrait photos sideways); everything else is decoded as stored, alpha included.
    decoded = cv::imdecode(bytes, jpeg ? cv::IMREAD_COLOR : cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    return Status(StatusCode::kInvalidArgument, "cannot decode " + what + ": " + e.what());
  }
  if (decoded.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "cannot decode " + what + ": not an image format OpenCV reads, or corrupt data");
  }
  EDGEMM_RETURN_IF_ERROR(check_pixel_count(decoded.cols, decoded.rows, what));
  if (decoded.channels() != 1 && decoded.channels() != 3 && decoded.channels() != 4) {
    return Status(StatusCode::kInvalidArgument,
                  what + " has " + std::to_string(decoded.channels()) + " channels; expected 1, 3 or 4");
  }
  return to_bgr8(decoded, alpha);
}

Expected<cv::Mat> image_view_to_bgr(const ImageView& view, Alpha alpha) {
  if (view.data == nullptr) return Status(StatusCode::kInvalidArgument, "image view has no data (null pointer)");
  EDGEMM_RETURN_IF_ERROR(check_pixel_count(view.width, view.height, "image view"));
  if (view.channels != 1 && view.channels != 3 && view.channels != 4) {
    return Status(StatusCode::kInvalidArgument,
                  "image view has " + std::to_string(view.channels) + " channels; expected 1, 3 or 4");
  }
  const int64_t packed = int64_t{view.width} * view.channels;
  const int64_t stride = view.row_bytes == 0 ? packed : view.row_bytes;
  if (stride < packed) {
    return Status(StatusCode::kInvalidArgument, "image view row_bytes " + std::to_string(stride) +
                                                    " is smaller than width × channels = " + std::to_string(packed));
  }
  const cv::Mat borrowed(view.height, view.width, CV_8UC(view.channels), const_cast<uint8_t*>(view.data),
                         static_cast<size_t>(stride));
  // A fresh Mat for the swap: converting into one that shares `borrowed`'s data would write the
  // caller's buffer.
  cv::Mat bgr_order;
  if (view.order == ChannelOrder::kRgb && view.channels == 3) {
    cv::cvtColor(borrowed, bgr_order, cv::COLOR_RGB2BGR);
  } else if (view.order == ChannelOrder::kRgb && view.channels == 4) {
    cv::cvtColor(borrowed, bgr_order, cv::COLOR_RGBA2BGRA);
  } else {
    bgr_order = borrowed;
  }
  cv::Mat bgr = to_bgr8(bgr_order, alpha);
  return bgr.data == borrowed.data ? bgr.clone() : bgr;
}

void write_normalized_chw(const cv::Mat& bgr, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                          Tensor& out, int64_t batch) {
  const int64_t height = out.dim(2);
  const int64_t width = out.dim(3);
  float* base = out.data<float>() + batch * 3 * height * width;
  std::array<float, 3> scale;
  std::array<float, 3> shift;
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * std[c]);
    shift[c] = -mean[c] / std[c];
  }
  for (int y = 0; y < bgr.rows; ++y) {
    const uint8_t* row = bgr.ptr<uint8_t>(y);
    for (int c = 0; c < 3; ++c) {
      float* dst = base + (c * height + y) * width;
      for (int x = 0; x < bgr.cols; ++x) dst[x] = row[3 * x + c] * scale[c] + shift[c];
    }
  }
}

}  // namespace edgemm::pipelines

namespace edgemm {

namespace {

Image image_from_mat(const cv::Mat& bgr) {
  Image image;
  image.width = bgr.cols;
  image.height = bgr.rows;
  image.channels = bgr.channels();
  const size_t row = static_cast<size_t>(bgr.cols) * image.channels;
  image.pixels.resize(row * bgr.rows);
  for (int y = 0; y < bgr.rows; ++y) std::memcpy(image.pixels.data() + y * row, bgr.ptr<uint8_t>(y), row);
  return image;
}

}  // namespace

Expected<Image> read_image(const std::string& path) {
  EDGEMM_ASSIGN_OR_RETURN(const cv::Mat bgr, pipelines::read_image_bgr(path));
  return image_from_mat(bgr);
}

Expected<Image> decode_image(const uint8_t* data, size_t size, const std::string& what, bool keep_alpha) {
  if (data == nullptr && size > 0) return Status(StatusCode::kInvalidArgument, what + ": null data pointer");
  std::vector<uint8_t> bytes(data, data + size);
  EDGEMM_ASSIGN_OR_RETURN(const cv::Mat bgr, pipelines::decode_image_bgr(
                                                 std::move(bytes), what,
                                                 keep_alpha ? pipelines::Alpha::kKeep : pipelines::Alpha::kComposite));
  return image_from_mat(bgr);
}

}  // namespace edgemm
