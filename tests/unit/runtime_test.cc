// Runtime: execution of small hand-built graphs with hand-computed results, buffer reuse in
// the memory planner, control flow with outer-scope values, concurrency of run().
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "edgemm/inferencer.h"
#include "model_builder.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace runtime_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;

std::unique_ptr<Inferencer> load(const std::string& path, bool optimize = true) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = optimize;
  auto inf = Inferencer::create(config);
  EXPECT_TRUE(inf.has_value()) << inf.status().to_string();
  return inf.has_value() ? std::move(inf).value() : nullptr;
}

// y = relu(x + b) * 2, a chain long enough that the planner can reuse buffers.
std::string chain_model(const std::filesystem::path& dir, int length) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 4});
  b.initializer_floats("b", {4}, {1, -1, 2, -2});
  b.initializer_floats("two", {}, {2});
  std::string prev = "x";
  for (int i = 0; i < length; ++i) {
    const std::string s = std::to_string(i);
    b.node("Add", {prev, "b"}, {"a" + s});
    b.node("Relu", {"a" + s}, {"r" + s});
    b.node("Mul", {"r" + s, "two"}, {"m" + s});
    prev = "m" + s;
  }
  b.node("Identity", {prev}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {-1, 4});
  return b.save(dir / "chain.onnx");
}

TEST(Runtime, ChainMatchesHandComputedValuesAndReusesBuffers) {
  auto dir = testing::temp_dir("chain");
  // Passes off: they would fuse the chain into one ElementwiseChain node, leaving nothing to reuse.
  auto inf = load(chain_model(dir, 3), false);
  ASSERT_TRUE(inf);
  Tensor x = Tensor::from_floats({1, 4}, {0, 0, -5, 1});
  // step: max(v + b, 0) * 2 with b = (1, -1, 2, -2)
  // x0 = (0,0,-5,1) → (2,0,0,0) → (6,0,4,0) → (14,0,12,0)
  for (int run = 0; run < 3; ++run) {
    auto out = inf->run({{"x", x}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const float* y = (*out)[0].data<float>();
    EXPECT_EQ(y[0], 14);
    EXPECT_EQ(y[1], 0);
    EXPECT_EQ(y[2], 12);
    EXPECT_EQ(y[3], 0);
  }
  const MemoryReport mem = inf->memory_report();
  EXPECT_GT(mem.unplanned_bytes, 0);
  // 9 intermediates of 16 bytes (64 aligned); at most 3 are alive at once.
  EXPECT_LE(mem.planned_peak_bytes, 3 * 64);
  EXPECT_LT(mem.planned_peak_bytes, mem.unplanned_bytes);
  // A new batch size re-plans and still computes the right values.
  Tensor x2 = Tensor::from_floats({2, 4}, {0, 0, -5, 1, 1, 1, 1, 1});
  auto out2 = inf->run({{"x", x2}});
  ASSERT_TRUE(out2.has_value());
  EXPECT_EQ((*out2)[0].shape(), (Shape{2, 4}));
  EXPECT_EQ((*out2)[0].data<float>()[4], 22);  // 1 → (1+1)*2=4 → (4+1)*2=10 → (10+1)*2=22
}

TEST(Runtime, ABorrowedInputWithoutDataIsAnError) {
  auto dir = testing::temp_dir("null_input");
  auto inf = load(chain_model(dir, 1));
  ASSERT_TRUE(inf);
  const auto out = inf->run({{"x", Tensor::borrow(DataType::kFloat32, {1, 4}, nullptr)}});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("input 'x' has shape [1,4] but no data"), std::string::npos)
      << out.status().message();
}

TEST(Runtime, MemoryReportCountsWeightsAndTheirPackedCopy) {
  // y = x · B with a constant B [64, 40]: 2560 float32 weights, 10240 bytes.
  auto dir = testing::temp_dir("packed_report");
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 64});
  b.initializer_floats("B", {64, 40}, std::vector<float>(64 * 40, 0.5f));
  b.node("MatMul", {"x", "B"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {-1, 40});
  auto inf = load(b.save(dir / "matmul.onnx"));
  ASSERT_TRUE(inf);
  auto out = inf->run({{"x", Tensor::from_floats({1, 64}, std::vector<float>(64, 1.0f))}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<float>()[0], 32.0f);  // 64 · 1 · 0.5
  const MemoryReport mem = inf->memory_report();
  const std::string kernel = inf->run_profiled({{"x", Tensor::from_floats({1, 64}, std::vector<float>(64, 1.0f))}})
                                 .value()
                                 .nodes.front()
                                 .kernel;
  // B lives on only in the kernel's layout, except where oneDNN runs on B's own bytes.
  if (kernel == "f32_matmul__avx512_panels") {
    // ceil(40 / 32) = 2 panels of 64 K steps, each step 32 columns × 4 bytes.
    EXPECT_EQ(mem.packed_weight_bytes, 2 * 64 * 32 * 4);
    EXPECT_EQ(mem.weight_bytes, 0);
  } else if (kernel == "f32_matmul__xnnpack") {
    EXPECT_EQ(mem.packed_weight_bytes, 64 * 40 * 4);  // counted as K × N float32 elements
    EXPECT_EQ(mem.weight_bytes, 0);
  } else {
    EXPECT_EQ(mem.weight_bytes, mem.packed_weight_bytes > 0 ? 0 : 64 * 40 * 4) << kernel;
  }
}

TEST(Runtime, WeightsThatAnotherNodeReadsAsStoredAreKept) {
  // y = x · B + B[0] and an unused initializer: B stays (Add reads it), 'unused' is freed.
  auto dir = testing::temp_dir("kept_weights");
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 64});
  std::vector<float> weights(64 * 64);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 7) - 3.0f;
  b.initializer_floats("B", {64, 64}, weights);
  b.initializer_floats("unused", {1000}, std::vector<float>(1000, 1.0f));
  b.node("MatMul", {"x", "B"}, {"xb"});
  b.node("Add", {"xb", "B"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {64, 64});
  auto inf = load(b.save(dir / "shared.onnx"));
  ASSERT_TRUE(inf);
  std::vector<float> ones(64 * 64, 1.0f);
  auto out = inf->run({{"x", Tensor::from_floats({64, 64}, ones)}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < 64; ++c) {
      float column = 0;  // row of ones times column c of B
      for (int64_t k = 0; k < 64; ++k) column += weights[k * 64 + c];
      ASSERT_EQ((*out)[0].data<float>()[r * 64 + c], column + weights[r * 64 + c]) << r << "," << c;
    }
  }
  EXPECT_EQ(inf->memory_report().weight_bytes, 64 * 64 * 4);
}

// If whose branches read the outer value 'x'; Loop whose body accumulates the outer 'x'.
std::string control_flow_model(const std::filesystem::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {3});
  b.input("cond", onnx::TensorProto::BOOL, {});
  b.initializer_floats("two", {}, {2});
  b.initializer_floats("zeros", {3}, {0, 0, 0});
  b.initializer_int64s("trips", {}, {3});

  auto* if_node = b.node("If", {"cond"}, {"branch"}, "if_1");
  auto* then_attr = if_node->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* then_g = then_attr->mutable_g();
  then_g->set_name("then");
  auto* mul = then_g->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("two");
  mul->add_output("t_out");
  ModelBuilder::declare(then_g->add_output(), "t_out", onnx::TensorProto::FLOAT, {3});
  auto* else_attr = if_node->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* else_g = else_attr->mutable_g();
  else_g->set_name("else");
  auto* neg = else_g->add_node();
  neg->set_op_type("Neg");
  neg->add_input("x");
  neg->add_output("e_out");
  ModelBuilder::declare(else_g->add_output(), "e_out", onnx::TensorProto::FLOAT, {3});

  auto* loop = b.node("Loop", {"trips", "", "zeros"}, {"sum", "partial"}, "loop_1");
  auto* body_attr = loop->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* body = body_attr->mutable_g();
  body->set_name("body");
  ModelBuilder::declare(body->add_input(), "i", onnx::TensorProto::INT64, {});
  ModelBuilder::declare(body->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  ModelBuilder::declare(body->add_input(), "s_in", onnx::TensorProto::FLOAT, {3});
  auto* id = body->add_node();
  id->set_op_type("Identity");
  id->add_input("c_in");
  id->add_output("c_out");
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("s_in");
  add->add_input("x");
  add->add_output("s_out");
  auto* copy = body->add_node();
  copy->set_op_type("Identity");
  copy->add_input("s_out");
  copy->add_output("scan_out");
  ModelBuilder::declare(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  ModelBuilder::declare(body->add_output(), "s_out", onnx::TensorProto::FLOAT, {3});
  ModelBuilder::declare(body->add_output(), "scan_out", onnx::TensorProto::FLOAT, {3});

  b.output("branch", onnx::TensorProto::FLOAT, {3});
  b.output("sum", onnx::TensorProto::FLOAT, {3});
  b.output("partial", onnx::TensorProto::FLOAT, {3, 3});
  return b.save(dir / "control.onnx");
}

TEST(Runtime, IfAndLoopReadOuterScopeValues) {
  auto dir = testing::temp_dir("control");
  auto inf = load(control_flow_model(dir));
  ASSERT_TRUE(inf);
  Tensor x = Tensor::from_floats({3}, {1, 2, 3});
  for (bool c : {true, false}) {
    Tensor cond = std::move(Tensor::create(DataType::kBool, {}).value());
    cond.data<uint8_t>()[0] = c;
    auto out = inf->run({{"x", x}, {"cond", cond}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const float* branch = (*out)[0].data<float>();
    EXPECT_EQ(branch[2], c ? 6 : -3);
    const float* sum = (*out)[1].data<float>();
    EXPECT_EQ(sum[0], 3);
    EXPECT_EQ(sum[2], 9);
    ASSERT_EQ((*out)[2].shape(), (Shape{3, 3}));
    const float* partial = (*out)[2].data<float>();
    EXPECT_EQ(partial[0], 1);  // after iteration 0: x
    EXPECT_EQ(partial[4], 4);  // after iteration 1: 2x, middle element
    EXPECT_EQ(partial[8], 9);  // after iteration 2: 3x
  }
}

// Scan-8 (opset 8: batch axis 0, sequence_lens first): a running sum over a reversed scan input,
// batch entry 1 shorter than the sequence axis.
std::string scan8_model(const std::filesystem::path& dir) {
  ModelBuilder b(8);
  b.input("init", onnx::TensorProto::FLOAT, {2, 2});
  b.input("xs", onnx::TensorProto::FLOAT, {2, 3, 2});
  b.initializer_int64s("lens", {2}, {3, 2});
  auto* scan = b.node("Scan", {"lens", "init", "xs"}, {"final", "partial"}, "scan_1");
  auto* num = scan->add_attribute();
  num->set_name("num_scan_inputs");
  num->set_type(onnx::AttributeProto::INT);
  num->set_i(1);
  auto* dirs = scan->add_attribute();
  dirs->set_name("directions");
  dirs->set_type(onnx::AttributeProto::INTS);
  dirs->add_ints(1);
  auto* body_attr = scan->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* body = body_attr->mutable_g();
  body->set_name("scan_body");
  ModelBuilder::declare(body->add_input(), "sum_in", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::declare(body->add_input(), "x_t", onnx::TensorProto::FLOAT, {2});
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("sum_in");
  add->add_input("x_t");
  add->add_output("sum_out");
  auto* copy = body->add_node();
  copy->set_op_type("Identity");
  copy->add_input("sum_out");
  copy->add_output("scan_out");
  ModelBuilder::declare(body->add_output(), "sum_out", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::declare(body->add_output(), "scan_out", onnx::TensorProto::FLOAT, {2});
  b.output("final", onnx::TensorProto::FLOAT, {2, 2});
  b.output("partial", onnx::TensorProto::FLOAT, {2, 3, 2});
  return b.save(dir / "scan8.onnx");
}

TEST(Runtime, Scan8BatchesWithSequenceLengthsAndReverseInput) {
  auto dir = testing::temp_dir("scan8");
  auto inf = load(scan8_model(dir));
  ASSERT_TRUE(inf);
  const Tensor init = Tensor::from_floats({2, 2}, {0, 0, 10, 10});
  const Tensor xs = Tensor::from_floats({2, 3, 2}, {1, 2, 3, 4, 5, 6, 1, 1, 2, 2, 3, 3});
  auto out = inf->run({{"init", init}, {"xs", xs}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  // Batch 0, length 3, read from the end: [5,6], [8,10], [9,12]. Batch 1, length 2 (positions
  // 1 then 0): 10 + 2 = 12, then 13; position 2 of its scan output is zero.
  EXPECT_EQ(testutil::values<float>((*out)[0]), (std::vector<float>{9, 12, 13, 13}));
  ASSERT_EQ((*out)[1].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(testutil::values<float>((*out)[1]), (std::vector<float>{5, 6, 8, 10, 9, 12, 12, 12, 13, 13, 0, 0}));
}

// The Scan-8 model at opset 11 with its first input left empty (''): Scan-9+ reads it as the
// first loop state, which is then missing; an error naming the node, not a crash.
TEST(Runtime, ScanWithAnEmptyStateInputIsAnError) {
  auto dir = testing::temp_dir("scan_empty_state");
  onnx::ModelProto model;
  {
    std::ifstream in(scan8_model(dir), std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  model.mutable_opset_import(0)->set_version(11);
  onnx::NodeProto* scan = model.mutable_graph()->mutable_node(0);
  scan->set_input(0, "");
  scan->mutable_attribute()->DeleteSubrange(1, 1);  // Scan-8's `directions`
  const auto path = dir / "scan_empty_state.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
  }
  auto inf = load(path.string());
  ASSERT_TRUE(inf);
  auto out = inf->run({{"init", Tensor::from_floats({2, 2}, {0, 0, 1, 1})},
                       {"xs", Tensor::from_floats({2, 3, 2}, std::vector<float>(12, 1.0f))}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("scan_1"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("initial state 0 is missing"), std::string::npos) << out.status().message();
}

TEST(Runtime, ConcurrentRunsMatchSerialRuns) {
  auto dir = testing::temp_dir("concurrent");
  auto inf = load(chain_model(dir, 8));
  ASSERT_TRUE(inf);
  constexpr int kThreads = 4, kRuns = 50;
  auto input_for = [](int t, int r) {
    std::vector<float> v(4 * 3);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>((t * 131 + r * 17 + static_cast<int>(i) * 7) % 23) - 11.0f;
    return Tensor::from_floats({3, 4}, v);
  };
  std::vector<std::vector<std::vector<float>>> serial(kThreads, std::vector<std::vector<float>>(kRuns));
  for (int t = 0; t < kThreads; ++t) {
    for (int r = 0; r < kRuns; ++r) {
      auto out = inf->run({{"x", input_for(t, r)}});
      ASSERT_TRUE(out.has_value());
      serial[t][r].assign((*out)[0].data<float>(), (*out)[0].data<float>() + 12);
    }
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        auto out = inf->run({{"x", input_for(t, r)}});
        if (!out.has_value() ||
            std::vector<float>((*out)[0].data<float>(), (*out)[0].data<float>() + 12) != serial[t][r]) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// y = x · W0 · W1 · … · W39 with distinct weights [8, 8], then `tail` Resize nodes (empty for
// none) whose mode attributes are given: kernels of a long chain to make (and weights to pack).
std::string matmul_chain(const std::filesystem::path& path, const std::vector<std::string>& tail_modes) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 8});
  std::string prev = "x";
  for (int i = 0; i < 40; ++i) {
    std::vector<float> w(64);
    for (size_t j = 0; j < w.size(); ++j) w[j] = static_cast<float>((i * 37 + static_cast<int>(j) * 11) % 19 - 9) / 16;
    b.initializer_floats("W" + std::to_string(i), {8, 8}, w);
    b.node("MatMul", {prev, "W" + std::to_string(i)}, {"m" + std::to_string(i)});
    prev = "m" + std::to_string(i);
  }
  b.initializer_floats("scales", {2}, {1, 2});
  for (size_t i = 0; i < tail_modes.size(); ++i) {
    const std::string out = "resized" + std::to_string(i);
    auto* n = b.node("Resize", {prev, "", "scales"}, {out}, "resize_" + std::to_string(i));
    auto* mode = n->add_attribute();
    mode->set_name("mode");
    mode->set_type(onnx::AttributeProto::STRING);
    mode->set_s(tail_modes[i]);
    prev = out;
  }
  b.node("Identity", {prev}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {2, 8 << tail_modes.size()});
  return b.save(path);
}

TEST(Runtime, KernelsMadeOnSeveralThreadsMatchOneThread) {
  // Kernels (and their packed weights) are made in waves on the configured threads: the same
  // outputs and memory as on one thread, and a failing kernel is reported by the first failing
  // node in execution order even when a later one in the same wave fails too.
  auto dir = testing::temp_dir("parallel_compile");
  const std::string good = matmul_chain(dir / "good.onnx", {});
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  std::vector<float> want;
  MemoryReport want_memory;
  for (int threads : {1, 2, 4}) {
    InferencerConfig config;
    config.model_path = good;
    config.threads = threads;
    auto inf = Inferencer::create(config);
    ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
    auto out = (*inf)->run({{"x", Tensor::from_floats({2, 8}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    const std::vector<float> got((*out)[0].data<float>(), (*out)[0].data<float>() + 16);
    const MemoryReport memory = (*inf)->memory_report();
    if (threads == 1) {
      want = got;
      want_memory = memory;
      continue;
    }
    EXPECT_EQ(got, want) << threads << " threads";
    EXPECT_EQ(memory.weight_bytes, want_memory.weight_bytes) << threads << " threads";
    EXPECT_EQ(memory.packed_weight_bytes, want_memory.packed_weight_bytes) << threads << " threads";
  }
  InferencerConfig config;
  config.model_path = matmul_chain(dir / "bad.onnx", {"bogus_first", "bogus_second"});
  config.threads = 4;
  auto bad = Inferencer::create(config);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("resize_0"), std::string::npos) << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("bogus_first"), std::string::npos) << bad.status().to_string();
}

TEST(Runtime, GraphOutputsWithoutADeclaredShapeAreInferred) {
  // libonnx 1.12's checker demands a shape on main-graph outputs; ONNX Runtime runs such files
  // (shapes come from inference), and so does edgemm. relu([-1, 2]) = [0, 2].
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2});
  b.node("Relu", {"x"}, {"y"}, "relu");
  auto* out = b.model.mutable_graph()->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  InferencerConfig config;
  config.model_path = b.save(testing::temp_dir("shapeless_output") / "m.onnx");
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto y = (*inf)->run({{"x", testutil::f32({2}, {-1, 2})}});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ((*y)[0].shape(), (Shape{2}));
  EXPECT_EQ((*y)[0].data<float>()[0], 0.f);
  EXPECT_EQ((*y)[0].data<float>()[1], 2.f);
}

}  // namespace runtime_test
}  // namespace edgemm
