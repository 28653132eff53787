#pragma once
// Attribute setters for the NodeProtos that ModelBuilder creates (graph-pass tests).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace edgemm::testing {

/// Adds an INT attribute to `node`.
inline void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

/// Adds a FLOAT attribute to `node`.
inline void set_float(onnx::NodeProto* node, const std::string& name, float value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

/// Adds an INTS attribute to `node`.
inline void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

/// Adds a STRING attribute to `node`.
inline void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

}  // namespace edgemm::testing
