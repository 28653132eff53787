#pragma once
/// \file calibration_set.h
/// Calibration data sets for post-training quantization: which files, tagged with a scene, and
/// a seeded, stratified draw of the samples that calibration runs on. Only paths are handled
/// here; decoding (images, .npy) and preprocessing belong to the code that feeds the model
/// (quant/calibrate.h FeedSource), so that calibration sees what inference sees.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::quant {

/// One calibration sample: a file and its scene tag.
struct CalibrationSample {
  std::string path;   ///< absolute or relative to the working directory
  std::string scene;  ///< e.g. "indoor", "page"; "default" when the set gives none
};

/// File extensions a calibration directory is searched for (lower case, with the dot).
const std::vector<std::string>& calibration_extensions();

/// Lists a calibration set, sorted by path:
/// - a directory: files with calibration_extensions() in it (scene "default") and in its
///   immediate subdirectories (scene = the subdirectory's name);
/// - a JSON manifest `{"samples": [{"path": "a.jpg", "scene": "indoor"}, ...]}` ("scene" optional),
///   paths relative to the manifest's folder.
/// Errors: kIo (missing or unreadable path), kInvalidArgument (manifest that is not valid JSON of
/// that form, naming the entry), and kInvalidArgument when the set has no sample at all.
Expected<std::vector<CalibrationSample>> load_calibration_set(const std::string& dir_or_manifest);

/// How samples are drawn.
struct SamplingOptions {
  int count = 256;    ///< samples to draw (all of them when the set has fewer)
  uint64_t seed = 0;  ///< the draw is a function of (set, options) only
  /// Share of each scene in the draw (normalized; e.g. indoor 0.4, outdoor 0.6). Empty: each
  /// scene in proportion to its size.
  std::map<std::string, double> scene_weights;
};

/// What the draw did, for reports.
struct SamplingReport {
  std::map<std::string, int> available;  ///< samples per scene in the set
  std::map<std::string, int> drawn;      ///< samples per scene drawn
  std::vector<std::string> warnings;     ///< fewer samples than asked, scenes without weight
};

/// Stratified sampling without replacement: scene quotas = count × weight (largest remainders,
/// summing to count), each scene's quota drawn by a seeded Fisher–Yates shuffle (mt19937_64);
/// a scene with fewer samples than its quota gives all it has, with a warning. The result is
/// sorted by path. Errors: kInvalidArgument for count < 1, a negative or non-finite weight,
/// weights summing to 0, or a weighted scene the set does not have (the message lists the
/// set's scenes).
Expected<std::vector<CalibrationSample>> stratified_sample(const std::vector<CalibrationSample>& set,
                                                           const SamplingOptions& options, SamplingReport& report);

/// Parses "indoor=0.4,outdoor=0.6". Errors: kInvalidArgument naming the bad entry.
Expected<std::map<std::string, double>> parse_scene_weights(const std::string& text);

}  // namespace edgemm::quant
