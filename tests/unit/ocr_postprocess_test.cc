// DB post-processing, unclip, reading order and crops on hand-made probability maps and
// images with known answers (PaddleOCR's db_postprocess.py / predict_system.py behaviour).
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgproc.hpp>

#include "pipelines/ocr/crop.h"
#include "pipelines/ocr/det.h"
#include "pipelines/ocr/orientation.h"
#include "pipelines/ocr/recognize.h"

namespace edgemm::ocr {
namespace ocr_postprocess_test {  // named for the file: unity batches merge anonymous namespaces

double shoelace_area(const std::vector<cv::Point2f>& points) {
  double twice = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const cv::Point2f& a = points[i];
    const cv::Point2f& b = points[(i + 1) % points.size()];
    twice += double{a.x} * b.y - double{b.x} * a.y;
  }
  return std::abs(twice) / 2;
}

void expect_quad_near(const Quad& quad, const std::array<std::array<float, 2>, 4>& expected, float tolerance) {
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(quad[i].x, expected[i][0], tolerance) << "corner " << i;
    EXPECT_NEAR(quad[i].y, expected[i][1], tolerance) << "corner " << i;
  }
}

TEST(OcrDetResize, LimitsTheLongerSideAndRoundsTo32HalvesToEven) {
  EXPECT_EQ(det_input_size(1000, 500, 960), cv::Size(960, 480));
  EXPECT_EQ(det_input_size(100, 50, 960), cv::Size(96, 64));  // not enlarged: 100/32 → 3, 50/32 → 2
  EXPECT_EQ(det_input_size(10, 10, 960), cv::Size(32, 32));   // never below 32
  // 12000 × 9000 → ratio 0.08 → 960 × 720; 720 / 32 = 22.5 rounds to even (22) as Python does.
  EXPECT_EQ(det_input_size(12000, 9000, 960), cv::Size(960, 704));
  EXPECT_EQ(det_input_size(640, 416, 960), cv::Size(640, 416));
}

TEST(OcrDetResize, PreprocessNormalizesBgrWithImageNetStatistics) {
  cv::Mat image(32, 32, CV_8UC3, cv::Scalar(255, 0, 128));  // B = 255, G = 0, R = 128
  auto input = det_preprocess(image, 960);
  ASSERT_TRUE(input.has_value()) << input.status().to_string();
  ASSERT_EQ(input->shape(), (Shape{1, 3, 32, 32}));
  const float* data = input->data<float>();
  EXPECT_NEAR(data[0], (1.0f - 0.485f) / 0.229f, 1e-5);                    // channel 0 = B with mean[0]
  EXPECT_NEAR(data[32 * 32], (0.0f - 0.456f) / 0.224f, 1e-5);              // channel 1 = G
  EXPECT_NEAR(data[2 * 32 * 32], (128 / 255.0f - 0.406f) / 0.225f, 1e-5);  // channel 2 = R
}

TEST(OcrDetResize, StaticInputsAreLetterboxedAndBoxesMappedFromTheImagesPart) {
  // A 200 × 100 image into a 64 × 64 input: scale min(64 / 200, 64 / 100) = 0.32 → 64 × 32 at
  // the top-left, rows 32..63 the mean colour (0 after normalization).
  EXPECT_EQ(det_letterbox_size(cv::Size(200, 100), cv::Size(64, 64)), cv::Size(64, 32));
  EXPECT_EQ(det_letterbox_size(cv::Size(30, 90), cv::Size(960, 960)), cv::Size(320, 960));
  EXPECT_EQ(det_letterbox_size(cv::Size(5000, 1), cv::Size(640, 640)), cv::Size(640, 1));
  cv::Mat image(100, 200, CV_8UC3, cv::Scalar(255, 255, 255));
  auto input = det_preprocess(image, 960, cv::Size(64, 64));
  ASSERT_TRUE(input.has_value()) << input.status().to_string();
  ASSERT_EQ(input->shape(), (Shape{1, 3, 64, 64}));
  const float* data = input->data<float>();
  EXPECT_NEAR(data[31 * 64 + 63], (1.0f - 0.485f) / 0.229f, 1e-5);                         // last image row, channel B
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(data[c * 64 * 64 + 32 * 64], 0.0f, 0.02f) << c;  // padding
  // A map region x 20..59, y 10..21 as in the test above, with the image in the map's top 64 × 32:
  // map pixels scale by 200 / 64 = 3.125 on both axes (not 100 / 64 = 1.5625 vertically).
  cv::Mat prob = cv::Mat::zeros(64, 64, CV_32F);
  prob(cv::Rect(20, 10, 40, 12)).setTo(0.9f);
  const std::vector<DetectedBox> boxes = db_postprocess(prob, cv::Size(200, 100), DbParams{}, cv::Size(64, 32));
  ASSERT_EQ(boxes.size(), 1u);
  // Map box x 13.6..65.4 (clipped to the image: x ≤ 199), y 3.6..27.4 → × 3.125: y 11..86.
  expect_quad_near(boxes[0].quad, {{{42, 11}, {199, 11}, {199, 86}, {42, 86}}}, 4.0f);
}

TEST(OcrUnclip, SquareGrowsByAreaTimesRatioOverPerimeterWithRoundCorners) {
  const Quad square = {Point{0, 0}, Point{10, 0}, Point{10, 10}, Point{0, 10}};
  const std::vector<cv::Point2f> expanded = unclip(square, 1.5f);
  // distance = 100 × 1.5 / 40 = 3.75: area = 100 + 4 × 10 × 3.75 + π × 3.75² ≈ 294.2 (a distance of
  // 3.25 or 4.25 would give 260 or 327).
  EXPECT_NEAR(shoelace_area(expanded), 100 + 150 + M_PI * 3.75 * 3.75, 15.0);  // integer vertices: ±0.5 px × perimeter
  const cv::Rect bounds = cv::boundingRect(expanded);
  EXPECT_NEAR(bounds.x, -3.75, 1.0);
  EXPECT_NEAR(bounds.x + bounds.width - 1, 13.75, 1.0);
}

TEST(OcrUnclip, DegenerateQuadGivesNothing) {
  const Quad line = {Point{0, 0}, Point{10, 0}, Point{10, 0}, Point{0, 0}};
  EXPECT_TRUE(unclip(line, 1.5f).empty());
}

TEST(OcrMinAreaQuad, OrdersCornersTopLeftClockwise) {
  const auto [quad, short_side] = min_area_quad({{30, 40}, {10, 20}, {30, 20}, {10, 40}});
  expect_quad_near(quad, {{{10, 20}, {30, 20}, {30, 40}, {10, 40}}}, 1e-4f);
  EXPECT_FLOAT_EQ(short_side, 20.0f);
  // A rectangle rotated by 30°, 40 × 10: the short side is 10 whatever the rotation.
  const cv::RotatedRect rotated({50, 50}, {40, 10}, 30);
  std::array<cv::Point2f, 4> corners;
  rotated.points(corners.data());
  const auto [turned, turned_short] = min_area_quad({corners.begin(), corners.end()});
  EXPECT_NEAR(turned_short, 10.0f, 1e-3);
  EXPECT_LT(turned[0].x, turned[1].x);  // top-left then top-right
  EXPECT_LT(turned[3].x, turned[2].x);  // bottom-left before bottom-right
}

TEST(OcrDbPostprocess, OneRectangleOfTextBecomesOneUnclippedBoxInImagePixels) {
  cv::Mat prob = cv::Mat::zeros(64, 100, CV_32F);
  prob(cv::Rect(20, 10, 40, 12)).setTo(0.9f);  // x 20..59, y 10..21
  const std::vector<DetectedBox> boxes = db_postprocess(prob, cv::Size(200, 128), DbParams{});
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_NEAR(boxes[0].score, 0.9f, 1e-5);
  // Contour rectangle 39 × 11 → distance 39 × 11 × 1.5 / 100 = 6.435 → x 13.6..65.4, y 3.6..27.4
  // in map pixels → × 2 to the image: x 27..131, y 7..55.
  expect_quad_near(boxes[0].quad, {{{27, 7}, {131, 7}, {131, 55}, {27, 55}}}, 2.0f);
}

TEST(OcrDbPostprocess, WeakTinyAndEmptyRegionsAreDropped) {
  cv::Mat prob = cv::Mat::zeros(64, 100, CV_32F);
  prob(cv::Rect(10, 10, 40, 12)).setTo(0.5f);  // above the 0.3 threshold, below the 0.6 box score
  prob(cv::Rect(80, 50, 2, 2)).setTo(1.0f);    // shorter side below 3
  EXPECT_TRUE(db_postprocess(prob, cv::Size(100, 64), DbParams{}).empty());
  EXPECT_TRUE(db_postprocess(cv::Mat::zeros(32, 32, CV_32F), cv::Size(32, 32), DbParams{}).empty());
  DbParams lenient;
  lenient.box_threshold = 0.4f;
  EXPECT_EQ(db_postprocess(prob, cv::Size(100, 64), lenient).size(), 1u);
}

TEST(OcrDbPostprocess, SlowModeScoresInsideTheContourFastModeInsideTheBox) {
  // A right triangle of probability 1: its bounding box is half empty, so "fast" scores about
  // 0.5 (dropped at 0.6) and "slow" about 1 (kept).
  cv::Mat prob = cv::Mat::zeros(80, 80, CV_32F);
  const std::vector<cv::Point> triangle = {{10, 10}, {60, 10}, {10, 60}};
  cv::fillPoly(prob, std::vector<std::vector<cv::Point>>{triangle}, cv::Scalar(1.0));
  DbParams fast;
  EXPECT_TRUE(db_postprocess(prob, cv::Size(80, 80), fast).empty());
  DbParams slow;
  slow.score_mode = ScoreMode::kSlow;
  const std::vector<DetectedBox> boxes = db_postprocess(prob, cv::Size(80, 80), slow);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_GT(boxes[0].score, 0.95f);
}

TEST(OcrDbPostprocess, MaxCandidatesLimitsTheContoursConsidered) {
  cv::Mat prob = cv::Mat::zeros(64, 200, CV_32F);
  for (int i = 0; i < 4; ++i) prob(cv::Rect(10 + 45 * i, 20, 30, 12)).setTo(0.95f);
  EXPECT_EQ(db_postprocess(prob, cv::Size(200, 64), DbParams{}).size(), 4u);
  DbParams two;
  two.max_candidates = 2;
  EXPECT_EQ(db_postprocess(prob, cv::Size(200, 64), two).size(), 2u);
}

TEST(OcrDbPostprocess, BoxesAreClippedToTheImage) {
  cv::Mat prob = cv::Mat::zeros(32, 64, CV_32F);
  prob(cv::Rect(0, 0, 30, 10)).setTo(1.0f);  // touches the top-left corner: unclip goes outside
  const std::vector<DetectedBox> boxes = db_postprocess(prob, cv::Size(64, 32), DbParams{});
  ASSERT_EQ(boxes.size(), 1u);
  for (const Point& p : boxes[0].quad) {
    EXPECT_GE(p.x, 0);
    EXPECT_GE(p.y, 0);
    EXPECT_LE(p.x, 63);
    EXPECT_LE(p.y, 31);
  }
}

DetectedBox box_at(float x, float y) {
  return {Quad{Point{x, y}, Point{x + 20, y}, Point{x + 20, y + 8}, Point{x, y + 8}}, 1};
}

TEST(OcrReadingOrder, TopToBottomThenLeftToRightWithinTheLineTolerance) {
  std::vector<DetectedBox> boxes = {box_at(100, 50), box_at(10, 55), box_at(50, 10), box_at(10, 200)};
  sort_reading_order(boxes, 10.0f);
  // By y: (50,10) (100,50) (10,55) (10,200); (10,55) is within 10 px of (100,50) and left of it.
  const std::vector<std::pair<float, float>> expected = {{50, 10}, {10, 55}, {100, 50}, {10, 200}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(boxes[i].quad[0].x, expected[i].first) << i;
    EXPECT_EQ(boxes[i].quad[0].y, expected[i].second) << i;
  }
}

TEST(OcrReadingOrder, BoxesFurtherApartThanTheToleranceKeepTheirVerticalOrder) {
  std::vector<DetectedBox> boxes = {box_at(100, 50), box_at(10, 60)};
  sort_reading_order(boxes, 10.0f);
  EXPECT_EQ(boxes[0].quad[0].x, 100);  // |60 − 50| = 10 is not < 10
}

TEST(OcrCrop, PerspectiveCropIsUprightAndTallCropsAreRotated) {
  cv::Mat image(100, 200, CV_8UC3, cv::Scalar(255, 255, 255));
  image(cv::Rect(50, 20, 80, 20)).setTo(cv::Scalar(0, 0, 255));  // red band
  const cv::Mat wide = crop_text_region(image, {Point{50, 20}, Point{130, 20}, Point{130, 40}, Point{50, 40}});
  EXPECT_EQ(wide.size(), cv::Size(80, 20));
  EXPECT_EQ(wide.at<cv::Vec3b>(10, 40), cv::Vec3b(0, 0, 255));
  // 20 wide × 60 high: rotated 90° counter-clockwise into 60 × 20.
  const cv::Mat tall = crop_text_region(image, {Point{10, 10}, Point{30, 10}, Point{30, 70}, Point{10, 70}});
  EXPECT_EQ(tall.size(), cv::Size(60, 20));
}

TEST(OcrOrientation, AVoteReadsAlongTheTopEdgeOrDownTheLeftEdgeOfATallBox) {
  const OrientationVote wide = orientation_vote({Point{0, 0}, Point{100, 0}, Point{100, 20}, Point{0, 20}}, 0.25f);
  EXPECT_EQ(wide.dx, 100);
  EXPECT_EQ(wide.dy, 0);
  EXPECT_EQ(wide.aspect, 5);
  EXPECT_EQ(wide.p180, 0.25f);
  // crop_text_region turns a tall crop 90° counter-clockwise: its text then runs down the box.
  const OrientationVote tall = orientation_vote({Point{0, 0}, Point{20, 0}, Point{20, 100}, Point{0, 100}}, 0.0f);
  EXPECT_EQ(tall.dx, 0);
  EXPECT_EQ(tall.dy, 100);
  EXPECT_EQ(tall.aspect, 5);
}

TEST(OcrOrientation, ElongatedLinesVoteForTheQuarterTurnTheirTextRunsIn) {
  auto vote = [](float dx, float dy, float aspect, float p180) { return OrientationVote{dx, dy, aspect, p180}; };
  EXPECT_EQ(image_orientation({}), 0);
  EXPECT_EQ(image_orientation({vote(1, 0, 5, 0.1f)}), 0);
  EXPECT_EQ(image_orientation({vote(1, 0, 5, 0.95f)}), 180);  // upside down
  EXPECT_EQ(image_orientation({vote(0, 1, 5, 0.05f)}), 90);   // runs down: turned clockwise
  EXPECT_EQ(image_orientation({vote(0, 1, 5, 0.95f)}), 270);  // runs up
  EXPECT_EQ(image_orientation({vote(-1, 0.2f, 5, 0.0f)}), 180);
  EXPECT_EQ(image_orientation({vote(0.3f, -1, 4, 0.0f)}), 270);
  // Boxes under 1.5 : 1 do not vote.
  EXPECT_EQ(image_orientation({vote(0, 1, 1.4f, 0.0f)}), 0);
  // Weights: 0° has 5 + 5 = 10 of 16, 180° has 6: a majority for 0°.
  EXPECT_EQ(image_orientation({vote(1, 0, 5, 0), vote(1, 0, 5, 0), vote(1, 0, 6, 1)}), 0);
  // 0° 5, 90° 5, 180° 6 of 16: no majority, so upright.
  EXPECT_EQ(image_orientation({vote(1, 0, 5, 0), vote(0, 1, 5, 0), vote(-1, 0, 6, 0)}), 0);
  // A weight counts at most 25: a 100:1 line at 90° (25) loses to two 15:1 lines at 270° (30).
  EXPECT_EQ(image_orientation({vote(0, 1, 100, 0), vote(0, -1, 15, 0), vote(0, -1, 15, 0)}), 270);
}

TEST(OcrOrientation, TurnUprightAndBackMapsEveryPixelToItself) {
  cv::Mat turned(3, 5, CV_16U);  // 5 wide, 3 high, every pixel a distinct value
  for (int y = 0; y < turned.rows; ++y) {
    for (int x = 0; x < turned.cols; ++x) turned.at<uint16_t>(y, x) = static_cast<uint16_t>(10 * y + x);
  }
  for (int degrees : {0, 90, 180, 270}) {
    const cv::Mat upright = turn_upright(turned, degrees);
    EXPECT_EQ(upright.size(), degrees % 180 == 0 ? turned.size() : cv::Size(turned.rows, turned.cols));
    for (int y = 0; y < upright.rows; ++y) {
      for (int x = 0; x < upright.cols; ++x) {
        const Point p = quad_in_turned_image({Point{float(x), float(y)}, {}, {}, {}}, degrees, turned.size())[0];
        ASSERT_EQ(turned.at<uint16_t>(static_cast<int>(p.y), static_cast<int>(p.x)), upright.at<uint16_t>(y, x))
            << degrees << "° at " << x << "," << y;
      }
    }
  }
  // An upright image turned 90° clockwise: its top-left pixel is now at the top right.
  const Quad q = quad_in_turned_image({Point{0, 0}, Point{4, 0}, Point{4, 2}, Point{0, 2}}, 90, cv::Size(3, 5));
  EXPECT_EQ(q[0].x, 2);
  EXPECT_EQ(q[0].y, 0);
  EXPECT_EQ(q[1].x, 2);
  EXPECT_EQ(q[1].y, 4);
}

// A 48-pixel-high line of black "words" on white: [5, 200), [215, 400), [403, 650), [670, 995).
cv::Mat word_line() {
  cv::Mat line(kLineHeight, 1000, CV_8UC3, cv::Scalar(255, 255, 255));
  for (const auto& [begin, end] : std::vector<std::pair<int, int>>{{5, 200}, {215, 400}, {403, 650}, {670, 995}}) {
    line(cv::Rect(begin, 10, end - begin, 28)).setTo(cv::Scalar(0, 0, 0));
  }
  return line;
}

TEST(OcrSplitLine, CutsThroughTheLongestGapInTheSecondHalfOfEachPiece) {
  // Width 480: the first cut looks in [240, 480), where the only gap is [400, 403): cut at 401,
  // narrower than a word gap. The next looks in [641, 881): gap [650, 670), cut at 660, a word
  // gap. The rest, 340 wide, fits.
  const std::vector<LinePiece> pieces = split_line(word_line(), 480);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].crop.cols, 401);
  EXPECT_EQ(pieces[1].crop.cols, 259);
  EXPECT_EQ(pieces[2].crop.cols, 340);
  EXPECT_FALSE(pieces[0].word_gap_before);
  EXPECT_FALSE(pieces[1].word_gap_before);
  EXPECT_TRUE(pieces[2].word_gap_before);
  for (const LinePiece& piece : pieces) EXPECT_EQ(piece.crop.rows, kLineHeight);
}

TEST(OcrSplitLine, LinesThatFitStayWholeAndGaplessOnesAreCutAtTheWidth) {
  EXPECT_EQ(split_line(word_line(), 1000).size(), 1u);
  cv::Mat solid(kLineHeight, 1000, CV_8UC3, cv::Scalar(255, 255, 255));
  solid(cv::Rect(0, 10, 1000, 28)).setTo(cv::Scalar(0, 0, 0));
  const std::vector<LinePiece> pieces = split_line(solid, 480);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].crop.cols, 480);
  EXPECT_EQ(pieces[1].crop.cols, 480);
  EXPECT_EQ(pieces[2].crop.cols, 40);
}

}  // namespace ocr_postprocess_test
}  // namespace edgemm::ocr
