#pragma once
// Field-by-field comparison of two ir::Models (ONNX export round trips): every field the importer
// fills except producer_name, recursing into graph attributes. Tensors compare by dtype, shape
// and bytes; float attributes by bits.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>

#include "ir/graph.h"

namespace edgemm::testutil {

/// Expects equal dtype, shape and bytes; `where` names the tensor in failure messages.
inline void expect_tensors_equal(const Tensor& a, const Tensor& b, const std::string& where) {
  EXPECT_EQ(a.dtype(), b.dtype()) << where;
  EXPECT_EQ(a.shape(), b.shape()) << where;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return;
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()), 0) << where << ": bytes differ";
}

/// Expects equal name, dtype, rank knowledge and dims (values and symbols).
inline void expect_value_infos_equal(const ValueInfo& a, const ValueInfo& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  EXPECT_EQ(a.dtype, b.dtype) << where << " '" << a.name << "'";
  EXPECT_EQ(a.rank_known, b.rank_known) << where << " '" << a.name << "'";
  ASSERT_EQ(a.shape.size(), b.shape.size()) << where << " '" << a.name << "'";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    EXPECT_EQ(a.shape[i].value, b.shape[i].value) << where << " '" << a.name << "' axis " << i;
    EXPECT_EQ(a.shape[i].symbol, b.shape[i].symbol) << where << " '" << a.name << "' axis " << i;
  }
}

inline void expect_graphs_equal(const ir::Graph& a, const ir::Graph& b, const std::string& where);

/// Expects the same kind and value (floats compared bit for bit).
inline void expect_attributes_equal(const ir::Attribute& a, const ir::Attribute& b, const std::string& where) {
  using Kind = ir::Attribute::Kind;
  ASSERT_EQ(a.kind, b.kind) << where;
  auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  switch (a.kind) {
    case Kind::kFloat:
      EXPECT_EQ(bits(a.f), bits(b.f)) << where;
      break;
    case Kind::kInt:
      EXPECT_EQ(a.i, b.i) << where;
      break;
    case Kind::kString:
      EXPECT_EQ(a.s, b.s) << where;
      break;
    case Kind::kTensor:
      expect_tensors_equal(a.t, b.t, where);
      break;
    case Kind::kGraph:
      ASSERT_TRUE(a.g && b.g) << where;
      expect_graphs_equal(*a.g, *b.g, where);
      break;
    case Kind::kFloats:
      ASSERT_EQ(a.floats.size(), b.floats.size()) << where;
      for (size_t i = 0; i < a.floats.size(); ++i)
        EXPECT_EQ(bits(a.floats[i]), bits(b.floats[i])) << where << "[" << i << "]";
      break;
    case Kind::kInts:
      EXPECT_EQ(a.ints, b.ints) << where;
      break;
    case Kind::kStrings:
      EXPECT_EQ(a.strings, b.strings) << where;
      break;
  }
}

/// Expects equal names, nodes (in order), inputs, outputs, value_infos and initializers.
inline void expect_graphs_equal(const ir::Graph& a, const ir::Graph& b, const std::string& where) {
  const std::string at = where + " graph '" + a.name + "'";
  EXPECT_EQ(a.name, b.name) << at;
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << at;
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    const ir::Node& na = a.nodes[k];
    const ir::Node& nb = b.nodes[k];
    const std::string node_at = at + " node #" + std::to_string(k) + " " + na.describe();
    EXPECT_EQ(na.name, nb.name) << node_at;
    EXPECT_EQ(na.op_type, nb.op_type) << node_at;
    EXPECT_EQ(na.domain, nb.domain) << node_at;
    EXPECT_EQ(na.inputs, nb.inputs) << node_at;
    EXPECT_EQ(na.outputs, nb.outputs) << node_at;
    ASSERT_EQ(na.attributes.size(), nb.attributes.size()) << node_at;
    for (const auto& [key, attr] : na.attributes) {
      auto it = nb.attributes.find(key);
      ASSERT_NE(it, nb.attributes.end()) << node_at << " attribute '" << key << "'";
      expect_attributes_equal(attr, it->second, node_at + " attribute '" + key + "'");
    }
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size()) << at;
  for (size_t i = 0; i < a.inputs.size(); ++i) expect_value_infos_equal(a.inputs[i], b.inputs[i], at + " input");
  ASSERT_EQ(a.outputs.size(), b.outputs.size()) << at;
  for (size_t i = 0; i < a.outputs.size(); ++i) expect_value_infos_equal(a.outputs[i], b.outputs[i], at + " output");
  ASSERT_EQ(a.value_infos.size(), b.value_infos.size()) << at;
  for (const auto& [name, info] : a.value_infos) {
    auto it = b.value_infos.find(name);
    ASSERT_NE(it, b.value_infos.end()) << at << " value_info '" << name << "'";
    expect_value_infos_equal(info, it->second, at + " value_info");
  }
  ASSERT_EQ(a.initializers.size(), b.initializers.size()) << at;
  for (const auto& [name, tensor] : a.initializers) {
    auto it = b.initializers.find(name);
    ASSERT_NE(it, b.initializers.end()) << at << " initializer '" << name << "'";
    expect_tensors_equal(tensor, it->second, at + " initializer '" + name + "'");
  }
}

/// Expects equal IR version, opsets and main graph (producer_name is the writer's, not compared).
inline void expect_models_equal(const ir::Model& a, const ir::Model& b) {
  EXPECT_EQ(a.ir_version, b.ir_version);
  EXPECT_EQ(a.opsets, b.opsets);
  expect_graphs_equal(a.graph, b.graph, "main");
}

}  // namespace edgemm::testutil
