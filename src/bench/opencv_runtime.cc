#include <chrono>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include "bench/runtimes.h"

namespace edgemm::bench {

namespace {

/// The "Parallel framework" line of OpenCV's build information, e.g. "TBB (ver 2021.8 interface 12080)".
std::string parallel_framework() {
  const std::string info = cv::getBuildInformation();
  const size_t key = info.find("Parallel framework:");
  if (key == std::string::npos) return "unknown";
  const size_t start = info.find_first_not_of(' ', key + 19);
  return info.substr(start, info.find('\n', start) - start);
}

class OpenCvRuntime : public BenchRuntime {
 public:
  explicit OpenCvRuntime(const RuntimeSetup& setup) : setup_(setup) {}

  std::string name() const override { return "opencv"; }
  std::string version() const override { return CV_VERSION; }
  nlohmann::json settings() const override {
    return {{"threads", setup_.threads},
            {"backend", "DNN_BACKEND_OPENCV"},
            {"target", "DNN_TARGET_CPU"},
            {"parallel_framework", parallel_framework()}};
  }

  /// readNetFromONNX parses and builds layers; OpenCV allocates blobs and picks kernels on the
  /// first forward(), which the benchmark's cold run therefore includes.
  Expected<double> load() override {
    for (const auto& [name, t] : setup_.inputs) {
      if (t.dtype() != DataType::kFloat32) {
        return make_error(StatusCode::kUnsupported, "input '" + name + "' is " + dtype_name(t.dtype()) +
                                                        "; this peer feeds OpenCV DNN float32 inputs only");
      }
    }
    cv::setNumThreads(setup_.threads);
    // The error comes back in the exception; OpenCV's own log lines would only repeat it.
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    const auto start = std::chrono::steady_clock::now();
    try {
      net_ = cv::dnn::readNetFromONNX(setup_.model_path);
      net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
      for (const auto& [name, t] : setup_.inputs) {
        const std::vector<int> dims(t.shape().begin(), t.shape().end());
        cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F, const_cast<void*>(t.raw_data()));
        net_.setInput(blob.clone(), name);
      }
    } catch (const cv::Exception& e) {
      return make_error(StatusCode::kUnsupported, std::string("OpenCV DNN cannot load the model: ") + e.what());
    }
    return ms_since(start);
  }

  Expected<std::vector<double>> run(int iters) override {
    cv::setNumThreads(setup_.threads);
    std::vector<double> times;
    std::vector<cv::Mat> outputs;
    try {
      for (int i = 0; i < iters; ++i) {
        const auto start = std::chrono::steady_clock::now();
        net_.forward(outputs, net_.getUnconnectedOutLayersNames());
        times.push_back(ms_since(start));
      }
    } catch (const cv::Exception& e) {
      return make_error(StatusCode::kUnsupported, std::string("OpenCV DNN cannot run the model: ") + e.what());
    }
    return times;
  }

 private:
  RuntimeSetup setup_;
  cv::dnn::Net net_;
};

}  // namespace

std::unique_ptr<BenchRuntime> make_opencv_runtime(const RuntimeSetup& setup) {
  return std::make_unique<OpenCvRuntime>(setup);
}

}  // namespace edgemm::bench
