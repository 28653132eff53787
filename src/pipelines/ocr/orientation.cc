#include "pipelines/ocr/orientation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/core.hpp>

namespace edgemm::ocr {
namespace {

constexpr float kElongated = 1.5f;   // aspect ratio from which a box votes
constexpr double kMaxWeight = 25.0;  // a vote's weight is its aspect ratio, at most this

}  // namespace

OrientationVote orientation_vote(const Quad& box, float p180) {
  const float top_x = box[1].x - box[0].x, top_y = box[1].y - box[0].y;
  const float left_x = box[3].x - box[0].x, left_y = box[3].y - box[0].y;
  const float width = std::hypot(top_x, top_y), height = std::hypot(left_x, left_y);
  OrientationVote vote;
  vote.p180 = p180;
  if (!(width > 0 && height > 0)) return vote;
  // crop_text_region turns crops at least 1.5 times taller than wide; the same test here.
  const bool turned = height >= kElongated * width;
  vote.dx = turned ? left_x : top_x;
  vote.dy = turned ? left_y : top_y;
  vote.aspect = std::max(width, height) / std::min(width, height);
  return vote;
}

int image_orientation(const std::vector<OrientationVote>& votes) {
  std::array<double, 4> score = {0, 0, 0, 0};  // 0°, 90°, 180°, 270° (clockwise)
  double total = 0;
  for (const OrientationVote& v : votes) {
    if (!(v.aspect >= kElongated) || (v.dx == 0 && v.dy == 0)) continue;
    // Quarter turns of the text direction, clockwise on screen (y down): right 0, down 1, ...
    const double angle = std::atan2(v.dy, v.dx);  // (-pi, pi], clockwise positive
    const int quarter = static_cast<int>(std::lround(angle / (M_PI / 2)) + 4) % 4;
    const double weight = std::min(static_cast<double>(v.aspect), kMaxWeight);
    const double p180 = std::clamp(static_cast<double>(v.p180), 0.0, 1.0);
    score[quarter] += weight * (1 - p180);
    score[(quarter + 2) % 4] += weight * p180;
    total += weight;
  }
  const auto best = std::max_element(score.begin(), score.end());
  if (total <= 0 || *best <= total / 2) return 0;
  return static_cast<int>(best - score.begin()) * 90;
}

cv::Mat turn_upright(const cv::Mat& image, int degrees) {
  cv::Mat upright;
  switch (degrees) {
    case 90:
      cv::rotate(image, upright, cv::ROTATE_90_COUNTERCLOCKWISE);
      return upright;
    case 180:
      cv::rotate(image, upright, cv::ROTATE_180);
      return upright;
    case 270:
      cv::rotate(image, upright, cv::ROTATE_90_CLOCKWISE);
      return upright;
    default:
      return image;
  }
}

Quad quad_in_turned_image(const Quad& quad, int degrees, cv::Size turned) {
  // The turned image is the upright one turned clockwise by `degrees` (cv::rotate's pixel maps).
  const float last_x = static_cast<float>(turned.width - 1), last_y = static_cast<float>(turned.height - 1);
  Quad out = quad;
  for (Point& p : out) {
    const Point u = p;
    switch (degrees) {
      case 90:  // clockwise: (u, v) -> (H_upright - 1 - v, u) = (W_turned - 1 - v, u)
        p = {last_x - u.y, u.x};
        break;
      case 180:
        p = {last_x - u.x, last_y - u.y};
        break;
      case 270:  // counter-clockwise: (u, v) -> (v, W_upright - 1 - u) = (v, H_turned - 1 - u)
        p = {u.y, last_y - u.x};
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace edgemm::ocr
