#include "bench/pipeline_bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bench/node_host_runtime.h"
#include "edgemm/pipelines/ocr.h"

namespace edgemm::bench {

namespace {

namespace fs = std::filesystem;

/// The OCR pipeline as a benchmark runtime: each run OCRs the next image of the set.
class OcrRuntime : public BenchRuntime {
 public:
  OcrRuntime(ocr::OcrOptions options, std::vector<std::string> images)
      : options_(std::move(options)), images_(std::move(images)) {}

  std::string name() const override { return "edgemm"; }
  std::string version() const override { return EDGEMM_VERSION; }
  nlohmann::json settings() const override {
    nlohmann::json settings = {
        {"threads", options_.threads},    {"use_cls", options_.use_cls}, {"det_limit_side", options_.det_limit_side},
        {"models", options_.models_dir},  {"backend", options_.backend}, {"device", options_.device},
        {"precision", options_.precision}};
    if (!options_.plugin_path.empty()) settings["plugin"] = options_.plugin_path;
    if (pipeline_) {
      for (const auto& [stage, model] : pipeline_->models()) settings["placement"][stage] = placement_counts(*model);
    }
    return settings;
  }

  Expected<double> load() override {
    const auto start = std::chrono::steady_clock::now();
    EDGEMM_ASSIGN_OR_RETURN(pipeline_, ocr::OcrPipeline::create(options_));
    return ms_since(start);
  }

  Expected<std::vector<double>> run(int iters) override {
    std::vector<double> times;
    for (int i = 0; i < iters; ++i) {
      const std::string& image = images_[next_++ % images_.size()];
      const auto start = std::chrono::steady_clock::now();
      auto result = pipeline_->run_file(image);
      if (!result) return make_error(result.status().code(), image + ": " + result.status().message());
      times.push_back(ms_since(start));
      stages_.push_back(result->timings);
    }
    return times;
  }

  /// Median of each stage over the last `count` runs (the timed ones), in pipeline order.
  std::vector<std::pair<std::string, double>> stage_medians(size_t count) const {
    const size_t first = stages_.size() - std::min(count, stages_.size());
    auto median_of = [&](double ocr::OcrTimings::*field) {
      std::vector<double> values;
      for (size_t i = first; i < stages_.size(); ++i) values.push_back(stages_[i].*field);
      return summarize(values).median;
    };
    return {{"decode", median_of(&ocr::OcrTimings::decode_ms)},
            {"det", median_of(&ocr::OcrTimings::det_ms)},
            {"post", median_of(&ocr::OcrTimings::post_ms)},
            {"cls", median_of(&ocr::OcrTimings::cls_ms)},
            {"rec", median_of(&ocr::OcrTimings::rec_ms)}};
  }

 private:
  ocr::OcrOptions options_;
  std::vector<std::string> images_;
  std::unique_ptr<ocr::OcrPipeline> pipeline_;
  size_t next_ = 0;
  std::vector<ocr::OcrTimings> stages_;
};

/// Guten OCR on the same images and model files, in its node host.
std::unique_ptr<BenchRuntime> make_guten_runtime(const PipelineBenchOptions& options, int threads,
                                                 const std::vector<std::string>& images) {
  NodeHostSpec spec;
  spec.runtime_name = "guten-ocr";
  spec.script = "guten_server.js";
  spec.package = "@gutenye/ocr-node";
  spec.settings = {{"pipeline", "PP-OCRv4 det + rec, no angle classifier"},
                   {"runtime", "onnxruntime-node"},
                   {"intraOpNumThreads", threads},
                   {"interOpNumThreads", 1},
                   {"executionMode", "sequential"}};
  nlohmann::json absolute_images = nlohmann::json::array();
  for (const auto& image : images) absolute_images.push_back(fs::absolute(image).string());
  const nlohmann::json request = {
      {"models", fs::absolute(options.models_dir).string()}, {"threads", threads}, {"images", absolute_images}};
  spec.load_request = [request](const std::string&) -> Expected<nlohmann::json> { return request; };
  return make_node_host_runtime(std::move(spec), options.reference_dir, options.timeout_s);
}

}  // namespace

Expected<std::vector<std::string>> list_images(const std::string& dir) {
  static const std::vector<std::string> kExtensions = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(StatusCode::kIo, "'" + dir + "' is not a folder");
  std::vector<std::string> images;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (it->is_regular_file(ec) && std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end()) {
      images.push_back(it->path().string());
    }
  }
  if (ec) return make_error(StatusCode::kIo, "cannot list '" + dir + "': " + ec.message());
  if (images.empty()) return make_error(StatusCode::kIo, "'" + dir + "' holds no image (.jpg, .png, ...)");
  std::sort(images.begin(), images.end());
  return images;
}

Expected<std::vector<BenchPoint>> bench_pipeline(const PipelineBenchOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<std::string> images, list_images(options.set_dir));
  const int n = static_cast<int>(images.size());
  std::vector<BenchPoint> points;
  for (int threads : options.threads) {
    if (options.on_point) {
      options.on_point(static_cast<int>(points.size()), static_cast<int>(options.threads.size()),
                       "threads " + std::to_string(threads));
    }
    ocr::OcrOptions ocr_options;
    ocr_options.models_dir = options.models_dir;
    ocr_options.use_cls = options.use_cls;
    ocr_options.threads = threads;
    ocr_options.backend = options.edgemm_backend.backend;
    ocr_options.device = options.edgemm_backend.device;
    ocr_options.precision = options.edgemm_backend.precision;
    ocr_options.plugin_path = options.edgemm_backend.plugin_path;
    std::vector<std::unique_ptr<BenchRuntime>> runtimes;
    runtimes.push_back(std::make_unique<OcrRuntime>(ocr_options, images));
    auto* ocr_runtime = static_cast<OcrRuntime*>(runtimes.back().get());
    for (const auto& peer : options.peers) {
      if (peer != "guten-ocr") return make_error(StatusCode::kInvalidArgument, "unknown OCR peer '" + peer + "'");
      runtimes.push_back(make_guten_runtime(options, threads, images));
    }
    BenchPoint point;
    point.threads = threads;
    point.inputs = std::to_string(n) + (n == 1 ? " image in " : " images in ") + options.set_dir;
    point.runtimes = compare_runtimes(runtimes, options.compare);
    if (point.runtimes[0].ok())
      point.runtimes[0].stage_median_ms = ocr_runtime->stage_medians(point.runtimes[0].times_ms.size());
    finish_point(point);
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace edgemm::bench
