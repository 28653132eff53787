/// \file calibration_set.cc
/// Listing and stratified sampling of calibration sets (edgemm/tools/calibration.h).

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "edgemm/memory_check.h"
#include "edgemm/npy.h"
#include "edgemm/tools/calibration.h"

namespace edgemm::quant {

namespace fs = std::filesystem;

const std::vector<std::string>& calibration_extensions() {
  static const std::vector<std::string> kExtensions = {".jpg",  ".jpeg", ".png",  ".bmp",
                                                       ".webp", ".tif",  ".tiff", ".npy"};
  return kExtensions;
}

namespace {

bool has_calibration_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto& all = calibration_extensions();
  return std::find(all.begin(), all.end(), ext) != all.end();
}

void list_files(const fs::path& dir, const std::string& scene, std::vector<CalibrationSample>& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && has_calibration_extension(entry.path())) {
      out.push_back({entry.path().string(), scene});
    }
  }
}

Expected<std::vector<CalibrationSample>> load_directory(const fs::path& dir) {
  std::vector<CalibrationSample> samples;
  list_files(dir, "default", samples);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) list_files(entry.path(), entry.path().filename().string(), samples);
  }
  if (ec)
    return make_error(StatusCode::kIo, "cannot list calibration directory '" + dir.string() + "': " + ec.message());
  return samples;
}

Expected<std::vector<CalibrationSample>> load_manifest(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return make_error(StatusCode::kIo, "cannot read calibration manifest '" + file.string() + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const std::string where = "calibration manifest '" + file.string() + "'";
  if (j.is_discarded() || !j.is_object() || !j.contains("samples") || !j["samples"].is_array()) {
    return make_error(StatusCode::kInvalidArgument,
                      where + " is not JSON of the form {\"samples\": [{\"path\": ..., \"scene\": ...}, ...]}");
  }
  std::vector<CalibrationSample> samples;
  const fs::path base = file.parent_path();
  for (size_t i = 0; i < j["samples"].size(); ++i) {
    const nlohmann::json& s = j["samples"][i];
    const bool ok = s.is_object() && s.contains("path") && s["path"].is_string() &&
                    (!s.contains("scene") || s["scene"].is_string());
    if (!ok || s["path"].get<std::string>().empty()) {
      return make_error(
          StatusCode::kInvalidArgument,
          where + ": sample " + std::to_string(i) + " needs a non-empty string \"path\" (and a string \"scene\")");
    }
    const fs::path p = s["path"].get<std::string>();
    const std::string scene = s.contains("scene") ? s["scene"].get<std::string>() : "default";
    samples.push_back({(p.is_absolute() ? p : base / p).string(), scene.empty() ? "default" : scene});
  }
  return samples;
}

}  // namespace

Expected<std::vector<CalibrationSample>> load_calibration_set(const std::string& dir_or_manifest) {
  std::error_code ec;
  const fs::path path = dir_or_manifest;
  if (!fs::exists(path, ec))
    return make_error(StatusCode::kIo, "calibration set '" + dir_or_manifest + "' does not exist");
  EDGEMM_ASSIGN_OR_RETURN(std::vector<CalibrationSample> samples,
                          fs::is_directory(path, ec) ? load_directory(path) : load_manifest(path));
  if (samples.empty()) {
    std::string exts;
    for (const auto& e : calibration_extensions()) exts += (exts.empty() ? "" : " ") + e;
    return make_error(StatusCode::kInvalidArgument, "calibration set '" + dir_or_manifest +
                                                        "' has no samples (looked for " + exts +
                                                        " files, also in subdirectories one level down)");
  }
  std::sort(samples.begin(), samples.end(),
            [](const CalibrationSample& a, const CalibrationSample& b) { return a.path < b.path; });
  return samples;
}

namespace {

// Quotas per scene summing to `count` (largest remainders; ties to the scene listed first).
std::map<std::string, int> quotas(const std::map<std::string, double>& weights, int count) {
  double total = 0;
  for (const auto& [scene, w] : weights) total += w;
  std::map<std::string, int> q;
  std::vector<std::pair<double, std::string>> remainders;
  int assigned = 0;
  for (const auto& [scene, w] : weights) {
    const double exact = count * w / total;
    q[scene] = static_cast<int>(std::floor(exact));
    assigned += q[scene];
    remainders.push_back({exact - std::floor(exact), scene});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; assigned < count && i < remainders.size(); ++i, ++assigned) ++q[remainders[i].second];
  return q;
}

}  // namespace

Expected<std::vector<CalibrationSample>> stratified_sample(const std::vector<CalibrationSample>& set,
                                                           const SamplingOptions& options, SamplingReport& report) {
  if (options.count < 1) {
    return make_error(StatusCode::kInvalidArgument,
                      "the number of calibration samples must be at least 1, got " + std::to_string(options.count));
  }
  std::map<std::string, std::vector<CalibrationSample>> by_scene;
  for (const CalibrationSample& s : set) by_scene[s.scene].push_back(s);
  std::string scene_list;
  for (const auto& [scene, samples] : by_scene) {
    report.available[scene] = static_cast<int>(samples.size());
    scene_list += (scene_list.empty() ? "" : ", ") + scene + " (" + std::to_string(samples.size()) + ")";
  }
  std::map<std::string, double> weights = options.scene_weights;
  if (weights.empty()) {
    for (const auto& [scene, samples] : by_scene) weights[scene] = static_cast<double>(samples.size());
  }
  double total = 0;
  for (const auto& [scene, w] : weights) {
    if (!std::isfinite(w) || w < 0) {
      return make_error(StatusCode::kInvalidArgument,
                        "scene weight of '" + scene + "' must be finite and >= 0, got " + std::to_string(w));
    }
    if (by_scene.count(scene) == 0) {
      return make_error(StatusCode::kInvalidArgument,
                        "scene '" + scene + "' has a weight but no samples; the set's scenes are " + scene_list);
    }
    total += w;
  }
  if (total <= 0) return make_error(StatusCode::kInvalidArgument, "scene weights sum to 0");
  for (const auto& [scene, samples] : by_scene) {
    if (weights.count(scene) == 0) {
      report.warnings.push_back("scene '" + scene + "' (" + std::to_string(samples.size()) +
                                " samples) has no weight: none drawn");
    }
  }
  const int count = options.count;
  if (static_cast<int64_t>(set.size()) < count) {
    report.warnings.push_back("the calibration set has " + std::to_string(set.size()) + " samples, fewer than the " +
                              std::to_string(count) + " asked for; using all it has");
  }
  std::vector<CalibrationSample> drawn;
  std::mt19937_64 rng(options.seed);
  for (const auto& [scene, quota] : quotas(weights, count)) {
    std::vector<CalibrationSample> pool = by_scene[scene];
    const int take = std::min<int>(quota, static_cast<int>(pool.size()));
    if (take < quota && static_cast<int64_t>(set.size()) >= count) {
      report.warnings.push_back("scene '" + scene + "': " + std::to_string(take) + " of the " + std::to_string(quota) +
                                " samples its weight asks for (all it has)");
    }
    for (int i = 0; i < take; ++i) {  // partial Fisher–Yates: the first `take` slots are the draw
      const auto j = static_cast<size_t>(i) + static_cast<size_t>(rng() % (pool.size() - static_cast<size_t>(i)));
      std::swap(pool[static_cast<size_t>(i)], pool[j]);
      drawn.push_back(pool[static_cast<size_t>(i)]);
    }
    report.drawn[scene] = take;
  }
  std::sort(drawn.begin(), drawn.end(),
            [](const CalibrationSample& a, const CalibrationSample& b) { return a.path < b.path; });
  return drawn;
}

Expected<std::map<std::string, double>> parse_scene_weights(const std::string& text) {
  std::map<std::string, double> weights;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    const size_t eq = entry.find('=');
    const std::string bad = "scene weight '" + entry + "' must be scene=weight (e.g. indoor=0.4)";
    if (eq == std::string::npos || eq == 0) return make_error(StatusCode::kInvalidArgument, bad);
    try {
      size_t used = 0;
      const std::string number = entry.substr(eq + 1);
      const double w = std::stod(number, &used);
      if (used != number.size()) return make_error(StatusCode::kInvalidArgument, bad);
      weights[entry.substr(0, eq)] = w;
    } catch (const std::exception&) {
      return make_error(StatusCode::kInvalidArgument, bad);
    }
  }
  if (weights.empty()) return make_error(StatusCode::kInvalidArgument, "no scene weights in '" + text + "'");
  return weights;
}

Expected<FeedSource> npy_feed_source(const std::string& model_path, const OnnxModel& model) {
  if (model.inputs().size() != 1) {
    return make_error(
        StatusCode::kInvalidArgument,
        ".npy calibration samples feed a model with one input; this one has " + std::to_string(model.inputs().size()));
  }
  const std::string input = model.inputs()[0].name;
  auto checked = std::make_shared<std::map<Shape, Status>>();  // shape → its memory check
  return FeedSource([model_path, input, checked](const CalibrationSample& s) -> Expected<std::vector<Feed>> {
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(s.path));
    auto known = checked->find(t.shape());
    if (known == checked->end()) {
      known = checked->emplace(t.shape(), check_shapes_fit_memory(model_path, {{input, t.shape()}})).first;
    }
    EDGEMM_RETURN_IF_ERROR(known->second);
    return std::vector<Feed>{{{input, std::move(t)}}};
  });
}

}  // namespace edgemm::quant
