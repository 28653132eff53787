// edgemm::OnnxModel (edgemm/onnx_model.h) and the tool-side functions on it (edgemm/tools/*.h),
// through the public headers only. Models are built with libonnx's protobuf classes
// (model_builder.h), and what is saved is read back with those classes and judged by the ONNX
// checker: both independent of edgemm's importer and exporter. Expected values are hand-computed
// from the models' construction.
#include "edgemm/onnx_model.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "edgemm/tools/convert.h"
#include "edgemm/tools/inspect.h"
#include "edgemm/tools/quantize.h"
#include "model_builder.h"

namespace edgemm {
namespace onnx_model_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;
using testing::ModelBuilder;

/// x [N, 3] → MatMul with w [3, 2] (an initializer) → y → Relu → z [N, 2], opset 17.
ModelBuilder matmul_relu() {
  ModelBuilder b;
  b.input("x", testing::kFloat, {-1, 3});
  b.initializer_floats("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.node("Relu", {"y"}, {"z"}, "relu");
  b.output("z", testing::kFloat, {-1, 2});
  return b;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

onnx::ModelProto parse(const fs::path& path) {
  onnx::ModelProto proto;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(proto.ParseFromIstream(&in)) << path;
  return proto;
}

const onnx::TensorProto* find_initializer(const onnx::ModelProto& proto, const std::string& name) {
  for (const auto& t : proto.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

TEST(OnnxModel, LoadsWhatTheFileDeclares) {
  const fs::path dir = testing::temp_dir("onnx_model_load");
  const auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_EQ(model->ir_version(), 8);
  EXPECT_EQ(model->producer_name(), "edgemm-tests");
  EXPECT_EQ(model->opset(), 17);
  EXPECT_EQ(model->opset("ai.onnx"), 17);
  EXPECT_EQ(model->opset("com.microsoft"), 0);
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].dtype, DataType::kFloat32);
  ASSERT_EQ(model->inputs()[0].shape.size(), 2u);
  EXPECT_FALSE(model->inputs()[0].shape[0].is_static());
  EXPECT_EQ(model->inputs()[0].shape[1].value, 3);
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "z");
  EXPECT_EQ(model->node_count(), 2u);
  EXPECT_EQ(model->op_histogram(), (std::map<std::string, int>{{"MatMul", 1}, {"Relu", 1}}));
  EXPECT_TRUE(model->external_data_files().empty());
}

TEST(OnnxModel, FixedInputShapesReachInferredOutputs) {
  const fs::path dir = testing::temp_dir("onnx_model_fixed");
  OnnxLoadOptions options;
  options.fixed_input_shapes = {{"x", {4, 3}}};
  const auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"), options);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_EQ(dims_to_string(model->inputs()[0].shape), "[4,3]");
  EXPECT_EQ(dims_to_string(model->outputs()[0].shape), "[4,2]");  // [4, 3] · [3, 2]
}

TEST(OnnxModel, FixedExtentsBelowOneAreRefused) {
  const fs::path dir = testing::temp_dir("onnx_model_bad_extent");
  const std::string path = matmul_relu().save(dir / "m.onnx");
  for (const int64_t extent : {int64_t{0}, int64_t{-5}}) {
    OnnxLoadOptions options;
    options.fixed_input_shapes["x"] = {extent, 3};
    const auto model = OnnxModel::load(path, options);
    ASSERT_FALSE(model.has_value()) << extent;
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(model.status().message().find("axis 0 is " + std::to_string(extent)), std::string::npos)
        << model.status().message();
  }
}

TEST(OnnxModel, QuantizationErrorOfNaNOutputsIsTheWorst) {
  // Identical finite outputs: no error. A NaN (even on both sides) or an infinity only one side
  // has: no finite measure of agreement, so the worst (sqnr −inf, cosine 0), never +inf.
  const auto outputs = [](std::vector<float> v) {
    return std::vector<std::vector<Tensor>>{{Tensor::from_floats({static_cast<int64_t>(v.size())}, v)}};
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(quant::output_error(outputs({1, 2}), outputs({1, 2})).sqnr_db, inf);
  for (const auto& [a, b] : std::vector<std::pair<std::vector<float>, std::vector<float>>>{
           {{nan, nan}, {nan, nan}}, {{1, 2}, {1, nan}}, {{1, inf}, {1, 2}}}) {
    const quant::OutputError e = quant::output_error(outputs(a), outputs(b));
    EXPECT_EQ(e.sqnr_db, -inf);
    EXPECT_EQ(e.cosine, 0.0);
  }
  // Both +inf at the same place agree; the finite rest decides: 1 vs 1.1 → noise 0.01, signal 1.
  EXPECT_NEAR(quant::output_error(outputs({1, inf}), outputs({1.1f, inf})).sqnr_db, 20.0, 1e-3);
}

TEST(OnnxModel, OpHistogramNamesOtherDomains) {
  ModelBuilder b;
  auto* ms = b.model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.input("x", testing::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  b.node("FastGelu", {"y"}, {"z"})->set_domain("com.microsoft");
  b.output("z", testing::kFloat, {2});
  const fs::path dir = testing::temp_dir("onnx_model_domains");
  OnnxLoadOptions options;
  options.run_checker = false;
  options.infer_shapes = false;
  const auto model = OnnxModel::load(b.save(dir / "m.onnx"), options);
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_EQ(model->opset("com.microsoft"), 1);
  EXPECT_EQ(model->op_histogram(), (std::map<std::string, int>{{"Relu", 1}, {"com.microsoft.FastGelu", 1}}));
}

TEST(OnnxModel, SaveRoundTripsThroughTheOnnxChecker) {
  const fs::path dir = testing::temp_dir("onnx_model_save");
  auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const fs::path out = dir / "saved.onnx";
  ASSERT_TRUE(model->save(out.string()).is_ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  const onnx::ModelProto proto = parse(out);
  ASSERT_EQ(proto.graph().node_size(), 2);
  EXPECT_EQ(proto.graph().node(0).op_type(), "MatMul");
  EXPECT_EQ(proto.graph().node(1).op_type(), "Relu");
  const onnx::TensorProto* w = find_initializer(proto, "w");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->raw_data().size(), 6 * sizeof(float));
  float values[6];
  std::memcpy(values, w->raw_data().data(), sizeof values);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(values[i], static_cast<float>(i + 1));

  const auto again = OnnxModel::load(out.string());
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  EXPECT_EQ(again->op_histogram(), model->op_histogram());
  EXPECT_EQ(again->inputs()[0].name, "x");
}

TEST(OnnxModel, ExternalDataGoesBesideTheModel) {
  const fs::path dir = testing::temp_dir("onnx_model_external");
  auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  OnnxSaveOptions options;
  options.external_data_threshold = 16;  // w holds 24 bytes
  const fs::path out = dir / "big.onnx";
  ASSERT_TRUE(model->save(out.string(), options).is_ok());
  ASSERT_TRUE(fs::exists(dir / "big.onnx.data"));
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  const onnx::ModelProto saved = parse(out);
  const onnx::TensorProto* w = find_initializer(saved, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data_location(), onnx::TensorProto::EXTERNAL);
  const auto again = OnnxModel::load(out.string());
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  ASSERT_EQ(again->external_data_files().size(), 1u);
  EXPECT_EQ(fs::path(again->external_data_files()[0]).filename(), "big.onnx.data");
}

TEST(OnnxModel, CloneIsIndependent) {
  const fs::path dir = testing::temp_dir("onnx_model_clone");
  auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  OnnxModel copy = model->clone();
  convert::ConvertOptions options;
  options.target_opset = 13;
  ASSERT_TRUE(convert::convert_model(copy, options).has_value());
  EXPECT_EQ(copy.opset(), 13);
  EXPECT_EQ(model->opset(), 17);
}

TEST(OnnxModel, MissingFileIsAnIoErrorNamingIt) {
  const fs::path path = testing::temp_dir("onnx_model_missing") / "absent.onnx";
  const auto model = OnnxModel::load(path.string());
  ASSERT_FALSE(model.has_value());
  EXPECT_EQ(model.status().code(), StatusCode::kIo);
  EXPECT_NE(model.status().message().find(path.string()), std::string::npos) << model.status().message();
}

TEST(OnnxModel, CorruptOrTruncatedFileIsAnInvalidModel) {
  const fs::path dir = testing::temp_dir("onnx_model_corrupt");
  const std::string bytes = read_bytes(matmul_relu().save(dir / "m.onnx"));
  ASSERT_GT(bytes.size(), 40u);
  const std::vector<std::string> broken = {"this is not a protobuf message \xff\xff\xff\xff",
                                           bytes.substr(0, bytes.size() / 2), bytes.substr(0, bytes.size() - 3)};
  for (size_t i = 0; i < broken.size(); ++i) {
    const fs::path path = dir / ("broken" + std::to_string(i) + ".onnx");
    std::ofstream(path, std::ios::binary) << broken[i];
    const auto model = OnnxModel::load(path.string());
    ASSERT_FALSE(model.has_value()) << path;
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidModel) << model.status().to_string();
  }
}

TEST(OnnxModel, FailedSaveLeavesThePreviousFiles) {
  const fs::path dir = testing::temp_dir("onnx_model_whole");
  auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const fs::path out = dir / "out.onnx";
  std::ofstream(out, std::ios::binary) << "previous";
  // The data file cannot be written where a folder stands, so the model must not be replaced either.
  fs::create_directory(dir / "out.onnx.data");
  OnnxSaveOptions options;
  options.external_data_threshold = 16;
  const Status saved = model->save(out.string(), options);
  EXPECT_EQ(saved.code(), StatusCode::kIo) << saved.to_string();
  EXPECT_EQ(read_bytes(out), "previous");
  // A refused option writes nothing either.
  options.external_data_threshold = -1;
  EXPECT_EQ(model->save(out.string(), options).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read_bytes(out), "previous");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"m.onnx", "out.onnx", "out.onnx.data"}));  // no temporaries left
}

TEST(ToolsConvert, ChecksShapesAndConvertsOpsets) {
  const fs::path dir = testing::temp_dir("tools_convert");
  auto model = OnnxModel::load(matmul_relu().save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  EXPECT_TRUE(convert::validate_fixed_shapes(*model, {{"x", {4, 3}}}).is_ok());
  const Status unknown = convert::validate_fixed_shapes(*model, {{"y", {4, 3}}});
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("'y'"), std::string::npos) << unknown.message();
  EXPECT_EQ(convert::validate_fixed_shapes(*model, {{"x", {4}}}).code(), StatusCode::kInvalidArgument);     // rank 2
  EXPECT_EQ(convert::validate_fixed_shapes(*model, {{"x", {4, 5}}}).code(), StatusCode::kInvalidArgument);  // dim 3
  EXPECT_EQ(convert::check_target_opset(convert::kMinOpset - 1).code(), StatusCode::kUnsupported);

  convert::ConvertOptions options;
  options.target_opset = 13;
  const auto report = convert::convert_model(*model, options);
  ASSERT_TRUE(report.has_value()) << report.status().to_string();
  EXPECT_EQ(report->source_opset, 17);
  EXPECT_EQ(report->target_opset, 13);
  EXPECT_EQ(report->nodes_before, 2);
  EXPECT_EQ(report->nodes_after, 2);  // MatMul and Relu are the same ops at 13
  const fs::path out = dir / "opset13.onnx";
  ASSERT_TRUE(model->save(out.string()).is_ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  const onnx::ModelProto proto = parse(out);
  ASSERT_EQ(proto.opset_import_size(), 1);
  EXPECT_EQ(proto.opset_import(0).version(), 13);
}

TEST(ToolsQuantize, StoresWeightsAsFloat16) {
  ModelBuilder b;
  b.input("x", testing::kFloat, {1, 16});
  // 16 elements (the default minimum): exact halves, and 70000, beyond float16's largest 65504.
  std::vector<float> w(16, 0.5f);
  w[1] = -2.0f;
  w[2] = 1024.0f;
  w[3] = 70000.0f;
  b.initializer_floats("w", {16, 1}, w);
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y", testing::kFloat, {1, 1});
  const fs::path dir = testing::temp_dir("tools_fp16");
  auto model = OnnxModel::load(b.save(dir / "m.onnx"));
  ASSERT_TRUE(model.has_value()) << model.status().to_string();
  const auto converted = quant::store_weights_fp16(*model);
  ASSERT_TRUE(converted.has_value()) << converted.status().to_string();
  EXPECT_EQ(*converted, 1);
  const fs::path out = dir / "fp16.onnx";
  ASSERT_TRUE(model->save(out.string()).is_ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  const onnx::ModelProto proto = parse(out);
  const onnx::TensorProto* half = nullptr;
  for (const auto& t : proto.graph().initializer()) {
    if (t.data_type() == onnx::TensorProto::FLOAT16) half = &t;
  }
  ASSERT_NE(half, nullptr);
  ASSERT_EQ(half->raw_data().size(), 16 * sizeof(uint16_t));
  uint16_t bits[16];
  std::memcpy(bits, half->raw_data().data(), sizeof bits);
  // IEEE 754 binary16: 0.5 = 0x3800, -2 = 0xC000, 1024 = 0x6400, 65504 = 0x7BFF.
  EXPECT_EQ(bits[0], 0x3800);
  EXPECT_EQ(bits[1], 0xC000);
  EXPECT_EQ(bits[2], 0x6400);
  EXPECT_EQ(bits[3], 0x7BFF);
  int casts = 0;
  for (const auto& n : proto.graph().node()) casts += n.op_type() == "Cast";
  EXPECT_EQ(casts, 1);
}

TEST(ToolsInspect, CountsParametersFlopsAndMemory) {
  const fs::path dir = testing::temp_dir("tools_inspect");
  const std::string path = matmul_relu().save(dir / "m.onnx");
  passes::InspectOptions options;
  options.shapes = {{"x", {4, 3}}};
  const auto summary = passes::inspect_model(path, options);
  ASSERT_TRUE(summary.has_value()) << summary.status().to_string();
  EXPECT_EQ(summary->nodes, 2u);
  EXPECT_EQ(summary->parameters, 6);
  EXPECT_EQ(summary->parameter_bytes, 24);
  EXPECT_TRUE(summary->shapes_known);
  // MatMul: 2 × |Y| × K = 2 × 8 × 3; Relu: |Y| = 8 (edgemm/model_estimates.h).
  EXPECT_EQ(summary->flops.by_op.at("MatMul"), 48);
  EXPECT_EQ(summary->flops.by_op.at("Relu"), 8);
  EXPECT_EQ(summary->flops.total, 56);
  EXPECT_EQ(summary->memory.weight_bytes, 24);
  EXPECT_EQ(summary->memory.input_bytes, 4 * 3 * 4);
  EXPECT_FALSE(summary->optimized.has_value());
  const auto missing = passes::inspect_model((dir / "absent.onnx").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
}

}  // namespace onnx_model_test
}  // namespace edgemm
