#pragma once
// Tiny helper for tests: builds ONNX models with libonnx's protobuf classes and saves them.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace edgemm::testing {

/// TensorProto data type of float32 tensors, as model builders pass it.
inline constexpr int kFloat = onnx::TensorProto::FLOAT;

/// A model under construction (default domain, opset 17 unless changed).
struct ModelBuilder {
  onnx::ModelProto model;

  explicit ModelBuilder(int64_t opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("edgemm-tests");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test");
  }

  /// Declares a graph input or output; dims < 0 are symbolic ("N").
  static void declare(onnx::ValueInfoProto* vi, const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param("N");
    }
  }
  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    declare(model.mutable_graph()->add_input(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    declare(model.mutable_graph()->add_output(), name, elem_type, dims);
    return *this;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(model.graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer_floats(const std::string& name, const std::vector<int64_t>& dims,
                                        const std::vector<float>& values) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  onnx::TensorProto* initializer_int64s(const std::string& name, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& values) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return t;
  }
  std::string save(const std::filesystem::path& path) const {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path.string();
  }
};

/// A fresh temporary folder for one test.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("edgemm_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace edgemm::testing
