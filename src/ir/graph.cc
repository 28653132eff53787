#include "ir/graph.h"

namespace edgemm::ir {

namespace {

const char* kind_name(Attribute::Kind kind) {
  switch (kind) {
    case Attribute::Kind::kFloat: return "float";
    case Attribute::Kind::kInt: return "int";
    case Attribute::Kind::kString: return "string";
    case Attribute::Kind::kTensor: return "tensor";
    case Attribute::Kind::kGraph: return "graph";
    case Attribute::Kind::kFloats: return "floats";
    case Attribute::Kind::kInts: return "ints";
    case Attribute::Kind::kStrings: return "strings";
  }
  return "unknown";
}

Status wrong_kind(const Node& node, const std::string& key, Attribute::Kind want, Attribute::Kind got) {
  return node_error(node, StatusCode::kInvalidModel,
                    "attribute '" + key + "' should be " + kind_name(want) + " but is " + kind_name(got));
}

}  // namespace

Expected<int64_t> Node::attr_int(const std::string& key, int64_t fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::kInt) return wrong_kind(*this, key, Attribute::Kind::kInt, it->second.kind);
  return it->second.i;
}

Expected<float> Node::attr_float(const std::string& key, float fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (it->second.kind == Attribute::Kind::kInt) return static_cast<float>(it->second.i);
  if (it->second.kind != Attribute::Kind::kFloat) {
    return wrong_kind(*this, key, Attribute::Kind::kFloat, it->second.kind);
  }
  return it->second.f;
}

Expected<std::string> Node::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::kString) {
    return wrong_kind(*this, key, Attribute::Kind::kString, it->second.kind);
  }
  return it->second.s;
}

Expected<std::vector<int64_t>> Node::attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::kInts) return wrong_kind(*this, key, Attribute::Kind::kInts, it->second.kind);
  return it->second.ints;
}

Expected<std::vector<float>> Node::attr_floats(const std::string& key, std::vector<float> fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::kFloats) {
    return wrong_kind(*this, key, Attribute::Kind::kFloats, it->second.kind);
  }
  return it->second.floats;
}

const Tensor* Node::attr_tensor(const std::string& key) const {
  auto it = attributes.find(key);
  if (it == attributes.end() || it->second.kind != Attribute::Kind::kTensor) return nullptr;
  return &it->second.t;
}

const Graph* Node::attr_graph(const std::string& key) const {
  auto it = attributes.find(key);
  if (it == attributes.end() || it->second.kind != Attribute::Kind::kGraph) return nullptr;
  return it->second.g.get();
}

std::string Node::describe() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  if (name.empty()) return op + " (unnamed, first output '" + (outputs.empty() ? "" : outputs[0]) + "')";
  return op + " '" + name + "'";
}

int64_t Model::opset(const std::string& domain) const {
  const std::string key = domain == "ai.onnx" ? "" : domain;
  auto it = opsets.find(key);
  return it == opsets.end() ? 0 : it->second;
}

Status node_error(const Node& node, StatusCode code, const std::string& message) {
  return Status(code, node.describe() + ": " + message);
}

std::unordered_set<std::string> defined_names(const Graph& graph) {
  std::unordered_set<std::string> names;
  for (const auto& in : graph.inputs) names.insert(in.name);
  for (const auto& [name, t] : graph.initializers) names.insert(name);
  for (const auto& node : graph.nodes) {
    for (const auto& out : node.outputs) {
      if (!out.empty()) names.insert(out);
    }
  }
  return names;
}

std::unordered_set<std::string> node_free_variables(const Node& node) {
  std::unordered_set<std::string> names;
  for (const auto& [key, attr] : node.attributes) {
    if (attr.kind == Attribute::Kind::kGraph && attr.g) {
      auto inner = free_variables(*attr.g);
      names.insert(inner.begin(), inner.end());
    }
  }
  return names;
}

std::unordered_set<std::string> free_variables(const Graph& graph) {
  const auto defined = defined_names(graph);
  std::unordered_set<std::string> free;
  for (const auto& node : graph.nodes) {
    for (const auto& in : node.inputs) {
      if (!in.empty() && !defined.count(in)) free.insert(in);
    }
    for (const auto& name : node_free_variables(node)) {
      if (!defined.count(name)) free.insert(name);
    }
  }
  for (const auto& out : graph.outputs) {
    if (!defined.count(out.name)) free.insert(out.name);
  }
  return free;
}

}  // namespace edgemm::ir
