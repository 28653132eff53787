// `edgemm convert --fix-shape` and `--simplify`: the checks of the given shapes, and the folding
// of shape arithmetic (Shape → Gather → Unsqueeze → Concat → Reshape, Clip bounds computed from
// shapes) into constants, with edgemm computing the same outputs as for the original.
#include <gtest/gtest.h>

#include "convert_test_util.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"

namespace edgemm {
namespace convert_shapes_test {  // named for the file: unity batches merge anonymous namespaces

using testing::kFloat;
using testing::ModelBuilder;
using testutil::convert_file;
using testutil::max_output_diff;
using testutil::op_count;
using testutil::seeded_f32;

/// x [N, C, 4] → Reshape to [N, C*4] through Shape/Gather/Unsqueeze/Concat, then Clip with an
/// upper bound Cast from the batch size.
std::string dynamic_model(const std::filesystem::path& dir) {
  ModelBuilder b(13);
  b.input("x", kFloat, {-1, 3, 4}).output("y", kFloat, {-1, 12});
  b.initializer_int64s("zero", {}, {0});
  b.initializer_int64s("minus_one", {1}, {-1});
  b.initializer_int64s("axes0", {1}, {0});
  b.node("Shape", {"x"}, {"shape"});
  testing::set_int(b.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  testing::set_int(b.node("Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"flat"});
  testing::set_int(b.node("Cast", {"n"}, {"bound"}), "to", onnx::TensorProto::FLOAT);
  b.node("Clip", {"flat", "", "bound"}, {"y"});
  return b.save(dir / "dynamic.onnx");
}

convert::ConvertOptions fixed(Shape shape, bool simplify = false) {
  convert::ConvertOptions options;
  options.fixed_shapes["x"] = std::move(shape);
  options.simplify = simplify;
  return options;
}

TEST(ConvertShapes, FixedShapeFoldsShapeArithmeticAndClipBounds) {
  const auto dir = testing::temp_dir("convert_fix");
  const std::string path = dynamic_model(dir);
  auto c = convert_file(path, fixed({2, 3, 4}));
  ASSERT_TRUE(c.status.is_ok()) << c.status.message();
  EXPECT_EQ(op_count(c.model, "Shape"), 0);
  EXPECT_EQ(op_count(c.model, "Concat"), 0);
  ASSERT_EQ(c.model.graph.nodes.size(), 2u);  // Reshape and Clip, both reading constants
  for (const auto& node : c.model.graph.nodes) {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (!node.inputs[i].empty()) {
        EXPECT_TRUE(c.model.graph.initializers.count(node.inputs[i])) << node.op_type;
      }
    }
  }
  ASSERT_EQ(c.model.graph.outputs[0].shape.size(), 2u);
  EXPECT_EQ(c.model.graph.outputs[0].shape[0].value, 2);  // the output shape became static too
  EXPECT_LE(max_output_diff(path, c.path, {{"x", seeded_f32({2, 3, 4}, 1, -4, 4)}}), 1e-6);
}

TEST(ConvertShapes, BadFixedShapesAreRefusedWithTheModelsInputs) {
  const auto dir = testing::temp_dir("convert_fix_bad");
  const std::string path = dynamic_model(dir);
  auto unknown = convert_file(path, [] {
    convert::ConvertOptions o;
    o.fixed_shapes["images"] = {1, 3, 4};
    return o;
  }());
  EXPECT_EQ(unknown.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status.message().find("inputs: x [N,3,4]"), std::string::npos) << unknown.status.message();
  auto rank = convert_file(path, fixed({1, 3}));
  EXPECT_EQ(rank.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rank.status.message().find("has rank 3 [N,3,4]"), std::string::npos) << rank.status.message();
  auto zero = convert_file(path, fixed({0, 3, 4}));
  EXPECT_EQ(zero.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status.message().find("at least 1"), std::string::npos) << zero.status.message();
  auto contradiction = convert_file(path, fixed({1, 5, 4}));
  EXPECT_EQ(contradiction.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(contradiction.status.message().find("fixed to 3"), std::string::npos) << contradiction.status.message();
}

TEST(ConvertShapes, SimplifyFoldsBatchNormalizationAndKeepsStandardOps) {
  const auto dir = testing::temp_dir("convert_simplify");
  ModelBuilder b(11);
  b.input("x", kFloat, {1, 2, 4, 4}).output("y", kFloat, {1, 2, 4, 4});
  b.initializer_floats("w", {2, 2, 1, 1}, {1.f, 0.5f, -0.5f, 2.f});
  for (const char* name : {"scale", "bias", "mean", "var"}) {
    b.initializer_floats(name, {2},
                         std::string(name) == "var" ? std::vector<float>{0.5f, 2.f} : std::vector<float>{0.3f, -0.7f});
  }
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
  b.node("Identity", {"bn"}, {"i"});
  b.node("Relu", {"i"}, {"y"});
  const std::string path = b.save(dir / "bn.onnx");
  convert::ConvertOptions options;
  options.simplify = true;
  auto c = convert_file(path, options);
  ASSERT_TRUE(c.status.is_ok()) << c.status.message();
  EXPECT_EQ(op_count(c.model, "BatchNormalization"), 0);
  EXPECT_EQ(op_count(c.model, "Identity"), 0);
  for (const auto& node : c.model.graph.nodes) EXPECT_TRUE(node.domain.empty()) << node.op_type;
  EXPECT_LE(max_output_diff(path, c.path, {{"x", seeded_f32({1, 2, 4, 4}, 2)}}), 1e-5);
}

}  // namespace convert_shapes_test
}  // namespace edgemm
