// The layout pass (src/passes/layout.cc, assign_chain_layouts) and the kernels it
// relies on: com.edgemm Reorder (kernels/cpu/layout.cc), FusedConv with src_layout/dst_layout
// "nChw8c" (kernels/cpu/conv.cc) and com.edgemm GlobalAveragePool (kernels/cpu/pool.cc).
// Graph tests check where the pass puts blocked values and Reorder nodes, and that the
// optimized graph (layouts on, since oneDNN is enabled) computes what the original graph does
// with passes off. Kernel tests compare with hand-made NCHW <-> [N, C/8, H, W, 8] copies and
// with the plain NCHW kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/onednn.h"
#include "model_builder.h"
#include "nn_test_util.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "runtime/compiled_graph.h"
#include "runtime/executor.h"

namespace edgemm {
namespace passes_layout_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testing::set_int;
using testing::set_ints;
using testutil::count_ops;
using testutil::optimized_model;
using testutil::optimized_vs_original;
using testutil::seeded_f32;
using testutil::seeded_values;
constexpr const char* kEdgemm = "com.edgemm";
const passes::PassOptions kLayoutsOn{ir::ActivationLayout::kNChw8c};
const passes::PassOptions kNhwcOn{ir::ActivationLayout::kNhwc};
const passes::PassOptions kLayoutsOff{ir::ActivationLayout::kNchw};

void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// A k x k (pad k/2) Conv from c to m channels reading `x`, writing `y`, with a bias. Weights
/// are uniform in ±1/sqrt(fan-in), as in trained networks, so activations stay near 1 along a
/// chain and the relative tolerances below mean what they say.
void add_layout_conv(ModelBuilder& b, const std::string& x, const std::string& y, int64_t c, int64_t m,
                     int64_t group = 1, int64_t k = 3, uint32_t seed = 1) {
  const int64_t fan_in = c / group * k * k;
  const float r = 1.f / std::sqrt(static_cast<float>(fan_in));
  b.initializer_floats(y + "_w", {m, c / group, k, k}, seeded_values(static_cast<size_t>(m * fan_in), seed, -r, r));
  b.initializer_floats(y + "_b", {m}, seeded_values(static_cast<size_t>(m), seed + 1));
  auto* n = b.node("Conv", {x, y + "_w", y + "_b"}, {y});
  set_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  set_ints(n, "kernel_shape", {k, k});
  set_int(n, "group", group);
}

std::string save_layout_model(const ModelBuilder& b, const std::string& name) {
  return b.save(testing::temp_dir("passes_layout") / (name + ".onnx"));
}

std::string attr_or(const ir::Node& n, const std::string& key, const std::string& fallback = "") {
  auto it = n.attributes.find(key);
  return it == n.attributes.end() ? fallback : it->second.s;
}

int count_blocked_dst(const ir::Graph& g) {
  int k = 0;
  for (const auto& n : g.nodes) k += attr_or(n, "dst_layout") == "nChw8c";
  return k;
}

const ir::Node* producer(const ir::Graph& g, const std::string& value) {
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs) {
      if (o == value) return &n;
    }
  }
  return nullptr;
}

std::vector<const ir::Node*> readers(const ir::Graph& g, const std::string& value) {
  std::vector<const ir::Node*> r;
  for (const auto& n : g.nodes) {
    for (const auto& i : n.inputs) {
      if (i == value) {
        r.push_back(&n);
        break;
      }
    }
  }
  return r;
}

/// Hand-written NCHW [N, C, H, W] -> [N, C/8, H, W, 8] copy: element (n, c, h, w) goes to
/// [n, c/8, h, w, c%8] (independent of kernels::to_blocked).
Tensor block_by_hand(const Tensor& x) {
  const Shape& s = x.shape();
  const int64_t n_ = s[0], c_ = s[1], h_ = s[2], w_ = s[3];
  auto t = Tensor::create(DataType::kFloat32, {n_, c_ / 8, h_, w_, 8});
  EXPECT_TRUE(t.has_value());
  const float* src = x.data<float>();
  float* dst = t->data<float>();
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c)
      for (int64_t h = 0; h < h_; ++h)
        for (int64_t w = 0; w < w_; ++w)
          dst[(((n * (c_ / 8) + c / 8) * h_ + h) * w_ + w) * 8 + c % 8] = src[((n * c_ + c) * h_ + h) * w_ + w];
  return *t;
}

/// Hand-written NCHW [N, C, H, W] -> NHWC [N, H, W, C] copy (independent of kernels::to_layout).
Tensor nhwc_by_hand(const Tensor& x) {
  const Shape& s = x.shape();
  const int64_t n_ = s[0], c_ = s[1], h_ = s[2], w_ = s[3];
  auto t = Tensor::create(DataType::kFloat32, {n_, h_, w_, c_});
  EXPECT_TRUE(t.has_value());
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c)
      for (int64_t h = 0; h < h_; ++h)
        for (int64_t w = 0; w < w_; ++w)
          t->data<float>()[((n * h_ + h) * w_ + w) * c_ + c] = x.data<float>()[((n * c_ + c) * h_ + h) * w_ + w];
  return *t;
}

/// `x` stored in the chain layout named `layout` ("nChw8c" or "NHWC"), by hand.
Tensor store_by_hand(const Tensor& x, const std::string& layout) {
  return layout == "NHWC" ? nhwc_by_hand(x) : block_by_hand(x);
}

/// Outputs of the model at `path` optimized with `options`, run in memory (oneDNN as set).
std::vector<Tensor> run_optimized(const std::string& path, const passes::PassOptions& options,
                                  const std::vector<Tensor>& inputs, int threads) {
  ir::Model m = optimized_model(path, nullptr, options);
  auto compiled = runtime::CompiledGraph::compile(std::make_shared<const ir::Graph>(std::move(m.graph)), m.opsets, {});
  EXPECT_TRUE(compiled.has_value()) << compiled.status().message();
  if (!compiled.has_value()) return {};
  runtime::ExecOptions exec;
  exec.threads = threads;
  auto out = runtime::execute(**compiled, inputs, nullptr, exec, nullptr);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out.has_value() ? *out : std::vector<Tensor>{};
}

/// Largest |a - b| / max(1, |a|) between the model's outputs with every pass but chain layouts
/// and with all passes (`on`: nChw8c or NHWC chains): what the layout pass alone changes.
double layouts_on_vs_off(const std::string& path, const std::vector<Tensor>& inputs, int threads = 1,
                         const passes::PassOptions& on = kLayoutsOn) {
  const auto want = run_optimized(path, kLayoutsOff, inputs, threads);
  const auto got = run_optimized(path, on, inputs, threads);
  EXPECT_EQ(want.size(), got.size());
  if (want.empty() || want.size() != got.size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(want[k].shape(), got[k].shape()) << "output " << k;
    if (want[k].shape() != got[k].shape()) return INFINITY;
    for (int64_t i = 0; i < want[k].element_count(); ++i) {
      const double ref = want[k].data<float>()[i];
      const double d = std::fabs(got[k].data<float>()[i] - ref) / std::max(1.0, std::fabs(ref));
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
  }
  return worst;
}

/// The checks every graph test ends with, at 1 and 2 threads: the optimized graph (layouts on:
/// oneDNN is enabled) against the original with passes off, and against the optimized graph
/// without layouts (isolating the layout pass), in nChw8c and in NHWC chains. `x` is the graph's
/// only input.
void expect_same_results(const std::string& path, const Tensor& x, const std::string& what = "") {
  ASSERT_TRUE(kernels::onednn::enabled()) << "the Inferencer applies blocked layouts only with oneDNN";
  for (int threads : {1, 2}) {
    EXPECT_LE(optimized_vs_original(path, {{"x", x}}, threads), 1e-5) << what << " threads " << threads;
    EXPECT_LE(layouts_on_vs_off(path, {x}, threads), 1e-5) << what << " threads " << threads;
    EXPECT_LE(layouts_on_vs_off(path, {x}, threads, kNhwcOn), 1e-5) << what << " NHWC threads " << threads;
  }
}

// ---------------------------------------------------------------------------------------------
// The pass on graphs.

/// A MobileNetV3-like block exercising every placement: Conv (+Relu), depthwise Conv with a
/// HardSwish written as Add/Clip/Mul/Div, squeeze-excitation (GlobalAveragePool, 1x1 Convs,
/// HardSigmoid, Mul), residual Add, nearest Resize x2, Concat with a second blocked branch and a
/// final Conv to 4 channels (not a multiple of 8, so its output is NCHW). "res" is both read
/// inside the chain (by the Resize) and a graph output.
ModelBuilder every_placement_model() {
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 16, 16}).output("y", kFloat, {1, 4, 32, 32}).output("res", kFloat, {1, 16, 16, 16});
  add_layout_conv(b, "x", "c1", 3, 16, 1, 3, 1);
  b.node("Relu", {"c1"}, {"r1"});
  add_layout_conv(b, "r1", "dw", 16, 16, 16, 3, 3);
  b.initializer_floats("three", {}, {3.f});
  b.initializer_floats("zero", {}, {0.f});
  b.initializer_floats("six", {}, {6.f});
  b.node("Add", {"dw", "three"}, {"hs_a"});
  b.node("Clip", {"hs_a", "zero", "six"}, {"hs_c"});
  b.node("Mul", {"dw", "hs_c"}, {"hs_m"});
  b.node("Div", {"hs_m", "six"}, {"hs"});
  b.node("GlobalAveragePool", {"hs"}, {"gap"});
  add_layout_conv(b, "gap", "se1", 16, 8, 1, 1, 5);
  b.node("Relu", {"se1"}, {"se1r"});
  add_layout_conv(b, "se1r", "se2", 8, 16, 1, 1, 7);
  b.node("HardSigmoid", {"se2"}, {"gate"});
  b.node("Mul", {"hs", "gate"}, {"se"});
  b.node("Add", {"se", "r1"}, {"res"});
  b.initializer_floats("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto* rs = b.node("Resize", {"res", "", "scales"}, {"up"});
  set_string(rs, "mode", "nearest");
  add_layout_conv(b, "up", "br", 16, 8, 1, 3, 9);
  auto* cat = b.node("Concat", {"up", "br"}, {"cat"});
  set_int(cat, "axis", 1);
  add_layout_conv(b, "cat", "y", 24, 4, 1, 3, 11);
  return b;
}

TEST(LayoutPass, EveryPlacementInOneChain) {
  const std::string path = save_layout_model(every_placement_model(), "every_placement");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report, kLayoutsOn);
  const ir::Graph& g = m.graph;
  // Convs writing 16 or 8 channels are blocked: c1, dw, se1, se2, br. The last (24→4) is not.
  EXPECT_EQ(count_blocked_dst(g), 5);
  EXPECT_EQ(count_ops(g, "Conv"), 0);
  EXPECT_EQ(count_ops(g, "FusedConv", kEdgemm), 6);
  // The final Conv reads the blocked Concat directly (src_layout) and writes NCHW.
  const ir::Node* last = producer(g, "y");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op_type, "FusedConv");
  EXPECT_EQ(attr_or(*last, "src_layout"), "nChw8c");
  EXPECT_EQ(attr_or(*last, "dst_layout", "NCHW"), "NCHW");
  // Squeeze-excitation pools the blocked planes.
  EXPECT_EQ(count_ops(g, "GlobalAveragePool", kEdgemm), 1);
  EXPECT_EQ(count_ops(g, "GlobalAveragePool"), 0);
  // Resize and Concat stay ONNX ops working on [N, C/8, H, W, 8]: 5 scales, axis 1.
  ASSERT_EQ(count_ops(g, "Resize"), 1);
  ASSERT_EQ(count_ops(g, "Concat"), 1);
  for (const auto& n : g.nodes) {
    if (n.op_type == "Resize") {
      EXPECT_EQ(g.initializers.at(n.inputs[2]).element_count(), 5);
    }
  }
  // One Reorder: the only value leaving the chain in NCHW is the graph output "res" (x enters
  // through the first Conv's NCHW source, y leaves through the last Conv's NCHW destination,
  // every other reader of a blocked value is placed). It writes "res" itself; the chain reads the
  // blocked copy it was renamed to.
  EXPECT_EQ(count_ops(g, "Reorder", kEdgemm), 1);
  const ir::Node* out_reorder = producer(g, "res");
  ASSERT_NE(out_reorder, nullptr);
  EXPECT_EQ(out_reorder->op_type, "Reorder");
  EXPECT_EQ(attr_or(*out_reorder, "to"), "NCHW");
  EXPECT_EQ(readers(g, "res").size(), 0u);
  ASSERT_TRUE(g.value_infos.count(out_reorder->inputs[0])) << out_reorder->inputs[0];
  EXPECT_EQ(g.value_infos.at(out_reorder->inputs[0]).shape.size(), 5u);  // [1, 2, 16, 16, 8]
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[0].name, "y");
  EXPECT_EQ(g.outputs[1].name, "res");
  EXPECT_GT(report.patterns["blocked (nChw8c) values"], 0);
  EXPECT_EQ(report.patterns["Reorder nChw8c→NCHW"], 1);

  expect_same_results(path, seeded_f32({1, 3, 16, 16}, 7));
}

TEST(LayoutPass, EveryPlacementInOneNhwcChain) {
  const std::string path = save_layout_model(every_placement_model(), "every_placement_nhwc");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report, kNhwcOn);
  const ir::Graph& g = m.graph;
  // Any channel count can be channels-last: all six Convs write NHWC, the five after the first
  // read it.
  int nhwc_dst = 0, nhwc_src = 0;
  for (const auto& n : g.nodes) {
    nhwc_dst += attr_or(n, "dst_layout") == "NHWC";
    nhwc_src += attr_or(n, "src_layout") == "NHWC";
  }
  EXPECT_EQ(nhwc_dst, 6);
  EXPECT_EQ(nhwc_src, 5);
  EXPECT_EQ(count_blocked_dst(g), 0);
  // Squeeze-excitation pools channels-last planes; Resize scales are permuted to [1, 2, 2, 1];
  // Concat joins the last axis.
  ASSERT_EQ(count_ops(g, "GlobalAveragePool", kEdgemm), 1);
  for (const auto& n : g.nodes) {
    if (n.op_type == "GlobalAveragePool") {
      EXPECT_EQ(attr_or(n, "layout"), "NHWC");
    }
    if (n.op_type == "Concat") {
      EXPECT_EQ(n.attributes.at("axis").i, 3);
    }
    if (n.op_type == "Resize") {
      const Tensor& scales = g.initializers.at(n.inputs[2]);
      ASSERT_EQ(scales.element_count(), 4);
      EXPECT_EQ(testutil::values<float>(scales), (std::vector<float>{1.f, 2.f, 2.f, 1.f}));
    }
  }
  // Both graph outputs leave the chain through a Transpose [0, 3, 1, 2] that writes them.
  EXPECT_EQ(count_ops(g, "Reorder", kEdgemm), 0);
  EXPECT_EQ(count_ops(g, "Transpose"), 2);
  for (const char* out : {"y", "res"}) {
    const ir::Node* t = producer(g, out);
    ASSERT_NE(t, nullptr) << out;
    EXPECT_EQ(t->op_type, "Transpose") << out;
    EXPECT_EQ(t->attributes.at("perm").ints, (std::vector<int64_t>{0, 3, 1, 2})) << out;
    ASSERT_TRUE(g.value_infos.count(t->inputs[0])) << t->inputs[0];
    const auto& d = g.value_infos.at(t->inputs[0]).shape;
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[3].value, std::string(out) == "y" ? 4 : 16) << out;  // [N, H, W, C]
  }
  EXPECT_GT(report.patterns["channels-last (NHWC) values"], 0);
  EXPECT_EQ(report.patterns["Transpose NHWC→NCHW"], 2);

  expect_same_results(path, seeded_f32({1, 3, 16, 16}, 7));
}

TEST(LayoutPass, ChannelCountsNotMultipleOfEightStayNchw) {
  // 3→12→12 channels: nothing can be blocked, so the pass changes nothing.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 10, 10}).output("y", kFloat, {1, 12, 10, 10});
  add_layout_conv(b, "x", "c1", 3, 12);
  b.node("Relu", {"c1"}, {"r1"});
  add_layout_conv(b, "r1", "c2", 12, 12, 1, 3, 4);
  b.node("GlobalAveragePool", {"c2"}, {"p"});
  b.node("Mul", {"c2", "p"}, {"y"});
  const std::string path = save_layout_model(b, "twelve");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report, kLayoutsOn);
  EXPECT_EQ(report.patterns.count("blocked (nChw8c) values"), 0u);
  EXPECT_EQ(count_ops(m.graph, "Reorder", kEdgemm), 0);
  EXPECT_EQ(count_ops(m.graph, "GlobalAveragePool", kEdgemm), 0);
  for (const auto& n : m.graph.nodes) {
    EXPECT_FALSE(n.has_attr("dst_layout")) << n.describe();
    EXPECT_FALSE(n.has_attr("src_layout")) << n.describe();
  }
  expect_same_results(path, seeded_f32({1, 3, 10, 10}, 7));
}

TEST(LayoutPass, OneReorderPerValueReadByOpsThePassDoesNotHandle) {
  // c (Conv output) is read by Transpose, Reshape and MaxPool; a = c + 1 (blocked too) by
  // Softmax and MaxPool. Each of the two values gets one NCHW copy shared by its readers.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 8, 8});
  b.output("t", kFloat, {1, 8, 8, 16}).output("r", kFloat, {1, 16, 64}).output("mp", kFloat, {1, 16, 4, 4});
  b.output("sm", kFloat, {1, 16, 8, 8}).output("mp2", kFloat, {1, 16, 4, 4});
  add_layout_conv(b, "x", "c", 3, 16);
  auto* t = b.node("Transpose", {"c"}, {"t"});
  set_ints(t, "perm", {0, 2, 3, 1});
  b.initializer_int64s("rshape", {3}, {1, 16, 64});
  b.node("Reshape", {"c", "rshape"}, {"r"});
  auto* mp = b.node("MaxPool", {"c"}, {"mp"});
  set_ints(mp, "kernel_shape", {2, 2});
  set_ints(mp, "strides", {2, 2});
  b.initializer_floats("one", {}, {1.f});
  b.node("Add", {"c", "one"}, {"a"});
  auto* sm = b.node("Softmax", {"a"}, {"sm"});
  set_int(sm, "axis", 1);
  auto* mp2 = b.node("MaxPool", {"a"}, {"mp2"});
  set_ints(mp2, "kernel_shape", {2, 2});
  set_ints(mp2, "strides", {2, 2});
  const std::string path = save_layout_model(b, "readers");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report, kLayoutsOn);
  const ir::Graph& g = m.graph;
  EXPECT_EQ(report.patterns["blocked (nChw8c) values"], 2);  // c and a
  ASSERT_EQ(count_ops(g, "Reorder", kEdgemm), 2);
  std::set<std::string> reordered;
  for (const auto& n : g.nodes) {
    if (n.op_type != "Reorder") continue;
    reordered.insert(n.inputs[0]);
    EXPECT_EQ(attr_or(n, "to"), "NCHW");
    const size_t want_readers = n.inputs[0] == "c" ? 3 : 2;
    EXPECT_EQ(readers(g, n.outputs[0]).size(), want_readers) << n.outputs[0];
  }
  EXPECT_EQ(reordered, (std::set<std::string>{"a", "c"}));
  expect_same_results(path, seeded_f32({1, 3, 8, 8}, 7));
}

TEST(LayoutPass, BlockedGraphOutputAlsoReadByAnUnhandledOp) {
  // "c" is a graph output and is read by a Transpose: both need it in NCHW. The output keeps its
  // name and its value.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 8, 8}).output("c", kFloat, {1, 16, 8, 8}).output("t", kFloat, {1, 8, 8, 16});
  add_layout_conv(b, "x", "c", 3, 16);
  auto* t = b.node("Transpose", {"c"}, {"t"});
  set_ints(t, "perm", {0, 2, 3, 1});
  // The model also declares the output in value_info (allowed; some exporters do).
  ModelBuilder::declare(b.model.mutable_graph()->add_value_info(), "c", kFloat, {1, 16, 8, 8});
  const std::string path = save_layout_model(b, "output_and_reader");
  const ir::Model m = optimized_model(path, nullptr, kLayoutsOn);
  const ir::Node* out = producer(m.graph, "c");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->op_type, "Reorder");
  // value_infos describe physical shapes: "c" (the Reorder's result) is NCHW, the blocked value
  // the Conv writes is [1, 2, 8, 8, 8].
  const auto& infos = m.graph.value_infos;
  ASSERT_TRUE(infos.count("c"));
  EXPECT_EQ(infos.at("c").shape.size(), 4u);
  ASSERT_EQ(out->inputs.size(), 1u);
  ASSERT_TRUE(infos.count(out->inputs[0])) << out->inputs[0];
  const auto& blocked = infos.at(out->inputs[0]).shape;
  ASSERT_EQ(blocked.size(), 5u);
  EXPECT_EQ(blocked[1].value, 2);
  EXPECT_EQ(blocked[4].value, 8);
  ASSERT_EQ(m.graph.outputs.size(), 2u);
  EXPECT_EQ(m.graph.outputs[0].name, "c");
  EXPECT_EQ(m.graph.outputs[1].name, "t");
  expect_same_results(path, seeded_f32({1, 3, 8, 8}, 7));
}

TEST(LayoutPass, BlockedValueListedTwiceAsGraphOutput) {
  // The same blocked value named by two graph outputs: one Reorder must write it, and no node
  // may read and write the same value.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 8, 8}).output("c", kFloat, {1, 16, 8, 8}).output("c", kFloat, {1, 16, 8, 8});
  add_layout_conv(b, "x", "c", 3, 16);
  const std::string path = save_layout_model(b, "output_twice");
  const ir::Model m = optimized_model(path, nullptr, kLayoutsOn);
  int writers = 0;
  for (const auto& n : m.graph.nodes) {
    for (const auto& o : n.outputs) {
      writers += o == "c";
      for (const auto& i : n.inputs) EXPECT_NE(i, o) << n.describe();
    }
  }
  EXPECT_EQ(writers, 1);
  expect_same_results(path, seeded_f32({1, 3, 8, 8}, 7));
}

TEST(LayoutPass, ConvTransposeAndOpset11ResizeWithEmptyRoi) {
  // Opset 11 Resize takes a (here empty) roi input; ConvTranspose stride 2 becomes a blocked
  // FusedConvTranspose. A FusedConv whose residual operand is a graph input (neither blocked nor
  // constant) reads its source blocked but writes NCHW.
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 3, 8, 8}).input("r", kFloat, {1, 16, 32, 32}).output("y", kFloat, {1, 16, 32, 32});
  add_layout_conv(b, "x", "c", 3, 16);
  b.initializer_floats("roi", {0}, {});
  b.initializer_floats("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto* rs = b.node("Resize", {"c", "roi", "scales"}, {"up"});
  set_string(rs, "mode", "nearest");
  b.initializer_floats("tw", {16, 8, 2, 2}, seeded_values(16 * 8 * 4, 41, -0.25f, 0.25f));
  b.initializer_floats("tb", {8}, seeded_values(8, 42));
  auto* ct = b.node("ConvTranspose", {"up", "tw", "tb"}, {"ct"});
  set_ints(ct, "strides", {2, 2});
  b.node("Relu", {"ct"}, {"ctr"});
  add_layout_conv(b, "ctr", "c2", 8, 16, 1, 3, 43);
  b.node("Add", {"c2", "r"}, {"y"});
  const std::string path = save_layout_model(b, "transpose_resize11");
  const ir::Model m = optimized_model(path, nullptr, kLayoutsOn);
  const ir::Graph& g = m.graph;
  EXPECT_EQ(count_ops(g, "Reorder", kEdgemm), 0);
  ASSERT_EQ(count_ops(g, "FusedConvTranspose", kEdgemm), 1);
  for (const auto& n : g.nodes) {
    if (n.op_type == "FusedConvTranspose") {
      EXPECT_EQ(attr_or(n, "src_layout"), "nChw8c");
      EXPECT_EQ(attr_or(n, "dst_layout"), "nChw8c");
    }
  }
  const ir::Node* last = producer(g, "y");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op_type, "FusedConv");  // the Add of r is its epilogue
  EXPECT_EQ(attr_or(*last, "src_layout"), "nChw8c");
  EXPECT_EQ(attr_or(*last, "dst_layout", "NCHW"), "NCHW");
  // In NHWC chains the ConvTranspose (8 output channels: edgemm's strided kernel writes NHWC in
  // blocks of 8) reads and writes NHWC.
  const ir::Model nhwc = optimized_model(path, nullptr, kNhwcOn);
  for (const auto& n : nhwc.graph.nodes) {
    if (n.op_type == "FusedConvTranspose") {
      EXPECT_EQ(attr_or(n, "src_layout"), "NHWC");
      EXPECT_EQ(attr_or(n, "dst_layout"), "NHWC");
    }
  }
  const Tensor x = seeded_f32({1, 3, 8, 8}, 7), r = seeded_f32({1, 16, 32, 32}, 8);
  for (int threads : {1, 2}) {
    EXPECT_LE(optimized_vs_original(path, {{"x", x}, {"r", r}}, threads), 1e-5);
    EXPECT_LE(layouts_on_vs_off(path, {x, r}, threads), 1e-5);
    EXPECT_LE(layouts_on_vs_off(path, {x, r}, threads, kNhwcOn), 1e-5);
  }
}

/// Two 8-channel Convs concatenated to a 16-channel blocked value "cat" (not a Conv output, so
/// constant folding into Conv weights cannot take the elementwise ops that follow).
void add_blocked_concat(ModelBuilder& b) {
  add_layout_conv(b, "x", "c1", 3, 8, 1, 3, 1);
  add_layout_conv(b, "x", "c2", 3, 8, 1, 3, 3);
  auto* cat = b.node("Concat", {"c1", "c2"}, {"cat"});
  set_int(cat, "axis", 1);
}

TEST(LayoutPass, PerChannelConstantsAreRewrittenToBlockedShape) {
  // cat * k1[1,16,1,1] + k2[16,1,1], then max with a scalar: all on blocked values. The
  // constants' values differ per channel, so any channel mix-up would show in the results.
  ModelBuilder b(13);
  b.input("x", kFloat, {1, 3, 6, 6}).output("y", kFloat, {1, 4, 6, 6});
  add_blocked_concat(b);
  b.initializer_floats("k1", {1, 16, 1, 1}, seeded_values(16, 21, 0.5f, 2.f));
  b.initializer_floats("k2", {16, 1, 1}, seeded_values(16, 22));
  b.initializer_floats("lo", {}, {-0.25f});
  b.node("Mul", {"cat", "k1"}, {"m"});
  b.node("Add", {"m", "k2"}, {"a"});
  b.node("Max", {"a", "lo"}, {"mx"});
  add_layout_conv(b, "mx", "y", 16, 4, 1, 3, 5);
  const std::string path = save_layout_model(b, "per_channel");
  passes::PassReport report;
  const ir::Model m = optimized_model(path, &report, kLayoutsOn);
  const ir::Graph& g = m.graph;
  // Nothing leaves the chain in NCHW before y (the last Conv writes NCHW itself).
  EXPECT_EQ(count_ops(g, "Reorder", kEdgemm), 0);
  EXPECT_GT(report.patterns["blocked (nChw8c) values"], 0);
  // The two per-channel constants are read as [1, 2, 1, 1, 8]; the originals are unused.
  int rewritten = 0;
  for (const auto& [name, t] : g.initializers) {
    if (t.shape() == Shape{1, 2, 1, 1, 8}) {
      ++rewritten;
      EXPECT_FALSE(readers(g, name).empty()) << name;
    }
  }
  EXPECT_EQ(rewritten, 2);
  EXPECT_TRUE(readers(g, "k1").empty());
  EXPECT_TRUE(readers(g, "k2").empty());
  expect_same_results(path, seeded_f32({1, 3, 6, 6}, 7));
}

TEST(LayoutPass, ConstantsVaryingAlongHeightOrWidthKeepTheOpNchw) {
  // H = W = 16 = C: kw [1,1,1,16] varies along W, kh [16,1] along H (rank 2 aligns to H, W),
  // khc [1,16,16,1] along C and H. None is per channel, so each op reads "cat" in NCHW.
  for (const char* which : {"kw", "kh", "khc"}) {
    ModelBuilder b(13);
    b.input("x", kFloat, {1, 3, 16, 16}).output("y", kFloat, {1, 4, 16, 16});
    add_blocked_concat(b);
    const std::string k = which;
    const std::vector<int64_t> dims = k == "kw"   ? std::vector<int64_t>{1, 1, 1, 16}
                                      : k == "kh" ? std::vector<int64_t>{16, 1}
                                                  : std::vector<int64_t>{1, 16, 16, 1};
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    b.initializer_floats(k, dims, seeded_values(static_cast<size_t>(count), 31));
    b.node("Mul", {"cat", k}, {"m"});
    add_layout_conv(b, "m", "y", 16, 4, 1, 3, 5);
    const std::string path = save_layout_model(b, std::string("spatial_") + which);
    const ir::Model m = optimized_model(path, nullptr, kLayoutsOn);
    const ir::Graph& g = m.graph;
    // cat leaves the chain once (for the Mul); the Mul is not blocked, so y's Conv reads NCHW.
    ASSERT_EQ(count_ops(g, "Reorder", kEdgemm), 1) << which;
    const auto cat_readers = readers(g, "cat");
    ASSERT_EQ(cat_readers.size(), 1u) << which;
    EXPECT_EQ(cat_readers[0]->op_type, "Reorder") << which;
    const ir::Node* conv = producer(g, "y");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(attr_or(*conv, "src_layout", "NCHW"), "NCHW") << which;
    for (const auto& [name, t] : g.initializers) EXPECT_NE(t.rank(), 5) << which << " " << name;
    expect_same_results(path, seeded_f32({1, 3, 16, 16}, 7), which);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels.

ir::Node reorder_node(const std::string& to) {
  ir::Node n = nntest::make_node("Reorder", {"X"});
  n.domain = kEdgemm;
  n.name = "reorder_under_test";
  if (!to.empty()) nntest::set_string(n, "to", to);
  return n;
}

TEST(LayoutKernels, ReorderRoundTripAndIndexing) {
  const Tensor x = nntest::random_f32({2, 16, 3, 5}, 3);
  for (int threads : {1, 2}) {
    auto blocked = nntest::run(reorder_node("nChw8c"), {x}, 17, threads);
    ASSERT_TRUE(blocked.has_value()) << blocked.status().message();
    ASSERT_EQ(blocked->shape(), (Shape{2, 2, 3, 5, 8}));
    // Every element against the hand-written copy.
    const Tensor want = block_by_hand(x);
    EXPECT_EQ(0, std::memcmp(blocked->data<float>(), want.data<float>(), sizeof(float) * want.element_count()));
    auto back = nntest::run(reorder_node("NCHW"), {*blocked}, 17, threads);
    ASSERT_TRUE(back.has_value()) << back.status().message();
    ASSERT_EQ(back->shape(), x.shape());
    EXPECT_EQ(0, std::memcmp(back->data<float>(), x.data<float>(), sizeof(float) * x.element_count()));
  }
  // One element by hand: (n, c, h, w) = (1, 11, 2, 4) of [2, 16, 3, 5] is NCHW offset
  // ((1*16 + 11)*3 + 2)*5 + 4 = 419, and lands at [1, 1, 2, 4, 3] of [2, 2, 3, 5, 8]:
  // (((1*2 + 1)*3 + 2)*5 + 4)*8 + 3 = 475.
  std::vector<float> v(2 * 16 * 3 * 5, 0.f);
  v[419] = 42.f;
  auto one = nntest::run(reorder_node("nChw8c"), {testutil::f32({2, 16, 3, 5}, v)});
  ASSERT_TRUE(one.has_value()) << one.status().message();
  const std::vector<float> got = testutil::values<float>(*one);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i == 475 ? 42.f : 0.f) << i;
}

TEST(LayoutKernels, ReorderRejectsBadShapesAndAttributes) {
  struct Case {
    const char* to;
    Shape shape;
  };
  for (const Case& c : {Case{"nChw8c", {1, 12, 4, 4}}, Case{"nChw8c", {16, 4, 4}}, Case{"nChw8c", {1, 16, 4, 4, 8}},
                        Case{"NCHW", {1, 2, 4, 4, 4}}, Case{"NCHW", {1, 16, 4, 4}}}) {
    const Tensor x = nntest::random_f32(c.shape, 1);
    auto r = nntest::run(reorder_node(c.to), {x});
    ASSERT_FALSE(r.has_value()) << c.to << " " << shape_to_string(c.shape);
    EXPECT_NE(r.status().message().find("reorder_under_test"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(shape_to_string(c.shape)), std::string::npos) << r.status().message();
  }
  for (const char* to : {"NHWC", "nchw", ""}) {
    auto r = nntest::run(reorder_node(to), {nntest::random_f32({1, 8, 2, 2}, 1)});
    ASSERT_FALSE(r.has_value()) << to;
    EXPECT_NE(r.status().message().find("reorder_under_test"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("'to'"), std::string::npos) << r.status().message();
  }
}

/// A FusedConv node: k x k, pads k/2, `group`, inputs X, W, B and extra epilogue operands.
ir::Node fused_conv(const std::string& src, const std::string& dst, int64_t k, int64_t group,
                    const std::vector<ir::Step>& steps, size_t extra_inputs) {
  std::vector<std::string> inputs = {"X", "W", "B"};
  for (size_t i = 0; i < extra_inputs; ++i) inputs.push_back("E" + std::to_string(i));
  ir::Node n = nntest::make_node("FusedConv", inputs);
  n.domain = kEdgemm;
  nntest::set_ints(n, "kernel_shape", {k, k});
  nntest::set_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  nntest::set_int(n, "group", group);
  if (!src.empty()) nntest::set_string(n, "src_layout", src);
  if (!dst.empty()) nntest::set_string(n, "dst_layout", dst);
  ir::write_steps(n, steps);
  return n;
}

TEST(LayoutKernels, ChainFusedConvMatchesPlainConv) {
  // Reference: an ONNX Conv on NCHW data (oneDNN off), then relu, + per-channel g, + residual r
  // by hand, then stored in the chain layout by hand. The FusedConv under test reads/writes
  // nChw8c or NHWC and carries the same epilogue with operands stored like its output: g
  // [1, M/8, 1, 1, 8] or [1, 1, 1, M], r [N, M/8, H, W, 8] or [N, H, W, M]; it is run both
  // through the reference loops (oneDNN off) and through oneDNN.
  struct Case {
    int64_t c, m, group, k;
    bool src, dst;
    std::string layout;
  };
  for (const Case& cc : {Case{16, 16, 1, 3, true, true, "nChw8c"}, Case{16, 16, 16, 3, true, true, "nChw8c"},
                         Case{3, 16, 1, 3, false, true, "nChw8c"}, Case{16, 4, 1, 1, true, false, "nChw8c"},
                         Case{24, 8, 1, 3, true, true, "nChw8c"}, Case{16, 16, 1, 3, true, true, "NHWC"},
                         Case{12, 12, 12, 3, true, true, "NHWC"}, Case{3, 5, 1, 3, false, true, "NHWC"},
                         Case{13, 4, 1, 1, true, false, "NHWC"}}) {
    const std::string what = std::to_string(cc.c) + "->" + std::to_string(cc.m) + " g" + std::to_string(cc.group) +
                             " " + cc.layout + (cc.src ? " src" : "") + (cc.dst ? " dst" : "");
    const int64_t n = 2, h = 7, w = 5;
    const Tensor x = nntest::random_f32({n, cc.c, h, w}, 1);
    const Tensor wt = nntest::random_f32({cc.m, cc.c / cc.group, cc.k, cc.k}, 2);
    const Tensor bias = nntest::random_f32({cc.m}, 3);
    const Tensor g = nntest::random_f32({1, cc.m, 1, 1}, 4);
    const Tensor r = nntest::random_f32({n, cc.m, h, w}, 5);

    ir::Node plain = nntest::make_node("Conv", {"X", "W", "B"});
    nntest::set_ints(plain, "kernel_shape", {cc.k, cc.k});
    nntest::set_ints(plain, "pads", {cc.k / 2, cc.k / 2, cc.k / 2, cc.k / 2});
    nntest::set_int(plain, "group", cc.group);
    auto conv = nntest::run_reference(plain, {x, wt, bias});
    ASSERT_TRUE(conv.has_value()) << conv.status().message();
    std::vector<float> want = testutil::values<float>(*conv);
    for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
      const int64_t ch = (i / (h * w)) % cc.m;
      want[i] = std::max(want[i], 0.f) + g.data<float>()[ch] + r.data<float>()[i];
    }
    Tensor want_t = testutil::f32({n, cc.m, h, w}, want);
    if (cc.dst) want_t = store_by_hand(want_t, cc.layout);

    const std::vector<ir::Step> steps = {
        {ir::StepKind::kRelu, 0, 0, -1}, {ir::StepKind::kAdd, 0, 0, 3}, {ir::StepKind::kAdd, 0, 0, 4}};
    const ir::Node node = fused_conv(cc.src ? cc.layout : "", cc.dst ? cc.layout : "", cc.k, cc.group, steps, 2);
    const Tensor xin = cc.src ? store_by_hand(x, cc.layout) : x;
    const Shape g_shape = cc.layout == "NHWC" ? Shape{1, 1, 1, cc.m} : Shape{1, cc.m / 8, 1, 1, 8};
    const Tensor gin = cc.dst ? testutil::f32(g_shape, testutil::values<float>(g)) : g;
    const Tensor rin = cc.dst ? store_by_hand(r, cc.layout) : r;
    for (bool onednn : {false, true}) {
      kernels::onednn::ScopedEnabled scoped(onednn);
      for (int threads : {1, 2}) {
        auto got = nntest::run(node, {xin, wt, bias, gin, rin}, 17, threads);
        ASSERT_TRUE(got.has_value()) << what << ": " << got.status().message();
        const nntest::Diff d = nntest::diff(*got, want_t);
        EXPECT_LE(d.max_abs, 1e-4) << what << " onednn " << onednn << " threads " << threads;
      }
    }
  }
}

TEST(LayoutKernels, ChainFusedConvRejectsWrongShapes) {
  // src_layout nChw8c with a 4-D input, dst_layout nChw8c with 12 output channels, NHWC with a
  // 5-D input, and a layout name that is none of the three.
  const ir::Node src = fused_conv("nChw8c", "", 1, 1, {}, 0);
  auto r1 = nntest::run_reference(
      src, {nntest::random_f32({1, 8, 4, 4}, 1), nntest::random_f32({8, 8, 1, 1}, 2), nntest::random_f32({8}, 3)});
  ASSERT_FALSE(r1.has_value());
  EXPECT_NE(r1.status().message().find("src_layout"), std::string::npos) << r1.status().message();
  const ir::Node dst = fused_conv("", "nChw8c", 1, 1, {}, 0);
  auto r2 = nntest::run_reference(
      dst, {nntest::random_f32({1, 8, 4, 4}, 1), nntest::random_f32({12, 8, 1, 1}, 2), nntest::random_f32({12}, 3)});
  ASSERT_FALSE(r2.has_value());
  EXPECT_NE(r2.status().message().find("dst_layout"), std::string::npos) << r2.status().message();
  const ir::Node nhwc = fused_conv("NHWC", "", 1, 1, {}, 0);
  auto r3 = nntest::run_reference(
      nhwc, {nntest::random_f32({1, 1, 4, 4, 8}, 1), nntest::random_f32({8, 8, 1, 1}, 2), nntest::random_f32({8}, 3)});
  ASSERT_FALSE(r3.has_value());
  EXPECT_NE(r3.status().message().find("src_layout NHWC expects [N, H, W, C]"), std::string::npos)
      << r3.status().message();
  const ir::Node other = fused_conv("nhwc", "", 1, 1, {}, 0);
  auto r4 = nntest::run_reference(
      other, {nntest::random_f32({1, 4, 4, 8}, 1), nntest::random_f32({8, 8, 1, 1}, 2), nntest::random_f32({8}, 3)});
  ASSERT_FALSE(r4.has_value());
  EXPECT_NE(r4.status().message().find("\"NCHW\", \"nChw8c\" or \"NHWC\", got \"nhwc\""), std::string::npos)
      << r4.status().message();
}

TEST(LayoutKernels, ChainGlobalAveragePoolIsBitIdenticalToNchw) {
  // Planes of 63 (tail after 3 groups of 16), 16 (no tail), 1 and 1600 elements, values of mixed
  // magnitude so that a different summation order would change low bits.
  for (const Shape& s : {Shape{2, 16, 7, 9}, Shape{1, 8, 4, 4}, Shape{3, 24, 1, 1}, Shape{1, 32, 40, 40}}) {
    Tensor x = nntest::random_f32(s, 9);
    float* p = x.data<float>();
    for (int64_t i = 0; i < x.element_count(); i += 7) p[i] *= 1000.f;
    ir::Node plain = nntest::make_node("GlobalAveragePool", {"X"});
    ir::Node blocked = plain;
    blocked.domain = kEdgemm;
    for (int threads : {1, 2}) {
      auto want = nntest::run(plain, {x}, 17, threads);
      auto got = nntest::run(blocked, {block_by_hand(x)}, 17, threads);
      ASSERT_TRUE(want.has_value()) << want.status().message();
      ASSERT_TRUE(got.has_value()) << got.status().message();
      ASSERT_EQ(got->shape(), (Shape{s[0], s[1] / 8, 1, 1, 8}));
      const Tensor want_blocked = block_by_hand(*want);
      EXPECT_EQ(0, std::memcmp(got->data<float>(), want_blocked.data<float>(), sizeof(float) * s[0] * s[1]))
          << shape_to_string(s) << " threads " << threads;
      // NHWC [N, H, W, C] gives [N, 1, 1, C]: the same bytes as NCHW [N, C, 1, 1].
      ir::Node nhwc = blocked;
      nntest::set_string(nhwc, "layout", "NHWC");
      auto got_nhwc = nntest::run(nhwc, {nhwc_by_hand(x)}, 17, threads);
      ASSERT_TRUE(got_nhwc.has_value()) << got_nhwc.status().message();
      ASSERT_EQ(got_nhwc->shape(), (Shape{s[0], 1, 1, s[1]}));
      EXPECT_EQ(0, std::memcmp(got_nhwc->data<float>(), want->data<float>(), sizeof(float) * s[0] * s[1]))
          << shape_to_string(s) << " NHWC threads " << threads;
    }
  }
  // A 4-D input is an error naming the node.
  ir::Node blocked = nntest::make_node("GlobalAveragePool", {"X"});
  blocked.domain = kEdgemm;
  auto bad = nntest::run(blocked, {nntest::random_f32({1, 16, 4, 4}, 1)});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("n_GlobalAveragePool"), std::string::npos) << bad.status().message();
}

}  // namespace passes_layout_test
}  // namespace edgemm
