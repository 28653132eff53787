// Import of ai.onnx opset 18–21 models (src/ir/libonnx_view.h, src/ir/onnx_next_schemas.h):
// shapes inferred through the opset-18+ schemas edgemm registers with libonnx 1.12, nodes kept
// in ai.onnx at the model's opset, and the spec's errors. Expected shapes are hand-computed
// from ONNX Operators.md.

#include <gtest/gtest.h>

#include <string>

#include "ir/onnx_import.h"
#include "model_builder.h"

namespace edgemm {
namespace onnx_next_import_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;

std::string bytes_of(const ModelBuilder& b) {
  std::string bytes;
  b.model.SerializeToString(&bytes);
  return bytes;
}

/// The inferred shape of value `name` as "[2,1,5]".
std::string shape_of(const ir::Model& model, const std::string& name) {
  const ValueInfo* info = nullptr;
  for (const auto& out : model.graph.outputs) {
    if (out.name == name) info = &out;
  }
  const auto it = model.graph.value_infos.find(name);
  if (info == nullptr && it != model.graph.value_infos.end()) info = &it->second;
  if (info == nullptr) return "<none>";
  std::string text = "[";
  for (size_t i = 0; i < info->shape.size(); ++i) {
    text += (i ? "," : "") + (info->shape[i].is_static() ? std::to_string(info->shape[i].value) : "?");
  }
  return text + "]";
}

TEST(OnnxNextImport, Opset21ModelInfersShapesThroughNewAndChangedOps) {
  ModelBuilder b(21);
  b.model.set_ir_version(10);
  b.input("x", onnx::TensorProto::FLOAT, {2, 4, 6, 5});
  b.initializer_floats("gamma", {4}, {1, 1, 1, 1});
  b.initializer_floats("beta", {4}, {0, 0, 0, 0});
  b.initializer_int64s("axes", {1}, {-1});
  b.initializer_int64s("pads", {2}, {1, 2});
  b.initializer_int64s("pad_axes", {1}, {2});
  auto* norm = b.node("GroupNormalization", {"x", "gamma", "beta"}, {"n"});
  auto* groups = norm->add_attribute();
  groups->set_name("num_groups");
  groups->set_type(onnx::AttributeProto::INT);
  groups->set_i(2);
  b.node("Gelu", {"n"}, {"g"});
  b.node("ReduceMean", {"g", "axes"}, {"m"});           // [2,4,6,1]
  b.node("Pad", {"m", "pads", "", "pad_axes"}, {"p"});  // axis 2: 6 + 1 + 2 = 9
  auto* split = b.node("Split", {"p"}, {"s0", "s1"});
  auto* axis = split->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(2);
  auto* num = split->add_attribute();
  num->set_name("num_outputs");
  num->set_type(onnx::AttributeProto::INT);
  num->set_i(2);  // 9 -> 5 and 4
  b.output("s0", onnx::TensorProto::FLOAT, {});
  b.output("s1", onnx::TensorProto::FLOAT, {});
  b.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  b.model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->clear_shape();

  auto model = ir::import_onnx_bytes(bytes_of(b), "");
  ASSERT_TRUE(model.has_value()) << model.status().message();
  EXPECT_EQ(model->opset(""), 21);
  EXPECT_EQ(model->opsets.count("edgemm.ai.onnx.next"), 0u);
  for (const auto& node : model->graph.nodes) EXPECT_EQ(node.domain, "") << node.op_type;
  EXPECT_EQ(shape_of(*model, "m"), "[2,4,6,1]");
  EXPECT_EQ(shape_of(*model, "p"), "[2,4,9,1]");
  EXPECT_EQ(shape_of(*model, "s0"), "[2,4,5,1]");
  EXPECT_EQ(shape_of(*model, "s1"), "[2,4,4,1]");
}

// ImageDecoder-20 is an ONNX op edgemm has no schema or kernel for: it loads (and fails at run
// time by name); an op ONNX does not define is an invalid model, as at opset 17.
TEST(OnnxNextImport, UnknownOpsAreInvalidButImageDecoderLoads) {
  for (const std::string op : {"ImageDecoder", "FooBarOp"}) {
    ModelBuilder b(20);
    b.model.set_ir_version(9);
    b.input("encoded", onnx::TensorProto::UINT8, {16});
    b.node(op, {"encoded"}, {"image"});
    b.output("image", onnx::TensorProto::UINT8, {});
    b.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    auto model = ir::import_onnx_bytes(bytes_of(b), "");
    if (op == "ImageDecoder") {
      ASSERT_TRUE(model.has_value()) << model.status().message();
      EXPECT_EQ(model->graph.nodes[0].domain, "");
    } else {
      ASSERT_FALSE(model.has_value());
      EXPECT_EQ(model.status().code(), StatusCode::kInvalidModel);
      EXPECT_NE(model.status().message().find("FooBarOp"), std::string::npos) << model.status().message();
    }
  }
}

TEST(OnnxNextImport, OpsetAbove21IsUnsupported) {
  ModelBuilder newer(22);
  newer.input("x", onnx::TensorProto::FLOAT, {1, 4});
  newer.node("Relu", {"x"}, {"y"});
  newer.output("y", onnx::TensorProto::FLOAT, {1, 4});
  auto too_new = ir::import_onnx_bytes(bytes_of(newer), "");
  ASSERT_FALSE(too_new.has_value());
  EXPECT_EQ(too_new.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(too_new.status().message().find("up to 21"), std::string::npos) << too_new.status().message();
}

}  // namespace onnx_next_import_test
}  // namespace edgemm
