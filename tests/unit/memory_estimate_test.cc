// The memory estimate of one run (ir/memory_estimate.h) on a hand-built chain, with every byte
// count worked out by hand, and the shared refusal of check_shapes_fit_memory at the limit
// ($EDGEMM_MAX_MEMORY) and one byte below it; the shapes-only import it uses estimates the same.
#include "edgemm/memory_check.h"
#include "ir/memory_estimate.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "ir/onnx_import.h"
#include "model_builder.h"

namespace edgemm {
namespace memory_estimate_test {  // named for the file: unity batches merge anonymous namespaces

/// x[N,1000] → Relu → a → Mul(a, w[1000]) → c → Relu → y (output).
std::string chain_model(const std::string& name) {
  testing::ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 1000}).output("y", onnx::TensorProto::FLOAT, {-1, 1000});
  b.initializer_floats("w", {1000}, std::vector<float>(1000, 2.0f));
  b.node("Relu", {"x"}, {"a"});
  b.node("Mul", {"a", "w"}, {"c"});
  b.node("Relu", {"c"}, {"y"});
  return b.save(testing::temp_dir(name) / "chain.onnx");
}

/// Sets $EDGEMM_MAX_MEMORY for one scope.
struct MaxMemory {
  explicit MaxMemory(const std::string& bytes) { setenv("EDGEMM_MAX_MEMORY", bytes.c_str(), 1); }
  ~MaxMemory() { unsetenv("EDGEMM_MAX_MEMORY"); }
};

TEST(MemoryEstimate, ChainByHand) {
  ir::ImportOptions options;
  options.fixed_input_shapes = {{"x", {10, 1000}}};
  auto model = ir::import_onnx_file(chain_model("memory_chain"), options);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const ir::MemoryEstimate e = ir::estimate_memory(model->graph);
  EXPECT_EQ(e.weight_bytes, 4000);  // w: 1000 floats
  EXPECT_EQ(e.input_bytes, 40000);  // x: 10 × 1000 floats, held through the run
  // Relu: a (40000) alive; Mul: a and c (80000), then a is freed; Relu: c and y (80000).
  EXPECT_EQ(e.activation_bytes, 80000);
  EXPECT_EQ(e.total(), 124000);
  EXPECT_EQ(e.largest_value, "a");
  EXPECT_EQ(e.largest_bytes, 40000);
}

// check_shapes_fit_memory imports shapes only: the initializers keep dtype and shape, no data,
// and the estimate is the full import's.
TEST(MemoryEstimate, ShapesOnlyImportGivesTheSameEstimateWithoutWeightData) {
  ir::ImportOptions options;
  options.fixed_input_shapes = {{"x", {10, 1000}}};
  const std::string path = chain_model("memory_shapes_only");
  auto full = ir::import_onnx_file(path, options), shapes = ir::import_onnx_file_shapes_only(path, options);
  ASSERT_TRUE(full.has_value() && shapes.has_value());
  const Tensor& w = shapes->graph.initializers.at("w");
  EXPECT_EQ(w.dtype(), DataType::kFloat32);
  EXPECT_EQ(w.shape(), Shape{1000});
  EXPECT_EQ(w.raw_data(), nullptr);
  const ir::MemoryEstimate a = ir::estimate_memory(full->graph), b = ir::estimate_memory(shapes->graph);
  EXPECT_EQ(a.total(), b.total());
  EXPECT_EQ(a.weight_bytes, b.weight_bytes);
  EXPECT_EQ(a.largest_value, b.largest_value);
}

TEST(MemoryEstimate, RefusesShapesAboveTheLimitWithOneMessage) {
  const std::string path = chain_model("memory_limit");
  {
    MaxMemory limit("124000");
    EXPECT_TRUE(check_shapes_fit_memory(path, {{"x", {10, 1000}}}).is_ok());
  }
  MaxMemory limit("123999");
  const Status refused = check_shapes_fit_memory(path, {{"x", {10, 1000}}});
  EXPECT_EQ(refused.code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(refused.message(),
            "input shapes x=[10,1000]: one run needs an estimated 121.1 KiB (weights 3.9 KiB, inputs 39.1 KiB, "
            "intermediate tensors 78.1 KiB at their peak, the largest 'a' 39.1 KiB), more than the 121.1 KiB this "
            "process may use (EDGEMM_MAX_MEMORY); give smaller shapes");
  EXPECT_TRUE(check_shapes_fit_memory(path, {}).is_ok());  // no shapes given: nothing to check
}

}  // namespace memory_estimate_test
}  // namespace edgemm
