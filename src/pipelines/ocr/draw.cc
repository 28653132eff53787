/// draw_result(): the `edgemm ocr --draw` picture.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "edgemm/atomic_file.h"
#include "edgemm/pipelines/ocr.h"
#include "pipelines/image.h"

namespace edgemm::ocr {

Status draw_result(const std::string& image_path, const OcrResult& result, const std::string& output_path) {
  EDGEMM_ASSIGN_OR_RETURN(cv::Mat canvas, pipelines::read_image_bgr(image_path));
  if (canvas.cols != result.width || canvas.rows != result.height) {
    return Status(StatusCode::kInvalidArgument, "image '" + image_path + "' is " + std::to_string(canvas.cols) + "x" +
                                                    std::to_string(canvas.rows) + " but the OCR result is for " +
                                                    std::to_string(result.width) + "x" + std::to_string(result.height));
  }
  const int thickness = std::max(1, static_cast<int>(std::lround(std::max(canvas.cols, canvas.rows) / 600.0)));
  const double font_scale = 0.4 * thickness;
  for (size_t i = 0; i < result.lines.size(); ++i) {
    const OcrLine& line = result.lines[i];
    std::vector<cv::Point> polygon;
    for (const Point& p : line.polygon) polygon.emplace_back(static_cast<int>(p.x), static_cast<int>(p.y));
    const cv::Scalar color = line.rotated_180 ? cv::Scalar(255, 0, 255) : cv::Scalar(0, 200, 0);
    cv::polylines(canvas, polygon, true, color, thickness, cv::LINE_AA);
    const std::string label = std::to_string(i + 1);
    int baseline = 0;
    const cv::Size text = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, font_scale, thickness, &baseline);
    const cv::Point origin(polygon[0].x, std::max(polygon[0].y - baseline, text.height + 2));
    cv::rectangle(canvas, origin + cv::Point(0, baseline), origin + cv::Point(text.width, -text.height - 2), color,
                  cv::FILLED);
    cv::putText(canvas, label, origin, cv::FONT_HERSHEY_SIMPLEX, font_scale, cv::Scalar(255, 255, 255), thickness,
                cv::LINE_AA);
  }
  const std::string extension = std::filesystem::path(output_path).extension().string();
  std::vector<uint8_t> encoded;
  bool ok = false;
  try {
    ok = !extension.empty() && cv::imencode(extension, canvas, encoded);
  } catch (const cv::Exception& e) {
    return Status(StatusCode::kIo, "cannot write '" + output_path + "': " + e.what());
  }
  if (!ok) return Status(StatusCode::kIo, "cannot write '" + output_path + "': unknown image extension");
  return write_file_atomically(output_path,
                               std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size()));
}

}  // namespace edgemm::ocr
