// The C API (include/edgemm/edgemm_c.h): an ONNX backend node test run through it matches the
// test's own expected output (libonnx-testdata), outputs land in caller buffers (or say the size
// they need), every kind of bad argument is an error status naming it, and OCR through it reads
// the demo photo against its labels (data/demo/photo_text.json), from a file and from memory.
#include <gtest/gtest.h>
#include <omp.h>

#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "edgemm/edgemm_c.h"
#include "ir/onnx_import.h"
#include "ocr_test_util.h"
#include "source_dir.h"

namespace edgemm {
namespace c_api_test {  // named for the file: unity batches merge anonymous namespaces

const std::string kNodeTests = "/usr/share/libonnx-testdata/data/node/";
const std::string kSource = edgemm::testing::source_dir();

/// Takes ownership of a status: its code (EDGEMM_OK for NULL) and message.
struct CStatus {
  edgemm_status_code code;
  std::string message;
};
CStatus take(edgemm_status* status) {
  CStatus result{edgemm_status_get_code(status), edgemm_status_get_message(status)};
  edgemm_status_free(status);
  return result;
}

void expect_error(edgemm_status* status, edgemm_status_code code, const std::string& fragment) {
  const CStatus s = take(status);
  EXPECT_EQ(s.code, code) << s.message;
  EXPECT_NE(s.message.find(fragment), std::string::npos) << "message lacks '" << fragment << "': " << s.message;
}

edgemm_inferencer* load(const std::string& path) {
  edgemm_runtime_options options;
  edgemm_runtime_options_init(&options);
  options.threads = 1;
  edgemm_inferencer* inferencer = nullptr;
  const CStatus s = take(edgemm_inferencer_create(path.c_str(), &options, &inferencer));
  EXPECT_EQ(s.code, EDGEMM_OK) << s.message;
  return inferencer;
}

edgemm_input input_of(const char* name, const Tensor& t) {
  return edgemm_input{name, static_cast<edgemm_dtype>(t.dtype()), t.shape().data(), t.shape().size(), t.raw_data()};
}

/// An output request for `name` into `capacity` bytes at `data`; the run fills in the rest.
edgemm_output output_of(const char* name, void* data, size_t capacity) {
  edgemm_output out{};
  out.name = name;
  out.data = data;
  out.capacity_bytes = capacity;
  return out;
}

TEST(CApi, AbiVersionIsTheHeaders) { EXPECT_EQ(edgemm_abi_version(), static_cast<uint32_t>(EDGEMM_C_ABI_VERSION)); }

TEST(CApi, NodeTestMatchesItsExpectedOutput) {
  const std::string dir = kNodeTests + "test_matmul_2d/";
  edgemm_inferencer* inferencer = load(dir + "model.onnx");
  ASSERT_NE(inferencer, nullptr);
  ASSERT_EQ(edgemm_inferencer_input_count(inferencer), 2u);
  ASSERT_EQ(edgemm_inferencer_output_count(inferencer), 1u);
  EXPECT_EQ(edgemm_inferencer_input_name(inferencer, 2), nullptr);
  auto a = ir::read_tensor_proto_file(dir + "test_data_set_0/input_0.pb");
  auto b = ir::read_tensor_proto_file(dir + "test_data_set_0/input_1.pb");
  auto want = ir::read_tensor_proto_file(dir + "test_data_set_0/output_0.pb");
  ASSERT_TRUE(a && b && want);
  const edgemm_input inputs[] = {input_of(edgemm_inferencer_input_name(inferencer, 0), *a),
                                 input_of(edgemm_inferencer_input_name(inferencer, 1), *b)};
  std::vector<float> values(want->element_count());
  edgemm_output out =
      output_of(edgemm_inferencer_output_name(inferencer, 0), values.data(), values.size() * sizeof(float));
  const CStatus s = take(edgemm_inferencer_run(inferencer, inputs, 2, &out, 1));
  ASSERT_EQ(s.code, EDGEMM_OK) << s.message;
  EXPECT_EQ(out.dtype, EDGEMM_DTYPE_FLOAT32);
  ASSERT_EQ(out.rank, want->shape().size());
  for (size_t axis = 0; axis < out.rank; ++axis) EXPECT_EQ(out.shape[axis], want->shape()[axis]);
  EXPECT_EQ(out.size_bytes, want->byte_size());
  for (int64_t i = 0; i < want->element_count(); ++i) EXPECT_NEAR(values[i], want->data<float>()[i], 1e-5f) << i;
  edgemm_inferencer_destroy(inferencer);
}

TEST(CApi, SmallOutputBufferSaysTheSizeAndCopiesNothing) {
  edgemm_inferencer* inferencer = load(kNodeTests + "test_relu/model.onnx");
  ASSERT_NE(inferencer, nullptr);
  auto x = ir::read_tensor_proto_file(kNodeTests + "test_relu/test_data_set_0/input_0.pb");
  ASSERT_TRUE(x);
  const edgemm_input input = input_of(edgemm_inferencer_input_name(inferencer, 0), *x);
  std::vector<float> small(3, -7.0f);
  edgemm_output out =
      output_of(edgemm_inferencer_output_name(inferencer, 0), small.data(), small.size() * sizeof(float));
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT,
               "needs " + std::to_string(x->byte_size()) + " bytes; its buffer holds 12");
  EXPECT_EQ(out.size_bytes, x->byte_size());
  EXPECT_EQ(small, std::vector<float>(3, -7.0f));
  std::vector<float> values(out.size_bytes / sizeof(float));
  out.data = values.data();
  out.capacity_bytes = out.size_bytes;
  EXPECT_EQ(take(edgemm_inferencer_run(inferencer, &input, 1, &out, 1)).code, EDGEMM_OK);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], std::max(x->data<float>()[i], 0.0f));
  edgemm_inferencer_destroy(inferencer);
}

TEST(CApi, OneSmallBufferFailsTheRunDescribesEveryOutputAndWritesNone) {
  const std::string dir = kNodeTests + "test_split_equal_parts_1d/";
  edgemm_inferencer* inferencer = load(dir + "model.onnx");
  ASSERT_NE(inferencer, nullptr);
  ASSERT_EQ(edgemm_inferencer_output_count(inferencer), 3u);
  auto x = ir::read_tensor_proto_file(dir + "test_data_set_0/input_0.pb");
  auto want = ir::read_tensor_proto_file(dir + "test_data_set_0/output_2.pb");
  ASSERT_TRUE(x && want);
  const edgemm_input input = input_of(edgemm_inferencer_input_name(inferencer, 0), *x);
  std::vector<float> big(64, -7.0f), last(64, -7.0f);
  edgemm_output outs[] = {output_of(edgemm_inferencer_output_name(inferencer, 0), big.data(), 256),
                          output_of(edgemm_inferencer_output_name(inferencer, 1), nullptr, 0),
                          output_of(edgemm_inferencer_output_name(inferencer, 2), last.data(), 256)};
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, outs, 3), EDGEMM_INVALID_ARGUMENT, "its buffer holds 0");
  for (const edgemm_output& out : outs) {
    EXPECT_EQ(out.size_bytes, want->byte_size()) << out.name;
    EXPECT_EQ(out.rank, 1u);
  }
  EXPECT_EQ(big, std::vector<float>(64, -7.0f));
  EXPECT_EQ(last, std::vector<float>(64, -7.0f));
  std::vector<float> middle(64);
  outs[1] = output_of(outs[1].name, middle.data(), 256);
  ASSERT_EQ(take(edgemm_inferencer_run(inferencer, &input, 1, outs, 3)).code, EDGEMM_OK);
  for (int64_t i = 0; i < want->element_count(); ++i) EXPECT_EQ(last[i], want->data<float>()[i]);
  edgemm_inferencer_destroy(inferencer);
}

TEST(CApi, ARunLeavesTheCallersOpenMpThreadCountAsItWas) {
  edgemm_inferencer* inferencer = load(kNodeTests + "test_relu/model.onnx");  // threads = 1
  ASSERT_NE(inferencer, nullptr);
  auto x = ir::read_tensor_proto_file(kNodeTests + "test_relu/test_data_set_0/input_0.pb");
  ASSERT_TRUE(x);
  const edgemm_input input = input_of(edgemm_inferencer_input_name(inferencer, 0), *x);
  std::vector<float> values(x->element_count());
  edgemm_output out = output_of(edgemm_inferencer_output_name(inferencer, 0), values.data(), x->byte_size());
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  EXPECT_EQ(take(edgemm_inferencer_run(inferencer, &input, 1, &out, 1)).code, EDGEMM_OK);
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
  edgemm_inferencer_destroy(inferencer);
}

TEST(CApi, BadArgumentsAreErrorsNamingThem) {
  edgemm_inferencer* none = reinterpret_cast<edgemm_inferencer*>(1);
  expect_error(edgemm_inferencer_create("/nonexistent/model.onnx", nullptr, &none), EDGEMM_IO,
               "/nonexistent/model.onnx");
  EXPECT_EQ(none, nullptr);
  expect_error(edgemm_inferencer_create(nullptr, nullptr, &none), EDGEMM_INVALID_ARGUMENT, "model_path is NULL");
  expect_error(edgemm_inferencer_create("m.onnx", nullptr, nullptr), EDGEMM_INVALID_ARGUMENT, "out is NULL");
  edgemm_runtime_options options;
  edgemm_runtime_options_init(&options);
  options.backend = "no-such-backend";
  expect_error(edgemm_inferencer_create((kNodeTests + "test_relu/model.onnx").c_str(), &options, &none),
               EDGEMM_INVALID_ARGUMENT, "no-such-backend");

  edgemm_inferencer* inferencer = load(kNodeTests + "test_relu/model.onnx");
  ASSERT_NE(inferencer, nullptr);
  const std::string x_name = edgemm_inferencer_input_name(inferencer, 0);
  const std::string y_name = edgemm_inferencer_output_name(inferencer, 0);
  auto x = ir::read_tensor_proto_file(kNodeTests + "test_relu/test_data_set_0/input_0.pb");
  ASSERT_TRUE(x);
  std::vector<float> values(x->element_count());
  edgemm_output out = output_of(y_name.c_str(), values.data(), x->byte_size());
  edgemm_input input = input_of("nope", *x);
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "nope");
  input = input_of(x_name.c_str(), *x);
  input.dtype = EDGEMM_DTYPE_INT32;
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "dtype");
  input.dtype = static_cast<edgemm_dtype>(99);
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "unknown dtype 99");
  input = input_of(x_name.c_str(), *x);
  input.data = nullptr;
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "NULL data");
  input = input_of(x_name.c_str(), *x);
  const int64_t negative[] = {3, -4, 5};
  input.shape = negative;
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, x_name);
  input = input_of(x_name.c_str(), *x);
  input.shape = nullptr;
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "shape is NULL");
  input = input_of(x_name.c_str(), *x);
  out.name = "missing_output";
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "missing_output");
  expect_error(edgemm_inferencer_run(inferencer, &input, 1, nullptr, 1), EDGEMM_INVALID_ARGUMENT, "outputs is NULL");
  expect_error(edgemm_inferencer_run(nullptr, &input, 1, &out, 1), EDGEMM_INVALID_ARGUMENT, "inferencer is NULL");
  expect_error(edgemm_inferencer_run(inferencer, nullptr, 0, &out, 1), EDGEMM_INVALID_ARGUMENT, x_name);
  edgemm_inferencer_destroy(inferencer);
  edgemm_inferencer_destroy(nullptr);
  edgemm_status_free(nullptr);
  EXPECT_EQ(edgemm_status_get_code(nullptr), EDGEMM_OK);
}

TEST(CApi, OcrReadsTheDemoPhotoFromAFileAndFromMemory) {
  edgemm_runtime_options options;
  edgemm_runtime_options_init(&options);
  options.threads = 2;
  edgemm_ocr* ocr = nullptr;
  const CStatus created = take(edgemm_ocr_create((kSource + "/models/ppocrv4").c_str(), &options, &ocr));
  ASSERT_EQ(created.code, EDGEMM_OK) << created.message;
  const std::string photo = kSource + "/data/demo/photo_text.jpg";
  const cv::Mat bgr = cv::imread(photo, cv::IMREAD_COLOR);
  ASSERT_FALSE(bgr.empty());
  edgemm_ocr_result* from_file = nullptr;
  edgemm_ocr_result* from_memory = nullptr;
  ASSERT_EQ(take(edgemm_ocr_run_file(ocr, photo.c_str(), &from_file)).code, EDGEMM_OK);
  ASSERT_EQ(
      take(edgemm_ocr_run_image(ocr, bgr.data, bgr.cols, bgr.rows, 3, static_cast<int64_t>(bgr.step), &from_memory))
          .code,
      EDGEMM_OK);
  for (const edgemm_ocr_result* result : {from_file, from_memory}) {
    ocr::OcrResult lines;
    for (size_t i = 0; i < edgemm_ocr_result_line_count(result); ++i) {
      ocr::OcrLine line;
      line.text = edgemm_ocr_result_line_text(result, i);
      line.score = edgemm_ocr_result_line_score(result, i);
      float xy[8];
      ASSERT_EQ(edgemm_ocr_result_line_polygon(result, i, xy), 0);
      for (int k = 0; k < 4; ++k) line.polygon[k] = {xy[2 * k], xy[2 * k + 1]};
      EXPECT_GT(line.score, 0.5f);
      lines.lines.push_back(line);
    }
    EXPECT_LE(ocr::score(lines, ocr::demo_truth(false)).cer(), 0.08);  // the C++ pipeline's bound
    const size_t count = edgemm_ocr_result_line_count(result);
    EXPECT_EQ(edgemm_ocr_result_line_text(result, count), nullptr);
    float xy[8];
    EXPECT_EQ(edgemm_ocr_result_line_polygon(result, count, xy), -1);
  }
  edgemm_ocr_result* none = nullptr;
  expect_error(edgemm_ocr_run_file(ocr, (kSource + "/missing.png").c_str(), &none), EDGEMM_IO, "missing.png");
  expect_error(edgemm_ocr_run_image(ocr, bgr.data, 0, bgr.rows, 3, 0, &none), EDGEMM_INVALID_ARGUMENT, "");
  expect_error(edgemm_ocr_run_image(ocr, nullptr, 4, 4, 3, 0, &none), EDGEMM_INVALID_ARGUMENT, "pixels is NULL");
  EXPECT_EQ(none, nullptr);
  edgemm_ocr_result_free(from_file);
  edgemm_ocr_result_free(from_memory);
  edgemm_ocr_destroy(ocr);
  edgemm_ocr* missing = nullptr;
  expect_error(edgemm_ocr_create("/nonexistent-models", nullptr, &missing), EDGEMM_IO, "/nonexistent-models");
}

}  // namespace c_api_test
}  // namespace edgemm
