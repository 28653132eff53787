#include "ocr_calibration.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "cli_common.h"
#include "edgemm/pipelines/ocr.h"

namespace edgemm::cli {

namespace {

/// The pipeline and the stage inputs it recorded during the current run.
struct Recorder {
  std::unique_ptr<ocr::OcrPipeline> pipeline;
  std::shared_ptr<std::vector<Tensor>> captured = std::make_shared<std::vector<Tensor>>();
};

}  // namespace

Expected<std::string> ocr_stage(const std::string& stage) {
  if (stage == "ocr-det" || stage == "ocr-cls" || stage == "ocr-rec") return stage.substr(4);
  return make_error(StatusCode::kInvalidArgument, "--stage must be ocr-det, ocr-cls or ocr-rec, got '" + stage + "'");
}

Expected<quant::FeedSource> ocr_stage_feeds(const OcrStageOptions& o, const std::string& input) {
  auto recorder = std::make_shared<Recorder>();
  ocr::OcrOptions options;
  options.models_dir = o.models_dir.empty() ? default_ocr_models_dir() : o.models_dir;
  options.threads = o.threads;
  options.use_cls = o.stage != "det";
  if (!o.stage_model.empty()) {
    const std::string path = std::filesystem::absolute(o.stage_model).string();
    (o.stage == "det" ? options.files.det : o.stage == "cls" ? options.files.cls : options.files.rec) = path;
  }
  options.input_observer = [stage = o.stage, captured = recorder->captured](const std::string& s, const Tensor& t) {
    if (s == stage) captured->push_back(t.clone().value());
  };
  EDGEMM_ASSIGN_OR_RETURN(recorder->pipeline, ocr::OcrPipeline::create(options));
  return quant::FeedSource([recorder, input](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    recorder->captured->clear();
    EDGEMM_RETURN_IF_ERROR(recorder->pipeline->run_file(s.path).status());
    std::vector<quant::Feed> feeds;
    for (Tensor& t : *recorder->captured) feeds.push_back({{input, std::move(t)}});
    recorder->captured->clear();
    return feeds;
  });
}

StageNormalization ocr_stage_normalization(const std::string& stage) {
  const std::array<float, 3>& mean = stage == "det" ? ocr::kDetMean : ocr::kLineMean;
  const std::array<float, 3>& std = stage == "det" ? ocr::kDetStd : ocr::kLineStd;
  StageNormalization n;
  for (int c = 0; c < 3; ++c) {
    n.mean_bgr[c] = mean[c] * 255.0f;
    n.std_bgr[c] = std[c] * 255.0f;
  }
  return n;
}

}  // namespace edgemm::cli
