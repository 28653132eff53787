#pragma once
/// \file graph.h
/// edgemm's in-memory graph (IR): nodes referring to values by name, as in ONNX's GraphProto
/// (onnx.proto "GraphProto", "NodeProto", "AttributeProto"). Produced by the ONNX importer,
/// rewritten by passes, compiled by the runtime.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/value_info.h"

namespace edgemm::ir {

struct Graph;

/// Domain of the operators edgemm's graph passes create (FusedConv, ElementwiseChain, ...). They
/// exist only inside the runtime: `edgemm convert` never writes them.
inline constexpr const char* kEdgemmDomain = "com.edgemm";

/// One node attribute (AttributeProto); only the member matching `kind` is meaningful.
struct Attribute {
  enum class Kind { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings };
  Kind kind = Kind::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

/// A node (NodeProto). Absent optional inputs/outputs are empty strings, as in ONNX.
struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  ///< "" for the default ONNX domain ("ai.onnx")
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;

  bool has_attr(const std::string& key) const { return attributes.count(key) != 0; }
  /// Typed attribute reads with a default for absent attributes. A present attribute of the
  /// wrong kind is an InvalidModel error naming the node and attribute.
  Expected<int64_t> attr_int(const std::string& key, int64_t fallback) const;
  Expected<float> attr_float(const std::string& key, float fallback) const;
  Expected<std::string> attr_string(const std::string& key, const std::string& fallback) const;
  Expected<std::vector<int64_t>> attr_ints(const std::string& key,
                                           std::vector<int64_t> fallback = {}) const;
  Expected<std::vector<float>> attr_floats(const std::string& key,
                                           std::vector<float> fallback = {}) const;
  /// Tensor attribute, or nullptr when absent.
  const Tensor* attr_tensor(const std::string& key) const;
  /// Graph attribute (If branches, Loop/Scan body), or nullptr when absent.
  const Graph* attr_graph(const std::string& key) const;

  /// "Conv 'conv_12'" (or "Conv (node #k)" style when unnamed) for error messages.
  std::string describe() const;
};

/// A graph (GraphProto). Nodes are stored in file order; the runtime sorts them.
struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;   ///< excludes initializers listed as inputs
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;
  /// Types and shapes known for intermediate values (from ONNX shape inference).
  std::map<std::string, ValueInfo> value_infos;
};

/// A model (ModelProto): the main graph plus the opset of each domain it imports.
struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::map<std::string, int64_t> opsets;  ///< domain ("" = ai.onnx) → version
  Graph graph;
  /// Files the tensors' external data was read from at import (canonical paths, each once; empty
  /// for a self-contained model). Tools that write files check against these.
  std::vector<std::string> external_data_files;

  /// Opset of `domain` ("" and "ai.onnx" are the same), or 0 when not imported.
  int64_t opset(const std::string& domain) const;
};

/// Builds the error message prefix used everywhere for node errors: "<OpType> '<name>': ".
Status node_error(const Node& node, StatusCode code, const std::string& message);

/// Names defined inside `graph`: its inputs, initializers and node outputs.
std::unordered_set<std::string> defined_names(const Graph& graph);

/// Names a graph reads but does not define (its outer-scope references), recursively through
/// nested subgraphs.
std::unordered_set<std::string> free_variables(const Graph& graph);

/// The free variables of every subgraph attribute of `node` (If/Loop/Scan bodies), together.
std::unordered_set<std::string> node_free_variables(const Node& node);

}  // namespace edgemm::ir
