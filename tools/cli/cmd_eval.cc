/// `edgemm eval ocr --set DIR`: character error rate and detection precision/recall of OCR on
/// a labelled set (tools/datasets/make_ocr_set.py), for edgemm itself or for a predictions file
/// written by another tool (e.g. the Guten OCR peer, tools/reference/guten_ocr.js).

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/ocr.h"
#include "ocr_json.h"
#include "ocr_options.h"
#include "edgemm/pipelines/ocr_metrics.h"

namespace edgemm::cli {
namespace {

struct EvalArgs {
  std::string set;
  std::string predictions;
  std::string save_predictions;
  double min_overlap = 0.5;
  bool json = false;
  OcrPipelineArgs pipeline;
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
  std::string where;  // the field being read, for the error ("images[3].lines[0].text")
  try {
    const nlohmann::json labels = nlohmann::json::parse(file);
    where = "images";
    if (!labels.at("images").is_array()) throw std::invalid_argument("\"images\" must be an array");
    std::set<std::string> seen;
    for (const nlohmann::json& image : labels.at("images")) {
      const std::string at_image = "images[" + std::to_string(images.size()) + "]";
      LabelledImage labelled;
      where = at_image + ".file";
      labelled.file = image.at("file").get<std::string>();
      if (!seen.insert(labelled.file).second) throw std::invalid_argument("'" + labelled.file + "' is listed twice");
      where = at_image + ".tags";
      labelled.tags = image.value("tags", std::vector<std::string>{});
      where = at_image + ".lines";
      for (const nlohmann::json& line : image.at("lines")) {
        ocr::TruthLine truth;
        where = at_image + ".lines[" + std::to_string(labelled.lines.size()) + "]";
        truth.text = line.at("text").get<std::string>();
        const nlohmann::json& polygon = line.at("polygon");
        auto is_point = [](const nlohmann::json& p) {
          return p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number() &&
                 std::isfinite(p[0].get<double>()) && std::isfinite(p[1].get<double>());
        };
        if (!polygon.is_array() || polygon.size() != 4 || !std::all_of(polygon.begin(), polygon.end(), is_point)) {
          throw std::invalid_argument("a polygon of '" + labelled.file + "' is not 4 finite [x, y] points");
        }
        for (size_t k = 0; k < 4; ++k) truth.polygon[k] = {polygon[k][0].get<float>(), polygon[k][1].get<float>()};
        truth.ignore = line.value("ignore", false);
        labelled.lines.push_back(std::move(truth));
      }
      images.push_back(std::move(labelled));
    }
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, "labels file '" + path + "' is malformed" +
                                                    (where.empty() ? std::string() : " at " + where) + ": " + e.what());
  }
  if (images.empty()) return Status(StatusCode::kInvalidArgument, "labels file '" + path + "' lists no images");
  return images;
}

/// edgemm's own predictions for every image of the set (errors kept per image); `document`
/// receives them in the `ocr --json` schema.
Expected<OcrPredictions> run_edgemm(const EvalArgs& args, const std::vector<LabelledImage>& images,
                                    nlohmann::json& document) {
  const ocr::OcrOptions options = args.pipeline.resolved();
  EDGEMM_ASSIGN_OR_RETURN(auto pipeline, ocr::OcrPipeline::create(options));
  document = ocr_document_json(options);
  for (const auto& [stage, model] : pipeline->models()) document["placement"][stage] = placement_summary_json(*model);
  OcrPredictions predictions{"edgemm", {}};
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
      document["images"].push_back({{"file", out.file}, {"error", error_json(result.status())}});
    }
    predictions.images.push_back(std::move(out));
  }
  return predictions;
}

/// Pairs each labelled image with its prediction. A prediction's "file" may be the path
/// relative to the set (what eval writes), any path to the same file after resolving symlinks
/// (what `edgemm ocr DIR/*.png --json` writes), or a bare file name unique in the set.
/// Predictions for files outside the set are counted in `unused`.
std::map<std::string, const PredictedImage*> match_files(const std::vector<LabelledImage>& images,
                                                         const OcrPredictions& predictions, const std::string& set_dir,
                                                         int& unused) {
  namespace fs = std::filesystem;
  auto canonical = [](const fs::path& path) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(path, ec);
    return ec ? path.lexically_normal().string() : resolved.string();
  };
  // Each labelled file under the three keys a prediction may use; "" marks an ambiguous name.
  std::map<std::string, std::string> by_file, by_path, by_name;
  for (const LabelledImage& image : images) {
    by_file[image.file] = image.file;
    by_path[canonical(fs::path(set_dir) / image.file)] = image.file;
    const std::string name = fs::path(image.file).filename().string();
    by_name[name] = by_name.count(name) ? "" : image.file;
  }
  std::map<std::string, const PredictedImage*> matched;
  unused = 0;
  for (const PredictedImage& p : predictions.images) {
    std::string file;
    if (auto it = by_file.find(p.file); it != by_file.end()) {
      file = it->second;
    } else if (auto at = by_path.find(canonical(p.file)); at != by_path.end()) {
      file = at->second;
    } else if (auto named = by_name.find(fs::path(p.file).filename().string()); named != by_name.end()) {
      file = named->second;
    }
    if (file.empty() || matched.count(file)) {
      ++unused;
      continue;
    }
    matched[file] = &p;
  }
  return matched;
}

/// The orientation subset of an image from its tags: "upside_down" (make_ocr_set.py) or
/// "turned_90", "turned_180", "turned_270" (tools/datasets/turn_set.py: clockwise degrees);
/// "upright" without any.
std::string orientation_subset(const std::vector<std::string>& tags) {
  for (const std::string& tag : tags) {
    if (tag == "upside_down") return "turned_180";
    if (tag.rfind("turned_", 0) == 0) return tag;
  }
  return "upright";
}

nlohmann::json totals_json(const ocr::OcrScoreTotals& t) {
  return {{"cer", t.cer()},
          {"precision", t.precision()},
          {"recall", t.recall()},
          {"truth_lines", t.truth_lines},
          {"predicted_lines", t.predicted_lines},
          {"matched_truth_lines", t.matched_truth},
          {"matched_predicted_lines", t.matched_predicted},
          {"truth_chars", t.truth_chars},
          {"edits", t.edits}};
}

/// The groups of `score` read with errors and the true lines not read: {"truth", "read", "edits"}
/// with the lines' texts joined along their row, as score_image compared them.
nlohmann::json mistakes_json(const std::vector<ocr::TruthLine>& truth, const std::vector<ocr::PredictedLine>& predicted,
                             const ocr::OcrImageScore& score) {
  auto joined = [](const std::vector<int>& indices, auto text_of) {
    std::string text;
    for (int i : indices) text += (text.empty() ? "" : " ") + text_of(i);
    return text;
  };
  nlohmann::json mistakes = nlohmann::json::array();
  for (const ocr::LineGroup& group : score.groups) {
    if (group.edits == 0) continue;
    mistakes.push_back({{"truth", joined(group.truth, [&](int i) { return truth[i].text; })},
                        {"read", joined(group.predicted, [&](int i) { return predicted[i].text; })},
                        {"edits", group.edits}});
  }
  for (int t : score.unmatched_truth) mistakes.push_back({{"truth", truth[t].text}, {"read", nullptr}});
  return mistakes;
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
  if (!args.predictions.empty() && !args.save_predictions.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--save-predictions keeps edgemm's own predictions; it cannot be combined with --predictions");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<LabelledImage> images, read_labels(args.set));
  if (!args.save_predictions.empty()) {  // checked before the run: an unwritable path fails fast
    EDGEMM_RETURN_IF_ERROR(check_output_path(args.save_predictions, {args.set}));
  }
  OcrPredictions predictions;
  nlohmann::json document;  // edgemm's own run: its predictions, backend and placement
  if (args.predictions.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(predictions, run_edgemm(args, images, document));
    if (!args.save_predictions.empty()) {
      EDGEMM_RETURN_IF_ERROR(write_text_file(args.save_predictions, json_text(document) + "\n"));
    }
  } else {
    EDGEMM_ASSIGN_OR_RETURN(predictions, read_ocr_predictions(args.predictions));
  }
  int unused = 0;
  const std::map<std::string, const PredictedImage*> by_file = match_files(images, predictions, args.set, unused);
  if (unused > 0) {
    std::cerr << "edgemm eval ocr: warning: " << unused
              << " prediction(s) name no image of the set (or repeat one); they are ignored\n";
  }
  const std::string& tool = predictions.tool;
  const std::vector<PredictedImage>& predicted = predictions.images;

  ocr::OcrScoreTotals overall;
  std::map<std::string, ocr::OcrScoreTotals> subsets;  // by orientation: "upright", "turned_90", ...
  std::map<std::string, ocr::OcrScoreTotals> by_tag;
  nlohmann::json per_image = nlohmann::json::array();
  std::vector<std::string> failed_files;
  for (const LabelledImage& image : images) {
    std::vector<ocr::PredictedLine> lines;
    std::string error = "no prediction for this image";
    if (auto it = by_file.find(image.file); it != by_file.end()) {
      error = it->second->error;
      for (const ocr::OcrLine& line : it->second->result.lines) lines.push_back({line.polygon, line.text});
    }
    if (!error.empty()) failed_files.push_back(image.file + ": " + error);
    EDGEMM_ASSIGN_OR_RETURN(ocr::OcrImageScore score, ocr::score_image(image.lines, lines, args.min_overlap));
    overall.add(score);
    subsets[orientation_subset(image.tags)].add(score);
    for (const std::string& tag : image.tags) by_tag[tag].add(score);
    ocr::OcrScoreTotals one;
    one.add(score);
    nlohmann::json entry = totals_json(one);
    entry["mistakes"] = mistakes_json(image.lines, lines, score);
    entry["file"] = image.file;
    entry["tags"] = image.tags;
    if (!error.empty()) entry["error"] = error;
    per_image.push_back(entry);
  }

  nlohmann::json report = {{"set", args.set},
                           {"tool", tool},
                           {"min_overlap", args.min_overlap},
                           {"images", images.size()},
                           {"failed_images", failed_files.size()},
                           {"ignored_predictions", unused},
                           {"overall", totals_json(overall)},
                           {"timings_ms_mean", mean_timings(predicted)},
                           {"per_image", per_image}};
  if (document.contains("backend")) {
    report["backend"] = document["backend"];
    report["placement"] = document["placement"];
  }
  for (const auto& [name, totals] : subsets) report["subsets"][name] = totals_json(totals);
  for (const auto& [name, totals] : by_tag) report["by_tag"][name] = totals_json(totals);
  if (!failed_files.empty()) exit_code = 1;
  if (args.json) {
    std::cout << json_text(report) << std::endl;
    return Status::ok();
  }
  std::cout << std::fixed << std::setprecision(2) << "OCR evaluation of " << tool
            << (document.contains("backend") ? " (backend " + document["backend"].get<std::string>() + ")" : "")
            << " on " << args.set << " (" << images.size() << " images, overlap >= " << args.min_overlap << ")\n";
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
  for (const std::string& failure : failed_files) std::cout << "failed: " << failure << "\n";
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
  cmd->add_option("--min-overlap", args->min_overlap,
                  "share of the smaller of a predicted and a true line's areas that they must have in common to match "
                  "(docs/ocr.md)")
      ->check(finite_range(0.01, 1.0))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print a JSON report");
  add_ocr_pipeline_options(cmd, args->pipeline);
  cmd->callback([args, &exit_code] {
    Status status = eval_command(*args, exit_code);
    if (!status.is_ok()) exit_code = report_error("eval ocr", status, args->json);
  });
}

}  // namespace edgemm::cli
