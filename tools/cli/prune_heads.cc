/// \file prune_heads.cc
/// `edgemm prune --heads ...` / `--heads-keep-ratio R --calib ...` (prune_heads.h): static
/// attention-head pruning (edgemm/tools/prune.h) with scores from edgemm/tools/head_scoring.h.

#include "prune_heads.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "edgemm/npy.h"
#include "edgemm/pipelines/clip.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/head_scoring.h"
#include "edgemm/tools/prune.h"

namespace edgemm::cli {
namespace fs = std::filesystem;
namespace {

bool is_npy(const std::string& path) { return fs::path(path).extension() == ".npy"; }

/// The calibration samples: files as given; folders and JSON manifests through
/// quant::load_calibration_set.
Expected<std::vector<quant::CalibrationSample>> calibration_samples(const std::vector<std::string>& paths) {
  std::vector<quant::CalibrationSample> samples;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec) || fs::path(p).extension() == ".json") {
      EDGEMM_ASSIGN_OR_RETURN(auto set, quant::load_calibration_set(p));
      samples.insert(samples.end(), set.begin(), set.end());
    } else if (!fs::exists(p, ec)) {
      return make_error(StatusCode::kIo, "calibration file '" + p + "' does not exist");
    } else {
      samples.push_back({p, "default"});
    }
  }
  return samples;
}

/// The CLIP package holding `model_path` (PACKAGE/onnx/MODEL.onnx), or "".
std::string package_of(const std::string& model_path) {
  const fs::path dir = fs::absolute(model_path).parent_path().parent_path();
  std::error_code ec;
  return fs::exists(dir / "preprocessor_config.json", ec) ? dir.string() : std::string();
}

/// Feeds the model's single input from .npy files (as they are) or images (preprocessed by the
/// CLIP package's pipeline, include/edgemm/pipelines/clip.h).
Expected<quant::FeedSource> feed_source(const OnnxModel& model, const std::string& model_path,
                                        const std::vector<quant::CalibrationSample>& samples,
                                        const HeadPruneArgs& args) {
  if (model.inputs().size() != 1) {
    return make_error(StatusCode::kInvalidArgument, "head scoring feeds a model with one input; this one has " +
                                                        std::to_string(model.inputs().size()));
  }
  const std::string input = model.inputs()[0].name;
  bool images = false;
  for (const auto& s : samples) images = images || !is_npy(s.path);
  std::shared_ptr<clip::ClipModel> processor;
  if (images) {
    const std::string package = args.package.empty() ? package_of(model_path) : args.package;
    if (package.empty()) {
      return make_error(StatusCode::kInvalidArgument,
                        "calibration images need a CLIP package to preprocess them: the model is not in one "
                        "(PACKAGE/onnx/...); give --package DIR or .npy inputs");
    }
    clip::ClipOptions options;
    options.load_text = false;
    options.threads = 1;
    EDGEMM_ASSIGN_OR_RETURN(clip::ClipModel loaded, clip::ClipModel::load(package, options));
    processor = std::make_shared<clip::ClipModel>(std::move(loaded));
  }
  return quant::FeedSource([input, processor](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    if (is_npy(s.path)) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(s.path));
      return std::vector<quant::Feed>{{{input, std::move(t)}}};
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, processor->preprocess_file(s.path));
    return std::vector<quant::Feed>{{{input, std::move(t)}}};
  });
}

}  // namespace

void add_head_prune_options(CLI::App* cmd, HeadPruneArgs& args) {
  CLI::Option* heads = cmd->add_option("--heads", args.heads,
                                       "attention heads to remove, LAYER:HEAD 0-based, comma-separated "
                                       "(e.g. \"0:1,2:0,2:3\"); every layer keeps at least one head");
  CLI::Option* ratio =
      cmd->add_option("--heads-keep-ratio", args.keep_ratio,
                      "share of attention heads kept, in (0, 1]: the lowest-scoring heads on --calib go")
          ->check(finite_range(1e-9, 1));
  CLI::Option* rank = cmd->add_option("--heads-rank", args.rank,
                                      "with --heads-keep-ratio: layer (each layer keeps its best share, default) "
                                      "or global (all layers compete; at least one head per layer)")
                          ->check(CLI::IsMember({"layer", "global"}));
  CLI::Option* calib = cmd->add_option("--calib", args.calib,
                                       "calibration inputs for head scores: .npy model inputs, images (with a "
                                       "CLIP package's preprocessing), folders of them or a JSON manifest")
                           ->expected(1, -1);
  CLI::Option* package =
      cmd->add_option("--package", args.package,
                      "CLIP package whose preprocessor_config.json prepares calibration images (default: the "
                      "package the model is in)");
  cmd->add_option("--threads", args.threads, "threads for the head scoring runs (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads));
  heads->excludes(ratio);
  ratio->excludes(heads);
  ratio->needs(calib);
  calib->needs(ratio);
  rank->needs(ratio);
  package->needs(ratio);
}

Expected<nlohmann::json> prune_heads(OnnxModel& model, const std::string& model_path, const HeadPruneArgs& args) {
  nlohmann::json j;
  passes::HeadPruningOptions options;
  if (!args.heads.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(options, passes::parse_head_list(args.heads));
    j["selection"] = "explicit";
  } else {
    EDGEMM_ASSIGN_OR_RETURN(const auto samples, calibration_samples(args.calib));
    EDGEMM_ASSIGN_OR_RETURN(const quant::FeedSource source, feed_source(model, model_path, samples, args));
    quant::CalibrateOptions calibrate;
    calibrate.threads = args.threads;
    EDGEMM_ASSIGN_OR_RETURN(const quant::HeadScores scores, quant::score_heads(model, samples, source, calibrate));
    const auto ranking = args.rank == "global" ? quant::HeadRanking::kGlobal : quant::HeadRanking::kPerLayer;
    EDGEMM_ASSIGN_OR_RETURN(options, quant::select_heads(scores, args.keep_ratio, ranking));
    j["selection"] = "scores";
    j["keep_ratio"] = args.keep_ratio;
    j["rank"] = args.rank;
    j["score"] = "mean L2 norm of the head's contribution to the out projection's output";
    j["scores"] = scores.scores;
    j["calibration"] = {{"samples_used", scores.samples_used},
                        {"samples_skipped", scores.samples_skipped},
                        {"runs", scores.runs},
                        {"seconds", scores.seconds}};
  }
  EDGEMM_ASSIGN_OR_RETURN(const passes::HeadPruningReport report, passes::prune_attention_heads(model, options));
  j["layers"] = report.layers;
  j["heads_before"] = report.heads_before;
  j["heads_after"] = report.heads_after;
  j["weight_bytes_before"] = report.weight_bytes_before;
  j["weight_bytes_after"] = report.weight_bytes_after;
  j["file_bytes_before"] = file_bytes(model_path);
  nlohmann::json removed = nlohmann::json::array(), per_layer = nlohmann::json::array();
  for (const passes::PrunedLayer& l : report.pruned) {
    if (!l.removed.empty()) removed.push_back({{"layer", l.layer}, {"heads", l.removed}});
    per_layer.push_back({{"layer", l.layer},
                         {"softmax", l.softmax},
                         {"heads", l.heads},
                         {"head_dim", l.head_dim},
                         {"removed", l.removed},
                         {"kept", l.kept},
                         {"shapes_rewritten", l.shapes_rewritten}});
  }
  j["removed"] = removed;
  j["per_layer"] = per_layer;
  return j;
}

void print_head_report(const nlohmann::json& j) {
  std::cout << "  heads: " << j["heads_before"].get<int64_t>() << " → " << j["heads_after"].get<int64_t>() << " over "
            << j["layers"].get<int>() << " attention layers";
  if (j["selection"] == "scores") {
    std::cout << " (keep ratio " << j["keep_ratio"].get<double>() << ", ranked "
              << (j["rank"] == "global" ? "globally" : "per layer") << ", scored on "
              << j["calibration"]["runs"].get<int64_t>() << " runs)";
  }
  std::cout << "\n";
  if (j.contains("scores")) {
    std::cout << "  head scores (" << j["score"].get<std::string>() << "; * = removed):\n";
    const auto& scores = j["scores"];
    for (size_t l = 0; l < scores.size(); ++l) {
      const auto& removed = j["per_layer"][l]["removed"];
      std::cout << "    layer " << l << ":";
      for (size_t h = 0; h < scores[l].size(); ++h) {
        bool gone = false;
        for (const auto& r : removed) gone = gone || r.get<size_t>() == h;
        char cell[48];
        std::snprintf(cell, sizeof(cell), " %9.4f%s", scores[l][h].get<double>(), gone ? "*" : " ");
        std::cout << cell;
      }
      std::cout << "\n";
    }
  }
  for (const auto& r : j["removed"]) {
    std::cout << "  layer " << r["layer"].get<int>() << ": removed heads";
    for (const auto& h : r["heads"]) std::cout << " " << h.get<int>();
    std::cout << "\n";
  }
  std::cout << "  weights " << j["weight_bytes_before"].get<int64_t>() << " → "
            << j["weight_bytes_after"].get<int64_t>() << " bytes; file " << j["file_bytes_before"].get<int64_t>()
            << " → " << j["file_bytes_after"].get<int64_t>() << " bytes\n";
}

}  // namespace edgemm::cli
