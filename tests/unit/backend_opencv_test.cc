// The opencv backend (OpenCV DNN 4.6): what it takes, what it refuses and why, and that its outputs
// equal the native kernels' (the oracle here: they pass the ONNX conformance tests of their ops)
// on seeded inputs, for small built models and for PP-OCRv4 (skipped when models/ppocrv4 is absent).
// The reasons asserted are the texts OpenCV 4.6 itself gives, as the probes find them.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <thread>

#include "backends/opencv/opencv_dnn.h"
#include "edgemm/inferencer.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "source_dir.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace backend_opencv_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;
using Inputs = std::vector<std::pair<std::string, Tensor>>;

/// A float initializer of `dims` with seeded values in [-0.5, 0.5).
void seeded_initializer(ModelBuilder& b, const std::string& name, const std::vector<int64_t>& dims, uint32_t seed) {
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  b.initializer_floats(name, dims, testutil::seeded_values(count, seed, -0.5f, 0.5f));
}

/// x[1,3,8,8] → Conv 3x3 (pads 1) → Relu, plus Conv 1x1 of x → Add → MaxPool 2x2 → Flatten → Gemm
/// (transB) → y[1,10]. `clip_between` puts a Clip-13 with min/max as constant inputs after the Add.
std::string conv_net(const std::filesystem::path& dir, bool clip_between, int64_t batch = 1) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {batch, 3, 8, 8});
  b.output("y", onnx::TensorProto::FLOAT, {batch, 10});
  seeded_initializer(b, "w1", {4, 3, 3, 3}, 1);
  seeded_initializer(b, "b1", {4}, 2);
  seeded_initializer(b, "w2", {4, 3, 1, 1}, 3);
  seeded_initializer(b, "w3", {10, 64}, 4);
  seeded_initializer(b, "b3", {10}, 5);
  b.initializer_floats("lo", {}, {0.f});
  b.initializer_floats("hi", {}, {0.6f});
  auto* conv1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  testing::set_ints(conv1, "kernel_shape", {3, 3});
  testing::set_ints(conv1, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto* conv2 = b.node("Conv", {"x", "w2"}, {"c2"}, "conv2");
  testing::set_ints(conv2, "kernel_shape", {1, 1});
  b.node("Add", {"r1", "c2"}, {"a"}, "add");
  std::string pooled_input = "a";
  if (clip_between) {
    b.node("Clip", {"a", "lo", "hi"}, {"clipped"}, "clip");
    pooled_input = "clipped";
  }
  auto* pool = b.node("MaxPool", {pooled_input}, {"m"}, "pool");
  testing::set_ints(pool, "kernel_shape", {2, 2});
  testing::set_ints(pool, "strides", {2, 2});
  b.node("Flatten", {"m"}, {"f"}, "flatten");
  auto* gemm = b.node("Gemm", {"f", "w3", "b3"}, {"y"}, "gemm");
  testing::set_int(gemm, "transB", 1);
  return b.save(dir / (clip_between ? "conv_clip.onnx" : "conv.onnx"));
}

/// Loads `config` on its backend and on native, runs both on `inputs`, and returns the largest
/// absolute difference over all outputs (infinity, with a test failure, when anything fails).
double max_difference_to_native(InferencerConfig config, const Inputs& inputs,
                                std::vector<NodePlacement>* placement = nullptr) {
  auto backend = Inferencer::create(config);
  EXPECT_TRUE(backend.has_value()) << backend.status().to_string();
  config.backend = "native";
  auto native = Inferencer::create(config);
  EXPECT_TRUE(native.has_value()) << native.status().to_string();
  if (!backend || !native) return INFINITY;
  if (placement != nullptr) *placement = (*backend)->placement();
  auto got = (*backend)->run(inputs);
  auto want = (*native)->run(inputs);
  EXPECT_TRUE(got.has_value()) << got.status().to_string();
  EXPECT_TRUE(want.has_value()) << want.status().to_string();
  if (!got || !want || got->size() != want->size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < got->size(); ++k) {
    EXPECT_EQ((*got)[k].shape(), (*want)[k].shape()) << "output " << k;
    if ((*got)[k].shape() != (*want)[k].shape()) return INFINITY;
    const float* g = (*got)[k].data<float>();
    const float* w = (*want)[k].data<float>();
    for (int64_t i = 0; i < (*got)[k].element_count(); ++i) {
      const double d = std::fabs(static_cast<double>(g[i]) - w[i]);
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
  }
  return worst;
}

InferencerConfig opencv_config(const std::string& model_path) {
  InferencerConfig config;
  config.model_path = model_path;
  config.backend = "opencv";
  config.threads = 1;
  return config;
}

const NodePlacement* find_node(const std::vector<NodePlacement>& placement, const std::string& name) {
  for (const NodePlacement& p : placement) {
    if (p.node == name) return &p;
  }
  return nullptr;
}

int count_on(const std::vector<NodePlacement>& placement, const std::string& backend) {
  return static_cast<int>(
      std::count_if(placement.begin(), placement.end(), [&](const NodePlacement& p) { return p.backend == backend; }));
}

TEST(OpenCvBackend, EssentialErrorKeepsTheLineThatSaysWhy) {
  // Verbatim OpenCV 4.6.0 texts (Debian 4.6.0+dfsg-12), from one-node Clip, Slice and Resize models.
  const std::string clip =
      "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: (-2:Unspecified error) in function "
      "'handleNode'\n> Node [Clip@ai.onnx]:(onnx_node_output_0!y) parse error: OpenCV(4.6.0) "
      "./modules/dnn/src/onnx/onnx_importer.cpp:1934: error: (-2:Unspecified error) in function 'void "
      "cv::dnn::dnn4_v20220524::ONNXImporter::parseClip(cv::dnn::dnn4_v20220524::LayerParams&, const "
      "opencv_onnx::NodeProto&)'\n> >  (expected: 'node_proto.input_size() == 1'), where\n> >     "
      "'node_proto.input_size()' is 3\n> > must be equal to\n> >     '1' is 1\n> ]\n";
  EXPECT_EQ(backends::opencv::essential_error(clip),
            "(expected: 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3 (in parseClip)");
  EXPECT_EQ(backends::opencv::failing_node(clip), "Clip 'y'");
  const std::string slice =
      "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: (-2:Unspecified error) in function "
      "'handleNode'\n> Node [Slice@ai.onnx]:(onnx_node_output_0!y) parse error: OpenCV(4.6.0) "
      "./modules/dnn/src/layers/slice_layer.cpp:182: error: (-215:Assertion failed) step >= 1 in function "
      "'SliceLayerImpl'\n> ";
  EXPECT_EQ(backends::opencv::essential_error(slice), "Assertion failed: step >= 1 (in SliceLayerImpl)");
  const std::string resize =
      "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: (-2:Unspecified error) in function "
      "'handleNode'\n> Node [Resize@ai.onnx]:(onnx_node_output_0!y) parse error: OpenCV(4.6.0) "
      "./modules/dnn/src/layers/resize_layer.cpp:48: error: (-2:Unspecified error) in function "
      "'cv::dnn::ResizeLayerImpl::ResizeLayerImpl(const cv::dnn::dnn4_v20220524::LayerParams&)'\n> > :\n> >     "
      "'interpolation == \"nearest\" || interpolation == \"opencv_linear\" || interpolation == \"bilinear\"'\n> > "
      "where\n> >     'interpolation' is cubic\n> ]\n";
  EXPECT_EQ(backends::opencv::essential_error(resize),
            "'interpolation == \"nearest\" || interpolation == \"opencv_linear\" || interpolation == \"bilinear\"' "
            "where 'interpolation' is cubic (in ResizeLayerImpl)");
  EXPECT_EQ(backends::opencv::essential_error("no OpenCV format\nsecond line"), "no OpenCV format");
  EXPECT_EQ(backends::opencv::failing_node("plain text"), "");
}

TEST(OpenCvBackend, SmallConvNetRunsEntirelyOnOpenCvAndMatchesNative) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_conv"), false));
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(config, {{"x", testutil::seeded_f32({1, 3, 8, 8}, 7)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  ASSERT_EQ(placement.size(), 7u);
  for (const NodePlacement& p : placement) EXPECT_EQ(p.backend, "opencv") << p.node << ": " << p.reason;
}

TEST(OpenCvBackend, ScaledProductOfTwoComputedOperandsMatchesNative) {
  // Attention's Q·Kᵀ/√d: OpenCV 4.6 with layer fusion on folds the Div into the InnerProduct
  // layer of the MatMul and was off by 7.9 here, though each node alone passes its probe.
  const auto dir = testing::temp_dir("opencv_matmul_div");
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {1, 8, 32}).output("y", onnx::TensorProto::FLOAT, {1, 8, 8});
  b.initializer_floats("root", {}, {2.83f});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  testing::set_ints(b.node("Transpose", {"s"}, {"t"}, "transpose"), "perm", {0, 2, 1});
  b.node("MatMul", {"a", "t"}, {"p"}, "matmul");
  b.node("Div", {"p", "root"}, {"y"}, "div");
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(opencv_config(b.save(dir / "matmul_div.onnx")),
                                               {{"x", testutil::seeded_f32({1, 8, 32}, 11, -2, 2)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  EXPECT_EQ(count_on(placement, "opencv"), 5);
}

TEST(OpenCvBackend, ClipWithBoundsAsInputsFallsBackWithOpenCvsReason) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_clip"), true));
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(config, {{"x", testutil::seeded_f32({1, 3, 8, 8}, 8)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  const NodePlacement* clip = find_node(placement, "clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->backend, "native");
  EXPECT_EQ(clip->reason,
            "Clip(float32[1,4,8,8], constant float32[], constant float32[]): OpenCV DNN 4.6 cannot import it: "
            "(expected: 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3 (in parseClip)");
  EXPECT_EQ(count_on(placement, "opencv"), 7);
}

TEST(OpenCvBackend, DynamicShapesAreRefusedUntilPinned) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_dynamic"), false, -1));
  auto dynamic = Inferencer::create(config);
  ASSERT_TRUE(dynamic.has_value()) << dynamic.status().to_string();
  const NodePlacement* conv = find_node((*dynamic)->placement(), "conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->backend, "native");
  EXPECT_EQ(conv->reason,
            "dynamic input shape [?,3,8,8] (OpenCV DNN 4.6 needs static shapes: pin them with --shape on run, "
            "inspect and bench, or make the file static with `edgemm convert --fix-shape ... --simplify`)");
  EXPECT_EQ(count_on((*dynamic)->placement(), "opencv"), 0);

  config.fixed_input_shapes["x"] = {2, 3, 8, 8};
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(config, {{"x", testutil::seeded_f32({2, 3, 8, 8}, 9)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  EXPECT_EQ(count_on(placement, "opencv"), 7);
}

TEST(OpenCvBackend, NonFloatTensorsAreRefusedAtTheBoundary) {
  ModelBuilder b;
  b.input("i", onnx::TensorProto::INT64, {2, 3});
  b.output("y", onnx::TensorProto::FLOAT, {2, 3});
  auto* cast = b.node("Cast", {"i"}, {"f"}, "cast");
  testing::set_int(cast, "to", onnx::TensorProto::FLOAT);
  b.node("Relu", {"f"}, {"y"}, "relu");
  InferencerConfig config = opencv_config(b.save(testing::temp_dir("opencv_int64") / "m.onnx"));
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const std::vector<NodePlacement>& placement = (*inf)->placement();
  ASSERT_EQ(placement.size(), 2u);
  EXPECT_EQ(placement[0].backend, "native");
  EXPECT_EQ(placement[0].reason, "int64 input 'i' (OpenCV DNN 4.6 exchanges float32 tensors only)");
  EXPECT_EQ(placement[1].backend, "opencv") << placement[1].reason;
  auto out = (*inf)->run({{"i", testutil::i64({2, 3}, {-2, -1, 0, 1, 2, 3})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(testutil::values<float>((*out)[0]), (std::vector<float>{0, 0, 0, 1, 2, 3}));
}

// OpenCV 4.6's CumSum over a non-last axis reads and writes outside its blobs: it gives garbage
// and may abort in glibc's heap checks. Either way the probe (in a child process) refuses it.
TEST(OpenCvBackend, CumSumOverANonLastAxisIsRefusedAndTheProgramGoesOn) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 3, 4, 4});
  b.output("y", onnx::TensorProto::FLOAT, {1, 3, 4, 4});
  b.initializer_int64s("axis", {}, {1});
  b.node("CumSum", {"x", "axis"}, {"s"}, "cumsum");
  b.node("Relu", {"s"}, {"y"}, "relu");
  InferencerConfig config = opencv_config(b.save(testing::temp_dir("opencv_cumsum") / "m.onnx"));
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(config, {{"x", testutil::seeded_f32({1, 3, 4, 4}, 10)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  const NodePlacement* cumsum = find_node(placement, "cumsum");
  ASSERT_NE(cumsum, nullptr);
  EXPECT_EQ(cumsum->backend, "native");
  const std::string prefix = "CumSum(float32[1,3,4,4], constant int64[]): OpenCV DNN 4.6 ";
  EXPECT_EQ(cumsum->reason.rfind(prefix, 0), 0u) << cumsum->reason;
  const std::string why = cumsum->reason.substr(prefix.size());
  EXPECT_TRUE(why.rfind("computes other values: output 's'", 0) == 0 || why.rfind("crashed probing it", 0) == 0)
      << cumsum->reason;
}

TEST(OpenCvBackend, ConcurrentRunsGiveTheSameOutputs) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_threads"), false));
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const Inputs inputs = {{"x", testutil::seeded_f32({1, 3, 8, 8}, 11)}};
  auto want = (*inf)->run(inputs);
  ASSERT_TRUE(want.has_value());
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (auto& out : got) {
    threads.emplace_back([&] {
      for (int k = 0; k < 20; ++k) {
        auto y = (*inf)->run(inputs);
        if (y) out = testutil::values<float>((*y)[0]);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& out : got) EXPECT_EQ(out, testutil::values<float>((*want)[0]));
}

// The probes start while this process's OpenCV thread pool (TBB) and edgemm's run: the helper
// must still answer, rather than hang until the probe timeout refuses every node (a child forked
// from this process did, under AddressSanitizer, when another thread was allocating).
TEST(OpenCvBackend, ProbesAfterOpenCvRanOnTwoThreads) {
  const std::filesystem::path dir = testing::temp_dir("opencv_two_threads");
  InferencerConfig first = opencv_config(conv_net(dir / "a", false, 4));
  first.threads = 2;
  auto warm = Inferencer::create(first);
  ASSERT_TRUE(warm.has_value()) << warm.status().to_string();
  ASSERT_TRUE((*warm)->run({{"x", testutil::seeded_f32({4, 3, 8, 8}, 13)}}).has_value());

  InferencerConfig second = opencv_config(conv_net(dir / "b", false, 5));
  second.threads = 2;
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(second, {{"x", testutil::seeded_f32({5, 3, 8, 8}, 14)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  EXPECT_EQ(count_on(placement, "opencv"), 7);
}

// Without the probe helper nothing can be probed: every node runs on native, with a reason that
// names what was looked for, and the verdict is not cached (the next load probes again).
TEST(OpenCvBackend, WithoutTheProbeHelperEveryNodeRunsOnNativeAndSaysWhy) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_no_helper"), false, 6));
  const Inputs inputs = {{"x", testutil::seeded_f32({6, 3, 8, 8}, 15)}};
  ::setenv("EDGEMM_OPENCV_PROBE", "/nonexistent/edgemm-opencv-probe", 1);
  std::vector<NodePlacement> placement;
  EXPECT_LE(max_difference_to_native(config, inputs, &placement), 1e-4);
  ::unsetenv("EDGEMM_OPENCV_PROBE");
  EXPECT_EQ(count_on(placement, "opencv"), 0);
  const NodePlacement* flatten = find_node(placement, "flatten");
  ASSERT_NE(flatten, nullptr);
  EXPECT_NE(flatten->reason.find("EDGEMM_OPENCV_PROBE is '/nonexistent/edgemm-opencv-probe', which is not an "
                                 "executable file"),
            std::string::npos)
      << flatten->reason;

  EXPECT_LE(max_difference_to_native(config, inputs, &placement), 1e-4);
  EXPECT_EQ(count_on(placement, "opencv"), 7);
}

TEST(OpenCvBackend, RefusesSettingsItCannotHonour) {
  InferencerConfig config = opencv_config(conv_net(testing::temp_dir("opencv_settings"), false));
  config.precision = "fp16";
  auto fp16 = Inferencer::create(config);
  ASSERT_FALSE(fp16.has_value());
  EXPECT_EQ(fp16.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fp16.status().message(), "backend 'opencv' does not support precision 'fp16' (it supports: fp32)");
  config.precision = "fp32";
  config.device = "gpu";
  auto gpu = Inferencer::create(config);
  ASSERT_FALSE(gpu.has_value());
  EXPECT_EQ(gpu.status().message(), "backend 'opencv' does not support device 'gpu' (it supports: cpu)");
}

/// PP-OCRv4 model `file` pinned to `shape`: how many nodes OpenCV takes, and the largest
/// difference to native on seeded inputs in [0, 1).
void check_ppocr(const std::string& file, const Shape& shape) {
  const std::filesystem::path path = std::filesystem::path(edgemm::testing::source_dir()) / "models/ppocrv4" / file;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (scripts/setup.sh fetches it)";
  InferencerConfig config = opencv_config(path.string());
  config.fixed_input_shapes["x"] = shape;
  std::vector<NodePlacement> placement;
  const double diff = max_difference_to_native(config, {{"x", testutil::seeded_f32(shape, 12, 0.f, 1.f)}}, &placement);
  EXPECT_LE(diff, 1e-4);
  const int on_opencv = count_on(placement, "opencv");
  std::cout << file << " " << shape_to_string(shape) << ": " << on_opencv << " of " << placement.size()
            << " nodes on opencv, max |opencv - native| = " << diff << "\n";
  for (const NodePlacement& p : placement) {
    if (p.backend != "opencv") std::cout << "  native: " << p.op_type << " '" << p.node << "': " << p.reason << "\n";
  }
  EXPECT_GT(on_opencv, 0);
}

TEST(OpenCvBackend, PpOcrV4ClsMatchesNative) { check_ppocr("ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}); }
TEST(OpenCvBackend, PpOcrV4DetMatchesNative) { check_ppocr("ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}); }
TEST(OpenCvBackend, PpOcrV4RecMatchesNative) { check_ppocr("ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}); }

}  // namespace backend_opencv_test
}  // namespace edgemm
