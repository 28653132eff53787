#include "convert_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "cli_common.h"
#include "edgemm/atomic_file.h"
#include "edgemm/npy.h"
#include "edgemm/pipelines/image_file.h"
#include "ocr_calibration.h"

namespace edgemm::cli {

namespace fs = std::filesystem;

namespace {

/// Index of channel `c` (the tensor's order), row `y`, column `x` in a [1, 3, H, W] or [1, H, W, 3] tensor.
int64_t at(const InputGeometry& g, int c, int64_t y, int64_t x) {
  return g.nchw ? (c * g.height + y) * g.width + x : (y * g.width + x) * 3 + c;
}

/// One image as the model takes it without --stage: resized to the input's H x W (stretched:
/// the aspect ratio is not kept), float32 in the model's layout and channel order (--bgr),
/// (pixel - mean) / std with --mean / --std.
Tensor stretched_input(const Image& image, const InputGeometry& g, const TargetConvertArgs& args) {
  const cv::Mat bgr(image.height, image.width, CV_8UC3, const_cast<uint8_t*>(image.pixels.data()));
  cv::Mat resized;
  cv::resize(bgr, resized, cv::Size(static_cast<int>(g.width), static_cast<int>(g.height)), 0, 0, cv::INTER_LINEAR);
  const Shape shape = g.nchw ? Shape{1, 3, g.height, g.width} : Shape{1, g.height, g.width, 3};
  Tensor t = Tensor::create(DataType::kFloat32, shape).value();
  const std::array<float, 3> mean = model_order(args.mean, args.bgr), std = model_order(args.std, args.bgr);
  for (int64_t y = 0; y < g.height; ++y) {
    const uint8_t* row = resized.ptr<uint8_t>(static_cast<int>(y));
    for (int64_t x = 0; x < g.width; ++x) {
      for (int c = 0; c < 3; ++c) {  // c in the model's order; the image is B, G, R
        t.data<float>()[at(g, c, y, x)] = (row[x * 3 + (args.bgr ? c : 2 - c)] - mean[c]) / std[c];
      }
    }
  }
  return t;
}

/// `t` (float32 as the model takes it) back to the 8-bit pixels it was normalized from:
/// round(v * std + mean) clamped to 0..255, same layout and channel order. A value between two
/// pixel levels (rec's right padding, 0 = pixel 127.5) rounds half away from zero.
Tensor to_pixels(const Tensor& t, const InputGeometry& g, const TargetConvertArgs& args) {
  const std::array<float, 3> mean = model_order(args.mean, args.bgr), std = model_order(args.std, args.bgr);
  Tensor out = Tensor::create(DataType::kUInt8, t.shape()).value();
  for (int c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < g.height; ++y) {
      for (int64_t x = 0; x < g.width; ++x) {
        const float v = std::round(t.data<float>()[at(g, c, y, x)] * std[c] + mean[c]);
        out.data<uint8_t>()[at(g, c, y, x)] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
      }
    }
  }
  return out;
}

/// `t` with channels 0 and 2 swapped (R, G, B <-> B, G, R), any element type of 1 or 4 bytes.
Tensor swap_red_blue(const Tensor& t, const InputGeometry& g) {
  Tensor out = t.clone().value();
  const size_t size = dtype_size(t.dtype());
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t y = 0; y < g.height; ++y) {
    for (int64_t x = 0; x < g.width; ++x) {
      for (int c = 0; c < 3; ++c) std::memcpy(dst + at(g, c, y, x) * size, src + at(g, 2 - c, y, x) * size, size);
    }
  }
  return out;
}

/// Writes sample `t` (float32 as the model takes it) in the recipe's form to `dir`/`stem` plus
/// the format's extension: image_list an 8-bit PNG of the pixels it was normalized from (true
/// colors: the vendor tool reads and normalizes it itself), raw_uint8 those pixels, raw_float32
/// and npy `t` itself, each in sample_color's order. Returns the file name.
Expected<std::string> write_sample(const Tensor& t, const std::string& stem, const targets::CalibrationFormat& f,
                                   const InputGeometry& g, const TargetConvertArgs& args, const fs::path& dir) {
  const bool u8 = f.format == "image_list" || f.format == "raw_uint8";
  Tensor sample = u8 ? to_pixels(t, g, args) : t.clone().value();
  const bool to_bgr = f.format == "image_list" || sample_color(f, args.bgr) == "BGR";
  if (to_bgr != args.bgr) sample = swap_red_blue(sample, g);
  if (f.format == "image_list") {
    cv::Mat bgr(static_cast<int>(g.height), static_cast<int>(g.width), CV_8UC3);
    for (int64_t y = 0; y < g.height; ++y) {
      for (int64_t x = 0; x < g.width; ++x) {
        for (int c = 0; c < 3; ++c)
          bgr.ptr<uint8_t>(static_cast<int>(y))[x * 3 + c] = sample.data<uint8_t>()[at(g, c, y, x)];
      }
    }
    const std::string name = stem + ".png";
    if (!cv::imwrite((dir / name).string(), bgr))
      return Status(StatusCode::kIo, "cannot write '" + (dir / name).string() + "'");
    return name;
  }
  const std::string name = stem + (f.format == "npy" ? ".npy" : ".bin");
  if (f.format == "npy") {
    EDGEMM_RETURN_IF_ERROR(write_npy((dir / name).string(), sample));
  } else {
    EDGEMM_RETURN_IF_ERROR(write_file_atomically(
        (dir / name).string(), std::string_view(static_cast<const char*>(sample.raw_data()), sample.byte_size())));
  }
  return name;
}

}  // namespace

Expected<InputGeometry> input_geometry(const ValueInfo& input) {
  if (input.dtype != DataType::kFloat32 || input.shape.size() != 4 ||
      std::any_of(input.shape.begin(), input.shape.end(), [](const Dim& d) { return !d.is_static(); })) {
    return Status(StatusCode::kInvalidArgument, "calibration images need a static float32 4-D image input; '" +
                                                    input.name + "' is " + dtype_name(input.dtype) + " " +
                                                    dims_text(input.shape, input.rank_known));
  }
  InputGeometry g;
  g.nchw = input.shape[1].value == 1 || input.shape[1].value == 3;
  g.channels = g.nchw ? input.shape[1].value : input.shape[3].value;
  g.height = g.nchw ? input.shape[2].value : input.shape[1].value;
  g.width = g.nchw ? input.shape[3].value : input.shape[2].value;
  if (g.channels != 3) {
    return Status(StatusCode::kInvalidArgument, "calibration samples are 3-channel images; input '" + input.name +
                                                    "' has " + std::to_string(g.channels) + " channels");
  }
  return g;
}

Expected<CalibrationImages> calibration_images(const std::string& dir, int count) {
  if (!fs::is_directory(dir)) return Status(StatusCode::kIo, "--calib '" + dir + "' is not a folder of images");
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (e.is_regular_file() && (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status(StatusCode::kInvalidArgument, "--calib '" + dir + "' holds no images");
  CalibrationImages chosen;
  for (const fs::path& file : files) {
    if (static_cast<int>(chosen.images.size()) == count) break;
    auto image = read_image(file.string());
    if (image) {
      chosen.images.push_back(file);
    } else {
      chosen.skipped.push_back(file.filename().string() + ": " + image.status().message());
    }
  }
  if (chosen.images.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "none of the " + std::to_string(files.size()) + " images in --calib '" + dir + "' could be decoded");
  }
  return chosen;
}

std::array<float, 3> model_order(std::array<float, 3> v, bool bgr) {
  if (bgr) std::swap(v[0], v[2]);
  return v;
}

Expected<quant::FeedSource> model_feed_source(const TargetConvertArgs& args, const InputGeometry& g,
                                              const std::string& input, const std::string& model) {
  if (!args.stage.empty()) {
    OcrStageOptions options;
    options.stage = args.stage;
    options.models_dir = args.ocr_models;
    options.stage_model = model;
    options.threads = args.threads;
    return ocr_stage_feeds(options, input);
  }
  return quant::FeedSource([args, g, input](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    EDGEMM_ASSIGN_OR_RETURN(const Image image, read_image(s.path));
    return std::vector<quant::Feed>{{{input, stretched_input(image, g, args)}}};
  });
}

std::string sample_color(const targets::CalibrationFormat& f, bool bgr) {
  if (f.color == "model") return bgr ? "BGR" : "RGB";
  return f.color.empty() ? "RGB" : f.color;
}

Expected<CalibrationResult> write_calibration(const TargetConvertArgs& args, const targets::CalibrationFormat& f,
                                              const CalibrationImages& chosen, const InputGeometry& g,
                                              const ValueInfo& input, const quant::FeedSource& source,
                                              const fs::path& out) {
  CalibrationResult result;
  if (args.calib.empty() || f.format == "none") return result;
  result.skipped = chosen.skipped;
  std::error_code ec;                     // an error shows when the samples are written
  fs::create_directory(out / f.dir, ec);  // not create_directories: never recreates a removed staging folder
  std::string list;
  for (const fs::path& image : chosen.images) {
    EDGEMM_ASSIGN_OR_RETURN(const std::vector<quant::Feed> feeds, source({image.string(), "default"}));
    if (feeds.empty()) result.skipped.push_back(image.filename().string() + ": the OCR pipeline found no text line");
    for (const quant::Feed& feed : feeds) {
      const Tensor& t = feed.front().second;
      if (dims_to_string(input.shape) != shape_to_string(t.shape())) {
        return Status(StatusCode::kInternal, "a calibration sample of '" + image.string() + "' is " +
                                                 shape_to_string(t.shape()) + ", not input '" + input.name + "' " +
                                                 dims_to_string(input.shape));
      }
      char number[16];
      std::snprintf(number, sizeof number, "%04d_", result.written);
      EDGEMM_ASSIGN_OR_RETURN(const std::string name,
                              write_sample(t, number + image.stem().string(), f, g, args, out / f.dir));
      list += f.dir + "/" + name + "\n";
      ++result.written;
    }
    result.images += feeds.empty() ? 0 : 1;
  }
  if (!f.list_file.empty()) EDGEMM_RETURN_IF_ERROR(write_text_file((out / f.list_file).string(), list));
  return result;
}

std::string preprocessing_text(const TargetConvertArgs& args, const ValueInfo& input) {
  const std::string size = dims_text(input.shape, input.rank_known);
  if (args.stage == "det") {
    return "the OCR pipeline's own (--stage ocr-det): each image letterboxed into the static input " + size +
           " (aspect ratio kept, padded with the mean color; pipelines/ocr/det.h det_preprocess)";
  }
  if (!args.stage.empty()) {
    return "the OCR pipeline's own (--stage ocr-" + args.stage + "): the text lines the detector finds, cut out" +
           (args.stage == "rec" ? ", turned upright by the angle classifier" : "") +
           ", resized to 48 pixels high and right-padded to the input " + size + ", one sample per line";
  }
  return "assumed, as edgemm does not know this model's own: each image stretched to the input " + size +
         " (aspect ratio not kept), then (pixel - mean) / std";
}

}  // namespace edgemm::cli
