#include "pipelines/ocr/det.h"

#include <algorithm>
#include <clipper.hpp>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "pipelines/image.h"

namespace edgemm::ocr {
namespace {

// |area| of the quad by the shoelace formula (as PaddleOCR's unclip computes it).
double shoelace_area(const Quad& quad) {
  double twice = 0;
  for (int i = 0; i < 4; ++i) {
    const Point& a = quad[i];
    const Point& b = quad[(i + 1) % 4];
    twice += double{a.x} * b.y - double{b.x} * a.y;
  }
  return std::abs(twice) / 2;
}

double polygon_perimeter(const Quad& quad) {
  double length = 0;
  for (int i = 0; i < 4; ++i) length += std::hypot(quad[(i + 1) % 4].x - quad[i].x, quad[(i + 1) % 4].y - quad[i].y);
  return length;
}

std::vector<cv::Point2f> to_points(const Quad& quad) {
  std::vector<cv::Point2f> points;
  for (const Point& p : quad) points.emplace_back(p.x, p.y);
  return points;
}

}  // namespace

cv::Size det_input_size(int width, int height, int limit_side) {
  double ratio = 1.0;
  if (std::max(width, height) > limit_side) ratio = static_cast<double>(limit_side) / std::max(width, height);
  // Python's round() rounds halves to even, as nearbyint does in the default rounding mode.
  auto round32 = [](double side) { return std::max(static_cast<int>(std::nearbyint(side / 32.0)) * 32, 32); };
  return {round32(static_cast<int>(width * ratio)), round32(static_cast<int>(height * ratio))};
}

cv::Size det_letterbox_size(cv::Size image, cv::Size fixed) {
  const double scale =
      std::min(static_cast<double>(fixed.width) / image.width, static_cast<double>(fixed.height) / image.height);
  auto side = [&](int extent, int limit) {
    return std::clamp(static_cast<int>(std::lround(extent * scale)), 1, limit);
  };
  return {side(image.width, fixed.width), side(image.height, fixed.height)};
}

Expected<Tensor> det_preprocess(const cv::Mat& bgr, int limit_side, cv::Size fixed_size) {
  const bool fixed = fixed_size.width > 0 && fixed_size.height > 0;
  const cv::Size size = fixed ? fixed_size : det_input_size(bgr.cols, bgr.rows, limit_side);
  const cv::Size content = fixed ? det_letterbox_size(bgr.size(), fixed_size) : size;
  cv::Mat resized;
  cv::resize(bgr, resized, content, 0, 0, cv::INTER_LINEAR);
  if (fixed) {
    cv::Mat canvas(size, CV_8UC3, cv::Scalar(kDetMean[0] * 255, kDetMean[1] * 255, kDetMean[2] * 255));
    resized.copyTo(canvas(cv::Rect(cv::Point(0, 0), content)));
    resized = canvas;
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor input, Tensor::create(DataType::kFloat32, {1, 3, size.height, size.width}));
  pipelines::write_normalized_chw(resized, kDetMean, kDetStd, input, 0);
  return input;
}

std::pair<Quad, float> min_area_quad(const std::vector<cv::Point2f>& points) {
  const cv::RotatedRect rect = cv::minAreaRect(points);
  std::array<cv::Point2f, 4> corners;
  rect.points(corners.data());
  std::sort(corners.begin(), corners.end(), [](const cv::Point2f& a, const cv::Point2f& b) { return a.x < b.x; });
  // Of the two leftmost corners the upper is the top-left; of the two rightmost, the upper is the top-right.
  const auto [top_left, bottom_left] =
      corners[1].y > corners[0].y ? std::pair{corners[0], corners[1]} : std::pair{corners[1], corners[0]};
  const auto [top_right, bottom_right] =
      corners[3].y > corners[2].y ? std::pair{corners[2], corners[3]} : std::pair{corners[3], corners[2]};
  const Quad quad = {Point{top_left.x, top_left.y}, Point{top_right.x, top_right.y},
                     Point{bottom_right.x, bottom_right.y}, Point{bottom_left.x, bottom_left.y}};
  return {quad, std::min(rect.size.width, rect.size.height)};
}

std::vector<cv::Point2f> unclip(const Quad& quad, float ratio) {
  const double perimeter = polygon_perimeter(quad);
  if (perimeter <= 0) return {};
  const double distance = shoelace_area(quad) * ratio / perimeter;
  ClipperLib::Path path;
  for (const Point& p : quad) path.emplace_back(static_cast<ClipperLib::cInt>(p.x), static_cast<ClipperLib::cInt>(p.y));
  ClipperLib::ClipperOffset offset;
  offset.AddPath(path, ClipperLib::jtRound, ClipperLib::etClosedPolygon);
  ClipperLib::Paths expanded;
  offset.Execute(expanded, distance);
  std::vector<cv::Point2f> points;
  for (const ClipperLib::Path& polygon : expanded) {
    for (const ClipperLib::IntPoint& p : polygon) points.emplace_back(static_cast<float>(p.X), static_cast<float>(p.Y));
  }
  return points;
}

float polygon_mean_score(const cv::Mat& prob, const std::vector<cv::Point2f>& polygon) {
  float min_x = polygon[0].x, max_x = polygon[0].x, min_y = polygon[0].y, max_y = polygon[0].y;
  for (const cv::Point2f& p : polygon) {
    min_x = std::min(min_x, p.x);
    max_x = std::max(max_x, p.x);
    min_y = std::min(min_y, p.y);
    max_y = std::max(max_y, p.y);
  }
  const int x0 = std::clamp(static_cast<int>(std::floor(min_x)), 0, prob.cols - 1);
  const int x1 = std::clamp(static_cast<int>(std::ceil(max_x)), 0, prob.cols - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(min_y)), 0, prob.rows - 1);
  const int y1 = std::clamp(static_cast<int>(std::ceil(max_y)), 0, prob.rows - 1);
  cv::Mat mask = cv::Mat::zeros(y1 - y0 + 1, x1 - x0 + 1, CV_8U);
  std::vector<cv::Point> shifted;
  for (const cv::Point2f& p : polygon) {
    shifted.emplace_back(static_cast<int>(p.x - x0), static_cast<int>(p.y - y0));
  }
  cv::fillPoly(mask, std::vector<std::vector<cv::Point>>{shifted}, cv::Scalar(1));
  return static_cast<float>(cv::mean(prob(cv::Rect(x0, y0, x1 - x0 + 1, y1 - y0 + 1)), mask)[0]);
}

std::vector<DetectedBox> db_postprocess(const cv::Mat& prob, cv::Size image_size, const DbParams& params,
                                        cv::Size content) {
  if (content.empty()) content = prob.size();
  cv::Mat bitmap = prob > params.threshold;  // 0 or 255, CV_8U
  std::vector<std::vector<cv::Point>> contours;
  cv::findContours(bitmap, contours, cv::RETR_LIST, cv::CHAIN_APPROX_SIMPLE);
  const size_t candidates = std::min(contours.size(), static_cast<size_t>(std::max(params.max_candidates, 0)));
  const float max_x = static_cast<float>(image_size.width - 1);
  const float max_y = static_cast<float>(image_size.height - 1);
  std::vector<DetectedBox> boxes;
  for (size_t i = 0; i < candidates; ++i) {
    std::vector<cv::Point2f> contour(contours[i].begin(), contours[i].end());
    const auto [quad, short_side] = min_area_quad(contour);
    if (short_side < params.min_side) continue;
    const float score = params.score_mode == ScoreMode::kFast ? polygon_mean_score(prob, to_points(quad))
                                                              : polygon_mean_score(prob, contour);
    if (score < params.box_threshold) continue;
    const std::vector<cv::Point2f> expanded = unclip(quad, params.unclip_ratio);
    if (expanded.size() < 3) continue;
    auto [box, expanded_short_side] = min_area_quad(expanded);
    if (expanded_short_side < params.min_side + 2) continue;
    for (Point& p : box) {
      p.x = std::clamp(std::nearbyint(p.x / content.width * image_size.width), 0.0f, max_x);
      p.y = std::clamp(std::nearbyint(p.y / content.height * image_size.height), 0.0f, max_y);
    }
    const int width = static_cast<int>(std::hypot(box[1].x - box[0].x, box[1].y - box[0].y));
    const int height = static_cast<int>(std::hypot(box[3].x - box[0].x, box[3].y - box[0].y));
    if (width <= 3 || height <= 3) continue;
    boxes.push_back({box, score});
  }
  return boxes;
}

}  // namespace edgemm::ocr
