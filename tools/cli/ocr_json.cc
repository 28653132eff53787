#include "ocr_json.h"

#include <fstream>
#include <set>

#include "cli_common.h"

namespace edgemm::cli {

nlohmann::json ocr_image_json(const std::string& file, const ocr::OcrResult& result) {
  nlohmann::json lines = nlohmann::json::array();
  for (const ocr::OcrLine& line : result.lines) {
    nlohmann::json polygon = nlohmann::json::array();
    for (const ocr::Point& p : line.polygon) polygon.push_back({p.x, p.y});
    lines.push_back({{"polygon", polygon},
                     {"text", line.text},
                     {"score", line.score},
                     {"box_score", line.box_score},
                     {"rotated_180", line.rotated_180}});
  }
  const ocr::OcrTimings& t = result.timings;
  return {{"file", file},
          {"width", result.width},
          {"height", result.height},
          {"orientation", result.orientation},
          {"lines", lines},
          {"timings_ms",
           {{"decode", t.decode_ms},
            {"det", t.det_ms},
            {"post", t.post_ms},
            {"cls", t.cls_ms},
            {"rec", t.rec_ms},
            {"total", t.total_ms}}}};
}

nlohmann::json ocr_document_json(const ocr::OcrOptions& options) {
  return {{"tool", "edgemm"},
          {"version", "0.1.0"},
          {"backend", options.backend},
          {"threads", resolve_threads(options.threads)},
          {"models",
           {{"dir", options.models_dir},
            {"det", options.files.det},
            {"cls", options.use_cls ? nlohmann::json(options.files.cls) : nlohmann::json(nullptr)},
            {"rec", options.files.rec},
            {"rec_buckets", options.files.rec_buckets},
            {"dictionary", options.files.dictionary}}},
          {"images", nlohmann::json::array()}};
}

namespace {

ocr::OcrResult result_from_json(const nlohmann::json& image) {
  ocr::OcrResult result;
  result.width = image.value("width", 0);
  result.height = image.value("height", 0);
  result.orientation = image.value("orientation", 0);
  if (!image.at("lines").is_array()) throw std::invalid_argument("\"lines\" must be an array");
  for (const nlohmann::json& line : image["lines"]) {
    ocr::OcrLine out;
    const nlohmann::json& polygon = line.at("polygon");
    if (!polygon.is_array() || polygon.size() != 4) throw std::invalid_argument("polygon must have 4 points");
    for (size_t k = 0; k < 4; ++k) out.polygon[k] = {polygon[k].at(0).get<float>(), polygon[k].at(1).get<float>()};
    out.text = line.at("text").get<std::string>();
    out.score = line.value("score", 0.0f);
    out.box_score = line.value("box_score", 0.0f);
    out.rotated_180 = line.value("rotated_180", false);
    result.lines.push_back(std::move(out));
  }
  if (image.contains("timings_ms")) {
    const nlohmann::json& t = image["timings_ms"];
    result.timings = {t.value("decode", 0.0), t.value("det", 0.0), t.value("post", 0.0),
                      t.value("cls", 0.0),    t.value("rec", 0.0), t.value("total", 0.0)};
  }
  return result;
}

}  // namespace

Expected<OcrPredictions> read_ocr_predictions(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Status(StatusCode::kIo, "cannot open predictions file '" + path + "'");
  OcrPredictions predictions;
  std::string where = "the document";
  try {
    const nlohmann::json document = nlohmann::json::parse(file);
    const nlohmann::json tool = document.value("tool", nlohmann::json("unknown"));
    predictions.tool = tool.is_string() ? tool.get<std::string>() : tool.dump();
    std::set<std::string> seen;
    for (const nlohmann::json& image : document.at("images")) {
      PredictedImage predicted;
      where = "image " + std::to_string(predictions.images.size());
      predicted.file = image.at("file").get<std::string>();
      where = "image '" + predicted.file + "'";
      if (!seen.insert(predicted.file).second) {
        return Status(StatusCode::kInvalidArgument, "predictions file '" + path + "' lists " + where + " twice");
      }
      if (image.contains("error")) {
        const nlohmann::json& error = image["error"];
        predicted.error = error.is_object() ? error.value("message", error.dump()) : error.dump();
      } else {
        predicted.result = result_from_json(image);
      }
      predictions.images.push_back(std::move(predicted));
    }
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument,
                  "predictions file '" + path + "' is malformed at " + where + ": " + e.what());
  }
  if (predictions.images.empty()) {
    return Status(StatusCode::kInvalidArgument, "no images in predictions file '" + path + "'");
  }
  return predictions;
}

}  // namespace edgemm::cli
