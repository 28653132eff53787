// INT8 quantization end to end on small graphs: the QDQ rewrite (src/quant/qdq.h), the QDQ
// fusion pass and the Int8Conv / Int8MatMul kernels (the fast path of this CPU, oneDNN on x86 or
// the SDOT kernels on Arm with dot product, against the QDQ graph run op by op with the reference
// QuantizeLinear / DequantizeLinear / Conv / MatMul kernels), and fp16 weight storage.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "kernels/cpu/int8_gemm_neon.h"
#include "kernels/cpu/onednn.h"
#include "edgemm/cpu.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "passes/passes.h"
#include "quant/quantize.h"
#include "quant_test_util.h"

namespace edgemm {
namespace quant_int8_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testing::set_int;
using testing::set_ints;
using testutil::count_ops;
using testutil::seeded_f32;
using testutil::seeded_values;

/// The kernel an Int8Conv (`conv`) or Int8MatMul runs on this CPU with oneDNN enabled: the SDOT
/// kernels on Arm with dot product; oneDNN's where its u8s8 kernels are exact for the weights
/// (`full_range`: weights beyond [-64, 64] need AVX-512 VNNI), else the reference path.
const char* fast_kernel(bool conv, bool full_range = false) {
  if (kernels::int8_neon::enabled()) return conv ? "u8s8_conv__neon_dot" : "u8s8_matmul__neon_dot";
  if (full_range && !cpu_features().avx512_vnni)
    return conv ? "u8s8_conv__reference" : "u8s8_matmul__reference";
  return conv ? "u8s8_conv__onednn" : "u8s8_matmul__onednn";
}

/// One convolution of a QDQ test graph.
struct ConvCase {
  int64_t c = 8, m = 16, k = 3, stride = 1, pad = 1, group = 1, side = 10, dilation = 1;
  int weight_max = 64;  // int8 weights drawn in [-weight_max, weight_max]
  bool relu = false;
};

/// x → QuantizeLinear(0.02, 128) → DequantizeLinear → Conv(DequantizeLinear(W_int8, per-channel
/// scales, axis 0), B) [→ Relu] → y, as edgemm quantize writes it.
std::string save_qdq_conv(const ConvCase& cc, const std::string& name) {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, cc.c, cc.side, cc.side});
  const int64_t out = (cc.side + 2 * cc.pad - cc.dilation * (cc.k - 1) - 1) / cc.stride + 1;
  b.output("y", kFloat, {1, cc.m, out, out});
  b.initializer_floats("x_scale", {}, {0.02f});
  testutil::raw_initializer(b, "x_zp", onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(128)));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xdq"});
  const int64_t per = cc.c / cc.group * cc.k * cc.k;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> w(-cc.weight_max, cc.weight_max);
  std::string wq(static_cast<size_t>(cc.m * per), '\0');
  for (char& v : wq) v = static_cast<char>(static_cast<int8_t>(w(rng)));
  testutil::raw_initializer(b, "w_q", onnx::TensorProto::INT8, {cc.m, cc.c / cc.group, cc.k, cc.k}, wq);
  b.initializer_floats("w_scale", {cc.m}, seeded_values(static_cast<size_t>(cc.m), 7, 0.002f, 0.01f));
  testutil::raw_initializer(b, "w_zp", onnx::TensorProto::INT8, {cc.m}, std::string(static_cast<size_t>(cc.m), '\0'));
  set_int(b.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}), "axis", 0);
  b.initializer_floats("bias", {cc.m}, seeded_values(static_cast<size_t>(cc.m), 9));
  auto* conv = b.node("Conv", {"xdq", "w", "bias"}, {cc.relu ? "conv" : "y"}, "conv");
  set_ints(conv, "kernel_shape", {cc.k, cc.k});
  set_ints(conv, "strides", {cc.stride, cc.stride});
  set_ints(conv, "dilations", {cc.dilation, cc.dilation});
  set_ints(conv, "pads", {cc.pad, cc.pad, cc.pad, cc.pad});
  set_int(conv, "group", cc.group);
  if (cc.relu) b.node("Relu", {"conv"}, {"y"});
  return b.save(testing::temp_dir("qdq_conv") / (name + ".onnx"));
}

Tensor run_one(const std::string& path, bool optimize, const Tensor& x, std::vector<NodeProfile>* profile = nullptr) {
  const std::vector<Tensor> outputs = testutil::run_model(path, optimize, x, profile);
  return outputs.empty() ? Tensor() : outputs[0];
}

double max_relative_error(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  double worst = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double w = want.data<float>()[i];
    worst = std::max(worst, std::abs(got.data<float>()[i] - w) / std::max(1.0, std::abs(w)));
  }
  return worst;
}

/// Runs the QDQ graph at `path` op by op and through the fusion pass, the latter with nChw8c and
/// with NHWC convolution chains (EDGEMM_CHAIN_LAYOUT); expects equal outputs and exactly one
/// `op_type` node that ran `kernel`.
void expect_fused_matches_qdq_graph(const std::string& path, const Tensor& x, const char* op_type, const char* kernel,
                                    const std::string& name) {
  const Tensor want = run_one(path, false, x);  // QuantizeLinear, DequantizeLinear, Conv / MatMul kernels
  for (const char* layout : {"nChw8c", "NHWC"}) {
    ::setenv("EDGEMM_CHAIN_LAYOUT", layout, 1);
    std::vector<NodeProfile> profile;
    const Tensor got = run_one(path, true, x, &profile);
    EXPECT_LT(max_relative_error(got, want), 1e-4) << name << " " << layout;
    int int8_nodes = 0;
    for (const NodeProfile& n : profile) {
      if (n.op_type == op_type) {
        ++int8_nodes;
        EXPECT_EQ(n.kernel, kernel) << name << " " << layout;
      }
    }
    EXPECT_EQ(int8_nodes, 1) << name << " " << layout;
  }
  ::unsetenv("EDGEMM_CHAIN_LAYOUT");
}

void expect_int8_matches_qdq_graph(const ConvCase& cc, const std::string& name, const char* kernel) {
  expect_fused_matches_qdq_graph(save_qdq_conv(cc, name), seeded_f32({1, cc.c, cc.side, cc.side}, 11, -2.0f, 3.0f),
                                 "Int8Conv", kernel, name);
}

TEST(QuantInt8Conv, FastPathMatchesTheQdqGraph) {
  const char* kernel = fast_kernel(true);
  expect_int8_matches_qdq_graph({}, "blocked_3x3", kernel);
  expect_int8_matches_qdq_graph({.c = 3, .m = 5, .k = 3, .stride = 2, .pad = 1, .side = 9}, "odd_stride2", kernel);
  expect_int8_matches_qdq_graph({.c = 16, .m = 24, .k = 1, .pad = 0}, "pointwise", kernel);
  expect_int8_matches_qdq_graph({.c = 40, .m = 9, .k = 1, .stride = 2, .pad = 0, .side = 9}, "pointwise_stride2",
                                kernel);
  expect_int8_matches_qdq_graph({.c = 8, .m = 8, .group = 2, .relu = true}, "grouped_relu", kernel);
  expect_int8_matches_qdq_graph({.c = 24, .m = 24, .k = 3, .stride = 2, .group = 24, .side = 11}, "depthwise_s2",
                                kernel);
  expect_int8_matches_qdq_graph({.c = 40, .m = 40, .k = 5, .pad = 2, .group = 40, .side = 9}, "depthwise_5x5", kernel);
  expect_int8_matches_qdq_graph({.c = 16, .m = 16, .k = 3, .pad = 2, .group = 16, .dilation = 2}, "depthwise_dilated",
                                kernel);
  expect_int8_matches_qdq_graph({.c = 20, .m = 12, .k = 3, .pad = 2, .dilation = 2, .relu = true}, "dilated_relu",
                                kernel);
}

TEST(QuantInt8Conv, ReferencePathMatchesTheQdqGraph) {
  kernels::onednn::ScopedEnabled off(false);
  expect_int8_matches_qdq_graph({.relu = true}, "reference", "u8s8_conv__reference");
}

// Weights beyond 7 bits would saturate vpmaddubsw's pair sums without VNNI: the kernel must
// not give a wrong answer (it runs the reference path on such CPUs).
TEST(QuantInt8Conv, FullRangeWeightsStayExact) {
  expect_int8_matches_qdq_graph({.weight_max = 127}, "full_range", fast_kernel(true, true));
  expect_int8_matches_qdq_graph({.c = 16, .m = 16, .group = 16, .weight_max = 127}, "full_range_depthwise",
                                fast_kernel(true, true));
}

// A denormal weight scale (PP-OCRv4 rec has SE convolutions with 1e-39 weights) would make
// oneDNN's bias / (x_scale · w_scale) overflow: the kernel takes the reference path and stays exact
// (the SDOT kernels multiply their sums by the scale and need no such care).
TEST(QuantInt8Conv, DenormalWeightScaleStaysExact) {
  ConvCase cc;
  const std::string path = save_qdq_conv(cc, "denormal");
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  model->graph.initializers.at("w_scale").data<float>()[3] = 1e-40f;
  const std::string edited = (testing::temp_dir("qdq_denormal") / "d.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, edited).is_ok());
  const Tensor x = seeded_f32({1, cc.c, cc.side, cc.side}, 11, -2.0f, 3.0f);
  std::vector<NodeProfile> profile;
  const Tensor got = run_one(edited, true, x, &profile);
  EXPECT_LT(max_relative_error(got, run_one(edited, false, x)), 1e-4);
  for (const NodeProfile& n : profile) {
    if (n.op_type == "Int8Conv") {
      EXPECT_EQ(n.kernel, kernels::int8_neon::enabled() ? "u8s8_conv__neon_dot" : "u8s8_conv__reference");
    }
  }
}

/// One MatMul of a QDQ test graph: x [a_shape..., k] times B [k, n].
struct MatMulCase {
  std::vector<int64_t> a_shape = {2, 7};  // leading axes of x
  int64_t k = 24, n = 40;
  int weight_max = 64;
  bool bias = true;         // followed by Add(bias [n]), as edgemm quantize leaves Linear layers
  bool per_tensor = false;  // one weight scale instead of one per column
};

/// x → QuantizeLinear(0.03, 100) → DequantizeLinear → MatMul(DequantizeLinear(B_int8, scales,
/// axis 1)) [→ Add(bias)] → y.
std::string save_qdq_matmul(const MatMulCase& mc, const std::string& name) {
  ModelBuilder b(13);
  std::vector<int64_t> x_shape = mc.a_shape, y_shape = mc.a_shape;
  x_shape.push_back(mc.k);
  y_shape.push_back(mc.n);
  b.input("x", kFloat, x_shape);
  b.output("y", kFloat, y_shape);
  b.initializer_floats("x_scale", {}, {0.03f});
  testutil::raw_initializer(b, "x_zp", onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(100)));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xdq"});
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> w(-mc.weight_max, mc.weight_max);
  std::string wq(static_cast<size_t>(mc.k * mc.n), '\0');
  for (char& v : wq) v = static_cast<char>(static_cast<int8_t>(w(rng)));
  testutil::raw_initializer(b, "w_q", onnx::TensorProto::INT8, {mc.k, mc.n}, wq);
  const int64_t scales = mc.per_tensor ? 1 : mc.n;
  b.initializer_floats("w_scale", mc.per_tensor ? std::vector<int64_t>{} : std::vector<int64_t>{mc.n},
                       seeded_values(static_cast<size_t>(scales), 8, 0.002f, 0.01f));
  set_int(b.node("DequantizeLinear", {"w_q", "w_scale"}, {"w"}), "axis", 1);
  b.node("MatMul", {"xdq", "w"}, {mc.bias ? "mm" : "y"}, "matmul");
  if (mc.bias) {
    b.initializer_floats("bias", {mc.n}, seeded_values(static_cast<size_t>(mc.n), 10));
    b.node("Add", {"mm", "bias"}, {"y"});
  }
  return b.save(testing::temp_dir("qdq_matmul") / (name + ".onnx"));
}

void expect_int8_matches_qdq_graph(const MatMulCase& mc, const std::string& name, const char* kernel) {
  std::vector<int64_t> x_shape = mc.a_shape;
  x_shape.push_back(mc.k);
  expect_fused_matches_qdq_graph(save_qdq_matmul(mc, name), seeded_f32(x_shape, 12, -2.0f, 3.0f), "Int8MatMul", kernel,
                                 name);
}

TEST(QuantInt8MatMul, FastPathMatchesTheQdqGraph) {
  const char* kernel = fast_kernel(false);
  expect_int8_matches_qdq_graph(MatMulCase{}, "rank3_bias", kernel);
  expect_int8_matches_qdq_graph(MatMulCase{.a_shape = {5}, .k = 17, .n = 3, .bias = false}, "rank2_no_bias", kernel);
  expect_int8_matches_qdq_graph(MatMulCase{.a_shape = {1, 40}, .k = 120, .n = 480, .per_tensor = true}, "per_tensor",
                                kernel);
}

TEST(QuantInt8MatMul, ReferencePathMatchesTheQdqGraph) {
  kernels::onednn::ScopedEnabled off(false);
  expect_int8_matches_qdq_graph(MatMulCase{}, "reference", "u8s8_matmul__reference");
}

TEST(QuantInt8MatMul, FullRangeWeightsStayExact) {
  expect_int8_matches_qdq_graph(MatMulCase{.weight_max = 127}, "full_range", fast_kernel(false, true));
}

// Channels whose weights are all tiny get scale 1 and zero codes, never a denormal scale.
TEST(QuantWeightsTiny, ChannelsBelowNormalRangeBecomeZero) {
  auto q = quant::quantize_weight(Tensor::from_floats({2, 2}, {1e-39f, -2e-39f, 1.0f, 0.5f}), 0, 64);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->scales.data<float>()[0], 1.0f);
  EXPECT_EQ(q->values.data<int8_t>()[0], 0);
  EXPECT_EQ(q->values.data<int8_t>()[1], 0);
  EXPECT_FLOAT_EQ(q->scales.data<float>()[1], 1.0f / 64.0f);
}

TEST(QuantInt8Conv, MismatchedQdqParametersAreNotFused) {
  ConvCase cc;
  std::string path = save_qdq_conv(cc, "mismatch");
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  for (auto& n : model->graph.nodes) {
    if (n.op_type == "DequantizeLinear" && n.inputs[0] == "xq") n.inputs[1] = "w_scale_other";
  }
  model->graph.initializers["w_scale_other"] = Tensor::from_floats({}, {0.03f});
  passes::PassReport report;
  passes::fuse_qdq(*model, report);
  EXPECT_EQ(count_ops(model->graph, "Int8Conv", ir::kEdgemmDomain), 0);
  EXPECT_EQ(count_ops(model->graph, "Conv"), 1);
}

/// x [1, 8, 10, 10] → Conv 3×3 (8 → 16) → Relu → GlobalAveragePool → Flatten → MatMul [16, 4] → y.
std::string save_float_model(const std::string& name) {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, 10, 10});
  b.output("y", kFloat, {1, 4});
  b.initializer_floats("w", {16, 8, 3, 3}, seeded_values(16 * 8 * 9, 1, -0.3f, 0.3f));
  b.initializer_floats("b", {16}, seeded_values(16, 2));
  auto* conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  b.initializer_floats("m", {16, 4}, seeded_values(64, 3));
  b.node("MatMul", {"f", "m"}, {"y"}, "matmul");
  return b.save(testing::temp_dir("quant_float") / (name + ".onnx"));
}

quant::FeedSource seeded_source() {
  return [](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    if (s.path == "broken") return make_error(StatusCode::kInvalidArgument, "cannot decode");
    const auto seed = static_cast<uint32_t>(std::hash<std::string>()(s.path));
    return std::vector<quant::Feed>{{{"x", seeded_f32({1, 8, 10, 10}, seed, -1.0f, 1.0f)}}};
  };
}

std::vector<quant::CalibrationSample> samples(int n) {
  std::vector<quant::CalibrationSample> v;
  for (int i = 0; i < n; ++i) v.push_back({"s" + std::to_string(i), "default"});
  return v;
}

TEST(QuantInt8, RewriteWritesQdqThatRunsCloseToFloat) {
  const std::string path = save_float_model("rewrite");
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  quant::Int8QuantizeOptions options;
  options.method = quant::CalibrationMethod::kMinMax;
  options.speed_check = false;
  quant::Int8Report report;
  auto set = samples(6);
  set.push_back({"broken", "default"});
  ASSERT_TRUE(quant::quantize_int8(*model, set, seeded_source(), options, report).is_ok());
  EXPECT_EQ(report.plan.targets.size(), 2u);
  EXPECT_EQ(report.samples_used, 6);
  EXPECT_EQ(report.samples_skipped, 1);
  EXPECT_EQ(count_ops(model->graph, "QuantizeLinear"), 2);
  EXPECT_EQ(count_ops(model->graph, "DequantizeLinear"), 4);
  for (const auto& n : model->graph.nodes) {
    if (n.op_type != "DequantizeLinear" || !n.has_attr("axis")) continue;
    const Tensor& q = model->graph.initializers.at(n.inputs[0]);
    EXPECT_EQ(q.dtype(), DataType::kInt8);
    EXPECT_EQ(*n.attr_int("axis", -1), q.rank() == 4 ? 0 : 1);  // Conv W per output channel, MatMul B per column
    for (int64_t i = 0; i < q.element_count(); ++i) EXPECT_LE(std::abs(q.data<int8_t>()[i]), 64);
  }
  const std::string out = (testing::temp_dir("quant_out") / "q.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, out).is_ok());
  const Tensor x = seeded_f32({1, 8, 10, 10}, 99, -1.0f, 1.0f);
  InferencerConfig config;
  config.model_path = path;
  const Tensor want = (*Inferencer::create(config))->run({{"x", x}})->at(0);
  config.model_path = out;
  const Tensor got = (*Inferencer::create(config))->run({{"x", x}})->at(0);
  double scale = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) scale = std::max(scale, std::abs(double(want.data<float>()[i])));
  EXPECT_LT(max_relative_error(got, want), 0.03 * std::max(1.0, scale));
}

TEST(QuantInt8, ErrorsNameTheProblem) {
  quant::Int8QuantizeOptions options;
  options.speed_check = false;
  quant::Int8Report report;
  auto model = ir::import_onnx_file(save_float_model("errors"));
  ASSERT_TRUE(model.has_value());
  ir::Model copy = *model;
  options.qdq.exclude_nodes = {"conv", "matmul"};
  Status none = quant::quantize_int8(copy, samples(2), seeded_source(), options, report);
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.message().find("no node edgemm can quantize"), std::string::npos);
  EXPECT_NE(none.message().find("excluded by the user"), std::string::npos);
  options.qdq.exclude_nodes.clear();
  copy = *model;
  Status broken = quant::quantize_int8(copy, {{"broken", "default"}}, seeded_source(), options, report);
  EXPECT_NE(broken.message().find("none of the 1 calibration samples could be used"), std::string::npos);
  EXPECT_NE(broken.message().find("cannot decode"), std::string::npos);
}

/// a [2, 40] → MatMul(B [40, 5]) → y: K = 40 is not a multiple of the block size 16.
std::string save_matmul_model(const std::string& name) {
  ModelBuilder b(13);
  b.input("a", kFloat, {2, 40});
  b.output("y", kFloat, {2, 5});
  b.initializer_floats("b", {40, 5}, seeded_values(200, 4));
  b.node("MatMul", {"a", "b"}, {"y"}, "matmul");
  return b.save(testing::temp_dir("quant_int4") / (name + ".onnx"));
}

// The MatMulNBits file computes a · dequantize(B) exactly, with the dequantized weights read back
// from the packed tensors here (codes, scales, zero points as ContribOperators.md lays them out).
TEST(QuantInt4, MatMulBecomesMatMulNBits) {
  auto model = ir::import_onnx_file(save_matmul_model("int4"));
  ASSERT_TRUE(model.has_value());
  quant::Int4Options options;
  options.block_size = 16;
  quant::Int4Report report;
  ASSERT_TRUE(quant::quantize_int4_weights(*model, options, report).is_ok());
  ASSERT_EQ(report.quantized.size(), 1u);
  EXPECT_EQ(count_ops(model->graph, "MatMulNBits", "com.microsoft"), 1);
  EXPECT_EQ(model->opset("com.microsoft"), 1);
  const ir::Node& n = model->graph.nodes.front();
  ASSERT_EQ(n.op_type, "MatMulNBits");
  EXPECT_EQ(*n.attr_int("K", 0), 40);
  EXPECT_EQ(*n.attr_int("N", 0), 5);
  EXPECT_EQ(*n.attr_int("bits", 0), 4);
  const Tensor& codes = model->graph.initializers.at(n.inputs[1]);
  const Tensor& scales = model->graph.initializers.at(n.inputs[2]);
  const Tensor& zps = model->graph.initializers.at(n.inputs[3]);
  EXPECT_EQ(codes.shape(), (Shape{5, 3, 8}));  // [N, k_blocks, 16 · 4 / 8]
  EXPECT_EQ(zps.shape(), (Shape{5, 2}));       // ceil(3 blocks · 4 bits / 8) bytes per column
  std::vector<float> w(40 * 5);                // dequantized B [K, N]
  for (int64_t col = 0; col < 5; ++col) {
    for (int64_t k = 0; k < 40; ++k) {
      const int64_t block = k / 16, in_block = k % 16;
      const uint8_t byte = codes.data<uint8_t>()[(col * 3 + block) * 8 + in_block / 2];
      const int code = in_block % 2 == 0 ? byte & 0xF : byte >> 4;
      const uint8_t zp_byte = zps.data<uint8_t>()[col * 2 + block / 2];
      const int zp = block % 2 == 0 ? zp_byte & 0xF : zp_byte >> 4;
      w[k * 5 + col] = static_cast<float>(code - zp) * scales.data<float>()[col * 3 + block];
    }
  }
  const std::string out = (testing::temp_dir("quant_int4") / "int4.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, out).is_ok());
  const Tensor a = seeded_f32({2, 40}, 21);
  InferencerConfig config;
  config.model_path = out;
  const Tensor got = (*Inferencer::create(config))->run({{"a", a}})->at(0);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t col = 0; col < 5; ++col) {
      double want = 0;
      for (int64_t k = 0; k < 40; ++k) want += a.data<float>()[r * 40 + k] * w[k * 5 + col];
      EXPECT_NEAR(got.data<float>()[r * 5 + col], want, 1e-4);
    }
  }
  auto float_model = ir::import_onnx_file(save_matmul_model("int4_float"));
  ASSERT_TRUE(float_model.has_value());
  const Tensor& original = float_model->graph.initializers.at("b");
  for (int64_t i = 0; i < 200; ++i) {  // and each weight is within half a step of the float one
    const float step = scales.data<float>()[(i % 5) * 3 + (i / 5) / 16];
    EXPECT_LE(std::abs(w[i] - original.data<float>()[i]), step / 2 + 1e-6f);
  }

  options.block_size = 48;
  EXPECT_EQ(quant::quantize_int4_weights(*model, options, report).code(), StatusCode::kInvalidArgument);
  ModelBuilder none(13);
  none.input("x", kFloat, {2, 4});
  none.output("y", kFloat, {2, 4});
  none.node("Relu", {"x"}, {"y"});
  auto relu = ir::import_onnx_file(none.save(testing::temp_dir("quant_int4") / "relu.onnx"));
  options.block_size = 32;
  quant::Int4Report empty_report;
  Status empty = quant::quantize_int4_weights(*relu, options, empty_report);
  EXPECT_NE(empty.message().find("no MatMul with a constant float32"), std::string::npos) << empty.message();
}

// An If whose branches both read the main graph's weight b (how Optimum's merged decoders share
// their weights): both MatMuls become MatMulNBits reading one packed copy of b in the main graph,
// the float b is dropped, and either branch computes what the main-graph rewrite computes.
TEST(QuantInt4, MatMulsInsideIfBranchesShareOnePackedWeight) {
  ModelBuilder b(13);
  b.input("c", onnx::TensorProto::BOOL, {1});
  b.input("a", kFloat, {2, 40});
  b.output("y", kFloat, {2, 5});
  b.initializer_floats("b", {40, 5}, seeded_values(200, 4));
  onnx::NodeProto* if_node = b.node("If", {"c"}, {"y"}, "choose");
  for (const std::string key : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* attr = if_node->add_attribute();
    attr->set_name(key);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = attr->mutable_g();
    g->set_name(key);
    onnx::NodeProto* mm = g->add_node();
    mm->set_op_type("MatMul");
    mm->set_name(key + "_matmul");
    mm->add_input("a");
    mm->add_input("b");
    mm->add_output(key + "_y");
    ModelBuilder::declare(g->add_output(), key + "_y", kFloat, {2, 5});
  }
  const auto dir = testing::temp_dir("quant_int4_if");
  auto model = ir::import_onnx_file(b.save(dir / "if.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  quant::Int4Options options;
  options.block_size = 16;
  quant::Int4Report report;
  ASSERT_TRUE(quant::quantize_int4_weights(*model, options, report).is_ok());
  EXPECT_EQ(report.quantized.size(), 2u);
  EXPECT_EQ(model->graph.initializers.count("b"), 0u);
  ASSERT_EQ(model->graph.nodes.size(), 1u);
  std::set<std::string> packed;
  for (const char* key : {"then_branch", "else_branch"}) {
    const ir::Graph* g = model->graph.nodes[0].attr_graph(key);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(count_ops(*g, "MatMulNBits", "com.microsoft"), 1) << key;
    for (size_t i = 1; i < 4; ++i) {
      packed.insert(g->nodes[0].inputs[i]);
      EXPECT_EQ(model->graph.initializers.count(g->nodes[0].inputs[i]), 1u) << g->nodes[0].inputs[i];
    }
  }
  EXPECT_EQ(packed.size(), 3u);  // codes, scales, zero points: one set for both branches
  const std::string out = (dir / "if_int4.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, out).is_ok());

  auto plain = ir::import_onnx_file(save_matmul_model("int4_if_plain"));
  ASSERT_TRUE(plain.has_value());
  ASSERT_TRUE(quant::quantize_int4_weights(*plain, options, report).is_ok());
  const std::string plain_out = (dir / "plain_int4.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*plain, plain_out).is_ok());
  const Tensor a = seeded_f32({2, 40}, 21);
  InferencerConfig config;
  config.model_path = plain_out;
  const Tensor want = (*Inferencer::create(config))->run({{"a", a}})->at(0);
  config.model_path = out;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  for (uint8_t cond : {uint8_t{0}, uint8_t{1}}) {
    Tensor c = *Tensor::create(DataType::kBool, {1});
    c.data<uint8_t>()[0] = cond;
    auto got = (*inferencer)->run({{"c", c}, {"a", a}});
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    for (int64_t i = 0; i < 10; ++i) EXPECT_NEAR(got->at(0).data<float>()[i], want.data<float>()[i], 1e-6) << int(cond);
  }
}

TEST(QuantFp16, WeightsHalveAndOutputsStayClose) {
  const std::string path = save_float_model("fp16");
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  auto converted = quant::store_weights_fp16(*model);
  ASSERT_TRUE(converted.has_value());
  EXPECT_EQ(*converted, 3);  // w, b and m; all have at least 16 elements
  EXPECT_EQ(count_ops(model->graph, "Cast"), 3);
  const std::string out = (testing::temp_dir("quant_out") / "h.onnx").string();
  ASSERT_TRUE(ir::export_onnx_file(*model, out).is_ok());
  const Tensor x = seeded_f32({1, 8, 10, 10}, 5);
  InferencerConfig config;
  config.model_path = path;
  const Tensor want = (*Inferencer::create(config))->run({{"x", x}})->at(0);
  config.model_path = out;
  const Tensor got = (*Inferencer::create(config))->run({{"x", x}})->at(0);
  EXPECT_LT(max_relative_error(got, want), 2e-3);
}

}  // namespace quant_int8_test
}  // namespace edgemm
