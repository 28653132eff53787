/// `edgemm eval ocr --set DIR`: character error rate and detection precision/recall of OCR on
/// a labelled set (tools/datasets/make_ocr_set.py), for edgemm itself or for a predictions file
/// written by another tool (e.g. the Guten OCR peer, tools/reference/guten_ocr.js).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/ocr.h"
#include "ocr_json.h"
#include "pipelines/ocr/metrics.h"

namespace edgemm::cli {
namespace {

struct EvalArgs {
  std::string set;
  std::string predictions;
  std::string save_predictions;
  std::string models;
  double iou = 0.5;
  bool json = false;
  bool no_cls = false;
  ocr::OcrOptions options;
};

/// One labelled image of the set.
struct LabelledImage {
  std::string file;
  std::vector<std::string> tags;
  std::vector<ocr::TruthLine> lines;
};

Expected<std::vector<LabelledImage>> read_labels(const std::string& set_dir) {
  const std::string path = (std::filesystem::path(set_dir) / "labels.json").string();
  std::ifstream file(path);
  if (!file) return Status(StatusCode::kIo, "cannot open '" + path + "' (is --set a folder made by make_ocr_set.py?)");
  std::vector<LabelledImage> images;
  try {
    const nlohmann::json labels = nlohmann::json::parse(file);
    for (const nlohmann::json& image : labels.at("images")) {
      LabelledImage labelled;
      labelled.file = image.at("file").get<std::string>();
      labelled.tags = image.value("tags", std::vector<std::string>{});
      for (const nlohmann::json& line : image.at("lines")) {
        ocr::TruthLine truth;
        truth.text = line.at("text").get<std::string>();
        const nlohmann::json& polygon = line.at("polygon");
        if (polygon.size() != 4) throw std::invalid_argument("a polygon of '" + labelled.file + "' has not 4 points");
        for (size_t k = 0; k < 4; ++k)
          truth.polygon[k] = {polygon[k].at(0).get<float>(), polygon[k].at(1).get<float>()};
        labelled.lines.push_back(std::move(truth));
      }
      images.push_back(std::move(labelled));
    }
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, "labels file '" + path + "' is malformed: " + e.what());
  }
  if (images.empty()) return Status(StatusCode::kInvalidArgument, "labels file '" + path + "' lists no images");
  return images;
}

/// edgemm's own predictions for every image of the set (errors kept per image).
Expected<std::vector<PredictedImage>> run_edgemm(EvalArgs& args, const std::vector<LabelledImage>& images,
                                                 nlohmann::json& document) {
  args.options.models_dir = args.models.empty() ? default_ocr_models_dir() : args.models;
  args.options.use_cls = !args.no_cls;
  EDGEMM_ASSIGN_OR_RETURN(auto pipeline, ocr::OcrPipeline::create(args.options));
  document = ocr_document_json(args.options);
  std::vector<PredictedImage> predicted;
  ProgressBar progress("eval", images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    progress.update(i, images[i].file);
    PredictedImage out;
    out.file = images[i].file;
    Expected<ocr::OcrResult> result = pipeline->run_file((std::filesystem::path(args.set) / out.file).string());
    if (result.has_value()) {
      out.result = std::move(*result);
      document["images"].push_back(ocr_image_json(out.file, out.result));
    } else {
      out.error = result.status().to_string();
      document["images"].push_back({{"file", out.file}, {"error", out.error}});
    }
    predicted.push_back(std::move(out));
  }
  return predicted;
}

nlohmann::json totals_json(const ocr::OcrScoreTotals& t) {
  return {{"cer", t.cer()},
          {"precision", t.precision()},
          {"recall", t.recall()},
          {"truth_lines", t.truth_lines},
          {"predicted_lines", t.predicted_lines},
          {"matched_lines", t.matched},
          {"truth_chars", t.truth_chars},
          {"edits", t.edits}};
}

/// Mean of each stage's time over the images that report it.
nlohmann::json mean_timings(const std::vector<PredictedImage>& predicted) {
  const std::vector<std::pair<std::string, double ocr::OcrTimings::*>> stages = {
      {"decode", &ocr::OcrTimings::decode_ms}, {"det", &ocr::OcrTimings::det_ms},
      {"post", &ocr::OcrTimings::post_ms},     {"cls", &ocr::OcrTimings::cls_ms},
      {"rec", &ocr::OcrTimings::rec_ms},       {"total", &ocr::OcrTimings::total_ms}};
  nlohmann::json mean = nlohmann::json::object();
  size_t count = 0;
  for (const PredictedImage& p : predicted) count += p.error.empty() ? 1 : 0;
  for (const auto& [name, member] : stages) {
    double sum = 0;
    for (const PredictedImage& p : predicted) sum += p.error.empty() ? p.result.timings.*member : 0.0;
    mean[name] = count == 0 ? 0.0 : sum / count;
  }
  return mean;
}

Status eval_command(EvalArgs& args, int& exit_code) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<LabelledImage> images, read_labels(args.set));
  std::vector<PredictedImage> predicted;
  nlohmann::json document;
  std::string tool = "edgemm";
  if (args.predictions.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(predicted, run_edgemm(args, images, document));
  } else {
    EDGEMM_ASSIGN_OR_RETURN(predicted, read_ocr_predictions(args.predictions));
    std::ifstream file(args.predictions);
    tool = nlohmann::json::parse(file, nullptr, false).value("tool", "unknown");
  }
  if (!args.save_predictions.empty()) {
    std::ofstream out(args.save_predictions);
    out << document.dump(2) << "\n";
    if (!out) return Status(StatusCode::kIo, "cannot write predictions to '" + args.save_predictions + "'");
  }
  std::map<std::string, const PredictedImage*> by_file;
  for (const PredictedImage& p : predicted) by_file[p.file] = &p;

  ocr::OcrScoreTotals overall;
  std::map<std::string, ocr::OcrScoreTotals> subsets;  // "normal" / "upside_down"
  std::map<std::string, ocr::OcrScoreTotals> by_tag;
  nlohmann::json per_image = nlohmann::json::array();
  int failed = 0;
  for (const LabelledImage& image : images) {
    std::vector<ocr::PredictedLine> lines;
    std::string error = "no prediction for this image";
    if (auto it = by_file.find(image.file); it != by_file.end()) {
      error = it->second->error;
      for (const ocr::OcrLine& line : it->second->result.lines) lines.push_back({line.polygon, line.text});
    }
    if (!error.empty()) ++failed;
    EDGEMM_ASSIGN_OR_RETURN(ocr::OcrImageScore score, ocr::score_image(image.lines, lines, args.iou));
    overall.add(score);
    const bool upside_down = std::find(image.tags.begin(), image.tags.end(), "upside_down") != image.tags.end();
    subsets[upside_down ? "upside_down" : "normal"].add(score);
    for (const std::string& tag : image.tags) by_tag[tag].add(score);
    ocr::OcrScoreTotals one;
    one.add(score);
    nlohmann::json entry = totals_json(one);
    entry["file"] = image.file;
    entry["tags"] = image.tags;
    if (!error.empty()) entry["error"] = error;
    per_image.push_back(entry);
  }

  nlohmann::json report = {{"set", args.set},
                           {"tool", tool},
                           {"iou_threshold", args.iou},
                           {"images", images.size()},
                           {"failed_images", failed},
                           {"overall", totals_json(overall)},
                           {"timings_ms_mean", mean_timings(predicted)},
                           {"per_image", per_image}};
  for (const auto& [name, totals] : subsets) report["subsets"][name] = totals_json(totals);
  for (const auto& [name, totals] : by_tag) report["by_tag"][name] = totals_json(totals);
  if (failed > 0) exit_code = 1;
  if (args.json) {
    std::cout << report.dump(2) << std::endl;
    return Status::ok();
  }
  std::cout << std::fixed << std::setprecision(2) << "OCR evaluation of " << tool << " on " << args.set << " ("
            << images.size() << " images, IoU >= " << args.iou << ")\n";
  std::cout << std::left << std::setw(22) << "subset" << std::right << std::setw(8) << "CER %" << std::setw(12)
            << "precision" << std::setw(9) << "recall" << std::setw(8) << "lines" << std::setw(8) << "chars\n";
  auto row = [](const std::string& name, const ocr::OcrScoreTotals& t) {
    std::cout << std::left << std::setw(22) << name << std::right << std::setw(8) << 100.0 * t.cer() << std::setw(12)
              << t.precision() << std::setw(9) << t.recall() << std::setw(8) << t.truth_lines << std::setw(8)
              << t.truth_chars << "\n";
  };
  row("all", overall);
  for (const auto& [name, totals] : subsets) row(name, totals);
  for (const auto& [name, totals] : by_tag) row("tag " + name, totals);
  const nlohmann::json& t = report["timings_ms_mean"];
  std::cout << "mean time per image (ms): total " << t["total"].get<double>() << "  decode "
            << t["decode"].get<double>() << "  det " << t["det"].get<double>() << "  post " << t["post"].get<double>()
            << "  cls " << t["cls"].get<double>() << "  rec " << t["rec"].get<double>() << "\n";
  if (failed > 0) std::cout << failed << " image(s) failed; see --json for the errors\n";
  return Status::ok();
}

}  // namespace

void add_eval_command(CLI::App& app, int& exit_code) {
  CLI::App* eval = app.add_subcommand("eval", "Measure accuracy on a labelled set");
  eval->require_subcommand(1);
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = eval->add_subcommand(
      "ocr", "OCR character error rate (CER) and detection precision/recall on a set made by make_ocr_set.py");
  cmd->add_option("--set", args->set, "folder with labels.json and its images")->required();
  cmd->add_option("--predictions", args->predictions,
                  "score this predictions file (edgemm ocr --json, or tools/reference/guten_ocr.js) instead of "
                  "running edgemm");
  cmd->add_option("--save-predictions", args->save_predictions, "write edgemm's predictions (ocr --json schema)");
  cmd->add_option("--iou", args->iou, "IoU at which a predicted line matches a true line")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->add_flag("--no-cls", args->no_cls, "skip the 0°/180° angle classifier");
  cmd->add_option("-t,--threads", args->options.threads, "intra-op threads per model (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--det-limit-side", args->options.det_limit_side, "limit the longer image side before detection")
      ->check(CLI::Range(32, 8192))
      ->capture_default_str();
  cmd->add_option("--models", args->models, "PP-OCRv4 model folder (default: $EDGEMM_MODELS_DIR or models/ppocrv4)");
  cmd->callback([args, &exit_code] {
    Status status = eval_command(*args, exit_code);
    if (!status.is_ok()) exit_code = report_error("eval ocr", status, args->json);
  });
}

}  // namespace edgemm::cli
