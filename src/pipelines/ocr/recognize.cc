#include "pipelines/ocr/recognize.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <opencv2/imgproc.hpp>

#include "pipelines/image.h"

namespace edgemm::ocr {
namespace {

double aspect_ratio(const cv::Mat& crop) { return static_cast<double>(crop.cols) / crop.rows; }

}  // namespace

FixedGeometry fixed_geometry(const Inferencer& model) {
  FixedGeometry g;
  if (model.inputs().empty()) return g;
  const ValueInfo& in = model.inputs()[0];
  if (!in.rank_known || in.shape.size() != 4) return g;
  auto extent = [](const Dim& d) { return d.is_static() ? d.value : int64_t{0}; };
  g.batch = extent(in.shape[0]);
  g.height = extent(in.shape[2]);
  g.width = extent(in.shape[3]);
  return g;
}

Expected<std::vector<Tensor>> run_single_input(const Inferencer& model, Tensor input) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  inputs.emplace_back(model.inputs().at(0).name, std::move(input));
  return model.run(inputs);
}

std::vector<size_t> order_by_aspect_ratio(const std::vector<cv::Mat>& crops) {
  std::vector<size_t> order(crops.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return aspect_ratio(crops[a]) < aspect_ratio(crops[b]); });
  return order;
}

Expected<Tensor> line_batch_input(const std::vector<cv::Mat>& crops, const std::vector<size_t>& order, size_t begin,
                                  size_t end, int width, int64_t rows) {
  // Zero-initialised: the right padding of narrower crops and the rows beyond them stay 0.
  EDGEMM_ASSIGN_OR_RETURN(Tensor input, Tensor::create(DataType::kFloat32, {rows, 3, kLineHeight, width}));
  for (size_t i = begin; i < end; ++i) {
    const cv::Mat& crop = crops[order[i]];
    const int resized_width = std::min(width, static_cast<int>(std::ceil(kLineHeight * aspect_ratio(crop))));
    cv::Mat resized;
    // Upscaling with Lanczos keeps the gaps between words that bilinear (PaddleOCR's choice)
    // blurs away: on data/ocr_set it lowers CER from 7.4% to 3.9% (docs/ocr.md).
    cv::resize(crop, resized, cv::Size(std::max(resized_width, 1), kLineHeight), 0, 0,
               crop.rows > kLineHeight ? cv::INTER_AREA : cv::INTER_LANCZOS4);
    pipelines::write_normalized_chw(resized, kLineMean, kLineStd, input, static_cast<int64_t>(i - begin));
  }
  return input;
}

Expected<std::vector<float>> classify_180(const Inferencer& cls, const std::vector<cv::Mat>& crops, int batch) {
  std::vector<float> p180(crops.size(), 0.0f);
  const std::vector<size_t> order = order_by_aspect_ratio(crops);
  const FixedGeometry fixed = fixed_geometry(cls);
  const size_t step = fixed.batch > 0 ? static_cast<size_t>(fixed.batch) : static_cast<size_t>(batch);
  const int width = fixed.width > 0 ? static_cast<int>(fixed.width) : kClsWidth;
  for (size_t begin = 0; begin < order.size(); begin += step) {
    const size_t end = std::min(order.size(), begin + step);
    const int64_t rows = fixed.batch > 0 ? fixed.batch : static_cast<int64_t>(end - begin);
    EDGEMM_ASSIGN_OR_RETURN(Tensor input, line_batch_input(crops, order, begin, end, width, rows));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_single_input(cls, std::move(input)));
    const Tensor& probs = outputs.at(0);
    if (probs.dtype() != DataType::kFloat32 || probs.rank() != 2 || probs.dim(0) != rows || probs.dim(1) != 2) {
      return Status(StatusCode::kInvalidModel, "angle classifier output '" + cls.outputs().at(0).name + "' is " +
                                                   shape_to_string(probs.shape()) + "; expected float [" +
                                                   std::to_string(rows) + ", 2] (0° and 180° probabilities)");
    }
    for (size_t i = begin; i < end; ++i) p180[order[i]] = probs.data<float>()[2 * (i - begin) + 1];
  }
  return p180;
}

Expected<std::vector<CtcLine>> recognize(const Inferencer& rec, const std::vector<cv::Mat>& crops, int batch,
                                         const std::vector<std::string>& table, float space_threshold) {
  std::vector<CtcLine> lines(crops.size());
  const std::vector<size_t> order = order_by_aspect_ratio(crops);
  const FixedGeometry fixed = fixed_geometry(rec);
  const size_t step = fixed.batch > 0 ? static_cast<size_t>(fixed.batch) : static_cast<size_t>(batch);
  for (size_t begin = 0; begin < order.size(); begin += step) {
    const size_t end = std::min(order.size(), begin + step);
    const int64_t rows = fixed.batch > 0 ? fixed.batch : static_cast<int64_t>(end - begin);
    double widest = static_cast<double>(kRecMinWidth) / kLineHeight;
    for (size_t i = begin; i < end; ++i) widest = std::max(widest, aspect_ratio(crops[order[i]]));
    const int width = fixed.width > 0 ? static_cast<int>(fixed.width) : static_cast<int>(kLineHeight * widest);
    EDGEMM_ASSIGN_OR_RETURN(Tensor input, line_batch_input(crops, order, begin, end, width, rows));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_single_input(rec, std::move(input)));
    const Tensor& probs = outputs.at(0);
    if (probs.dtype() != DataType::kFloat32 || probs.rank() != 3 || probs.dim(0) != rows) {
      return Status(StatusCode::kInvalidModel, "recognizer output '" + rec.outputs().at(0).name + "' is " +
                                                   shape_to_string(probs.shape()) + "; expected float [" +
                                                   std::to_string(rows) + ", T, classes]");
    }
    const int64_t steps = probs.dim(1);
    const int64_t classes = probs.dim(2);
    for (size_t i = begin; i < end; ++i) {
      EDGEMM_ASSIGN_OR_RETURN(lines[order[i]], ctc_greedy_decode(probs.data<float>() + (i - begin) * steps * classes,
                                                                 steps, classes, table, space_threshold));
    }
  }
  return lines;
}

}  // namespace edgemm::ocr
