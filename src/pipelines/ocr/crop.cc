#include "pipelines/ocr/crop.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <utility>

namespace edgemm::ocr {

void sort_reading_order(std::vector<DetectedBox>& boxes, float line_tolerance) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const DetectedBox& a, const DetectedBox& b) {
    if (a.quad[0].y != b.quad[0].y) return a.quad[0].y < b.quad[0].y;
    return a.quad[0].x < b.quad[0].x;
  });
  for (size_t i = 0; i + 1 < boxes.size(); ++i) {
    for (size_t j = i + 1; j > 0; --j) {
      const Point& current = boxes[j].quad[0];
      const Point& previous = boxes[j - 1].quad[0];
      if (std::abs(current.y - previous.y) < line_tolerance && current.x < previous.x) {
        std::swap(boxes[j], boxes[j - 1]);
      } else {
        break;
      }
    }
  }
}

cv::Mat crop_text_region(const cv::Mat& bgr, const Quad& quad) {
  auto distance = [&](int a, int b) { return std::hypot(quad[a].x - quad[b].x, quad[a].y - quad[b].y); };
  const int width = std::max(1, static_cast<int>(std::max(distance(0, 1), distance(2, 3))));
  const int height = std::max(1, static_cast<int>(std::max(distance(0, 3), distance(1, 2))));
  const cv::Point2f source[4] = {
      {quad[0].x, quad[0].y}, {quad[1].x, quad[1].y}, {quad[2].x, quad[2].y}, {quad[3].x, quad[3].y}};
  const cv::Point2f target[4] = {{0, 0},
                                 {static_cast<float>(width), 0},
                                 {static_cast<float>(width), static_cast<float>(height)},
                                 {0, static_cast<float>(height)}};
  const cv::Mat transform = cv::getPerspectiveTransform(source, target);
  cv::Mat crop;
  cv::warpPerspective(bgr, crop, transform, cv::Size(width, height), cv::INTER_CUBIC, cv::BORDER_REPLICATE);
  if (crop.rows >= 1.5 * crop.cols) cv::rotate(crop, crop, cv::ROTATE_90_COUNTERCLOCKWISE);
  return crop;
}

}  // namespace edgemm::ocr
