// uint8 activations between int8 convolutions (passes::chain_int8, Int8Conv's y_scale): QDQ
// graphs of two or three convolutions run op by op with the reference QuantizeLinear /
// DequantizeLinear / Conv kernels (the oracle) and through the passes with NHWC chains; the
// pass must fire exactly where every reader quantizes the value the same way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "kernels/cpu/onednn.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "passes/passes.h"
#include "quant_test_util.h"

namespace edgemm {
namespace quant_int8_chain_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testing::set_int;
using testing::set_ints;
using testutil::seeded_f32;
using testutil::seeded_values;
constexpr int64_t kSide = 12;

/// How the value `a` between the first convolution and its readers is used.
enum class Readers {
  kOne,              // a → Q → DQ → conv2
  kTwoSameParams,    // a → Q → DQ → conv2 and conv3 (one QuantizeLinear)
  kTwoOtherParams,   // a → Q(0.05) → DQ → conv2, a → Q(0.07) → DQ → conv3
  kAlsoFloatReader,  // a → Q → DQ → conv2, and a → Add → y2
  kDepthwise,        // a → Q → DQ → depthwise conv2 (group 16)
};

void add_zero_point(ModelBuilder& b, const std::string& name, int z) {
  testutil::raw_initializer(b, name, onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(z)));
}

/// x_in → QuantizeLinear(scale, zp) → DequantizeLinear → out.
void add_qdq(ModelBuilder& b, const std::string& in, const std::string& out, float scale, int zp) {
  b.initializer_floats(out + "_s", {}, {scale});
  add_zero_point(b, out + "_z", zp);
  b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out + "_q"});
  b.node("DequantizeLinear", {out + "_q", out + "_s", out + "_z"}, {out});
}

/// Conv(x, DequantizeLinear(int8 W [m, c/group, k, k], per-channel scales), B) → y, padded to keep
/// the spatial size.
void add_int8_conv(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, int64_t m, int64_t k,
                   int64_t group, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(-127, 127);
  std::string wq(static_cast<size_t>(m * c / group * k * k), '\0');
  for (char& v : wq) v = static_cast<char>(static_cast<int8_t>(w(rng)));
  testutil::raw_initializer(b, y + "_wq", onnx::TensorProto::INT8, {m, c / group, k, k}, wq);
  b.initializer_floats(y + "_ws", {m}, seeded_values(static_cast<size_t>(m), seed + 1, 0.001f, 0.004f));
  testutil::raw_initializer(b, y + "_wz", onnx::TensorProto::INT8, {m}, std::string(static_cast<size_t>(m), '\0'));
  set_int(b.node("DequantizeLinear", {y + "_wq", y + "_ws", y + "_wz"}, {y + "_w"}), "axis", 0);
  b.initializer_floats(y + "_b", {m}, seeded_values(static_cast<size_t>(m), seed + 2));
  auto* conv = b.node("Conv", {x, y + "_w", y + "_b"}, {y}, y + "_conv");
  set_ints(conv, "kernel_shape", {k, k});
  set_ints(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
  set_int(conv, "group", group);
}

/// The ops between the first convolution and the value `a` (fused into its epilogue).
enum class Epilogue {
  kRelu,
  kHardSwishLinear,  // x · HardSigmoid(x) (HardSwish), then Mul and Add by scalars (PP-OCRv4's pattern)
  kReluLinearRelu,   // Relu, Mul and Add by scalars, Relu (two linear steps with the quantization)
};

void add_epilogue(ModelBuilder& b, Epilogue epilogue, const std::string& x, const std::string& y) {
  if (epilogue == Epilogue::kRelu) {
    b.node("Relu", {x}, {y});
    return;
  }
  b.initializer_floats("affine_scale", {}, {0.7f});
  b.initializer_floats("affine_bias", {}, {0.1f});
  if (epilogue == Epilogue::kHardSwishLinear) {
    testing::set_float(b.node("HardSigmoid", {x}, {"hsig"}), "alpha", 1.0f / 6);
    b.node("Mul", {x, "hsig"}, {"hswish"});
    b.node("Mul", {"hswish", "affine_scale"}, {"scaled"});
    b.node("Add", {"scaled", "affine_bias"}, {y});
  } else {
    b.node("Relu", {x}, {"relu"});
    b.node("Mul", {"relu", "affine_scale"}, {"scaled"});
    b.node("Add", {"scaled", "affine_bias"}, {"shifted"});
    b.node("Relu", {"shifted"}, {y});
  }
}

std::string save_chain(Readers readers, Epilogue epilogue, const std::string& name) {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, kSide, kSide});
  add_qdq(b, "x", "xdq", 0.02f, 128);
  add_int8_conv(b, "xdq", "c1", 8, 16, 3, 1, 10);
  add_epilogue(b, epilogue, "c1", "a");
  add_qdq(b, "a", "adq", 0.05f, 3);
  const bool depthwise = readers == Readers::kDepthwise;
  add_int8_conv(b, "adq", "y", 16, depthwise ? 16 : 8, depthwise ? 3 : 1, depthwise ? 16 : 1, 20);
  b.output("y", kFloat, {1, depthwise ? 16 : 8, kSide, kSide});
  if (readers == Readers::kTwoSameParams || readers == Readers::kTwoOtherParams) {
    std::string in = "adq";
    if (readers == Readers::kTwoOtherParams) {
      add_qdq(b, "a", "adq2", 0.07f, 3);
      in = "adq2";
    }
    add_int8_conv(b, in, "y2", 16, 4, 3, 1, 30);
    b.output("y2", kFloat, {1, 4, kSide, kSide});
  }
  if (readers == Readers::kAlsoFloatReader) {
    b.node("Add", {"a", "a"}, {"y2"});
    b.output("y2", kFloat, {1, 16, kSide, kSide});
  }
  return b.save(testing::temp_dir("int8_chain") / (name + ".onnx"));
}

/// x → Q → DQ → conv1 → c1; a = Add(Relu(c1), c1) (an ElementwiseChain: c1 has two readers, so
/// no epilogue takes them), or with `single_op` a = Add(c1, c1) (one Add node) → Q → DQ → conv2
/// → y.
std::string save_chain_after_elementwise(bool single_op, const std::string& name) {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, kSide, kSide});
  add_qdq(b, "x", "xdq", 0.02f, 128);
  add_int8_conv(b, "xdq", "c1", 8, 16, 3, 1, 10);
  if (single_op) {
    b.node("Add", {"c1", "c1"}, {"a"});
  } else {
    b.node("Relu", {"c1"}, {"r"});
    b.node("Add", {"r", "c1"}, {"a"});
  }
  add_qdq(b, "a", "adq", 0.05f, 3);
  add_int8_conv(b, "adq", "y", 16, 8, 1, 1, 20);
  b.output("y", kFloat, {1, 8, kSide, kSide});
  return b.save(testing::temp_dir("int8_chain") / (name + ".onnx"));
}

/// x → Q → DQ → conv1 (16 channels) and conv1b (8) → Concat on channels → Q → DQ → conv2 → y.
std::string save_chain_after_concat(const std::string& name) {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, kSide, kSide});
  add_qdq(b, "x", "xdq", 0.02f, 128);
  add_int8_conv(b, "xdq", "c1", 8, 16, 3, 1, 10);
  add_int8_conv(b, "xdq", "c2", 8, 8, 1, 1, 40);
  set_int(b.node("Concat", {"c1", "c2"}, {"a"}), "axis", 1);
  add_qdq(b, "a", "adq", 0.05f, 3);
  add_int8_conv(b, "adq", "y", 24, 8, 1, 1, 20);
  b.output("y", kFloat, {1, 8, kSide, kSide});
  return b.save(testing::temp_dir("int8_chain") / (name + ".onnx"));
}

/// Values the passes make uint8 in the model at `path` (NHWC chains) for `producer` ("Int8Conv",
/// "ElementwiseChain" or "Concat").
int chained_values(const std::string& path, const std::string& producer = "Int8Conv") {
  auto model = ir::import_onnx_file(path);
  EXPECT_TRUE(model.has_value());
  passes::PassReport report;
  passes::optimize(*model, report, passes::PassOptions{ir::ActivationLayout::kNhwc});
  auto it = report.patterns.find(producer + "→Int8Conv uint8");
  return it == report.patterns.end() ? 0 : it->second;
}

/// Runs `path` op by op and optimized with NHWC chains; expects every output element equal
/// within 1e-4 relative, except that the uint8 value may differ from the QDQ graph's by one step
/// where x / y_scale and x · (1 / y_scale) round to different sides of a tie: at most 0.1 % of
/// the elements, each within one step times the largest weight contribution.
void expect_matches_qdq_graph(const std::string& path, const std::string& name) {
  const Tensor x = seeded_f32({1, 8, kSide, kSide}, 11, -2.0f, 3.0f);
  const std::vector<Tensor> want = testutil::run_model(path, false, x);
  ::setenv("EDGEMM_CHAIN_LAYOUT", "NHWC", 1);
  const std::vector<Tensor> got = testutil::run_model(path, true, x);
  ::unsetenv("EDGEMM_CHAIN_LAYOUT");
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape()) << name;
    int64_t off = 0;
    for (int64_t i = 0; i < want[o].element_count(); ++i) {
      const double w = want[o].data<float>()[i], g = got[o].data<float>()[i];
      const double err = std::abs(g - w) / std::max(1.0, std::abs(w));
      EXPECT_LT(err, 0.05) << name << " output " << o << " element " << i;
      off += err > 1e-4;
    }
    EXPECT_LE(off, want[o].element_count() / 1000) << name << " output " << o;
  }
}

TEST(QuantInt8Chain, ValueReadOnlyByInt8ConvsStaysUint8) {
  for (auto [readers, name] : std::vector<std::pair<Readers, const char*>>{
           {Readers::kOne, "one"}, {Readers::kTwoSameParams, "two_same"}, {Readers::kDepthwise, "depthwise"}}) {
    const std::string path = save_chain(readers, Epilogue::kRelu, name);
    EXPECT_EQ(chained_values(path), 1) << name;
    expect_matches_qdq_graph(path, name);
  }
}

// oneDNN 2.6 gets a uint8 destination wrong with two eltwise_linear post-ops: the trailing
// affine step merges with the quantization, and "relu, linear, relu" is quantized by edgemm's loop.
TEST(QuantInt8Chain, EpiloguesWithAffineStepsStayExact) {
  for (auto [epilogue, name] : std::vector<std::pair<Epilogue, std::string>>{
           {Epilogue::kHardSwishLinear, "hardswish_linear"}, {Epilogue::kReluLinearRelu, "relu_linear_relu"}}) {
    for (Readers readers : {Readers::kOne, Readers::kDepthwise}) {
      const std::string case_name = name + (readers == Readers::kOne ? "_pointwise" : "_depthwise");
      const std::string path = save_chain(readers, epilogue, case_name);
      EXPECT_EQ(chained_values(path), 1) << case_name;
      expect_matches_qdq_graph(path, case_name);
    }
  }
}

TEST(QuantInt8Chain, ValueWithOtherReadersStaysFloat) {
  for (auto [readers, name] : std::vector<std::pair<Readers, const char*>>{
           {Readers::kTwoOtherParams, "two_other"}, {Readers::kAlsoFloatReader, "float_reader"}}) {
    const std::string path = save_chain(readers, Epilogue::kRelu, name);
    EXPECT_EQ(chained_values(path), 0) << name;
    expect_matches_qdq_graph(path, name);
  }
}

// An ElementwiseChain whose only readers are Int8Convs quantizes its tiles as it writes them; a
// single elementwise op becomes such a chain.
TEST(QuantInt8Chain, ElementwiseChainWritesTheUint8Value) {
  for (bool single_op : {false, true}) {
    const std::string name = single_op ? "single_add" : "relu_add";
    const std::string path = save_chain_after_elementwise(single_op, name);
    EXPECT_EQ(chained_values(path, "ElementwiseChain"), 1) << name;
    EXPECT_EQ(chained_values(path, "Int8Conv"), 0) << name;
    expect_matches_qdq_graph(path, name);
  }
}

// A Concat read only by Int8Convs quantizes its float inputs as it copies them.
TEST(QuantInt8Chain, ConcatWritesTheUint8Value) {
  const std::string path = save_chain_after_concat("concat");
  EXPECT_EQ(chained_values(path, "Concat"), 1);
  expect_matches_qdq_graph(path, "concat");
}

// A denormal weight scale sends the first convolution to the reference path, which must write
// the same uint8 value.
TEST(QuantInt8Chain, ReferencePathWritesTheUint8Value) {
  const std::string path = save_chain(Readers::kOne, Epilogue::kRelu, "reference");
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  model->graph.initializers.at("c1_ws").data<float>()[5] = 1e-40f;
  const std::string edited = (testing::temp_dir("int8_chain") / "reference_denormal.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, edited).is_ok());
  EXPECT_EQ(chained_values(edited), 1);
  expect_matches_qdq_graph(edited, "reference");
}

}  // namespace quant_int8_chain_test
}  // namespace edgemm
