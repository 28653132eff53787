// ONNX export (src/ir/onnx_export.h): import → export → import round trips on PP-OCRv4 and on
// small graphs covering every attribute kind, dtype, subgraphs and dims; the written files pass
// the ONNX checker (the independent judge of the format) and run bit-identically to the
// originals; external data; refusal of com.edgemm ops; I/O errors.
#include "ir/onnx_export.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "edgemm/inferencer.h"
#include "ir/onnx_import.h"
#include "ir_compare_util.h"
#include "model_builder.h"
#include "onnx_attr_util.h"
#include "pass_test_util.h"
#include "passes/passes.h"
#include "source_dir.h"

namespace edgemm {
namespace onnx_export_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;
using testing::ModelBuilder;

const std::string kModels = std::string(edgemm::testing::source_dir()) + "/models/ppocrv4";
constexpr const char* kDet = "ch_PP-OCRv4_det_infer.onnx";
constexpr const char* kRec = "ch_PP-OCRv4_rec_infer.onnx";
constexpr const char* kCls = "ch_ppocr_mobile_v2.0_cls_infer.onnx";

/// Runs the ONNX checker on a file (with its external data); fails the test on rejection.
void expect_checker_accepts(const std::string& path) {
  try {
    onnx::checker::check_model(path);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the ONNX checker rejected '" << path << "': " << e.what();
  }
}

ir::Model import_file(const std::string& path) {
  auto model = ir::import_onnx_file(path);
  EXPECT_TRUE(model.has_value()) << model.status().to_string();
  return model.has_value() ? std::move(model).value() : ir::Model{};
}

/// Exports `model` to `path`, checks the file and imports it again.
ir::Model export_and_reimport(const ir::Model& model, const fs::path& path, const ir::ExportOptions& options = {}) {
  const Status written = ir::export_onnx_file(model, path.string(), options);
  EXPECT_TRUE(written.is_ok()) << written.to_string();
  expect_checker_accepts(path.string());
  return import_file(path.string());
}

/// The exported bytes parsed back into a ModelProto, to look at fields the IR does not show.
onnx::ModelProto exported_proto(const ir::Model& model) {
  onnx::ModelProto proto;
  auto bytes = ir::export_onnx_bytes(model);
  EXPECT_TRUE(bytes.has_value()) << bytes.status().to_string();
  if (bytes.has_value()) {
    EXPECT_TRUE(proto.ParseFromString(*bytes));
  }
  return proto;
}

std::vector<Tensor> run_file(const std::string& path, bool optimize,
                             const std::vector<std::pair<std::string, Tensor>>& inputs) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = optimize;
  auto inferencer = Inferencer::create(config);
  EXPECT_TRUE(inferencer.has_value()) << path << ": " << inferencer.status().to_string();
  if (!inferencer.has_value()) return {};
  auto outputs = (*inferencer)->run(inputs);
  EXPECT_TRUE(outputs.has_value()) << path << ": " << outputs.status().to_string();
  return outputs.has_value() ? std::move(outputs).value() : std::vector<Tensor>{};
}

/// Runs both files through the same engine configuration (passes off, then on) on `inputs` and
/// expects bit-identical outputs.
void expect_same_outputs(const std::string& original, const std::string& exported,
                         const std::vector<std::pair<std::string, Tensor>>& inputs) {
  for (bool optimize : {false, true}) {
    const std::vector<Tensor> want = run_file(original, optimize, inputs);
    const std::vector<Tensor> got = run_file(exported, optimize, inputs);
    ASSERT_EQ(want.size(), got.size()) << "optimize=" << optimize;
    ASSERT_FALSE(want.empty());
    for (size_t k = 0; k < want.size(); ++k) {
      testutil::expect_tensors_equal(want[k], got[k],
                                     "output " + std::to_string(k) + " optimize=" + std::to_string(optimize));
    }
  }
}

/// PP-OCRv4 round trip: import → export → checker → import equal → same outputs.
void check_ppocr_round_trip(const std::string& file, const Shape& input_shape) {
  const std::string original = kModels + "/" + file;
  if (!fs::exists(original)) GTEST_SKIP() << original << " is missing (scripts/setup.sh fetches it)";
  const fs::path dir = testing::temp_dir("export_" + fs::path(file).stem().string());
  const ir::Model a = import_file(original);
  const fs::path exported = dir / "exported.onnx";
  const ir::Model b = export_and_reimport(a, exported);
  EXPECT_GT(a.graph.nodes.size(), 400u);
  testutil::expect_models_equal(a, b);
  // The file holds exactly the bytes export_onnx_bytes returns (external data off).
  auto bytes = ir::export_onnx_bytes(a);
  ASSERT_TRUE(bytes.has_value());
  std::ifstream in(exported, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), *bytes);
  expect_same_outputs(original, exported.string(), {{"x", testutil::seeded_f32(input_shape, 7)}});
}

TEST(OnnxExport, PpOcrDetRoundTripsAndRunsTheSame) { check_ppocr_round_trip(kDet, {1, 3, 64, 96}); }
TEST(OnnxExport, PpOcrRecRoundTripsAndRunsTheSame) { check_ppocr_round_trip(kRec, {1, 3, 48, 320}); }
TEST(OnnxExport, PpOcrClsRoundTripsAndRunsTheSame) { check_ppocr_round_trip(kCls, {1, 3, 48, 192}); }

// The standard-only passes turn PP-OCRv4 cls's Constant nodes and folded BatchNormalizations into
// initializers: the exported graph keeps them byte for byte, runs like the in-memory rewrite
// would (within float rounding of the original) and exporting again gives the same bytes.
TEST(OnnxExport, StandardPassOutputRoundTripsWithInitializers) {
  const std::string original = kModels + "/" + kCls;
  if (!fs::exists(original)) GTEST_SKIP() << original << " is missing (scripts/setup.sh fetches it)";
  ir::Model a = import_file(original);
  passes::PassReport report;
  passes::fold_constants(a, report);
  passes::eliminate_dead_nodes(a.graph, report);
  passes::simplify_transpose_reshape(a, report);
  passes::fold_conv_affine(a, report);
  ASSERT_GT(a.graph.initializers.size(), 50u);
  const fs::path dir = testing::temp_dir("export_standard_passes");
  const ir::Model b = export_and_reimport(a, dir / "cls_folded.onnx");
  testutil::expect_models_equal(a, b);
  auto first = ir::export_onnx_bytes(a);
  auto second = ir::export_onnx_bytes(b);
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_TRUE(*first == *second) << "exporting the re-imported model changed the bytes";

  const std::vector<std::pair<std::string, Tensor>> inputs = {{"x", testutil::seeded_f32({1, 3, 48, 192}, 3)}};
  const std::vector<Tensor> want = run_file(original, false, inputs);
  const std::vector<Tensor> got = run_file((dir / "cls_folded.onnx").string(), false, inputs);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want[0].shape(), got[0].shape());
  for (int64_t i = 0; i < want[0].element_count(); ++i) {
    EXPECT_NEAR(want[0].data<float>()[i], got[0].data<float>()[i], 1e-5) << i;
  }
}

/// Adds an attribute of `type` named `name` and returns it for the caller to fill.
onnx::AttributeProto* add_attr(onnx::NodeProto* node, const std::string& name,
                               onnx::AttributeProto::AttributeType type) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

/// A subgraph attribute `attr` on `node` with one node, out = op(inputs), out float of `dims`.
onnx::GraphProto* add_branch(onnx::NodeProto* node, const std::string& attr, const std::string& op,
                             const std::vector<std::string>& inputs, const std::string& out,
                             const std::vector<int64_t>& dims = {3}) {
  auto* g = add_attr(node, attr, onnx::AttributeProto::GRAPH)->mutable_g();
  g->set_name(node->name() + "_" + attr);
  auto* n = g->add_node();
  n->set_name(g->name() + "_" + op);
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(out);
  ModelBuilder::declare(g->add_output(), out, onnx::TensorProto::FLOAT, dims);
  return g;
}

// If(c1) { If(c2) { x * two (an initializer of the inner branch) } else { -x } + x } else { x - one },
// then Loop: three times s += x (x from the outer scope).
std::string control_flow_model(const fs::path& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {3});
  b.input("c1", onnx::TensorProto::BOOL, {});
  b.input("c2", onnx::TensorProto::BOOL, {});
  b.initializer_floats("one", {}, {1});
  b.initializer_floats("zeros", {3}, {0, 0, 0});
  b.initializer_int64s("trips", {}, {3});
  auto* outer = b.node("If", {"c1"}, {"branch"}, "outer_if");
  auto* then_g = add_attr(outer, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("outer_then");
  onnx::NodeProto* inner = then_g->add_node();
  inner->set_name("inner_if");
  inner->set_op_type("If");
  inner->add_input("c2");
  inner->add_output("inner_out");
  auto* inner_then = add_branch(inner, "then_branch", "Mul", {"x", "two"}, "it_out");
  auto* two = inner_then->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::FLOAT);
  two->add_float_data(2);
  add_branch(inner, "else_branch", "Neg", {"x"}, "ie_out");
  auto* add = then_g->add_node();
  add->set_name("outer_then_add");
  add->set_op_type("Add");
  add->add_input("inner_out");
  add->add_input("x");
  add->add_output("t_out");
  ModelBuilder::declare(then_g->add_output(), "t_out", onnx::TensorProto::FLOAT, {3});
  add_branch(outer, "else_branch", "Sub", {"x", "one"}, "e_out");

  auto* loop = b.node("Loop", {"trips", "", "zeros"}, {"sum"}, "loop");
  auto* body = add_attr(loop, "body", onnx::AttributeProto::GRAPH)->mutable_g();
  body->set_name("loop_body");
  ModelBuilder::declare(body->add_input(), "i", onnx::TensorProto::INT64, {});
  ModelBuilder::declare(body->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  ModelBuilder::declare(body->add_input(), "s_in", onnx::TensorProto::FLOAT, {3});
  for (auto [op, in0, in1, out] :
       {std::tuple{"Identity", "c_in", "", "c_out"}, std::tuple{"Add", "s_in", "x", "s_out"}}) {
    auto* n = body->add_node();
    n->set_name(std::string("body_") + op);
    n->set_op_type(op);
    n->add_input(in0);
    if (std::strlen(in1) > 0) n->add_input(in1);
    n->add_output(out);
  }
  ModelBuilder::declare(body->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  ModelBuilder::declare(body->add_output(), "s_out", onnx::TensorProto::FLOAT, {3});
  b.output("branch", onnx::TensorProto::FLOAT, {3});
  b.output("sum", onnx::TensorProto::FLOAT, {3});
  return b.save(dir / "control.onnx");
}

Tensor bool_scalar(bool value) {
  Tensor t = std::move(Tensor::create(DataType::kBool, {}).value());
  t.data<uint8_t>()[0] = value;
  return t;
}

TEST(OnnxExport, NestedIfAndLoopRoundTripAndRunTheSame) {
  const fs::path dir = testing::temp_dir("export_control");
  const std::string original = control_flow_model(dir);
  const ir::Model a = import_file(original);
  const ir::Model b = export_and_reimport(a, dir / "exported.onnx");
  testutil::expect_models_equal(a, b);
  ASSERT_FALSE(b.graph.nodes.empty());
  const ir::Graph* then_g = b.graph.nodes[0].attr_graph("then_branch");
  ASSERT_NE(then_g, nullptr);
  ASSERT_FALSE(then_g->nodes.empty());
  const ir::Graph* inner_then = then_g->nodes[0].attr_graph("then_branch");
  ASSERT_NE(inner_then, nullptr);
  EXPECT_EQ(inner_then->initializers.count("two"), 1u);
  const Tensor x = Tensor::from_floats({3}, {1, -2, 3});
  for (bool c1 : {true, false}) {
    for (bool c2 : {true, false}) {
      SCOPED_TRACE("c1=" + std::to_string(c1) + " c2=" + std::to_string(c2));
      expect_same_outputs(original, (dir / "exported.onnx").string(),
                          {{"x", x}, {"c1", bool_scalar(c1)}, {"c2", bool_scalar(c2)}});
    }
  }
  // Hand-computed: c1 and c2 → 2x + x = 3x; loop → 3x.
  const std::vector<Tensor> out = run_file((dir / "exported.onnx").string(), false,
                                           {{"x", x}, {"c1", bool_scalar(true)}, {"c2", bool_scalar(true)}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data<float>()[1], -6);
  EXPECT_EQ(out[1].data<float>()[2], 9);
}

// Every Attribute kind: Constant's value_* forms (float, floats, int, ints, string, strings,
// tensor), LeakyRelu alpha, Transpose perm, Pad mode and If's graphs.
TEST(OnnxExport, EveryAttributeKindRoundTrips) {
  using AP = onnx::AttributeProto;
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3});
  b.input("c", onnx::TensorProto::BOOL, {});
  add_attr(b.node("Constant", {}, {"k_float"}), "value_float", AP::FLOAT)->set_f(-1.25f);
  auto* floats = add_attr(b.node("Constant", {}, {"k_floats"}), "value_floats", AP::FLOATS);
  for (float f : {0.5f, -0.0f, 3.0e-39f, 1e30f}) floats->add_floats(f);
  add_attr(b.node("Constant", {}, {"k_int"}), "value_int", AP::INT)->set_i(-(int64_t{1} << 40));
  auto* ints = add_attr(b.node("Constant", {}, {"k_ints"}), "value_ints", AP::INTS);
  for (int64_t v : {int64_t{1}, int64_t{-2}, INT64_MAX}) ints->add_ints(v);
  add_attr(b.node("Constant", {}, {"k_string"}), "value_string", AP::STRING)->set_s(std::string("a\0b", 3));
  auto* strings = add_attr(b.node("Constant", {}, {"k_strings"}), "value_strings", AP::STRINGS);
  for (const char* s : {"", "bc", "漢字"}) strings->add_strings(s);
  auto* tensor = add_attr(b.node("Constant", {}, {"k_tensor"}), "value", AP::TENSOR)->mutable_t();
  tensor->set_data_type(onnx::TensorProto::FLOAT16);
  tensor->add_dims(2);
  tensor->add_int32_data(0x3c00);
  tensor->add_int32_data(0xfbff);
  testing::set_float(b.node("LeakyRelu", {"x"}, {"leaky"}), "alpha", 0.125f);
  testing::set_ints(b.node("Transpose", {"leaky"}, {"t"}), "perm", {1, 0});
  b.initializer_int64s("pads", {4}, {0, 1, 0, 1});
  add_attr(b.node("Pad", {"t", "pads"}, {"padded"}), "mode", AP::STRING)->set_s("reflect");
  auto* if_node = b.node("If", {"c"}, {"y"}, "choose");
  add_branch(if_node, "then_branch", "Abs", {"x"}, "then_out", {2, 3});
  add_branch(if_node, "else_branch", "Neg", {"x"}, "else_out", {2, 3});
  b.output("padded", onnx::TensorProto::FLOAT, {3, 4});
  b.output("y", onnx::TensorProto::FLOAT, {-1, -1});
  const fs::path dir = testing::temp_dir("export_attributes");
  const ir::Model a = import_file(b.save(dir / "attributes.onnx"));
  std::set<ir::Attribute::Kind> kinds;
  for (const ir::Node& n : a.graph.nodes) {
    for (const auto& [key, attr] : n.attributes) kinds.insert(attr.kind);
  }
  EXPECT_EQ(kinds.size(), 8u) << "the model should use every attribute kind";
  const ir::Model reimported = export_and_reimport(a, dir / "exported.onnx");
  testutil::expect_models_equal(a, reimported);
}

struct DtypeCase {
  DataType dtype;
  Shape shape;
};

/// `tensor` filled with seeded bytes (bool: 0 or 1).
void fill_seeded(Tensor& tensor, uint32_t seed) {
  std::mt19937 rng(seed);
  auto* bytes = static_cast<uint8_t*>(tensor.raw_data());
  for (size_t i = 0; i < tensor.byte_size(); ++i) {
    bytes[i] = static_cast<uint8_t>(tensor.dtype() == DataType::kBool ? rng() % 2 : rng() % 256);
  }
}

// Initializers of every dtype the importer reads, as raw_data, plus scalars, empty tensors and
// the typed fields (int32_data for 8/16-bit types, uint64_data, double_data), which export
// writes as raw_data.
TEST(OnnxExport, EveryDtypeOfInitializerRoundTrips) {
  const std::vector<DataType> dtypes = {DataType::kFloat32, DataType::kUInt8,   DataType::kInt8,   DataType::kUInt16,
                                        DataType::kInt16,   DataType::kInt32,   DataType::kInt64,  DataType::kBool,
                                        DataType::kFloat16, DataType::kFloat64, DataType::kUInt32, DataType::kUInt64,
                                        DataType::kBFloat16};
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2});
  b.node("Identity", {"x"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {2});
  uint32_t seed = 1;
  for (DataType dtype : dtypes) {
    for (const Shape& shape : {Shape{2, 3}, Shape{}, Shape{0, 2}}) {
      Tensor t = std::move(Tensor::create(dtype, shape).value());
      fill_seeded(t, seed++);
      auto* proto = b.model.mutable_graph()->add_initializer();
      proto->set_name(std::string(dtype_name(dtype)) + "_" + std::to_string(shape.size()) + "_" +
                      std::to_string(t.element_count()));
      proto->set_data_type(static_cast<int32_t>(dtype));
      for (int64_t d : shape) proto->add_dims(d);
      proto->set_raw_data(static_cast<const char*>(t.raw_data()), t.byte_size());
    }
  }
  auto* typed = b.model.mutable_graph()->add_initializer();
  typed->set_name("int8_typed");
  typed->set_data_type(onnx::TensorProto::INT8);
  typed->add_dims(3);
  for (int v : {-128, 0, 127}) typed->add_int32_data(v);
  typed = b.model.mutable_graph()->add_initializer();
  typed->set_name("uint32_typed");
  typed->set_data_type(onnx::TensorProto::UINT32);
  typed->add_dims(2);
  for (uint64_t v : {0u, 4294967295u}) typed->add_uint64_data(v);
  typed = b.model.mutable_graph()->add_initializer();
  typed->set_name("double_typed");
  typed->set_data_type(onnx::TensorProto::DOUBLE);
  typed->add_double_data(-0.1);
  const fs::path dir = testing::temp_dir("export_dtypes");
  const ir::Model a = import_file(b.save(dir / "dtypes.onnx"));
  ASSERT_EQ(a.graph.initializers.size(), dtypes.size() * 3 + 3);
  const ir::Model reimported = export_and_reimport(a, dir / "exported.onnx");
  testutil::expect_models_equal(a, reimported);

  // raw_data is little-endian whatever the source field was (onnx.proto, TensorProto.raw_data).
  const onnx::ModelProto proto = exported_proto(a);
  for (const auto& t : proto.graph().initializer()) {
    EXPECT_EQ(
        t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.uint64_data_size() + t.double_data_size(),
        0)
        << t.name();
    if (t.name() == "uint32_typed") {
      EXPECT_EQ(t.raw_data(), std::string("\0\0\0\0\xff\xff\xff\xff", 8));
    }
    if (t.name() == "int8_typed") {
      EXPECT_EQ(t.raw_data(), std::string("\x80\0\x7f", 3));
    }
  }
}

// Inputs and outputs keep static extents (dim_value), symbols (dim_param) and unknown extents
// (neither); a value of unknown rank gets a type without a shape.
TEST(OnnxExport, StaticSymbolicAndUnknownDimsRoundTrip) {
  ModelBuilder b;
  auto* x = b.model.mutable_graph()->add_input();
  ModelBuilder::declare(x, "x", onnx::TensorProto::FLOAT, {1, -1, 4, 5});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("batch");
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->clear_dim_value();
  b.input("s", onnx::TensorProto::INT64, {-1});
  b.node("Relu", {"x"}, {"y"});
  b.node("Reshape", {"y", "s"}, {"r"});
  b.output("y", onnx::TensorProto::FLOAT, {1, -1, -1, 5});
  b.model.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("batch");
  b.output("r", onnx::TensorProto::FLOAT, {-1});
  const fs::path dir = testing::temp_dir("export_dims");
  ir::Model a = import_file(b.save(dir / "dims.onnx"));
  ASSERT_EQ(a.graph.inputs.size(), 2u);
  EXPECT_EQ(a.graph.inputs[0].shape[1].symbol, "batch");
  EXPECT_FALSE(a.graph.inputs[0].shape[2].is_static());
  EXPECT_TRUE(a.graph.inputs[0].shape[2].symbol.empty());
  const ir::Model reimported = export_and_reimport(a, dir / "exported.onnx");
  testutil::expect_models_equal(a, reimported);

  ValueInfo unknown_rank;
  unknown_rank.name = "r";
  unknown_rank.dtype = DataType::kFloat32;
  a.graph.value_infos["r"] = unknown_rank;
  ValueInfo untyped;
  untyped.name = "untyped";
  a.graph.value_infos["untyped"] = untyped;
  const onnx::ModelProto proto = exported_proto(a);
  const auto& dims = proto.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_TRUE(dims[0].has_dim_value() && dims[0].dim_value() == 1);
  EXPECT_TRUE(!dims[1].has_dim_value() && dims[1].dim_param() == "batch");
  EXPECT_TRUE(!dims[2].has_dim_value() && !dims[2].has_dim_param());
  for (const auto& vi : proto.graph().value_info()) {
    if (vi.name() == "r") {
      EXPECT_EQ(vi.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
      EXPECT_FALSE(vi.type().tensor_type().has_shape());
    }
    if (vi.name() == "untyped") {
      EXPECT_FALSE(vi.has_type());
    }
  }
}

// IR ≥ 4: an initializer also listed as a graph input is imported as a constant (the IR keeps no
// trace of the listing) and exported only as an initializer. IR 3 requires the listing.
TEST(OnnxExport, InitializersAreGraphInputsOnlyUpToIrVersion3) {
  for (int64_t ir_version : {8, 3}) {
    SCOPED_TRACE("ir_version " + std::to_string(ir_version));
    ModelBuilder b(8);
    b.model.set_ir_version(ir_version);
    b.input("x", onnx::TensorProto::FLOAT, {2});
    b.input("w", onnx::TensorProto::FLOAT, {2});
    b.initializer_floats("w", {2}, {0.5f, 2});
    b.node("Mul", {"x", "w"}, {"y"});
    b.output("y", onnx::TensorProto::FLOAT, {2});
    const fs::path dir = testing::temp_dir("export_ir" + std::to_string(ir_version));
    const ir::Model a = import_file(b.save(dir / "model.onnx"));
    ASSERT_EQ(a.graph.inputs.size(), 1u);
    const ir::Model reimported = export_and_reimport(a, dir / "exported.onnx");
    testutil::expect_models_equal(a, reimported);
    const onnx::ModelProto proto = exported_proto(a);
    EXPECT_EQ(proto.ir_version(), ir_version);
    EXPECT_EQ(proto.producer_name(), "edgemm");
    EXPECT_EQ(proto.graph().input_size(), ir_version <= 3 ? 2 : 1);
    EXPECT_EQ(proto.graph().initializer_size(), 1);
  }
}

TEST(OnnxExport, BytesImportFromMemory) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {-1, 2});
  b.initializer_floats("w", {2}, {1, 2});
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {-1, 2});
  const fs::path dir = testing::temp_dir("export_bytes");
  ir::Model a = import_file(b.save(dir / "add.onnx"));
  a.ir_version = 0;  // a model built in memory: export writes IR version 8
  auto bytes = ir::export_onnx_bytes(a);
  ASSERT_TRUE(bytes.has_value()) << bytes.status().to_string();
  auto reimported = ir::import_onnx_bytes(*bytes, "");
  ASSERT_TRUE(reimported.has_value()) << reimported.status().to_string();
  EXPECT_EQ(reimported->ir_version, 8);
  a.ir_version = 8;
  testutil::expect_models_equal(a, *reimported);
}

// Tensors of at least the threshold go to <model>.data at 64-byte aligned offsets; the model
// file alone is small; the pair passes the checker, re-imports equal and runs the same.
TEST(OnnxExport, ExternalDataRoundTripsAndRunsTheSame) {
  const std::string original = kModels + "/" + kCls;
  if (!fs::exists(original)) GTEST_SKIP() << original << " is missing (scripts/setup.sh fetches it)";
  const fs::path dir = testing::temp_dir("export_external");
  const ir::Model a = import_file(original);
  const fs::path path = dir / "cls.onnx";
  ir::ExportOptions options;
  options.external_data_threshold = 1024;
  const ir::Model b = export_and_reimport(a, path, options);
  testutil::expect_models_equal(a, b);
  ASSERT_TRUE(fs::exists(dir / "cls.onnx.data"));
  const auto model_size = fs::file_size(path);
  const auto data_size = fs::file_size(dir / "cls.onnx.data");
  EXPECT_LT(model_size * 4, fs::file_size(original)) << model_size << " bytes";
  EXPECT_GT(data_size * 4, fs::file_size(original) * 3) << data_size << " bytes";

  onnx::ModelProto proto;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  int external = 0;
  for (const auto& node : proto.graph().node()) {
    for (const auto& attr : node.attribute()) {
      if (!attr.has_t() || attr.t().data_location() != onnx::TensorProto::EXTERNAL) continue;
      ++external;
      std::map<std::string, std::string> fields;
      for (const auto& kv : attr.t().external_data()) fields[kv.key()] = kv.value();
      EXPECT_EQ(fields["location"], "cls.onnx.data");
      const int64_t offset = std::stoll(fields["offset"]), length = std::stoll(fields["length"]);
      EXPECT_EQ(offset % 64, 0);
      EXPECT_GE(length, 1024);
      EXPECT_LE(offset + length, static_cast<int64_t>(data_size));
    }
  }
  EXPECT_GT(external, 10);
  expect_same_outputs(original, path.string(), {{"x", testutil::seeded_f32({1, 3, 48, 192}, 11)}});

  // Threshold 0 (the default) writes no data file.
  const Status inline_only = ir::export_onnx_file(a, (dir / "inline.onnx").string());
  ASSERT_TRUE(inline_only.is_ok()) << inline_only.to_string();
  EXPECT_FALSE(fs::exists(dir / "inline.onnx.data"));
}

// passes::optimize leaves com.edgemm nodes (FusedConv, ElementwiseChain, Reorder): export refuses
// the first one by name and writes nothing.
TEST(OnnxExport, RefusesEdgemmRuntimeOps) {
  const std::string original = kModels + "/" + kCls;
  if (!fs::exists(original)) GTEST_SKIP() << original << " is missing (scripts/setup.sh fetches it)";
  ir::Model model = import_file(original);
  passes::PassReport report;
  passes::optimize(model, report);
  auto first = std::find_if(model.graph.nodes.begin(), model.graph.nodes.end(),
                            [](const ir::Node& n) { return n.domain == ir::kEdgemmDomain; });
  ASSERT_NE(first, model.graph.nodes.end());
  auto bytes = ir::export_onnx_bytes(model);
  ASSERT_FALSE(bytes.has_value());
  EXPECT_EQ(bytes.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(bytes.status().message().find(first->describe()), std::string::npos) << bytes.status().message();
  const fs::path dir = testing::temp_dir("export_refuse");
  const Status written = ir::export_onnx_file(model, (dir / "optimized.onnx").string());
  EXPECT_EQ(written.code(), StatusCode::kUnsupported);
  EXPECT_FALSE(fs::exists(dir / "optimized.onnx"));
}

TEST(OnnxExport, UnwritablePathIsAnIoErrorNamingIt) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2});
  b.initializer_floats("w", {256}, std::vector<float>(256, 1.f));
  b.node("Identity", {"x"}, {"y"});
  b.output("y", onnx::TensorProto::FLOAT, {2});
  const fs::path dir = testing::temp_dir("export_io");
  const ir::Model model = import_file(b.save(dir / "model.onnx"));
  // A path below a regular file cannot be created, whoever runs the test (root included).
  const std::string bad = (dir / "model.onnx" / "out.onnx").string();
  for (int64_t threshold : {0, 16}) {
    ir::ExportOptions options;
    options.external_data_threshold = threshold;
    const Status st = ir::export_onnx_file(model, bad, options);
    EXPECT_EQ(st.code(), StatusCode::kIo) << st.to_string();
    EXPECT_NE(st.message().find(bad), std::string::npos) << st.message();
  }
  ir::ExportOptions negative;
  negative.external_data_threshold = -1;
  EXPECT_EQ(ir::export_onnx_file(model, (dir / "x.onnx").string(), negative).code(), StatusCode::kInvalidArgument);
}

}  // namespace onnx_export_test
}  // namespace edgemm
