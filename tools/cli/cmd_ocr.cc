/// `edgemm ocr IMAGE...`: PP-OCRv4 text recognition of image files.

#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/ocr.h"
#include "ocr_json.h"

namespace edgemm::cli {
namespace {

struct OcrArgs {
  std::vector<std::string> images;
  std::string models;
  std::string draw;
  std::string score_mode = "fast";
  bool json = false;
  bool no_cls = false;
  ocr::OcrOptions options;
};

/// Where --draw puts the picture of `image`: the given file for one image, else
/// DIR/<stem>.ocr.png for each image.
std::string draw_path(const OcrArgs& args, const std::string& image) {
  if (args.images.size() == 1) return args.draw;
  return (std::filesystem::path(args.draw) / (std::filesystem::path(image).stem().string() + ".ocr.png")).string();
}

void print_text(const OcrArgs& args, const std::string& image, const ocr::OcrResult& result) {
  if (args.images.size() > 1) std::cout << "# " << image << "\n";
  for (const ocr::OcrLine& line : result.lines) std::cout << line.text << "\n";
}

/// Runs every image; returns the exit code of the first failure (0 when all succeed).
int ocr_command(OcrArgs& args) {
  args.options.models_dir = args.models.empty() ? default_ocr_models_dir() : args.models;
  args.options.use_cls = !args.no_cls;
  args.options.score_mode = args.score_mode == "slow" ? ocr::ScoreMode::kSlow : ocr::ScoreMode::kFast;
  auto pipeline = ocr::OcrPipeline::create(args.options);
  if (!pipeline.has_value()) return report_error("ocr", pipeline.status(), args.json);
  if (!args.draw.empty() && args.images.size() > 1) {
    std::error_code ec;
    std::filesystem::create_directories(args.draw, ec);
    if (ec)
      return report_error("ocr", Status(StatusCode::kIo, "cannot create --draw folder '" + args.draw + "'"), args.json);
  }
  nlohmann::json document = ocr_document_json(args.options);
  int exit_code = 0;
  ProgressBar progress("ocr", args.images.size());
  for (size_t i = 0; i < args.images.size(); ++i) {
    const std::string& image = args.images[i];
    progress.update(i, image);
    Expected<ocr::OcrResult> result = (*pipeline)->run_file(image);
    Status status = result.status();
    if (status.is_ok() && !args.draw.empty()) status = ocr::draw_result(image, *result, draw_path(args, image));
    if (!status.is_ok()) {
      if (exit_code == 0) exit_code = edgemm::exit_code(status);
      if (args.json) {
        document["images"].push_back(
            {{"file", image}, {"error", {{"code", status_code_name(status.code())}, {"message", status.message()}}}});
      } else {
        std::cerr << "edgemm ocr: error: " << status.to_string() << "\n";
      }
      continue;
    }
    if (args.json) {
      document["images"].push_back(ocr_image_json(image, *result));
    } else {
      print_text(args, image, *result);
    }
  }
  progress.update(args.images.size(), "");
  if (args.json) std::cout << document.dump(2) << std::endl;
  return exit_code;
}

}  // namespace

void add_ocr_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<OcrArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ocr", "Read the text in images with PP-OCRv4 (det + angle classifier + rec); prints lines in reading order");
  cmd->add_option("images", args->images, "image files (PNG, JPEG, BMP, TIFF, WebP; gray, RGB, RGBA, 8/16-bit)")
      ->required();
  cmd->add_flag("--json", args->json, "print a JSON document (schema in docs/ocr.md)");
  cmd->add_option("--draw", args->draw,
                  "write the image with numbered boxes to this file (a folder when several images are given)");
  cmd->add_flag("--no-cls", args->no_cls, "skip the 0°/180° angle classifier");
  cmd->add_option("-t,--threads", args->options.threads, "intra-op threads per model (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--det-limit-side", args->options.det_limit_side,
                  "limit the longer image side to this many pixels before detection")
      ->check(CLI::Range(32, 8192))
      ->capture_default_str();
  cmd->add_option("--models", args->models,
                  "folder with the PP-OCRv4 det/cls/rec models and ppocr_keys_v1.txt "
                  "(default: $EDGEMM_MODELS_DIR or models/ppocrv4)");
  cmd->add_option("--det-threshold", args->options.det_threshold, "DB binarization threshold")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--box-threshold", args->options.box_threshold, "drop boxes scoring below this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--unclip-ratio", args->options.unclip_ratio, "box expansion: distance = area × ratio / perimeter")
      ->check(CLI::Range(0.01, 10.0))
      ->capture_default_str();
  cmd->add_option("--score-mode", args->score_mode, "box score: fast (inside the box) or slow (inside the contour)")
      ->check(CLI::IsMember({"fast", "slow"}))
      ->capture_default_str();
  cmd->add_option("--rec-threshold", args->options.rec_score_threshold, "drop lines whose confidence is below this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = ocr_command(*args); });
}

}  // namespace edgemm::cli
