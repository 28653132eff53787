// Profiles: aggregation of hand-made runs (medians, shares, GFLOP/s by hand), the JSON round
// trip and the Markdown tables; per-node FLOPs and bytes of a real run against hand-computed
// values and against the static estimate from inferred shapes.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "bench/profile_json.h"
#include "ir/flops.h"
#include "ir/onnx_import.h"
#include "model_builder.h"
#include "source_dir.h"

namespace edgemm {
namespace bench_profile_test {  // named for the file: unity batches merge anonymous namespaces

using bench::ProfiledSample;
using testing::ModelBuilder;

NodeProfile event(const std::string& node, const std::string& op, double us, int64_t flops, int64_t bytes,
                  int depth = 0) {
  return {node, op, op == "Conv" ? "f32_conv__onednn" : "reference", {{1, 8, 4, 4}}, 0, us, flops, bytes, depth};
}

// Three runs of Conv 'a', Relu 'b', a subgraph node (ignored), Relu 'c'.
std::vector<ProfiledSample> hand_made_runs() {
  const double a[] = {10, 30, 20}, b[] = {5, 1, 3}, wall[] = {40, 25, 35};
  std::vector<ProfiledSample> runs;
  for (int r = 0; r < 3; ++r) {
    runs.push_back({wall[r],
                    {event("a", "Conv", a[r], 2000000, 1000), event("b", "Relu", b[r], 1000, 800),
                     event("inner", "Add", 99, 7, 7, 1), event("c", "Relu", 2, 500, 400)}});
  }
  return runs;
}

TEST(BenchProfile, AggregatesMediansSharesAndRates) {
  auto report = bench::aggregate_profiles(hand_made_runs());
  ASSERT_TRUE(report.has_value()) << report.status().to_string();
  ASSERT_EQ(report->nodes.size(), 3u);  // the depth-1 node is inside its parent's time
  EXPECT_EQ(report->iterations, 3);
  EXPECT_DOUBLE_EQ(report->median_wall_us, 35);
  // medians: a 20, b 3, c 2 → sum 25
  EXPECT_DOUBLE_EQ(report->nodes[0].median_us, 20);
  EXPECT_DOUBLE_EQ(report->nodes[1].median_us, 3);
  EXPECT_DOUBLE_EQ(report->nodes[2].median_us, 2);
  EXPECT_EQ(report->nodes[2].index, 2);
  EXPECT_EQ(report->nodes[2].node, "c");
  EXPECT_DOUBLE_EQ(report->node_sum_us, 25);
  EXPECT_DOUBLE_EQ(report->overhead_us, 10);
  EXPECT_DOUBLE_EQ(report->nodes[0].share_percent, 80);
  EXPECT_DOUBLE_EQ(report->nodes[1].share_percent, 12);
  EXPECT_DOUBLE_EQ(report->nodes[0].gflops_per_s, 100);  // 2e6 FLOP in 20 µs
  EXPECT_EQ(report->flops, 2001500);
  EXPECT_EQ(report->bytes, 2200);
  EXPECT_DOUBLE_EQ(report->gflops_per_s, 2001500 / 35.0 / 1e3);

  ASSERT_EQ(report->op_types.size(), 2u);
  const bench::OpTypeStats& conv = report->op_types[0];
  const bench::OpTypeStats& relu = report->op_types[1];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(relu.op_type, "Relu");
  EXPECT_EQ(relu.count, 2);
  EXPECT_DOUBLE_EQ(relu.time_us, 5);
  EXPECT_DOUBLE_EQ(relu.share_percent, 20);
  EXPECT_EQ(relu.flops, 1500);
  EXPECT_DOUBLE_EQ(relu.gflops_per_s, 0.3);  // 1500 FLOP in 5 µs
  EXPECT_EQ(relu.bytes, 1200);
  EXPECT_EQ(bench::median_sample(hand_made_runs()), 2u);  // walls 40, 25, 35
}

TEST(BenchProfile, EvenCountMedianAndMismatchedRuns) {
  std::vector<ProfiledSample> runs = hand_made_runs();
  runs.push_back({10, {event("a", "Conv", 40, 1, 1), event("b", "Relu", 4, 1, 1), event("c", "Relu", 2, 1, 1)}});
  auto report = bench::aggregate_profiles(runs);
  ASSERT_TRUE(report.has_value());
  EXPECT_DOUBLE_EQ(report->nodes[0].median_us, 25);  // 10 20 30 40
  EXPECT_DOUBLE_EQ(report->median_wall_us, 30);      // 10 25 35 40

  runs.back().nodes[1].node = "other";
  auto mismatch = bench::aggregate_profiles(runs);
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mismatch.status().message().find("'other'"), std::string::npos);
  EXPECT_FALSE(bench::aggregate_profiles({}).has_value());
}

bench::ProfileReport sample_report() {
  bench::ProfileReport report = bench::aggregate_profiles(hand_made_runs()).value();
  report.model = "tiny|model.onnx";
  report.inputs = "x=[1,3,8,8] float32";
  report.threads = 2;
  report.warmup = 1;
  report.nodes[1].median_us = 1.0 / 3;  // a value with no short decimal form
  return report;
}

TEST(BenchProfile, JsonRoundTripsExactly) {
  const bench::ProfileReport report = sample_report();
  const nlohmann::json j = bench::profile_report_to_json(report);
  EXPECT_EQ(j["schema"], "edgemm.profile/1");
  auto back = bench::profile_report_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  EXPECT_EQ(*back, report);

  nlohmann::json wrong = j;
  wrong["schema"] = "edgemm.profile/2";
  EXPECT_EQ(bench::profile_report_from_json(wrong).status().code(), StatusCode::kInvalidArgument);
  nlohmann::json missing = j;
  missing["nodes"][0].erase("flops");
  auto bad = bench::profile_report_from_json(missing);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("flops"), std::string::npos);
}

TEST(BenchProfile, MarkdownHasNodeAndOpTypeRows) {
  const bench::ProfileReport report = bench::aggregate_profiles(hand_made_runs()).value();
  const std::string md = bench::profile_report_markdown(report);
  EXPECT_NE(md.find("| 0 | a | Conv | f32_conv__onednn | [1,8,4,4] | 0.020 | 80.0 | 0.002 | 100.0 | 0.00 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | c | Relu |"), std::string::npos);
  EXPECT_NE(md.find("| Relu | 2 | 0.005 | 20.0 | 0.000 | 0.3 | 0.00 |"), std::string::npos) << md;
  const std::string top1 = bench::profile_report_markdown(report, 1);
  EXPECT_NE(top1.find("Top 1 nodes"), std::string::npos);
  EXPECT_EQ(top1.find("| 2 | c |"), std::string::npos);
  EXPECT_NE(top1.find("| Relu | 2 |"), std::string::npos);  // op types are always complete
}

// Conv x[1,2,5,5] * w[3,2,3,3] → y[1,3,3,3]; MatMul a[2,3] × b[3,4] → z[2,4].
std::string conv_matmul_model(const std::filesystem::path& dir) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 2, 5, 5});
  m.input("a", onnx::TensorProto::FLOAT, {2, 3});
  std::vector<float> w(54), b(12);
  std::iota(w.begin(), w.end(), 0.0f);
  std::iota(b.begin(), b.end(), 0.0f);
  m.initializer_floats("w", {3, 2, 3, 3}, w);
  m.initializer_floats("b", {3, 4}, b);
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  m.node("MatMul", {"a", "b"}, {"z"}, "matmul");
  m.output("y", onnx::TensorProto::FLOAT, {1, 3, 3, 3});
  m.output("z", onnx::TensorProto::FLOAT, {2, 4});
  return m.save(dir / "conv_matmul.onnx");
}

TEST(BenchProfile, RuntimeFlopsAndBytesMatchHandComputedValues) {
  const std::string path = conv_matmul_model(testing::temp_dir("profile_flops"));
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = false;  // the two nodes as written (the layout pass may add a Transpose)
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  auto inputs = bench::make_inputs((*inferencer)->inputs(), {});
  ASSERT_TRUE(inputs.has_value()) << inputs.status().to_string();
  auto run = (*inferencer)->run_profiled(*inputs);
  ASSERT_TRUE(run.has_value()) << run.status().to_string();
  EXPECT_EQ(run->outputs.size(), 2u);
  ASSERT_EQ(run->nodes.size(), 2u);
  const NodeProfile& conv = run->nodes[0].op_type == "Conv" ? run->nodes[0] : run->nodes[1];
  const NodeProfile& matmul = run->nodes[0].op_type == "Conv" ? run->nodes[1] : run->nodes[0];
  EXPECT_EQ(conv.node, "conv");
  EXPECT_EQ(conv.output_shapes, (std::vector<Shape>{{1, 3, 3, 3}}));
  EXPECT_EQ(conv.flops, 2 * 27 * (2 * 3 * 3));  // 2 × |y| × C × kh × kw
  EXPECT_EQ(conv.bytes, (50 + 54 + 27) * 4);    // x + w + y, float32
  EXPECT_EQ(matmul.flops, 2 * 8 * 3);           // 2 × |z| × K
  EXPECT_EQ(matmul.bytes, (6 + 12 + 8) * 4);    // a + b + z
  EXPECT_GE(conv.duration_us, 0);
  EXPECT_EQ(conv.depth, 0);

  // The static estimate from inferred shapes uses the same rule.
  auto model = ir::import_onnx_file(path);
  ASSERT_TRUE(model.has_value());
  const ir::FlopsEstimate estimate = ir::estimate_flops(model->graph);
  EXPECT_EQ(estimate.by_op.at("Conv"), conv.flops);
  EXPECT_EQ(estimate.by_op.at("MatMul"), matmul.flops);
}

TEST(BenchProfile, MatMulNBitsFlopsAndBytes) {
  // tests/fixtures/matmul_nbits/nbits_1.onnx: A [1, 3, 96], N = 17, 4 bits in blocks of 32
  // (k_blocks 3, blob 16 bytes), packed zero points, bias. FLOPs: 2 × |Y| × K plus the bias add,
  // 2 · 51 · 96 + 51 = 9843 (0 FLOPs before, so bench and profile showed 0.0 GFLOP/s). Bytes:
  // A 288 · 4 + B 17 · 3 · 16 + scales 51 · 4 + zero points 17 · 2 + bias 17 · 4 + Y 51 · 4.
  InferencerConfig config;
  config.model_path = std::string(edgemm::testing::source_dir()) + "/tests/fixtures/matmul_nbits/nbits_1.onnx";
  config.threads = 1;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  auto inputs = bench::make_inputs((*inferencer)->inputs(), {});
  ASSERT_TRUE(inputs.has_value()) << inputs.status().to_string();
  auto run = (*inferencer)->run_profiled(*inputs);
  ASSERT_TRUE(run.has_value()) << run.status().to_string();
  ASSERT_EQ(run->nodes.size(), 1u);
  EXPECT_EQ(run->nodes[0].op_type, "MatMulNBits");
  EXPECT_EQ(run->nodes[0].flops, 2 * 51 * 96 + 51);
  EXPECT_EQ(run->nodes[0].bytes, 1152 + 816 + 204 + 34 + 68 + 204);
  // Without the bias input: no add.
  ir::Node node;
  node.op_type = "MatMulNBits";
  node.domain = "com.microsoft";
  node.inputs = {"A", "B", "scales"};
  EXPECT_EQ(ir::node_flops(node, {Shape{1, 2048}}, {Shape{1, 2048}}), 2 * 2048 * 2048);
}

TEST(BenchProfile, ConcurrentProfiledRunsKeepTheirOwnEvents) {
  InferencerConfig config;
  config.model_path = conv_matmul_model(testing::temp_dir("profile_threads"));
  config.threads = 1;
  config.optimize = false;
  auto inferencer = Inferencer::create(config);
  ASSERT_TRUE(inferencer.has_value()) << inferencer.status().to_string();
  auto inputs = bench::make_inputs((*inferencer)->inputs(), {});
  ASSERT_TRUE(inputs.has_value());
  std::vector<int> node_counts(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        auto run = (*inferencer)->run_profiled(*inputs);
        node_counts[t] += run.has_value() ? static_cast<int>(run->nodes.size()) : -100;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(node_counts, (std::vector<int>{10, 10, 10, 10}));
}

TEST(BenchProfile, GemmTakesKFromTransA) {
  ir::Node gemm;
  gemm.op_type = "Gemm";
  const ir::NodeShapes y = {Shape{2, 7}};
  EXPECT_EQ(ir::node_flops(gemm, {Shape{2, 5}, Shape{5, 7}}, y), 2 * 14 * 5);  // A is M×K
  gemm.attributes["transA"].i = 1;
  EXPECT_EQ(ir::node_flops(gemm, {Shape{5, 2}, Shape{5, 7}}, y), 2 * 14 * 5);  // A is K×M
  EXPECT_EQ(ir::node_flops(gemm, {Shape{5, 2}, Shape{5, 7}}, {std::nullopt}), std::nullopt);
}

}  // namespace bench_profile_test
}  // namespace edgemm
