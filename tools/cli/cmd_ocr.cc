/// `edgemm ocr IMAGE...`: PP-OCRv4 text recognition of image files.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/ocr.h"
#include "ocr_json.h"
#include "ocr_options.h"

namespace edgemm::cli {
namespace {

struct OcrArgs {
  std::vector<std::string> images;
  std::string draw;
  bool json = false;
  OcrPipelineArgs pipeline;
};

bool has_image_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* known : {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}) {
    if (ext == known) return true;
  }
  return false;
}

/// Where --draw puts each image's picture (empty strings without --draw). An existing folder, or
/// a path ending in '/', is a folder: DIR/<stem>.ocr.png per image, with -2, -3 ... when stems
/// repeat. A path with an image extension is the file of the only image. Checked before any OCR
/// runs. Errors: kInvalidArgument (neither form, a file for several images, the path of the input
/// image), kIo (missing folder).
Expected<std::vector<std::string>> plan_drawings(const OcrArgs& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths(args.images.size());
  if (args.draw.empty()) return paths;
  std::error_code ec;
  const fs::path out(args.draw);
  const bool folder = fs::is_directory(out, ec) || args.draw.back() == '/';
  if (!folder) {
    if (!has_image_extension(out)) {
      return Status(StatusCode::kInvalidArgument,
                    "--draw '" + args.draw +
                        "' is neither an image file (.png, .jpg, .bmp, .tif, .webp) nor a folder (an existing one, "
                        "or a path ending in '/')");
    }
    if (args.images.size() > 1) {
      return Status(StatusCode::kInvalidArgument, "--draw '" + args.draw + "' is one file, but " +
                                                      std::to_string(args.images.size()) +
                                                      " images are given; pass a folder");
    }
    const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    if (!fs::is_directory(parent, ec))
      return Status(StatusCode::kIo, "--draw folder '" + parent.string() + "' does not exist");
    if (fs::equivalent(out, args.images[0], ec)) {
      return Status(StatusCode::kInvalidArgument, "--draw '" + args.draw + "' would overwrite the input image");
    }
    paths[0] = args.draw;
    return paths;
  }
  if (!fs::is_directory(out, ec)) return Status(StatusCode::kIo, "--draw folder '" + args.draw + "' does not exist");
  std::map<std::string, int> uses;
  for (size_t i = 0; i < args.images.size(); ++i) {
    const std::string stem = fs::path(args.images[i]).stem().string();
    const int n = ++uses[stem];
    paths[i] = (out / (stem + (n > 1 ? "-" + std::to_string(n) : "") + ".ocr.png")).string();
  }
  return paths;
}

void print_text(const OcrArgs& args, const std::string& image, const ocr::OcrResult& result) {
  if (args.images.size() > 1) std::cout << "# " << image << "\n";
  for (const ocr::OcrLine& line : result.lines) std::cout << line.text << "\n";
  std::cout << std::flush;
}

/// Runs every image; returns the exit code of the first failure (0 when all succeed). A failed
/// drawing is reported but does not discard the image's text.
int ocr_command(OcrArgs& args) {
  ocr::OcrOptions options = args.pipeline.resolved();
  Expected<std::vector<std::string>> drawings = plan_drawings(args);
  if (!drawings.has_value()) return report_error("ocr", drawings.status(), args.json);
  auto pipeline = ocr::OcrPipeline::create(options);
  if (!pipeline.has_value()) return report_error("ocr", pipeline.status(), args.json);
  nlohmann::json document = ocr_document_json(options);
  for (const auto& [stage, model] : (*pipeline)->models())
    document["placement"][stage] = placement_summary_json(*model);
  int exit_code = 0;
  auto fail = [&](const Status& status) {
    if (exit_code == 0) exit_code = edgemm::exit_code(status);
    std::cerr << "edgemm ocr: error: " << status.to_string() << "\n";
  };
  ProgressBar progress("ocr", args.images.size());
  for (size_t i = 0; i < args.images.size(); ++i) {
    const std::string& image = args.images[i];
    progress.update(i, image);
    Expected<ocr::OcrResult> result = (*pipeline)->run_file(image);
    progress.clear();
    if (!result.has_value()) {
      fail(result.status());
      if (args.json) document["images"].push_back({{"file", image}, {"error", error_json(result.status())}});
      continue;
    }
    nlohmann::json entry = ocr_image_json(image, *result);
    if (!(*drawings)[i].empty()) {
      const Status drawn = ocr::draw_result(image, *result, (*drawings)[i]);
      if (drawn.is_ok()) {
        entry["drawing"] = (*drawings)[i];
      } else {
        fail(drawn);
        entry["draw_error"] = error_json(drawn);
      }
    }
    if (args.json) {
      document["images"].push_back(entry);
    } else {
      print_text(args, image, *result);
    }
  }
  if (args.json) std::cout << json_text(document) << std::endl;
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
                  "write the image with numbered boxes to this .png/.jpg/... file (one image only), or to "
                  "FOLDER/<stem>.ocr.png when the path is an existing folder or ends in '/'");
  add_ocr_pipeline_options(cmd, args->pipeline);
  cmd->callback([args, &exit_code] { exit_code = ocr_command(*args); });
}

}  // namespace edgemm::cli
