// Backend interface and partitioning: a test backend that takes a subset of ops (running its
// partitions with edgemm's own CPU kernels, and counting them) shows that the graph is split at
// the refused nodes, the placement names every node with the refusal reasons, and outputs equal
// the hand-computed values. Configuration errors name the setting and the accepted values; a
// partition the backend fails to compile runs on native, with the backend's error as the reason.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>

#include "backends/backend.h"
#include "edgemm/inferencer.h"
#include "model_builder.h"
#include "runtime/compiled_graph.h"
#include "runtime/executor.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace backends_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;

/// Runs a partition with edgemm's CPU kernels (the test backend's "device").
class CpuPartition final : public backends::CompiledPartition {
 public:
  CpuPartition(std::shared_ptr<runtime::CompiledGraph> graph, std::atomic<int>* runs)
      : graph_(std::move(graph)), runs_(runs) {}
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    ++*runs_;
    return runtime::execute(*graph_, inputs, nullptr, runtime::ExecOptions{}, nullptr);
  }

 private:
  std::shared_ptr<runtime::CompiledGraph> graph_;
  std::atomic<int>* runs_;
};

/// Takes the ops in `ops`; records the partitions it compiled.
class SubsetBackend final : public backends::Backend {
 public:
  explicit SubsetBackend(std::set<std::string> ops) : ops_(std::move(ops)) {}
  const std::string& name() const override { return name_; }
  const backends::BackendConstraints& constraints() const override { return constraints_; }
  std::vector<backends::NodeSupport> capability(const ir::Model& model) const override {
    std::vector<backends::NodeSupport> verdicts;
    for (const ir::Node& node : model.graph.nodes) {
      const bool ok = ops_.count(node.op_type) != 0;
      verdicts.push_back({ok, ok ? "" : "test backend has no " + node.op_type});
    }
    return verdicts;
  }
  Expected<std::unique_ptr<backends::CompiledPartition>> compile(const ir::Model& partition,
                                                                 const backends::BackendOptions&) const override {
    std::vector<std::string> names;
    for (const ir::Node& node : partition.graph.nodes) names.push_back(node.name);
    compiled_partitions.push_back(names);
    if (names.size() == 1 && names[0] == "refuse_me") {
      return make_error(StatusCode::kUnsupported, "node 'refuse_me' broke the test compiler");
    }
    auto graph = std::make_shared<const ir::Graph>(partition.graph);
    EDGEMM_ASSIGN_OR_RETURN(auto compiled, runtime::CompiledGraph::compile(graph, partition.opsets, {}));
    return std::unique_ptr<backends::CompiledPartition>(std::make_unique<CpuPartition>(compiled, &runs));
  }

  static inline std::vector<std::vector<std::string>> compiled_partitions;
  static inline std::atomic<int> runs{0};

 private:
  std::string name_ = "subset";
  backends::BackendConstraints constraints_{{"cpu"}, {"fp32"}};
  std::set<std::string> ops_;
};

/// x[4] → Relu → r; Softmax(r) → s; a = Add(r, s); y = Mul(a, c) and z = Exp(a).
/// With Relu, Add, Mul on the backend: partitions {relu} and {add, mul}; Softmax and Exp native.
std::string split_model(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4});
  b.output("y", onnx::TensorProto::FLOAT, {4});
  b.output("z", onnx::TensorProto::FLOAT, {4});
  b.initializer_floats("c", {4}, {1, 2, 3, 4});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Softmax", {"r"}, {"s"}, "softmax");
  b.node("Add", {"r", "s"}, {"a"}, "add");
  b.node("Mul", {"a", "c"}, {"y"}, "mul");
  b.node("Exp", {"a"}, {"z"}, "exp");
  return b.save(dir / "split.onnx");
}

void register_subset_backend() {
  backends::register_backend("subset", [](const RuntimeOptions&) -> Expected<std::unique_ptr<backends::Backend>> {
    return std::unique_ptr<backends::Backend>(
        std::make_unique<SubsetBackend>(std::set<std::string>{"Relu", "Add", "Mul"}));
  });
}

TEST(Backends, PartitionsAtRefusedNodesAndMatchesHandComputedValues) {
  register_subset_backend();
  SubsetBackend::compiled_partitions.clear();
  InferencerConfig config;
  config.model_path = split_model(testing::temp_dir("backend_split"));
  config.backend = "subset";
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  EXPECT_EQ((*inf)->backend(), "subset");

  const std::vector<std::vector<std::string>> want_partitions = {{"relu"}, {"add", "mul"}};
  EXPECT_EQ(SubsetBackend::compiled_partitions, want_partitions);
  const std::vector<NodePlacement> want_placement = {{"relu", "Relu", "subset", ""},
                                                     {"softmax", "Softmax", "native", "test backend has no Softmax"},
                                                     {"add", "Add", "subset", ""},
                                                     {"mul", "Mul", "subset", ""},
                                                     {"exp", "Exp", "native", "test backend has no Exp"}};
  EXPECT_EQ((*inf)->placement(), want_placement);

  const std::vector<float> x = {-1, 0, 1, 2};
  const int runs_before = SubsetBackend::runs;
  auto out = (*inf)->run({{"x", testutil::f32({4}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(SubsetBackend::runs - runs_before, 2);
  // r = relu(x) = [0,0,1,2]; s = softmax(r); a = r + s; y = a * c; z = exp(a).
  const std::vector<double> r = {0, 0, 1, 2};
  double sum = 0;
  for (double v : r) sum += std::exp(v);
  const float* y = (*out)[0].data<float>();
  const float* z = (*out)[1].data<float>();
  for (int i = 0; i < 4; ++i) {
    const double a = r[i] + std::exp(r[i]) / sum;
    EXPECT_NEAR(y[i], a * (i + 1), 1e-5) << i;
    EXPECT_NEAR(z[i], std::exp(a), 1e-5) << i;
  }
}

TEST(Backends, NativePlacementListsEveryNodeOnNative) {
  InferencerConfig config;
  config.model_path = split_model(testing::temp_dir("backend_native"));
  config.optimize = false;
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  EXPECT_EQ((*inf)->backend(), "native");
  ASSERT_EQ((*inf)->placement().size(), 5u);
  for (const NodePlacement& p : (*inf)->placement()) {
    EXPECT_EQ(p.backend, "native") << p.node;
    EXPECT_EQ(p.reason, "") << p.node;
  }
}

TEST(Backends, ConfigurationErrorsNameTheSettingAndTheAcceptedValues) {
  register_subset_backend();
  InferencerConfig config;
  config.model_path = split_model(testing::temp_dir("backend_config"));
  config.backend = "tpu9000";
  auto unknown = Inferencer::create(config);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown backend 'tpu9000'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("native"), std::string::npos);

  config.backend = "native";
  config.precision = "fp8";
  auto fp8 = Inferencer::create(config);
  ASSERT_FALSE(fp8.has_value());
  EXPECT_EQ(fp8.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(fp8.status().message().find("precision 'fp8'"), std::string::npos);
  EXPECT_NE(fp8.status().message().find("fp32"), std::string::npos);

  config.backend = "subset";
  config.precision = "fp32";
  config.device = "npu";
  auto npu = Inferencer::create(config);
  ASSERT_FALSE(npu.has_value());
  EXPECT_NE(npu.status().message().find("backend 'subset' does not support device 'npu' (it supports: cpu)"),
            std::string::npos)
      << npu.status().message();
}

TEST(Backends, APartitionThatFailsToCompileFallsBackToNativeWithTheError) {
  register_subset_backend();
  SubsetBackend::compiled_partitions.clear();
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4});
  b.output("y", onnx::TensorProto::FLOAT, {4});
  b.node("Relu", {"x"}, {"r"}, "refuse_me");
  b.node("Softmax", {"r"}, {"s"}, "softmax");
  b.node("Relu", {"s"}, {"y"}, "relu");
  InferencerConfig config;
  config.model_path = b.save(testing::temp_dir("backend_refuse") / "m.onnx");
  config.backend = "subset";
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const std::vector<std::vector<std::string>> want_partitions = {{"refuse_me"}, {"relu"}};
  EXPECT_EQ(SubsetBackend::compiled_partitions, want_partitions);
  const std::vector<NodePlacement> want_placement = {
      {"refuse_me", "Relu", "native",
       "its partition of 1 node failed to compile: node 'refuse_me' broke the test compiler"},
      {"softmax", "Softmax", "native", "test backend has no Softmax"},
      {"relu", "Relu", "subset", ""}};
  EXPECT_EQ((*inf)->placement(), want_placement);

  auto out = (*inf)->run({{"x", testutil::f32({4}, {-1, 0, 1, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  // y = relu(softmax(relu(x))) = softmax([0, 0, 1, 2]).
  const double sum = 2 + std::exp(1.0) + std::exp(2.0);
  const std::vector<double> want = {1 / sum, 1 / sum, std::exp(1.0) / sum, std::exp(2.0) / sum};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*out)[0].data<float>()[i], want[i], 1e-5) << i;
}

}  // namespace backends_test
}  // namespace edgemm
