// The plugin backend (backends/plugin.h, edgemm/plugin_abi.h) end to end: the reference plugin
// (plugins/reference) is loaded with dlopen, takes Conv/Relu/MaxPool/Add/Mul/MatMul, refuses
// Softmax and Sigmoid with its reasons (they run on native), and the outputs equal the native
// backend's and hand-computed values. Loading errors name the file; the faulty C plugin
// (tests/plugins/faulty_plugin.c) shows that a plugin's errors come back with its message and
// that NULL pointers where the ABI requires values are reported, not dereferenced.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <thread>

#include "backends/backend.h"
#include "backends/plugin.h"
#include "edgemm/inferencer.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace backend_plugin_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;

constexpr const char* kSoftmaxReason =
    "Softmax is not among the reference plugin's ops (Add, Conv, Gemm, MatMul, MaxPool, Mul, Relu)";
constexpr const char* kSigmoidReason =
    "Sigmoid is not among the reference plugin's ops (Add, Conv, Gemm, MatMul, MaxPool, Mul, Relu)";

/// `n` floats in [-1, 1) from a fixed linear congruential sequence.
std::vector<float> seeded(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

/// x[1,2,6,6] → Conv(3×3, pads 1) → Relu → MaxPool(2×2) = p[1,4,3,3]; s = Softmax(p, axis 1);
/// m = Mul(Add(p, s), k); y = Sigmoid(m); z = MatMul(m, w2[3,2]).
/// On the reference plugin: {conv, relu, pool}, {add, mul}, {matmul}; softmax, sigmoid native.
std::string mixed_model(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 2, 6, 6});
  b.output("y", onnx::TensorProto::FLOAT, {1, 4, 3, 3});
  b.output("z", onnx::TensorProto::FLOAT, {1, 4, 3, 2});
  b.initializer_floats("w", {4, 2, 3, 3}, seeded(72, 1));
  b.initializer_floats("b", {4}, seeded(4, 2));
  b.initializer_floats("k", {1, 4, 1, 1}, {0.5f, -1.0f, 2.0f, 1.5f});
  b.initializer_floats("w2", {3, 2}, seeded(6, 3));
  testing::set_ints(b.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto* pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
  testing::set_ints(pool, "kernel_shape", {2, 2});
  testing::set_ints(pool, "strides", {2, 2});
  testing::set_int(b.node("Softmax", {"p"}, {"s"}, "softmax"), "axis", 1);
  b.node("Add", {"p", "s"}, {"a"}, "add");
  b.node("Mul", {"a", "k"}, {"m"}, "mul");
  b.node("Sigmoid", {"m"}, {"y"}, "sigmoid");
  b.node("MatMul", {"m", "w2"}, {"z"}, "matmul");
  return b.save(dir / "mixed.onnx");
}

/// x[4] → Relu → y (for the faulty plugin, which claims every node).
std::string relu_model(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4});
  b.output("y", onnx::TensorProto::FLOAT, {4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  return b.save(dir / "relu.onnx");
}

InferencerConfig plugin_config(const std::string& model, const std::string& plugin, const std::string& device = "cpu") {
  InferencerConfig config;
  config.model_path = model;
  config.backend = "plugin";
  config.plugin_path = plugin;
  config.device = device;
  config.threads = 1;
  return config;
}

/// The error of creating an Inferencer with `config` (fails the test if creation succeeds).
Status create_error(const InferencerConfig& config) {
  auto inf = Inferencer::create(config);
  EXPECT_FALSE(inf.has_value());
  return inf.has_value() ? Status::ok() : inf.status();
}

void expect_near(const Tensor& got, const Tensor& want, double tolerance) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = testutil::values<float>(got), w = testutil::values<float>(want);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tolerance) << i;
}

TEST(BackendPlugin, ReferencePluginRunsItsOpsAndLeavesTheRestToNativeWithItsReasons) {
  const std::string model = mixed_model(testing::temp_dir("plugin_mixed"));
  auto inf = Inferencer::create(plugin_config(model, EDGEMM_REFERENCE_PLUGIN));
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  EXPECT_EQ((*inf)->backend(), "reference");

  std::map<std::string, std::pair<std::string, std::string>> placed;
  for (const NodePlacement& p : (*inf)->placement()) placed[p.node] = {p.backend, p.reason};
  const std::map<std::string, std::pair<std::string, std::string>> want = {{"conv", {"reference", ""}},
                                                                           {"relu", {"reference", ""}},
                                                                           {"pool", {"reference", ""}},
                                                                           {"softmax", {"native", kSoftmaxReason}},
                                                                           {"add", {"reference", ""}},
                                                                           {"mul", {"reference", ""}},
                                                                           {"sigmoid", {"native", kSigmoidReason}},
                                                                           {"matmul", {"reference", ""}}};
  EXPECT_EQ(placed, want);

  InferencerConfig native_config;
  native_config.model_path = model;
  native_config.threads = 1;
  auto native = Inferencer::create(native_config);
  ASSERT_TRUE(native.has_value()) << native.status().to_string();
  const Tensor x = testutil::f32({1, 2, 6, 6}, seeded(72, 4));
  auto got = (*inf)->run({{"x", x}});
  auto expected = (*native)->run({{"x", x}});
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  ASSERT_EQ(got->size(), 2u);
  expect_near((*got)[0], (*expected)[0], 1e-5);
  expect_near((*got)[1], (*expected)[1], 1e-5);
}

TEST(BackendPlugin, TinyModelMatchesHandComputedValues) {
  // x = [1, -2, 3, 0.25] as [1,1,2,2]; c = Conv 1×1 (w 2, b -1) = [1, -5, 5, -0.5];
  // r = Relu(c) = [1, 0, 5, 0]; s = Softmax over the last axis; y = Sigmoid(r + s).
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  b.output("y", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  b.initializer_floats("w", {1, 1, 1, 1}, {2});
  b.initializer_floats("b", {1}, {-1});
  b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Softmax", {"r"}, {"s"}, "softmax");
  b.node("Add", {"r", "s"}, {"a"}, "add");
  b.node("Sigmoid", {"a"}, {"y"}, "sigmoid");
  auto inf = Inferencer::create(
      plugin_config(b.save(testing::temp_dir("plugin_tiny") / "tiny.onnx"), EDGEMM_REFERENCE_PLUGIN));
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto out = (*inf)->run({{"x", testutil::f32({1, 1, 2, 2}, {1, -2, 3, 0.25f})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();

  const double e = std::exp(1.0), e5 = std::exp(5.0);
  const double r[4] = {1, 0, 5, 0};
  const double s[4] = {e / (e + 1), 1 / (e + 1), e5 / (e5 + 1), 1 / (e5 + 1)};
  const auto y = testutil::values<float>((*out)[0]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], 1 / (1 + std::exp(-(r[i] + s[i]))), 1e-6) << i;
}

TEST(BackendPlugin, PartitionsRunConcurrently) {
  const std::string model = mixed_model(testing::temp_dir("plugin_threads"));
  auto inf = Inferencer::create(plugin_config(model, EDGEMM_REFERENCE_PLUGIN));
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const Tensor x = testutil::f32({1, 2, 6, 6}, seeded(72, 5));
  auto first = (*inf)->run({{"x", x}});
  ASSERT_TRUE(first.has_value()) << first.status().to_string();
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k) {
        auto out = (*inf)->run({{"x", x}});
        if (out.has_value()) result = testutil::values<float>((*out)[1]);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, testutil::values<float>((*first)[1]));
}

TEST(BackendPlugin, ReferencePluginRefusesOtherDtypesWithAReason) {
  ModelBuilder b;
  b.input("i", onnx::TensorProto::INT64, {3});
  b.output("j", onnx::TensorProto::INT64, {3});
  b.node("Add", {"i", "i"}, {"j"}, "add_ints");
  auto inf =
      Inferencer::create(plugin_config(b.save(testing::temp_dir("plugin_int") / "int.onnx"), EDGEMM_REFERENCE_PLUGIN));
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const std::vector<NodePlacement> want = {
      {"add_ints", "Add", "native", "the reference plugin runs float32 only; 'i' is int64"}};
  EXPECT_EQ((*inf)->placement(), want);
  auto out = (*inf)->run({{"i", testutil::i64({3}, {1, 2, -3})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(testutil::values<int64_t>((*out)[0]), (std::vector<int64_t>{2, 4, -6}));
}

TEST(BackendPlugin, BackendDeclaresThePluginsNameDevicesAndPrecisions) {
  auto backend = backends::load_plugin_backend(plugin_config("", EDGEMM_REFERENCE_PLUGIN));
  ASSERT_TRUE(backend.has_value()) << backend.status().to_string();
  EXPECT_EQ((*backend)->name(), "reference");
  EXPECT_EQ((*backend)->constraints().devices, std::vector<std::string>{"cpu"});
  EXPECT_EQ((*backend)->constraints().precisions, std::vector<std::string>{"fp32"});
  const auto names = backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "plugin"), names.end());

  const std::string model = relu_model(testing::temp_dir("plugin_device"));
  const Status npu = create_error(plugin_config(model, EDGEMM_REFERENCE_PLUGIN, "npu"));
  EXPECT_EQ(npu.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(npu.message().find("backend 'reference' does not support device 'npu' (it supports: cpu)"),
            std::string::npos)
      << npu.message();
}

TEST(BackendPlugin, LoadingErrorsNameTheFile) {
  const auto dir = testing::temp_dir("plugin_errors");
  const std::string model = relu_model(dir);

  const Status empty = create_error(plugin_config(model, ""));
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("needs a plugin library"), std::string::npos) << empty.message();

  const std::string missing = (dir / "libmissing.so").string();
  const Status io = create_error(plugin_config(model, missing));
  EXPECT_EQ(io.code(), StatusCode::kIo);
  EXPECT_NE(io.message().find("plugin library '" + missing + "' does not exist"), std::string::npos) << io.message();

  const std::string text = (dir / "notes.so").string();
  std::ofstream(text) << "not an ELF file\n";
  const Status not_elf = create_error(plugin_config(model, text));
  EXPECT_EQ(not_elf.code(), StatusCode::kUnsupported);
  EXPECT_NE(not_elf.message().find("plugin '" + text + "' is not a loadable shared library: "), std::string::npos)
      << not_elf.message();

  const Status no_entry = create_error(plugin_config(model, EDGEMM_NOT_A_PLUGIN));
  EXPECT_EQ(no_entry.code(), StatusCode::kUnsupported);
  EXPECT_NE(no_entry.message().find(std::string("plugin '") + EDGEMM_NOT_A_PLUGIN +
                                    "' does not export edgemm_plugin_get_api: "),
            std::string::npos)
      << no_entry.message();
  EXPECT_NE(no_entry.message().find("undefined symbol"), std::string::npos) << no_entry.message();  // dlerror's text
}

TEST(BackendPlugin, ABrokenApiTableIsRefused) {
  const std::string model = relu_model(testing::temp_dir("plugin_tables"));
  const Status version = create_error(plugin_config(model, EDGEMM_WRONG_ABI_PLUGIN));
  EXPECT_EQ(version.code(), StatusCode::kUnsupported);
  EXPECT_NE(version.message().find(std::string("plugin '") + EDGEMM_WRONG_ABI_PLUGIN +
                                   "' has ABI version 999; this edgemm needs 1"),
            std::string::npos)
      << version.message();

  const Status null_api = create_error(plugin_config(model, EDGEMM_NULL_API_PLUGIN));
  EXPECT_EQ(null_api.code(), StatusCode::kUnsupported);
  EXPECT_NE(null_api.message().find("returned no API table for ABI version 1"), std::string::npos)
      << null_api.message();

  const Status null_run = create_error(plugin_config(model, EDGEMM_NULL_RUN_PLUGIN, "run-fails"));
  EXPECT_EQ(null_run.code(), StatusCode::kUnsupported);
  EXPECT_NE(null_run.message().find("has no run function (NULL)"), std::string::npos) << null_run.message();
}

TEST(BackendPlugin, CapabilityFailureRefusesEveryNodeWithThePluginsMessage) {
  const std::string model = relu_model(testing::temp_dir("plugin_capability"));
  auto inf = Inferencer::create(plugin_config(model, EDGEMM_FAULTY_PLUGIN, "capability-fails"));
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  ASSERT_EQ((*inf)->placement().size(), 1u);
  EXPECT_EQ((*inf)->placement()[0].backend, "native");
  EXPECT_EQ((*inf)->placement()[0].reason,
            "plugin 'faulty' capability failed (code 3): faulty capability fails on purpose");
  auto out = (*inf)->run({{"x", testutil::f32({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(testutil::values<float>((*out)[0]), (std::vector<float>{0, 2, 0, 4}));

  auto silent = Inferencer::create(plugin_config(model, EDGEMM_FAULTY_PLUGIN, "no-reason"));
  ASSERT_TRUE(silent.has_value()) << silent.status().to_string();
  EXPECT_EQ((*silent)->placement()[0].reason, "plugin 'faulty' gave no reason");
}

TEST(BackendPlugin, CompileFailuresFallBackToNativeWithThePluginsMessage) {
  const std::string model = relu_model(testing::temp_dir("plugin_compile"));
  const struct {
    const char* device;
    const char* reason;
  } cases[] = {
      {"compile-fails", "plugin 'faulty' compile failed (code 3): faulty compile fails on purpose"},
      {"null-partition", "plugin 'faulty' compile reported success but returned no partition (NULL)"},
  };
  for (const auto& c : cases) {
    auto inf = Inferencer::create(plugin_config(model, EDGEMM_FAULTY_PLUGIN, c.device));
    ASSERT_TRUE(inf.has_value()) << c.device << ": " << inf.status().to_string();
    const auto& placement = (*inf)->placement();
    ASSERT_EQ(placement.size(), 1u);
    EXPECT_EQ(placement[0].backend, "native") << c.device;
    EXPECT_NE(placement[0].reason.find(c.reason), std::string::npos) << placement[0].reason;
    auto out = (*inf)->run({{"x", testutil::f32({4}, {-1, 2, -3, 4})}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    EXPECT_EQ(testutil::values<float>((*out)[0]), (std::vector<float>{0, 2, 0, 4}));
  }
}

/// Outputs the faulty plugin handed out and edgemm has not released yet.
int faulty_outstanding() {
  void* handle = dlopen(EDGEMM_FAULTY_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return -1;
  auto count = reinterpret_cast<int (*)()>(dlsym(handle, "faulty_plugin_outstanding"));
  const int outstanding = count != nullptr ? count() : -1;
  dlclose(handle);
  return outstanding;
}

/// Runs the relu model on the faulty plugin with `device` and returns the run's error.
Status faulty_run_error(const std::string& device) {
  const std::string model = relu_model(testing::temp_dir("plugin_run_" + device));
  auto inf = Inferencer::create(plugin_config(model, EDGEMM_FAULTY_PLUGIN, device));
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  if (!inf.has_value()) return inf.status();
  auto out = (*inf)->run({{"x", testutil::f32({4}, {1, 2, 3, 4})}});
  EXPECT_FALSE(out.has_value());
  EXPECT_EQ(faulty_outstanding(), 0) << device;
  return out.has_value() ? Status::ok() : out.status();
}

TEST(BackendPlugin, RunErrorsCarryThePluginsMessageAndBadOutputsAreReleased) {
  const Status failed = faulty_run_error("run-fails");
  EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(failed.message().find("plugin 'faulty' run failed (code 1): faulty run fails on purpose"),
            std::string::npos)
      << failed.message();

  const Status null_data = faulty_run_error("null-output");
  EXPECT_EQ(null_data.code(), StatusCode::kInternal);
  EXPECT_NE(null_data.message().find("plugin 'faulty' returned output 'y' with no data (NULL)"), std::string::npos)
      << null_data.message();

  const Status bad_dtype = faulty_run_error("bad-dtype");
  EXPECT_EQ(bad_dtype.code(), StatusCode::kInternal);
  EXPECT_NE(bad_dtype.message().find("returned output 'y' with dtype 8"), std::string::npos) << bad_dtype.message();
}

}  // namespace backend_plugin_test
}  // namespace edgemm
