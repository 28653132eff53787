// The OCR pipeline end to end on PP-OCRv4 (models/ppocrv4, fetched by scripts/setup.sh), and
// every kind of bad image input. Accuracy is checked against the known text of the committed
// demo photo (data/demo/photo_text.json, written by make_demo_photo.py), never against our
// own earlier output.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "edgemm/pipelines/ocr.h"
#include "model_builder.h"
#include "ocr_test_util.h"
#include "pipelines/image.h"
#include "edgemm/pipelines/ocr_metrics.h"
#include "source_dir.h"

namespace edgemm::ocr {
namespace ocr_pipeline_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;

const std::string kSource = edgemm::testing::source_dir();
const std::string kDemo = kSource + "/data/demo/photo_text.jpg";

void expect_error(const Status& s, StatusCode code, const std::string& fragment) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << "message lacks '" << fragment << "': " << s.to_string();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class OcrPipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    OcrOptions options;
    options.models_dir = kSource + "/models/ppocrv4";
    options.threads = 2;
    auto created = OcrPipeline::create(options);
    ASSERT_TRUE(created.has_value()) << created.status().to_string();
    pipeline_ = std::move(*created).release();
  }
  static void TearDownTestSuite() {
    delete pipeline_;
    pipeline_ = nullptr;
  }
  static OcrResult run(const std::string& path) {
    auto result = pipeline_->run_file(path);
    EXPECT_TRUE(result.has_value()) << result.status().to_string();
    return result.has_value() ? *result : OcrResult{};
  }
  static OcrPipeline* pipeline_;
};
OcrPipeline* OcrPipelineTest::pipeline_ = nullptr;

TEST_F(OcrPipelineTest, ReadsTheDemoPhotoWithinTheMeasuredCer) {
  const OcrResult result = run(kDemo);
  EXPECT_EQ(result.width, 960);
  EXPECT_EQ(result.height, 640);
  const OcrScoreTotals totals = score(result, demo_truth(false));
  // Measured when the pipeline landed: CER 0.062 (9 edits of 146, mostly dropped spaces),
  // recall 11 of 11 lines. Margin +0.03.
  EXPECT_LE(totals.cer(), 0.09) << "edits " << totals.edits << " of " << totals.truth_chars;
  EXPECT_GE(totals.recall(), 10.0 / 11);
  for (const OcrLine& line : result.lines) {
    EXPECT_GE(line.score, 0.5f) << line.text;
    EXPECT_GE(line.box_score, 0.6f) << line.text;
    EXPECT_FALSE(line.rotated_180) << line.text;
  }
  EXPECT_GT(result.timings.det_ms, 0);
  EXPECT_GT(result.timings.rec_ms, 0);
  EXPECT_GE(result.timings.total_ms, result.timings.det_ms + result.timings.rec_ms);
}

TEST_F(OcrPipelineTest, AngleClassifierReadsAnUpsideDownPhoto) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_upside_down");
  cv::Mat photo = cv::imread(kDemo);
  cv::rotate(photo, photo, cv::ROTATE_180);
  ASSERT_TRUE(cv::imwrite((dir / "flipped.png").string(), photo));
  const OcrResult result = run((dir / "flipped.png").string());
  EXPECT_EQ(result.orientation, 180);
  const OcrScoreTotals with_cls = score(result, demo_truth(true));
  EXPECT_LE(with_cls.cer(), 0.09) << "edits " << with_cls.edits << " of " << with_cls.truth_chars;

  // Without whole-image orientation, the classifier turns the lines one by one.
  OcrOptions by_line = pipeline_->options();
  by_line.detect_orientation = false;
  auto line_wise = OcrPipeline::create(by_line);
  ASSERT_TRUE(line_wise.has_value()) << line_wise.status().to_string();
  auto turned_lines = (*line_wise)->run_file((dir / "flipped.png").string());
  ASSERT_TRUE(turned_lines.has_value());
  EXPECT_EQ(turned_lines->orientation, 0);
  int flipped = 0;
  for (const OcrLine& line : turned_lines->lines) flipped += line.rotated_180 ? 1 : 0;
  EXPECT_GE(flipped, 8);
  EXPECT_LE(score(*turned_lines, demo_truth(true)).cer(), 0.09);

  OcrOptions no_cls = pipeline_->options();
  no_cls.use_cls = false;
  auto plain = OcrPipeline::create(no_cls);
  ASSERT_TRUE(plain.has_value()) << plain.status().to_string();
  auto unrotated = (*plain)->run_file((dir / "flipped.png").string());
  ASSERT_TRUE(unrotated.has_value());
  EXPECT_GT(score(*unrotated, demo_truth(true)).cer(), 0.6);  // measured 0.96: unreadable without cls
}

// A photo turned by a quarter or half turn holds exactly the upright photo's pixels: read
// upright, it gives the upright photo's lines, with polygons mapped by the turn (the oracle
// is the upright reading and the turn's pixel map, worked by hand in OcrOrientation tests).
TEST_F(OcrPipelineTest, TurnedPhotosReadAsTheUprightOne) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_turned");
  const cv::Mat photo = cv::imread(kDemo);
  const OcrResult upright = run(kDemo);
  ASSERT_EQ(upright.orientation, 0);
  const std::vector<std::pair<int, cv::RotateFlags>> turns = {
      {90, cv::ROTATE_90_CLOCKWISE}, {180, cv::ROTATE_180}, {270, cv::ROTATE_90_COUNTERCLOCKWISE}};
  for (const auto& [degrees, flag] : turns) {
    cv::Mat turned;
    cv::rotate(photo, turned, flag);
    const std::string path = (dir / ("turned_" + std::to_string(degrees) + ".png")).string();
    ASSERT_TRUE(cv::imwrite(path, turned));
    const OcrResult result = run(path);
    EXPECT_EQ(result.orientation, degrees);
    ASSERT_EQ(result.lines.size(), upright.lines.size()) << degrees;
    for (size_t i = 0; i < result.lines.size(); ++i) {
      EXPECT_EQ(result.lines[i].text, upright.lines[i].text) << degrees;
      for (int k = 0; k < 4; ++k) {
        const Point& p = upright.lines[i].polygon[k];
        const float last_x = static_cast<float>(turned.cols - 1), last_y = static_cast<float>(turned.rows - 1);
        const Point expected = degrees == 90    ? Point{last_x - p.y, p.x}
                               : degrees == 180 ? Point{last_x - p.x, last_y - p.y}
                                                : Point{p.y, last_y - p.x};
        EXPECT_EQ(result.lines[i].polygon[k].x, expected.x) << degrees << " line " << i;
        EXPECT_EQ(result.lines[i].polygon[k].y, expected.y) << degrees << " line " << i;
      }
    }
  }
}

// A classifier that calls every line upside down (a constant model) cannot make upright text
// read worse: the image is read turned, every line is also read turned back, and the more
// confident reading (upright) wins. Oracle: the same photo read without the classifier.
TEST_F(OcrPipelineTest, AWrongClassifierCannotTurnUprightText) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_wrong_cls");
  for (const char* file : {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ppocr_keys_v1.txt"}) {
    fs::create_symlink(fs::path(kSource) / "models/ppocrv4" / file, dir / file);
  }
  edgemm::testing::ModelBuilder cls;
  cls.input("x", onnx::TensorProto::FLOAT, {-1, 3, 48, -1}).output("probs", onnx::TensorProto::FLOAT, {-1, 2});
  cls.initializer_int64s("axes", {3}, {1, 2, 3});
  cls.initializer_floats("zero", {}, {0.0f});
  cls.initializer_int64s("one", {1}, {1});
  cls.initializer_floats("always_180", {1, 2}, {0.0f, 1.0f});
  cls.node("ReduceSum", {"x", "axes"}, {"sum"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto keepdims;
    keepdims.set_name("keepdims");
    keepdims.set_type(onnx::AttributeProto::INT);
    keepdims.set_i(0);
    return keepdims;
  }());
  cls.node("Mul", {"sum", "zero"}, {"zeros"});
  cls.node("Unsqueeze", {"zeros", "one"}, {"column"});
  cls.node("Add", {"column", "always_180"}, {"probs"});
  cls.save(dir / "ch_ppocr_mobile_v2.0_cls_infer.onnx");

  OcrOptions options = pipeline_->options();
  options.models_dir = dir.string();
  auto wrong = OcrPipeline::create(options);
  ASSERT_TRUE(wrong.has_value()) << wrong.status().to_string();
  options.use_cls = false;
  auto without = OcrPipeline::create(options);
  ASSERT_TRUE(without.has_value()) << without.status().to_string();
  const auto read = (*wrong)->run_file(kDemo);
  const auto plain = (*without)->run_file(kDemo);
  ASSERT_TRUE(read.has_value() && plain.has_value());
  EXPECT_EQ(read->orientation, 180);
  // Detection on the photo turned 180° joins "ESPRESSO BAR" into one line (12 lines upright,
  // 11 turned), so the lines are compared through the score against the labels.
  const OcrScoreTotals wrong_score = score(*read, demo_truth(false)), plain_score = score(*plain, demo_truth(false));
  EXPECT_LE(wrong_score.edits, plain_score.edits + 2) << wrong_score.edits << " vs " << plain_score.edits;
  EXPECT_EQ(wrong_score.recall(), plain_score.recall());
}

TEST_F(OcrPipelineTest, GraySixteenBitAndRgbaImagesAreConverted) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_formats");
  const cv::Mat photo = cv::imread(kDemo);
  const OcrResult reference = run(kDemo);

  cv::Mat sixteen;
  photo.convertTo(sixteen, CV_16UC3, 257.0);  // v × 257 maps back to exactly v
  ASSERT_TRUE(cv::imwrite((dir / "16bit.png").string(), sixteen));
  cv::Mat rgba;
  cv::cvtColor(photo, rgba, cv::COLOR_BGR2BGRA);  // opaque: identical pixels
  ASSERT_TRUE(cv::imwrite((dir / "rgba.png").string(), rgba));
  for (const std::string name : {"16bit.png", "rgba.png"}) {
    const OcrResult result = run((dir / name).string());
    ASSERT_EQ(result.lines.size(), reference.lines.size()) << name;
    for (size_t i = 0; i < result.lines.size(); ++i) EXPECT_EQ(result.lines[i].text, reference.lines[i].text) << name;
  }
  cv::Mat gray;
  cv::cvtColor(photo, gray, cv::COLOR_BGR2GRAY);
  ASSERT_TRUE(cv::imwrite((dir / "gray.png").string(), gray));
  const OcrResult result = run((dir / "gray.png").string());
  EXPECT_LE(score(result, demo_truth(false)).cer(), 0.08);  // measured 0.041
}

TEST_F(OcrPipelineTest, TransparencyIsCompositedOntoAContrastingBackground) {
  cv::Mat dark(4, 4, CV_8UC4, cv::Scalar(0, 0, 0, 0));
  dark.at<cv::Vec4b>(0, 0) = cv::Vec4b(10, 10, 10, 255);  // dark text on a transparent page → white paper
  auto on_white = pipelines::image_view_to_bgr(ImageView{dark.data, 4, 4, 4, 0});
  ASSERT_TRUE(on_white.has_value());
  EXPECT_EQ(on_white->at<cv::Vec3b>(1, 1), cv::Vec3b(255, 255, 255));
  EXPECT_EQ(on_white->at<cv::Vec3b>(0, 0), cv::Vec3b(10, 10, 10));
  cv::Mat light(4, 4, CV_8UC4, cv::Scalar(255, 255, 255, 0));
  light.at<cv::Vec4b>(0, 0) = cv::Vec4b(250, 250, 250, 255);  // white text → black background
  auto on_black = pipelines::image_view_to_bgr(ImageView{light.data, 4, 4, 4, 0});
  ASSERT_TRUE(on_black.has_value());
  EXPECT_EQ(on_black->at<cv::Vec3b>(1, 1), cv::Vec3b(0, 0, 0));
  EXPECT_EQ(on_black->at<cv::Vec3b>(0, 0), cv::Vec3b(250, 250, 250));
}

TEST_F(OcrPipelineTest, ImagesWithoutTextGiveAnEmptyResult) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_no_text");
  ASSERT_TRUE(cv::imwrite((dir / "one_pixel.png").string(), cv::Mat(1, 1, CV_8UC3, cv::Scalar(30, 60, 90))));
  EXPECT_TRUE(run((dir / "one_pixel.png").string()).lines.empty());
  ASSERT_TRUE(cv::imwrite((dir / "blank.png").string(), cv::Mat(480, 640, CV_8UC3, cv::Scalar(240, 240, 240))));
  EXPECT_TRUE(run((dir / "blank.png").string()).lines.empty());
  const OcrResult grass = run(kSource + "/data/photos/grass.png");
  EXPECT_EQ(grass.width, 512);
  EXPECT_LE(grass.lines.size(), 1u);  // a texture photo: no text, at most a stray short line
}

TEST_F(OcrPipelineTest, VeryLargeImageIsDownscaledForDetectionWithBoundedMemory) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_large");
  cv::Mat page(9000, 12000, CV_8UC3, cv::Scalar(255, 255, 255));
  cv::putText(page, "EDGEMM 2026", {1500, 5000}, cv::FONT_HERSHEY_SIMPLEX, 30.0, cv::Scalar(0, 0, 0), 60, cv::LINE_AA);
  ASSERT_TRUE(cv::imwrite((dir / "large.jpg").string(), page));
  page.release();
  const OcrResult result = run((dir / "large.jpg").string());
  EXPECT_EQ(result.width, 12000);
  EXPECT_EQ(result.height, 9000);
  ASSERT_FALSE(result.lines.empty());
  for (const Point& p : result.lines[0].polygon) {
    EXPECT_GE(p.x, 1000);
    EXPECT_LE(p.x, 11999);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 2L * 1024 * 1024) << "peak RSS in KiB";  // image 324 MB decoded; det at 960
}

TEST(OcrImageInput, BadFilesGetClearErrors) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_bad_images");
  expect_error(pipelines::read_image_bgr((dir / "missing.png").string()).status(), StatusCode::kIo, "cannot open");
  write_bytes(dir / "empty.png", "");
  expect_error(pipelines::read_image_bgr((dir / "empty.png").string()).status(), StatusCode::kInvalidArgument,
               "zero-byte");
  write_bytes(dir / "notes.png", "this is a text file, not an image\n");
  expect_error(pipelines::read_image_bgr((dir / "notes.png").string()).status(), StatusCode::kInvalidArgument,
               "cannot decode");
  const std::string png = read_bytes(kSource + "/data/photos/grass.png");
  write_bytes(dir / "truncated.png", png.substr(0, png.size() / 3));
  expect_error(pipelines::read_image_bgr((dir / "truncated.png").string()).status(), StatusCode::kInvalidArgument,
               "cannot decode");
  // libjpeg decodes a truncated JPEG to gray rows with only a warning: refused instead. The
  // whole file, and one with bytes after its end marker (as some cameras append), are read.
  const std::string jpeg = read_bytes(kDemo);
  write_bytes(dir / "truncated.jpg", jpeg.substr(0, jpeg.size() / 3));
  expect_error(pipelines::read_image_bgr((dir / "truncated.jpg").string()).status(), StatusCode::kInvalidArgument,
               "truncated or corrupt JPEG");
  // Damage inside the scan (64 bytes mid-file): libjpeg resyncs, warns and returns wrong pixels.
  std::string garbled = jpeg;
  for (size_t i = 0; i < 64; ++i) garbled[garbled.size() / 2 + i] = static_cast<char>((i * 37 + 11) % 0xFE);
  write_bytes(dir / "garbled.jpg", garbled);
  expect_error(pipelines::read_image_bgr((dir / "garbled.jpg").string()).status(), StatusCode::kInvalidArgument,
               "is a corrupt JPEG: Corrupt JPEG data");
  write_bytes(dir / "trailing.jpg", jpeg + std::string(1000, '\0'));
  EXPECT_TRUE(pipelines::read_image_bgr((dir / "trailing.jpg").string()).has_value());
  EXPECT_TRUE(pipelines::read_image_bgr(kDemo).has_value());
  expect_error(pipelines::read_image_bgr(dir.string()).status(), StatusCode::kIo, "is a directory");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);  // opening it would block forever
  expect_error(pipelines::read_image_bgr((dir / "fifo").string()).status(), StatusCode::kInvalidArgument,
               "not a regular file");
}

TEST(OcrImageInput, HugeDeclaredSizesAreRefusedBeforeDecoding) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_huge_header");
  // A valid 1×1 PNG whose IHDR is patched to claim 100000 × 100000 pixels.
  std::vector<uint8_t> bytes;
  cv::imencode(".png", cv::Mat(1, 1, CV_8UC1, cv::Scalar(0)), bytes);
  for (int at : {16, 20}) {
    bytes[at] = 0x00, bytes[at + 1] = 0x01, bytes[at + 2] = 0x86, bytes[at + 3] = 0xA0;  // 100000
  }
  write_bytes(dir / "huge.png", std::string(bytes.begin(), bytes.end()));
  expect_error(pipelines::read_image_bgr((dir / "huge.png").string()).status(), StatusCode::kInvalidArgument,
               "100000x100000 pixels, more than the limit");
}

TEST(OcrImageInput, InMemoryViewsAreValidated) {
  const uint8_t pixels[12] = {};
  expect_error(pipelines::image_view_to_bgr(ImageView{nullptr, 2, 2, 3, 0}).status(), StatusCode::kInvalidArgument,
               "null");
  expect_error(pipelines::image_view_to_bgr(ImageView{pixels, 0, 2, 3, 0}).status(), StatusCode::kInvalidArgument,
               "empty size");
  expect_error(pipelines::image_view_to_bgr(ImageView{pixels, 2, 2, 2, 0}).status(), StatusCode::kInvalidArgument,
               "2 channels");
  expect_error(pipelines::image_view_to_bgr(ImageView{pixels, 2, 2, 3, 4}).status(), StatusCode::kInvalidArgument,
               "row_bytes 4");
  EXPECT_TRUE(pipelines::image_view_to_bgr(ImageView{pixels, 2, 2, 3, 0}).has_value());
}

TEST(OcrImageInput, RgbViewsAreSwappedToBgr) {
  // One pixel R = 10, G = 20, B = 30, alpha 255: BGR order gives (30, 20, 10) whatever the input order.
  const uint8_t rgb[3] = {10, 20, 30}, bgr[3] = {30, 20, 10}, rgba[4] = {10, 20, 30, 255}, bgra[4] = {30, 20, 10, 255};
  const ImageView views[] = {{rgb, 1, 1, 3, 0, ChannelOrder::kRgb},
                             {bgr, 1, 1, 3, 0, ChannelOrder::kBgr},
                             {rgba, 1, 1, 4, 0, ChannelOrder::kRgb},
                             {bgra, 1, 1, 4, 0, ChannelOrder::kBgr}};
  for (const ImageView& view : views) {
    auto mat = pipelines::image_view_to_bgr(view);
    ASSERT_TRUE(mat.has_value()) << mat.status().to_string();
    EXPECT_EQ(mat->at<cv::Vec3b>(0, 0), cv::Vec3b(30, 20, 10)) << view.channels << " channels";
  }
}

TEST(OcrPipelineOptions, BadOptionsAndMissingModelsAreRefused) {
  OcrOptions options;
  options.models_dir = kSource + "/models/ppocrv4";
  options.det_limit_side = 8;
  expect_error(OcrPipeline::create(options).status(), StatusCode::kInvalidArgument, "det_limit_side");
  options.det_limit_side = 960;
  options.box_threshold = 1.5f;
  expect_error(OcrPipeline::create(options).status(), StatusCode::kInvalidArgument, "box_threshold");
  OcrOptions missing;
  missing.models_dir = "/nonexistent/models";
  expect_error(OcrPipeline::create(missing).status(), StatusCode::kIo, "/nonexistent/models");
}

TEST(OcrPipelineOptions, EveryMissingModelFileIsNamedAtOnce) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_missing_files");
  fs::create_symlink(kSource + "/models/ppocrv4/ch_PP-OCRv4_rec_infer.onnx", dir / "ch_PP-OCRv4_rec_infer.onnx");
  OcrOptions options;
  options.models_dir = dir.string();
  const std::string d = dir.string() + "/";
  expect_error(OcrPipeline::create(options).status(), StatusCode::kIo,
               "OCR model files not found: '" + d + "ch_PP-OCRv4_det_infer.onnx', '" + d + "ppocr_keys_v1.txt', '" + d +
                   "ch_ppocr_mobile_v2.0_cls_infer.onnx'");
}

TEST(OcrPipelineOptions, DictionaryThatDoesNotMatchTheRecognizerIsRefused) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_dictionary");
  for (const std::string file : {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"}) {
    fs::create_symlink(kSource + "/models/ppocrv4/" + file, dir / file);
  }
  write_bytes(dir / "ppocr_keys_v1.txt", "a\nb\nc\n");
  OcrOptions options;
  options.models_dir = dir.string();
  options.use_cls = false;
  expect_error(OcrPipeline::create(options).status(), StatusCode::kInvalidArgument,
               "gives 5 classes (blank + characters + space) but the recognizer outputs 6625");
}

/// Copies PP-OCRv4 model `file` into `dir` with its input pinned to `dims` (as `edgemm convert
/// --fix-shape` would declare it; the rest of the graph is left as exported).
void write_pinned_model(const fs::path& dir, const std::string& file, const std::vector<int64_t>& dims) {
  onnx::ModelProto model;
  std::ifstream in(kSource + "/models/ppocrv4/" + file, std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&in)) << file;
  auto* shape = model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  std::ofstream out(dir / file, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out)) << file;
}

TEST(OcrStaticShapes, ModelsWithStaticInputsAreFedAtExactlyThoseShapes) {
  // det 640×640 (the 960×640 photo is stretched), cls 1×48×192, rec 1×48×320 (one crop a run,
  // wider crops squeezed): the demo photo is still read close to its labels.
  const fs::path dir = edgemm::testing::temp_dir("ocr_static");
  write_pinned_model(dir, "ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640});
  write_pinned_model(dir, "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192});
  write_pinned_model(dir, "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320});
  fs::copy_file(kSource + "/models/ppocrv4/ppocr_keys_v1.txt", dir / "ppocr_keys_v1.txt");
  OcrOptions options;
  options.models_dir = dir.string();
  options.threads = 2;
  auto pipeline = OcrPipeline::create(options);
  ASSERT_TRUE(pipeline.has_value()) << pipeline.status().to_string();
  auto result = (*pipeline)->run_file(kDemo);
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  const OcrScoreTotals totals = score(*result, demo_truth(false));
  EXPECT_LE(totals.cer(), 0.15) << "edits " << totals.edits << " of " << totals.truth_chars;
  EXPECT_GE(totals.recall(), 9.0 / 11);
}

TEST(OcrStaticShapes, ARecognizerWithAnotherStaticLineHeightIsRefused) {
  const fs::path dir = edgemm::testing::temp_dir("ocr_static_height");
  write_pinned_model(dir, "ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640});
  write_pinned_model(dir, "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 32, 320});
  fs::copy_file(kSource + "/models/ppocrv4/ppocr_keys_v1.txt", dir / "ppocr_keys_v1.txt");
  OcrOptions options;
  options.models_dir = dir.string();
  options.use_cls = false;
  expect_error(OcrPipeline::create(options).status(), StatusCode::kInvalidArgument,
               "recognizer 'ch_PP-OCRv4_rec_infer.onnx' input 'x' has a static height of 32; the pipeline feeds text lines 48 pixels high");
}

}  // namespace ocr_pipeline_test
}  // namespace edgemm::ocr
