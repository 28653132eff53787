/// OcrPipeline: det → DB post-processing → reading order → crops → (cls) → rec → CTC, in the
/// order of PaddleOCR's TextSystem (tools/infer/predict_system.py).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "edgemm/inferencer.h"
#include "edgemm/pipelines/ocr.h"
#include "pipelines/image.h"
#include "pipelines/ocr/crop.h"
#include "pipelines/ocr/ctc.h"
#include "pipelines/ocr/det.h"
#include "pipelines/ocr/orientation.h"
#include "pipelines/ocr/recognize.h"

namespace edgemm::ocr {
namespace {

/// How much more confident (mean CTC probability) the reading of a line turned 180° must be than
/// the reading as detected for the turned one to win (docs/ocr.md, "read both ways").
constexpr float kTurnedReadingMargin = 0.1F;

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

Status validate(const OcrOptions& o) {
  auto bad = [](const std::string& what) { return Status(StatusCode::kInvalidArgument, "OCR option " + what); };
  if (o.threads < 0) return bad("threads must be >= 0, got " + std::to_string(o.threads));
  if (o.det_limit_side < 32 || o.det_limit_side > 8192) {
    return bad("det_limit_side must be in [32, 8192], got " + std::to_string(o.det_limit_side));
  }
  auto in_unit = [](float v) { return v >= 0.0f && v <= 1.0f; };
  if (!in_unit(o.det_threshold)) return bad("det_threshold must be in [0, 1], got " + std::to_string(o.det_threshold));
  if (!in_unit(o.box_threshold)) return bad("box_threshold must be in [0, 1], got " + std::to_string(o.box_threshold));
  if (!in_unit(o.cls_threshold)) return bad("cls_threshold must be in [0, 1], got " + std::to_string(o.cls_threshold));
  if (!in_unit(o.space_threshold)) {
    return bad("space_threshold must be in [0, 1], got " + std::to_string(o.space_threshold));
  }
  if (!in_unit(o.rec_score_threshold)) {
    return bad("rec_score_threshold must be in [0, 1], got " + std::to_string(o.rec_score_threshold));
  }
  if (o.max_candidates < 1) return bad("max_candidates must be >= 1, got " + std::to_string(o.max_candidates));
  if (!(o.unclip_ratio > 0.0f && o.unclip_ratio <= 10.0f)) {
    return bad("unclip_ratio must be in (0, 10], got " + std::to_string(o.unclip_ratio));
  }
  if (o.cls_batch < 1 || o.rec_batch < 1) return bad("cls_batch and rec_batch must be >= 1");
  if (o.min_box_side < 1) return bad("min_box_side must be >= 1, got " + std::to_string(o.min_box_side));
  return Status::ok();
}

// An Inferencer that shows every run's inputs to OcrOptions::input_observer first.
class ObservedInferencer final : public Inferencer {
 public:
  ObservedInferencer(std::unique_ptr<Inferencer> model, std::string stage, const OcrOptions& options)
      : model_(std::move(model)), stage_(std::move(stage)), observer_(options.input_observer) {}

  const std::vector<ValueInfo>& inputs() const override { return model_->inputs(); }
  const std::vector<ValueInfo>& outputs() const override { return model_->outputs(); }
  Expected<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const std::vector<std::string>& output_names) const override {
    for (const auto& [name, t] : inputs) observer_(stage_, t);
    return model_->run(inputs, output_names);
  }
  Expected<ProfiledRun> run_profiled(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                     const std::vector<std::string>& output_names) const override {
    for (const auto& [name, t] : inputs) observer_(stage_, t);
    return model_->run_profiled(inputs, output_names);
  }
  MemoryReport memory_report() const override { return model_->memory_report(); }
  const std::vector<NodePlacement>& placement() const override { return model_->placement(); }
  const std::string& backend() const override { return model_->backend(); }

 private:
  std::unique_ptr<Inferencer> model_;
  std::string stage_;
  std::function<void(const std::string&, const Tensor&)> observer_;
};

/// kIo naming every file the pipeline needs that is missing from options.models_dir (det, rec,
/// dictionary, and cls when used), so that one run reports all of them.
Status check_model_files(const OcrOptions& options) {
  std::vector<std::string> files = {options.files.det, options.files.rec, options.files.dictionary};
  files.insert(files.end(), options.files.rec_buckets.begin(), options.files.rec_buckets.end());
  if (options.use_cls) files.push_back(options.files.cls);
  std::string missing;
  for (const std::string& file : files) {
    const std::string path = (std::filesystem::path(options.models_dir) / file).string();
    if (!std::filesystem::exists(path)) missing += (missing.empty() ? "'" : ", '") + path + "'";
  }
  if (missing.empty()) return Status::ok();
  return Status(StatusCode::kIo,
                "OCR model files not found: " + missing + " (fetch PP-OCRv4 with edgemm-fetch-ppocr-models DIR, or scripts/setup.sh in a source tree, which fills models/ppocrv4)");
}

Expected<std::unique_ptr<Inferencer>> load_model(const OcrOptions& options, const std::string& file,
                                                 const std::string& stage) {
  const std::string path = (std::filesystem::path(options.models_dir) / file).string();
  InferencerConfig config;
  static_cast<RuntimeOptions&>(config) = options;
  config.model_path = path;
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> model, Inferencer::create(config));
  if (!options.input_observer) return model;
  return std::unique_ptr<Inferencer>(new ObservedInferencer(std::move(model), stage, options));
}

class NativeOcrPipeline final : public OcrPipeline {
 public:
  NativeOcrPipeline(OcrOptions options, std::unique_ptr<Inferencer> det, std::unique_ptr<Inferencer> cls,
                    std::vector<std::unique_ptr<Inferencer>> recs, std::vector<std::string> table)
      : options_(std::move(options)),
        det_(std::move(det)),
        cls_(std::move(cls)),
        recs_(std::move(recs)),
        table_(std::move(table)) {}

  Expected<OcrResult> run_file(const std::string& path) const override {
    const Clock::time_point start = Clock::now();
    EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::read_image_bgr(path));
    const double decode_ms = elapsed_ms(start);
    EDGEMM_ASSIGN_OR_RETURN(OcrResult result, recognize_image(bgr));
    result.timings.decode_ms = decode_ms;
    result.timings.total_ms = elapsed_ms(start);
    return result;
  }

  Expected<OcrResult> run(const ImageView& image) const override {
    const Clock::time_point start = Clock::now();
    EDGEMM_ASSIGN_OR_RETURN(cv::Mat bgr, pipelines::image_view_to_bgr(image));
    EDGEMM_ASSIGN_OR_RETURN(OcrResult result, recognize_image(bgr));
    result.timings.total_ms = elapsed_ms(start);
    return result;
  }

  const OcrOptions& options() const override { return options_; }

  std::vector<std::pair<std::string, const Inferencer*>> models() const override {
    std::vector<std::pair<std::string, const Inferencer*>> list = {{"det", det_.get()}};
    if (cls_ != nullptr) list.emplace_back("cls", cls_.get());
    list.emplace_back("rec", recs_[0].get());
    for (size_t k = 1; k < recs_.size(); ++k)
      list.emplace_back("rec:" + options_.files.rec_buckets[k - 1], recs_[k].get());
    return list;
  }

 private:
  Expected<std::vector<DetectedBox>> detect(const cv::Mat& bgr, OcrTimings& timings) const {
    Clock::time_point start = Clock::now();
    const FixedGeometry fixed = fixed_geometry(*det_);
    const cv::Size fixed_size(static_cast<int>(fixed.width), static_cast<int>(fixed.height));
    EDGEMM_ASSIGN_OR_RETURN(Tensor input, det_preprocess(bgr, options_.det_limit_side, fixed_size));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_single_input(*det_, std::move(input)));
    timings.det_ms += elapsed_ms(start);
    start = Clock::now();
    const Tensor& map = outputs.at(0);
    if (map.dtype() != DataType::kFloat32 || map.rank() != 4 || map.dim(0) != 1 || map.dim(1) != 1) {
      return Status(StatusCode::kInvalidModel, "detector output '" + det_->outputs().at(0).name + "' is " +
                                                   shape_to_string(map.shape()) + "; expected float [1, 1, H, W]");
    }
    const cv::Mat prob(static_cast<int>(map.dim(2)), static_cast<int>(map.dim(3)), CV_32F,
                       const_cast<float*>(map.data<float>()));
    DbParams params;
    params.threshold = options_.det_threshold;
    params.box_threshold = options_.box_threshold;
    params.max_candidates = options_.max_candidates;
    params.unclip_ratio = options_.unclip_ratio;
    params.score_mode = options_.score_mode;
    params.min_side = options_.min_box_side;
    cv::Size content;  // the letterboxed image's part of the map (det_preprocess)
    if (!fixed_size.empty()) {
      const cv::Size in_input = det_letterbox_size(bgr.size(), fixed_size);
      content = cv::Size(std::max(1, in_input.width * prob.cols / fixed_size.width),
                         std::max(1, in_input.height * prob.rows / fixed_size.height));
    }
    std::vector<DetectedBox> boxes = db_postprocess(prob, bgr.size(), params, content);
    sort_reading_order(boxes, options_.line_tolerance);
    timings.post_ms += elapsed_ms(start);
    return boxes;
  }

  /// The lines detected on one image, their crops and, with the classifier, each crop's
  /// probability of being upside down.
  struct Reading {
    std::vector<DetectedBox> boxes;
    std::vector<cv::Mat> crops;
    std::vector<float> p180;  // empty without the classifier
  };

  Expected<Reading> read_lines(const cv::Mat& bgr, OcrTimings& timings) const {
    Reading reading;
    EDGEMM_ASSIGN_OR_RETURN(reading.boxes, detect(bgr, timings));
    Clock::time_point start = Clock::now();
    for (const DetectedBox& box : reading.boxes) reading.crops.push_back(crop_text_region(bgr, box.quad));
    timings.post_ms += elapsed_ms(start);
    if (cls_ != nullptr && !reading.crops.empty()) {
      start = Clock::now();
      EDGEMM_ASSIGN_OR_RETURN(reading.p180, classify_180(*cls_, reading.crops, options_.cls_batch));
      timings.cls_ms += elapsed_ms(start);
    }
    return reading;
  }

  /// Clockwise degrees the image is turned by (image_orientation over the reading's lines).
  static int orientation_of(const Reading& reading) {
    std::vector<OrientationVote> votes;
    for (size_t i = 0; i < reading.boxes.size(); ++i)
      votes.push_back(orientation_vote(reading.boxes[i].quad, reading.p180[i]));
    return image_orientation(votes);
  }

  Expected<std::vector<CtcLine>> recognize_lines(const std::vector<cv::Mat>& crops) const {
    std::vector<const Inferencer*> recs;
    for (const auto& rec : recs_) recs.push_back(rec.get());
    return recognize_by_width(recs, crops, options_.rec_batch, table_, options_.space_threshold);
  }

  Expected<OcrResult> recognize_image(const cv::Mat& bgr) const {
    OcrResult result;
    result.width = bgr.cols;
    result.height = bgr.rows;
    EDGEMM_ASSIGN_OR_RETURN(Reading reading, read_lines(bgr, result.timings));
    if (cls_ != nullptr && options_.detect_orientation && !reading.boxes.empty()) {
      result.orientation = orientation_of(reading);
      if (result.orientation != 0) {
        EDGEMM_ASSIGN_OR_RETURN(reading, read_lines(turn_upright(bgr, result.orientation), result.timings));
      }
    }
    // A line the classifier finds upside down is read both ways; the turned reading wins only
    // when clearly more confident, so that short upright words the classifier gets wrong are
    // not read turned. The turned copies are recognized apart, so the other lines' batches stay
    // as without them.
    const Clock::time_point start = Clock::now();
    std::vector<CtcLine> texts;
    if (!reading.crops.empty()) {
      EDGEMM_ASSIGN_OR_RETURN(texts, recognize_lines(reading.crops));
    }
    std::vector<size_t> turned_of(reading.crops.size(), 0);  // 1 + index into turned_texts, 0: none
    std::vector<cv::Mat> turned_crops;
    for (size_t i = 0; i < reading.p180.size(); ++i) {
      if (reading.p180[i] <= options_.cls_threshold) continue;
      turned_crops.emplace_back();
      cv::rotate(reading.crops[i], turned_crops.back(), cv::ROTATE_180);
      turned_of[i] = turned_crops.size();
    }
    std::vector<CtcLine> turned_texts;
    if (!turned_crops.empty()) {
      EDGEMM_ASSIGN_OR_RETURN(turned_texts, recognize_lines(turned_crops));
    }
    result.timings.rec_ms = elapsed_ms(start);
    for (size_t i = 0; i < reading.boxes.size(); ++i) {
      const bool turned =
          turned_of[i] != 0 && turned_texts[turned_of[i] - 1].score > texts[i].score + kTurnedReadingMargin;
      CtcLine& text = turned ? turned_texts[turned_of[i] - 1] : texts[i];
      if (text.score < options_.rec_score_threshold) continue;
      OcrLine line;
      line.polygon = quad_in_turned_image(reading.boxes[i].quad, result.orientation, bgr.size());
      line.text = std::move(text.text);
      line.score = text.score;
      line.box_score = reading.boxes[i].score;
      line.rotated_180 = turned;
      result.lines.push_back(std::move(line));
    }
    return result;
  }

  OcrOptions options_;
  std::unique_ptr<Inferencer> det_;
  std::unique_ptr<Inferencer> cls_;                // null when options_.use_cls is false
  std::vector<std::unique_ptr<Inferencer>> recs_;  // files.rec, then files.rec_buckets
  std::vector<std::string> table_;
};

Status check_rec_classes(const Inferencer& rec, size_t table_size, const std::string& dictionary,
                         const std::string& file) {
  const std::vector<ValueInfo>& outputs = rec.outputs();
  if (outputs.empty() || outputs[0].shape.size() != 3) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + file + "' is not a text recognizer: " +
                      (outputs.empty() ? std::string("it has no output")
                                       : "its output '" + outputs[0].name + "' has rank " +
                                             std::to_string(outputs[0].shape.size())) +
                      "; a PP-OCR recognizer outputs [batch, time steps, classes]");
  }
  const Dim& classes = outputs[0].shape[2];
  if (classes.is_static() && classes.value != static_cast<int64_t>(table_size)) {
    return Status(StatusCode::kInvalidArgument,
                  "dictionary '" + dictionary + "' gives " + std::to_string(table_size) +
                      " classes (blank + characters + space) but the recognizer outputs " +
                      std::to_string(classes.value));
  }
  return Status::ok();
}

/// Warns (stderr) about a static det input that costs accuracy, with what docs/ocr.md measured
/// on the committed set: a side below 960 loses small text. (Static rec widths cost little:
/// lines wider than every recognizer are cut at gaps and read in pieces, recognize_by_width.)
void warn_about_static_det(const Inferencer& det) {
  const FixedGeometry d = fixed_geometry(det);
  if (d.height > 0 && d.width > 0 && std::min(d.height, d.width) < 960) {
    std::fprintf(stderr,
                 "edgemm: warning: the detector's static input is %lldx%lld; images are letterboxed into it and "
                 "small text is lost (docs/ocr.md: line recall 0.92 at 640x640, 0.98 at 960x960)\n",
                 static_cast<long long>(d.width), static_cast<long long>(d.height));
  }
}

/// A cls or rec model with a static input height must have PP-OCR's line height.
Status check_line_height(const Inferencer& model, const std::string& what) {
  const int64_t height = fixed_geometry(model).height;
  if (height == 0 || height == kLineHeight) return Status::ok();
  return Status(StatusCode::kInvalidArgument,
                what + " input '" + model.inputs().at(0).name + "' has a static height of " + std::to_string(height) +
                    "; the pipeline feeds text lines " + std::to_string(kLineHeight) + " pixels high");
}

}  // namespace

Expected<std::unique_ptr<OcrPipeline>> OcrPipeline::create(const OcrOptions& options) {
  EDGEMM_RETURN_IF_ERROR(validate(options));
  std::error_code ec;
  if (!std::filesystem::is_directory(options.models_dir, ec)) {
    return Status(StatusCode::kIo, "OCR model folder '" + options.models_dir +
                                       "' not found (fetch PP-OCRv4 with edgemm-fetch-ppocr-models DIR, or scripts/setup.sh in a source tree, which fills models/ppocrv4)");
  }
  EDGEMM_RETURN_IF_ERROR(check_model_files(options));
  const std::string dictionary = (std::filesystem::path(options.models_dir) / options.files.dictionary).string();
  EDGEMM_ASSIGN_OR_RETURN(std::vector<std::string> table, load_ctc_dictionary(dictionary));
  // OpenCV's own thread pool (TBB in Debian's build) would run beside the models' OpenMP threads
  // and oversubscribe the cores: give it the same count (process-wide, as cv::setNumThreads is).
  cv::setNumThreads(options.threads > 0 ? options.threads : cv::getNumberOfCPUs());
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> det, load_model(options, options.files.det, "det"));
  std::unique_ptr<Inferencer> cls;
  if (options.use_cls) {
    EDGEMM_ASSIGN_OR_RETURN(cls, load_model(options, options.files.cls, "cls"));
    EDGEMM_RETURN_IF_ERROR(check_line_height(*cls, "angle classifier"));
  }
  std::vector<std::string> rec_files = {options.files.rec};
  rec_files.insert(rec_files.end(), options.files.rec_buckets.begin(), options.files.rec_buckets.end());
  std::vector<std::unique_ptr<Inferencer>> recs;
  for (const std::string& file : rec_files) {
    EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> rec, load_model(options, file, "rec"));
    EDGEMM_RETURN_IF_ERROR(check_line_height(*rec, "recognizer '" + file + "'"));
    EDGEMM_RETURN_IF_ERROR(check_rec_classes(*rec, table.size(), dictionary, file));
    if (!recs.empty() && fixed_geometry(*rec).width == 0) {
      return Status(StatusCode::kInvalidArgument,
                    "--rec-bucket '" + file +
                        "' has a dynamic input width; a bucket is a recognizer fixed to one width (edgemm convert "
                        "--fix-shape x=1,3,48,W)");
    }
    recs.push_back(std::move(rec));
  }
  warn_about_static_det(*det);
  return std::unique_ptr<OcrPipeline>(
      new NativeOcrPipeline(options, std::move(det), std::move(cls), std::move(recs), std::move(table)));
}

}  // namespace edgemm::ocr
