#include "pipelines/ocr/recognize.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

Expected<std::vector<float>> classify_180(const Inferencer& cls, const std::vector<cv::Mat>& all_crops, int batch) {
  // A long line squeezed into the classifier's input misleads it (upright pages of 45:1 lines
  // were called upside down); it sees the line's first kClsMaxAspect : 1 instead (no copy).
  std::vector<cv::Mat> crops;
  crops.reserve(all_crops.size());
  for (const cv::Mat& crop : all_crops) {
    const int head = static_cast<int>(kClsMaxAspect * crop.rows);
    crops.push_back(crop.cols > head ? crop(cv::Rect(0, 0, head, crop.rows)) : crop);
  }
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

std::vector<LinePiece> split_line(const cv::Mat& crop, int width) {
  cv::Mat line;
  const int resized_width = std::max(1, static_cast<int>(std::ceil(kLineHeight * aspect_ratio(crop))));
  cv::resize(crop, line, cv::Size(resized_width, kLineHeight), 0, 0,
             crop.rows > kLineHeight ? cv::INTER_AREA : cv::INTER_LANCZOS4);
  if (line.cols <= width) return {{line, false}};
  cv::Mat gray, binary;
  cv::cvtColor(line, gray, cv::COLOR_BGR2GRAY);
  cv::threshold(gray, binary, 0, 1, cv::THRESH_BINARY | cv::THRESH_OTSU);
  // The background is the class of the top and bottom rows (the line's margins): ink = 1.
  const int border = cv::countNonZero(binary.row(0)) + cv::countNonZero(binary.row(binary.rows - 1));
  if (border > binary.cols) binary = 1 - binary;
  std::vector<int> ink(line.cols, 0);
  for (int y = 0; y < binary.rows; ++y) {
    for (int x = 0; x < binary.cols; ++x) ink[x] += binary.at<uint8_t>(y, x);
  }
  std::vector<LinePiece> pieces;
  int start = 0;
  bool gap_before = false;
  while (line.cols - start > width) {
    int best_begin = -1, best_length = 0;
    for (int x = start + width / 2; x < start + width;) {
      if (ink[x] > 1) {
        ++x;
        continue;
      }
      int end = x;
      while (end < start + width && ink[end] <= 1) ++end;
      if (end - x >= best_length) {
        best_begin = x;
        best_length = end - x;
      }
      x = end;
    }
    const int cut = best_length > 0 ? best_begin + best_length / 2 : start + width;
    pieces.push_back({line(cv::Rect(start, 0, cut - start, kLineHeight)).clone(), gap_before});
    gap_before = best_length >= kWordGap;
    start = cut;
  }
  pieces.push_back({line(cv::Rect(start, 0, line.cols - start, kLineHeight)).clone(), gap_before});
  return pieces;
}

Expected<std::vector<CtcLine>> recognize_by_width(const std::vector<const Inferencer*>& recs,
                                                  const std::vector<cv::Mat>& crops, int batch,
                                                  const std::vector<std::string>& table, float space_threshold) {
  // A dynamic width holds any line: order it after every static one.
  auto capacity = [](const Inferencer* rec) {
    const int64_t width = fixed_geometry(*rec).width;
    return width > 0 ? width : std::numeric_limits<int64_t>::max();
  };
  std::vector<const Inferencer*> by_width = recs;
  std::stable_sort(by_width.begin(), by_width.end(),
                   [&](const Inferencer* a, const Inferencer* b) { return capacity(a) < capacity(b); });
  // Crops too wide for the widest static recognizer are read in pieces there.
  const int64_t widest = capacity(by_width.back());
  std::vector<std::vector<LinePiece>> split(crops.size());
  std::vector<cv::Mat> inputs;  // the crops, and each split crop's pieces in its place
  std::vector<size_t> first_input(crops.size());
  for (size_t i = 0; i < crops.size(); ++i) {
    first_input[i] = inputs.size();
    if (widest != std::numeric_limits<int64_t>::max() && kLineHeight * aspect_ratio(crops[i]) > widest) {
      split[i] = split_line(crops[i], static_cast<int>(widest));
      for (const LinePiece& piece : split[i]) inputs.push_back(piece.crop);
    } else {
      inputs.push_back(crops[i]);
    }
  }
  std::vector<std::vector<size_t>> assigned(by_width.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto needed = static_cast<int64_t>(std::ceil(kLineHeight * aspect_ratio(inputs[i])));
    size_t k = 0;
    while (k + 1 < by_width.size() && capacity(by_width[k]) < needed) ++k;
    assigned[k].push_back(i);
  }
  std::vector<CtcLine> read(inputs.size());
  for (size_t k = 0; k < by_width.size(); ++k) {
    if (assigned[k].empty()) continue;
    std::vector<cv::Mat> subset;
    for (size_t i : assigned[k]) subset.push_back(inputs[i]);
    EDGEMM_ASSIGN_OR_RETURN(std::vector<CtcLine> lines, recognize(*by_width[k], subset, batch, table, space_threshold));
    for (size_t j = 0; j < assigned[k].size(); ++j) read[assigned[k][j]] = std::move(lines[j]);
  }
  std::vector<CtcLine> lines(crops.size());
  for (size_t i = 0; i < crops.size(); ++i) {
    if (split[i].empty()) {
      lines[i] = std::move(read[first_input[i]]);
      continue;
    }
    double score = 0;
    for (size_t p = 0; p < split[i].size(); ++p) {
      const CtcLine& piece = read[first_input[i] + p];
      const std::string& text = lines[i].text;
      const bool ascii_join = !text.empty() && !piece.text.empty() && static_cast<unsigned char>(text.back()) < 0x80 &&
                              static_cast<unsigned char>(piece.text.front()) < 0x80 && text.back() != ' ' &&
                              piece.text.front() != ' ';
      lines[i].text += (split[i][p].word_gap_before && ascii_join ? " " : "") + piece.text;
      score += piece.score;
    }
    lines[i].score = static_cast<float>(score / static_cast<double>(split[i].size()));
  }
  return lines;
}

}  // namespace edgemm::ocr
