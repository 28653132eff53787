// Bad input never crashes or hangs: each kind of broken model or input gets a clear error
// with the right code, naming what is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "edgemm/inferencer.h"
#include "model_builder.h"

namespace edgemm {
namespace bad_input_test {  // named for the file: unity batches merge anonymous namespaces

using testing::ModelBuilder;
namespace fs = std::filesystem;

Status load_status(const std::string& path) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  return Inferencer::create(config).status();
}

void expect_error(const Status& s, StatusCode code, const std::string& fragment) {
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << "message lacks '" << fragment << "': " << s.to_string();
}

ModelBuilder relu_model() {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 4});
  b.node("Relu", {"x"}, {"y"}, "relu_1");
  b.output("y", onnx::TensorProto::FLOAT, {1, 4});
  return b;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST(BadModel, EmptyRandomAndTruncatedFiles) {
  auto dir = testing::temp_dir("bad_files");
  write_bytes(dir / "empty.onnx", "");
  expect_error(load_status((dir / "empty.onnx").string()), StatusCode::kInvalidModel, "empty");

  std::mt19937 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    std::string junk(1 + rng() % 4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    write_bytes(dir / "random.onnx", junk);
    EXPECT_EQ(load_status((dir / "random.onnx").string()).code(), StatusCode::kInvalidModel) << "trial " << trial;
  }

  ModelBuilder b = relu_model();
  b.initializer_floats("w", {64}, std::vector<float>(64, 1.0f));
  std::string full;
  b.model.SerializeToString(&full);
  for (size_t cut : {full.size() / 4, full.size() / 2, full.size() - 3}) {
    write_bytes(dir / "truncated.onnx", full.substr(0, cut));
    EXPECT_EQ(load_status((dir / "truncated.onnx").string()).code(), StatusCode::kInvalidModel) << "cut at " << cut;
  }
  expect_error(load_status((dir / "does_not_exist.onnx").string()), StatusCode::kIo, "no such file");
}

onnx::TensorProto* external_weight(ModelBuilder& b, const std::string& location) {
  b.node("Add", {"x", "w"}, {"y"}, "add_1");
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  return t;
}

ModelBuilder add_model_with_external(const std::string& location) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 4});
  external_weight(b, location);
  b.output("y", onnx::TensorProto::FLOAT, {1, 4});
  return b;
}

TEST(BadModel, ExternalData) {
  auto dir = testing::temp_dir("external");
  // Works when the data file is there.
  std::string data(16, '\0');
  const float w[4] = {1, 2, 3, 4};
  std::memcpy(data.data(), w, 16);
  write_bytes(dir / "w.bin", data);
  auto ok = add_model_with_external("w.bin").save(dir / "ok.onnx");
  InferencerConfig config;
  config.model_path = ok;
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto out = (*inf)->run({{"x", Tensor::from_floats({1, 4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].data<float>()[3], 5.0f);

  expect_error(load_status(add_model_with_external("missing.bin").save(dir / "missing.onnx")), StatusCode::kIo,
               "missing.bin");
  expect_error(load_status(add_model_with_external("../w.bin").save(dir / "escape.onnx")), StatusCode::kInvalidModel,
               "..");
  expect_error(load_status(add_model_with_external("/etc/passwd").save(dir / "absolute.onnx")),
               StatusCode::kInvalidModel, "absolute");
  fs::create_symlink("/etc", dir / "link");
  expect_error(load_status(add_model_with_external("link/passwd").save(dir / "symlink.onnx")),
               StatusCode::kInvalidModel, "outside");
  write_bytes(dir / "short.bin", std::string(8, '\0'));
  expect_error(load_status(add_model_with_external("short.bin").save(dir / "short.onnx")), StatusCode::kInvalidModel,
               "w");
}

TEST(BadModel, UnsupportedOpNamesNodeAndOp) {
  auto dir = testing::temp_dir("unsupported");
  ModelBuilder b;
  auto* op = b.model.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  b.input("x", onnx::TensorProto::FLOAT, {1, 4});
  b.node("FancyOp", {"x"}, {"y"}, "fancy_7")->set_domain("com.example");
  b.output("y", onnx::TensorProto::FLOAT, {1, 4});
  expect_error(load_status(b.save(dir / "custom.onnx")), StatusCode::kUnsupported, "FancyOp 'fancy_7'");

  ModelBuilder newer(22);
  newer.input("x", onnx::TensorProto::FLOAT, {1, 4});
  newer.node("Relu", {"x"}, {"y"});
  newer.output("y", onnx::TensorProto::FLOAT, {1, 4});
  expect_error(load_status(newer.save(dir / "opset22.onnx")), StatusCode::kUnsupported, "opset 22");
}

TEST(BadModel, MalformedGraphs) {
  auto dir = testing::temp_dir("malformed");
  ModelBuilder dangling;
  dangling.input("x", onnx::TensorProto::FLOAT, {1, 4});
  dangling.node("Add", {"x", "nowhere"}, {"y"}, "add_dangling");
  dangling.output("y", onnx::TensorProto::FLOAT, {1, 4});
  expect_error(load_status(dangling.save(dir / "dangling.onnx")), StatusCode::kInvalidModel, "nowhere");

  ModelBuilder inconsistent;
  inconsistent.input("x", onnx::TensorProto::FLOAT, {2, 3});
  inconsistent.initializer_floats("w", {2, 3}, {1, 2, 3, 4});  // 4 values for 6 elements
  inconsistent.node("Add", {"x", "w"}, {"y"});
  inconsistent.output("y", onnx::TensorProto::FLOAT, {2, 3});
  expect_error(load_status(inconsistent.save(dir / "inconsistent.onnx")), StatusCode::kInvalidModel, "'w'");

  ModelBuilder huge;
  huge.input("x", onnx::TensorProto::FLOAT, {1});
  auto* t = huge.model.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(int64_t{1} << 40);
  t->add_dims(int64_t{1} << 30);
  huge.node("Add", {"x", "w"}, {"y"});
  huge.output("y", onnx::TensorProto::FLOAT, {-1, -1});
  const Status s = load_status(huge.save(dir / "huge.onnx"));
  EXPECT_TRUE(s.code() == StatusCode::kOutOfMemory || s.code() == StatusCode::kInvalidModel) << s.to_string();

  ModelBuilder cycle;
  cycle.input("x", onnx::TensorProto::FLOAT, {1});
  cycle.node("Add", {"x", "b"}, {"a"});
  cycle.node("Relu", {"a"}, {"b"});
  cycle.output("b", onnx::TensorProto::FLOAT, {1});
  EXPECT_EQ(load_status(cycle.save(dir / "cycle.onnx")).code(), StatusCode::kInvalidModel);
}

TEST(BadModel, ZeroStridesAndBadWindowAttributesAreRefusedBeforeShapeInference) {
  // libonnx 1.12's Conv/pool shape inference divides by the strides unchecked: a zero stride
  // used to kill the process with SIGFPE.
  auto dir = testing::temp_dir("window_attrs");
  struct Case {
    std::string op, attr;
    std::vector<int64_t> values;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"Conv", "strides", {0, 0}, "Conv 'window': attribute strides has 0; strides must be positive"},
      {"Conv", "strides", {0, 1}, "strides must be positive"},
      {"MaxPool", "strides", {0, 0}, "MaxPool 'window': attribute strides has 0"},
      {"AveragePool", "strides", {0, 0}, "AveragePool 'window': attribute strides has 0"},
      {"Conv", "dilations", {1, 0}, "dilations must be positive"},
      {"Conv", "pads", {0, -1, 0, 0}, "pads must not be negative"},
      {"ConvTranspose", "output_padding", {5, 5}, "output_padding[0] is 5; it must be in [0, max(stride, dilation))"},
  };
  for (const Case& c : cases) {
    ModelBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {1, 1, 8, 8});
    b.initializer_floats("w", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
    const bool conv = c.op == "Conv" || c.op == "ConvTranspose";
    auto* node =
        b.node(c.op, conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"}, "window");
    if (!conv) {
      auto* k = node->add_attribute();
      k->set_name("kernel_shape");
      k->set_type(onnx::AttributeProto::INTS);
      k->add_ints(2);
      k->add_ints(2);
    }
    auto* a = node->add_attribute();
    a->set_name(c.attr);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : c.values) a->add_ints(v);
    b.output("y", onnx::TensorProto::FLOAT, {-1, -1, -1, -1});
    expect_error(load_status(b.save(dir / (c.op + "_" + c.attr + ".onnx"))), StatusCode::kInvalidModel, c.fragment);
  }
}

TEST(BadInput, WrongNameRankDtypeAndMissing) {
  auto dir = testing::temp_dir("bad_inputs");
  InferencerConfig config;
  config.model_path = relu_model().save(dir / "relu.onnx");
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  const Tensor good = Tensor::from_floats({1, 4}, {1, -1, 2, -2});
  expect_error((*inf)->run({{"X", good}}).status(), StatusCode::kInvalidArgument, "no input named 'X'");
  expect_error((*inf)->run({{"x", Tensor::from_floats({4}, {1, 2, 3, 4})}}).status(), StatusCode::kInvalidArgument,
               "rank");
  expect_error((*inf)->run({{"x", Tensor::from_floats({1, 5}, {1, 2, 3, 4, 5})}}).status(),
               StatusCode::kInvalidArgument, "axis 1 must be 4");
  expect_error((*inf)->run({{"x", Tensor::from_int64s({1, 4}, {1, 2, 3, 4})}}).status(), StatusCode::kInvalidArgument,
               "dtype int64");
  expect_error((*inf)->run({}).status(), StatusCode::kInvalidArgument, "'x'");
  expect_error((*inf)->run({{"x", good}}, {"nope"}).status(), StatusCode::kInvalidArgument, "'nope'");
  EXPECT_TRUE((*inf)->run({{"x", good}}).has_value());
}

TEST(BadInput, RuntimeValuesOutOfRangeAndAbsurdSizes) {
  auto dir = testing::temp_dir("runtime_values");
  ModelBuilder gather;
  gather.input("data", onnx::TensorProto::FLOAT, {5});
  gather.input("idx", onnx::TensorProto::INT64, {1});
  gather.node("Gather", {"data", "idx"}, {"y"}, "gather_1");
  gather.output("y", onnx::TensorProto::FLOAT, {1});
  InferencerConfig config;
  config.model_path = gather.save(dir / "gather.onnx");
  auto inf = Inferencer::create(config);
  ASSERT_TRUE(inf.has_value()) << inf.status().to_string();
  auto out = (*inf)->run({{"data", Tensor::from_floats({5}, {1, 2, 3, 4, 5})}, {"idx", Tensor::from_int64s({1}, {7})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("gather_1"), std::string::npos) << out.status().to_string();
  EXPECT_NE(out.status().message().find("7"), std::string::npos) << out.status().to_string();

  ModelBuilder big;
  big.input("shape", onnx::TensorProto::INT64, {3});
  big.node("ConstantOfShape", {"shape"}, {"y"}, "fill_1");
  big.output("y", onnx::TensorProto::FLOAT, {-1, -1, -1});
  config.model_path = big.save(dir / "big.onnx");
  auto inf2 = Inferencer::create(config);
  ASSERT_TRUE(inf2.has_value()) << inf2.status().to_string();
  auto huge = (*inf2)->run({{"shape", Tensor::from_int64s({3}, {1 << 20, 1 << 20, 1 << 20})}});
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.status().code(), StatusCode::kOutOfMemory) << huge.status().to_string();
  auto negative = (*inf2)->run({{"shape", Tensor::from_int64s({3}, {2, -3, 4})}});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument) << negative.status().to_string();
}

}  // namespace bad_input_test
}  // namespace edgemm
