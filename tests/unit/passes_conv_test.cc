// Conv passes (src/passes/conv_folding.cc, activation_patterns.cc, epilogue_fusion.cc) and the
// FusedConv kernel: each rewrite must happen on the pattern it targets, must not happen where
// it would change the result, and the rewritten graph must compute what the original does
// (both run by the engine on seeded inputs, the original with passes off).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/onednn.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"

namespace edgemm {
namespace passes_conv_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testing::set_int;
using testing::set_ints;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;
using testutil::seeded_values;

/// A 3x3 (pad 1) Conv from C to M channels named "conv" reading `x`, writing `y`.
void add_conv(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, int64_t m, int64_t group = 1,
              bool bias = true, uint32_t seed = 1) {
  b.initializer_floats(y + "_w", {m, c / group, 3, 3}, seeded_values(static_cast<size_t>(m * (c / group) * 9), seed));
  std::vector<std::string> inputs = {x, y + "_w"};
  if (bias) {
    b.initializer_floats(y + "_b", {m}, seeded_values(static_cast<size_t>(m), seed + 1));
    inputs.push_back(y + "_b");
  }
  auto* n = b.node("Conv", inputs, {y});
  set_ints(n, "pads", {1, 1, 1, 1});
  set_ints(n, "kernel_shape", {3, 3});
  set_int(n, "group", group);
}

void add_batch_norm(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, uint32_t seed) {
  b.initializer_floats(y + "_scale", {c}, seeded_values(static_cast<size_t>(c), seed, 0.5f, 1.5f));
  b.initializer_floats(y + "_bias", {c}, seeded_values(static_cast<size_t>(c), seed + 1));
  b.initializer_floats(y + "_mean", {c}, seeded_values(static_cast<size_t>(c), seed + 2));
  b.initializer_floats(y + "_var", {c}, seeded_values(static_cast<size_t>(c), seed + 3, 0.1f, 2.f));
  b.node("BatchNormalization", {x, y + "_scale", y + "_bias", y + "_mean", y + "_var"}, {y});
}

std::string save_conv_model(const ModelBuilder& b, const std::string& name) {
  return b.save(testing::temp_dir("passes_conv") / (name + ".onnx"));
}

const std::vector<std::pair<std::string, Tensor>> input_x(const Shape& s) { return {{"x", seeded_f32(s, 7)}}; }

TEST(ConvFolding, BatchNormAndConstantAffineFoldIntoConvWeights) {
  // Conv → BN → Mul(scalar) → Add(per channel [1,8,1,1]) → Sub([8,1,1]) → Div(scalar): all fold.
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 4, 9, 9}).output("y", kFloat, {1, 8, 9, 9});
  add_conv(b, "x", "c", 4, 8, 1, false);
  add_batch_norm(b, "c", "bn", 8, 3);
  b.initializer_floats("s", {1}, {1.5f});
  b.initializer_floats("t", {1, 8, 1, 1}, seeded_values(8, 4));
  b.initializer_floats("u", {8, 1, 1}, seeded_values(8, 5));
  b.initializer_floats("d", {}, {4.f});
  b.node("Mul", {"s", "bn"}, {"m"});
  b.node("Add", {"m", "t"}, {"a"});
  b.node("Sub", {"a", "u"}, {"sb"});
  b.node("Div", {"sb", "d"}, {"y"});
  const std::string path = save_conv_model(b, "affine");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report);
  EXPECT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(count_ops(m.graph, "Conv"), 1);
  EXPECT_EQ(report.patterns["BatchNormalization→Conv"], 1);
  EXPECT_EQ(report.patterns["Mul(constant)→Conv"], 1);
  EXPECT_LE(optimized_vs_original(path, input_x({1, 4, 9, 9})), 1e-5);
}

TEST(ConvFolding, DepthwiseAndGroupedConvTransposeFold) {
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 6, 8, 8}).output("y", kFloat, {1, 4, 16, 16});
  add_conv(b, "x", "dw", 6, 6, 6, true, 11);
  add_batch_norm(b, "dw", "bn1", 6, 12);
  // ConvTranspose, group 2: weights [C=6, M/group=2, 2, 2], stride 2 → 4 channels.
  b.initializer_floats("tw", {6, 2, 2, 2}, seeded_values(48, 13));
  auto* t = b.node("ConvTranspose", {"bn1", "tw"}, {"ct"});
  set_ints(t, "strides", {2, 2});
  set_int(t, "group", 2);
  add_batch_norm(b, "ct", "y", 4, 14);
  const std::string path = save_conv_model(b, "grouped");
  const ir::Model m = optimized_model(path);
  EXPECT_EQ(count_ops(m.graph, "BatchNormalization"), 0);
  EXPECT_LE(optimized_vs_original(path, input_x({1, 6, 8, 8})), 1e-5);
}

TEST(ConvFolding, LeavesSharedOutputsAndSpatialConstantsAlone) {
  // The Conv output is read twice (Mul and the graph's second output): nothing folds. A
  // constant varying along W is not per channel: no fold.
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 2, 5, 5}).output("y", kFloat, {1, 2, 5, 5}).output("c", kFloat, {1, 2, 5, 5});
  add_conv(b, "x", "c", 2, 2);
  b.initializer_floats("k", {1, 1, 1, 5}, seeded_values(5, 9));
  b.node("Mul", {"c", "k"}, {"y"});
  ModelBuilder b2(11);
  b2.input("x", kFloat, {1, 2, 5, 5}).output("y", kFloat, {1, 2, 5, 5});
  add_conv(b2, "x", "c", 2, 2);
  b2.initializer_floats("k", {1, 1, 1, 5}, seeded_values(5, 9));
  b2.node("Mul", {"c", "k"}, {"y"});
  for (const auto& [builder, name] : {std::pair{&b, "shared"}, std::pair{&b2, "spatial"}}) {
    const std::string path = save_conv_model(*builder, name);
    const ir::Model m = optimized_model(path);
    EXPECT_EQ(count_ops(m.graph, "Mul"), 1) << name;
    EXPECT_LE(optimized_vs_original(path, input_x({1, 2, 5, 5})), 1e-5) << name;
  }
}

/// Conv → x·Clip(x+3, 0, 6)/6 written in one of the exporters' forms.
void add_hardswish(ModelBuilder& b, const std::string& x, const std::string& y, bool divide_last) {
  b.initializer_floats(y + "_3", {}, {3.f});
  b.initializer_floats(y + "_0", {}, {0.f});
  b.initializer_floats(y + "_6", {}, {6.f});
  b.node("Add", {x, y + "_3"}, {y + "_a"});
  b.node("Clip", {y + "_a", y + "_0", y + "_6"}, {y + "_c"});
  if (divide_last) {
    b.node("Mul", {x, y + "_c"}, {y + "_m"});
    b.node("Div", {y + "_m", y + "_6"}, {y});
  } else {
    b.initializer_floats(y + "_sixth", {}, {1.f / 6.f});
    b.node("Mul", {y + "_c", y + "_sixth"}, {y + "_d"});
    b.node("Mul", {y + "_d", x}, {y});
  }
}

TEST(ConvFusion, HardSwishPatternsBecomeTheConvEpilogue) {
  for (bool divide_last : {true, false}) {
    ModelBuilder b(11);
    b.input("x", kFloat, {1, 8, 10, 10}).output("y", kFloat, {1, 8, 10, 10});
    add_conv(b, "x", "c", 8, 8, 8);
    add_hardswish(b, "c", "h", divide_last);
    b.initializer_floats("lab_s", {1}, {0.8f});
    b.initializer_floats("lab_b", {1}, {0.1f});
    b.node("Mul", {"lab_s", "h"}, {"h2"});
    b.node("Add", {"h2", "lab_b"}, {"y"});
    const std::string path = save_conv_model(b, divide_last ? "hswish_div" : "hswish_mul");
    passes::PassReport report;
    const ir::Model m = optimized_model(path, &report);
    ASSERT_EQ(m.graph.nodes.size(), 1u) << divide_last;
    EXPECT_EQ(m.graph.nodes[0].op_type, "FusedConv");
    EXPECT_EQ(report.patterns["HardSwish"], 1);
    EXPECT_EQ(m.graph.nodes[0].attributes.at("steps").strings,
              (std::vector<std::string>{"hardswish", "linear", "linear"}));
    EXPECT_LE(optimized_vs_original(path, input_x({1, 8, 10, 10})), 1e-5);
  }
}

TEST(ConvFusion, ResidualAndPerChannelOperandsAndTransposeBias) {
  // y = relu(Conv(x) + r) * g + 0.5, r a full tensor, g per channel; then ConvTranspose+bias→Relu.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, 6, 6}).input("r", kFloat, {1, 8, 6, 6}).input("g", kFloat, {1, 8, 1, 1});
  b.output("y", kFloat, {1, 8, 12, 12});
  add_conv(b, "x", "c", 8, 8);
  b.node("Add", {"r", "c"}, {"a"});
  b.node("Relu", {"a"}, {"re"});
  b.node("Mul", {"re", "g"}, {"m"});
  b.initializer_floats("half", {}, {0.5f});
  b.node("Add", {"m", "half"}, {"p"});
  b.initializer_floats("tw", {8, 8, 2, 2}, seeded_values(256, 21));
  b.initializer_floats("tb", {8}, seeded_values(8, 22));
  auto* t = b.node("ConvTranspose", {"p", "tw", "tb"}, {"ct"});
  set_ints(t, "strides", {2, 2});
  b.node("Relu", {"ct"}, {"y"});
  const std::string path = save_conv_model(b, "residual");
  const ir::Model m = optimized_model(path);
  EXPECT_EQ(count_ops(m.graph, "FusedConv", "com.edgemm"), 1);
  EXPECT_EQ(count_ops(m.graph, "FusedConvTranspose", "com.edgemm"), 1);
  EXPECT_EQ(m.graph.nodes.size(), 2u);
  const std::vector<std::pair<std::string, Tensor>> inputs = {
      {"x", seeded_f32({1, 8, 6, 6}, 1)}, {"r", seeded_f32({1, 8, 6, 6}, 2)}, {"g", seeded_f32({1, 8, 1, 1}, 3)}};
  EXPECT_LE(optimized_vs_original(path, inputs), 1e-5);
  EXPECT_LE(optimized_vs_original(path, inputs, 2), 1e-5);
  {
    // The reference epilogue (oneDNN off) computes the same.
    kernels::onednn::ScopedEnabled off(false);
    EXPECT_LE(optimized_vs_original(path, inputs), 1e-5);
  }
}

TEST(ConvFusion, RepeatedActivationsWithOtherParametersStayCorrect) {
  // Conv → Relu → ·3 → Relu → +0.5 and Conv → HardSigmoid → +0.5: each epilogue holds an
  // eltwise algorithm twice with different parameters, which oneDNN 2.6 computes wrongly as
  // post-ops (18 instead of 6.5): they must still match the unfused graph.
  for (int variant = 0; variant < 2; ++variant) {
    ModelBuilder b(13);
    b.input("x", kFloat, {1, 8, 6, 6}).output("y", kFloat, {1, 8, 6, 6});
    add_conv(b, "x", "c", 8, 8);
    b.initializer_floats("three", {}, {3.f});
    b.initializer_floats("half", {}, {0.5f});
    if (variant == 0) {
      b.node("Relu", {"c"}, {"r1"});
      b.node("Mul", {"r1", "three"}, {"m"});
      b.node("Relu", {"m"}, {"r2"});
      b.node("Add", {"r2", "half"}, {"y"});
    } else {
      b.node("HardSigmoid", {"c"}, {"h"});
      b.node("Add", {"h", "half"}, {"y"});
    }
    const std::string path = save_conv_model(b, "repeated_" + std::to_string(variant));
    EXPECT_EQ(optimized_model(path).graph.nodes.size(), 1u);
    EXPECT_LE(optimized_vs_original(path, input_x({1, 8, 6, 6})), 1e-5) << variant;
  }
}

TEST(ConvFusion, OperandComputedFromTheConvIsNotFused) {
  // Squeeze-and-excitation: the gate is computed from the Conv output, which has two readers.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 8, 6, 6}).output("y", kFloat, {1, 8, 6, 6});
  add_conv(b, "x", "c", 8, 8);
  b.node("GlobalAveragePool", {"c"}, {"p"});
  b.node("Sigmoid", {"p"}, {"g"});
  b.node("Mul", {"c", "g"}, {"y"});
  const std::string path = save_conv_model(b, "se");
  const ir::Model m = optimized_model(path);
  EXPECT_EQ(count_ops(m.graph, "Conv"), 1);
  EXPECT_EQ(count_ops(m.graph, "Mul"), 1);
  EXPECT_LE(optimized_vs_original(path, input_x({1, 8, 6, 6})), 1e-5);
}

}  // namespace passes_conv_test
}  // namespace edgemm
