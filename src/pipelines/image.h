#pragma once
/// \file image.h
/// Image decoding and conversion to network input tensors, shared by the pipelines.
/// Everything here works on OpenCV matrices in BGR channel order (OpenCV's own order, which
/// PaddleOCR's models were trained on).

#include <array>
#include <opencv2/core.hpp>
#include <string>

#include "edgemm/image_view.h"
#include "edgemm/pipelines/ocr.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::pipelines {

/// Largest image accepted, in pixels (2^28 ≈ 268 M, e.g. 16384 × 16384). Larger images are
/// refused before decoding so a hostile header cannot make us allocate gigabytes.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

/// Reads and decodes an image file into an 8-bit, 3-channel BGR matrix; the path "-" reads
/// standard input (to its end, at most 2 GiB; read once, later calls get the same bytes).
/// PNG ancillary chunks other than tRNS are dropped before decoding (libpng's warnings about
/// them, e.g. "iCCP: known incorrect sRGB profile", would go to stderr; they do not change the
/// pixels OpenCV decodes).
/// Gray is expanded to BGR, 16-bit samples are scaled to 8 bits (v / 257), an alpha channel is
/// composited onto white, or onto black when the visible pixels are mostly light (white text
/// on a transparent background), and a JPEG's EXIF orientation is applied. Multi-page files
/// give their first page.
/// Errors: kIo (missing or unreadable file, directory), kInvalidArgument (standard input that is
/// a terminal, zero-byte file, not a
/// regular file, data OpenCV cannot decode, a truncated or corrupt JPEG (check_jpeg_data), more
/// than kMaxImagePixels pixels), naming the path.
/// With `alpha` kDrop the alpha channel is discarded instead (what transformers.js' RawImage.rgb()
/// and PIL's convert("RGB") do, for the CLIP processor).
/// kKeep keeps it: 4-channel images stay B, G, R, alpha (edgemm::decode_image's keep_alpha).
enum class Alpha { kComposite, kDrop, kKeep };
Expected<cv::Mat> read_image_bgr(const std::string& path, Alpha alpha = Alpha::kComposite);
/// As read_image_bgr on bytes already in memory; `what` names them in errors (e.g. "image 'a.png'").
Expected<cv::Mat> decode_image_bgr(std::vector<uint8_t> bytes, const std::string& what,
                                   Alpha alpha = Alpha::kComposite);

/// Copies an in-memory 8-bit image (1, 3 or 4 channels in either order; edgemm/image_view.h) into
/// BGR, its alpha handled as `alpha` says (as read_image_bgr). Errors: kInvalidArgument for a null
/// pointer, non-positive size, unsupported channel count, too small a stride, or more than
/// kMaxImagePixels pixels.
Expected<cv::Mat> image_view_to_bgr(const ImageView& view, Alpha alpha = Alpha::kComposite);

/// Converts an 8-bit BGR image to a float NCHW tensor [1, 3, H, W] (or writes into row `batch`
/// of an existing [N, 3, H, W'] tensor, W' ≥ W, leaving the padding untouched), computing
/// (pixel / 255 − mean[c]) / std[c] per channel c in BGR order.
void write_normalized_chw(const cv::Mat& bgr, const std::array<float, 3>& mean, const std::array<float, 3>& std,
                          Tensor& out, int64_t batch);

}  // namespace edgemm::pipelines
