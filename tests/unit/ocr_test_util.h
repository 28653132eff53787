#pragma once
// The demo photo's labels (data/demo/photo_text.json, drawn by make_demo_photo.py: the oracle of
// the OCR tests) and the CER of a result against them (edgemm/pipelines/ocr_metrics.h).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgemm/pipelines/ocr.h"
#include "edgemm/pipelines/ocr_metrics.h"
#include "source_dir.h"

namespace edgemm::ocr {

/// The demo photo's true lines; `rotate_180` maps them into the photo turned upside down.
inline std::vector<TruthLine> demo_truth(bool rotate_180) {
  std::ifstream in(std::string(edgemm::testing::source_dir()) + "/data/demo/photo_text.json");
  const nlohmann::json labels = nlohmann::json::parse(in);
  const float w = labels["width"].get<float>() - 1, h = labels["height"].get<float>() - 1;
  std::vector<TruthLine> lines;
  for (const auto& line : labels["lines"]) {
    const auto b = line["box"].get<std::vector<float>>();
    TruthLine truth{{Point{b[0], b[1]}, Point{b[2], b[1]}, Point{b[2], b[3]}, Point{b[0], b[3]}}, line["text"]};
    if (rotate_180) {
      for (Point& p : truth.polygon) p = {w - p.x, h - p.y};
    }
    lines.push_back(truth);
  }
  return lines;
}

/// CER and line matches of `result` against `truth` (score_image, min overlap 0.5).
inline OcrScoreTotals score(const OcrResult& result, const std::vector<TruthLine>& truth) {
  std::vector<PredictedLine> predicted;
  for (const OcrLine& line : result.lines) predicted.push_back({line.polygon, line.text});
  auto image = score_image(truth, predicted);
  EXPECT_TRUE(image.has_value()) << image.status().to_string();
  OcrScoreTotals totals;
  totals.add(*image);
  return totals;
}

}  // namespace edgemm::ocr
