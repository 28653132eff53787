/// \file partition.cc
/// partition_graph and the BackendPartition kernel (see partition.h).

#include "backends/partition.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "passes/graph_view.h"
#include "passes/passes.h"

namespace edgemm::backends {
namespace {

/// Initializers up to this many elements keep their values for shape inference (shapes, axes,
/// scales); larger ones (weights) become typed graph inputs.
constexpr int64_t kInferenceConstantElements = 64;
/// Most simplify / shape inference rounds of simplify_for_backend (PP-OCRv4 rec needs 3).
constexpr int kMaxSimplifyRounds = 8;

bool has_subgraph(const ir::Node& node) {
  for (const auto& [key, attr] : node.attributes) {
    if (attr.kind == ir::Attribute::Kind::kGraph) return true;
  }
  return false;
}

/// The ValueInfo the graph declares or inferred for `name` (dtype undefined, rank unknown when
/// nothing is known).
ValueInfo info_of(const ir::Graph& graph, const std::string& name) {
  for (const auto* list : {&graph.inputs, &graph.outputs}) {
    for (const ValueInfo& info : *list) {
      if (info.name == name) return info;
    }
  }
  if (auto it = graph.value_infos.find(name); it != graph.value_infos.end()) {
    ValueInfo info = it->second;
    info.name = name;
    return info;
  }
  ValueInfo unknown;
  unknown.name = name;
  return unknown;
}

/// The standalone model of graph.nodes[members] (members in topological order).
ir::Model extract(const ir::Model& model, const std::vector<int>& members) {
  const ir::Graph& graph = model.graph;
  ir::Model part;
  part.ir_version = model.ir_version;
  part.producer_name = model.producer_name;
  part.opsets = model.opsets;
  part.opsets.erase(ir::kEdgemmDomain);
  std::unordered_set<std::string> produced;
  std::set<int> member_set(members.begin(), members.end());
  for (int n : members) {
    const ir::Node& node = graph.nodes[n];
    part.graph.nodes.push_back(node);
    for (const auto& out : node.outputs) {
      if (!out.empty()) produced.insert(out);
    }
  }
  std::unordered_set<std::string> seen_inputs;
  for (int n : members) {
    for (const auto& in : graph.nodes[n].inputs) {
      if (in.empty() || produced.count(in) || !seen_inputs.insert(in).second) continue;
      if (auto it = graph.initializers.find(in); it != graph.initializers.end()) {
        part.graph.initializers.emplace(in, it->second);
      } else {
        part.graph.inputs.push_back(info_of(graph, in));
      }
    }
  }
  // Outputs: read by a node outside the partition, or graph outputs.
  std::unordered_set<std::string> read_outside, graph_outputs;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    if (member_set.count(n)) continue;
    for (const auto& in : graph.nodes[n].inputs) read_outside.insert(in);
  }
  for (const ValueInfo& out : graph.outputs) graph_outputs.insert(out.name);
  for (int n : members) {
    for (const auto& out : graph.nodes[n].outputs) {
      if (!out.empty() && (read_outside.count(out) || graph_outputs.count(out))) {
        part.graph.outputs.push_back(info_of(graph, out));
      }
    }
  }
  for (const auto& node : part.graph.nodes) {
    for (const auto& out : node.outputs) {
      if (auto it = graph.value_infos.find(out); it != graph.value_infos.end()) part.graph.value_infos.emplace(*it);
    }
  }
  part.graph.name = "partition";
  return part;
}

/// The node standing for partition `index` of `part`.
ir::Node partition_node(const ir::Model& part, int index, const std::string& backend) {
  ir::Node node;
  node.name = backend + "_partition_" + std::to_string(index);
  node.op_type = kPartitionOp;
  node.domain = ir::kEdgemmDomain;
  for (const ValueInfo& in : part.graph.inputs) node.inputs.push_back(in.name);
  for (const ValueInfo& out : part.graph.outputs) node.outputs.push_back(out.name);
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kInt;
  attr.i = index;
  node.attributes["partition"] = attr;
  return node;
}

/// Places the nodes of a run whose partition failed to compile back on native, with the error.
void fall_back(const std::vector<int>& run, const Status& error, PartitionedGraph& result) {
  const std::string count = std::to_string(run.size()) + (run.size() == 1 ? " node" : " nodes");
  for (int n : run) {
    result.placement[n].backend = "native";
    result.placement[n].reason = "its partition of " + count + " failed to compile: " + error.message();
  }
  result.compile_failures.push_back(count + ": " + error.message());
}

/// Runs one partition through its backend.
class PartitionKernel final : public kernels::Kernel {
 public:
  PartitionKernel(std::shared_ptr<const CompiledPartition> compiled, std::string name)
      : compiled_(std::move(compiled)), name_(std::move(name)) {}

  Status run(kernels::KernelContext& ctx) const override {
    std::vector<Tensor> inputs;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) return ir::node_error(ctx.node(), StatusCode::kInternal, "partition input is missing");
      inputs.push_back(*t);
    }
    auto outputs = compiled_->run(inputs);
    if (!outputs) return ir::node_error(ctx.node(), outputs.status().code(), outputs.status().message());
    if (static_cast<int>(outputs->size()) != ctx.output_count()) {
      return ir::node_error(ctx.node(), StatusCode::kInternal,
                            "the backend returned " + std::to_string(outputs->size()) + " outputs; the partition has " +
                                std::to_string(ctx.output_count()));
    }
    for (int i = 0; i < ctx.output_count(); ++i) {
      const Tensor& t = (*outputs)[i];
      EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(i, t.dtype(), t.shape()));
      if (t.byte_size() > 0) std::memcpy(y->raw_data(), t.raw_data(), t.byte_size());
    }
    return Status::ok();
  }
  const char* name() const override { return name_.c_str(); }

 private:
  std::shared_ptr<const CompiledPartition> compiled_;
  std::string name_;
};

/// Known axes of `info`: -1 for an unknown rank, else the number of static extents.
int known_axes(const ValueInfo& info) {
  if (!info.rank_known) return -1;
  return static_cast<int>(
      std::count_if(info.shape.begin(), info.shape.end(), [](const Dim& d) { return d.is_static(); }));
}

/// `info` replaced by `inferred` when that has the same (or an unknown) dtype and more known axes.
void take_if_better(ValueInfo& info, const ValueInfo& inferred) {
  const bool same_dtype = info.dtype == DataType::kUndefined || info.dtype == inferred.dtype;
  if (same_dtype && known_axes(inferred) > known_axes(info)) {
    const std::string name = info.name;
    info = inferred;
    info.name = name;
  }
}

/// ONNX shape inference over `model` (see simplify_for_backend), merged into its value_infos
/// and graph outputs.
void infer_shapes(ir::Model& model) {
  ir::Model skeleton;
  skeleton.ir_version = model.ir_version;
  skeleton.opsets = model.opsets;
  skeleton.graph.nodes = model.graph.nodes;
  skeleton.graph.inputs = model.graph.inputs;
  skeleton.graph.outputs = model.graph.outputs;
  for (const auto& [name, tensor] : model.graph.initializers) {
    if (tensor.element_count() <= kInferenceConstantElements) {
      skeleton.graph.initializers.emplace(name, tensor);
      continue;
    }
    ValueInfo weight{name, tensor.dtype(), {}, true};
    for (int64_t d : tensor.shape()) weight.shape.push_back(Dim{d, ""});
    skeleton.graph.inputs.push_back(std::move(weight));
  }
  auto bytes = ir::export_onnx_bytes(skeleton);
  if (!bytes) return;
  ir::ImportOptions options;
  options.run_checker = false;
  auto inferred = ir::import_onnx_bytes(*bytes, "", options);
  if (!inferred) return;
  for (const auto& [name, info] : inferred->graph.value_infos) {
    auto [it, added] = model.graph.value_infos.emplace(name, info);
    if (!added) take_if_better(it->second, info);
  }
  for (size_t i = 0; i < model.graph.outputs.size() && i < inferred->graph.outputs.size(); ++i) {
    take_if_better(model.graph.outputs[i], inferred->graph.outputs[i]);
  }
}

}  // namespace

void simplify_for_backend(ir::Model& model) {
  for (int round = 0; round < kMaxSimplifyRounds; ++round) {
    const size_t before = model.graph.nodes.size();
    passes::PassReport report;
    passes::simplify(model, report);
    if (round > 0 && model.graph.nodes.size() == before) return;
    infer_shapes(model);
  }
}

PartitionedGraph partition_graph(ir::Model& model, const Backend& backend, const BackendOptions& options) {
  passes::sort_topologically(model.graph);
  ir::Graph& graph = model.graph;
  const std::vector<NodeSupport> verdicts = backend.capability(model);
  PartitionedGraph result;
  std::vector<std::vector<int>> runs;
  std::vector<int> current;
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    const ir::Node& node = graph.nodes[n];
    NodeSupport verdict = n < static_cast<int>(verdicts.size()) ? verdicts[n] : NodeSupport{false, "no verdict"};
    if (verdict.supported && has_subgraph(node)) verdict = {false, "nodes with subgraphs run on native"};
    result.placement.push_back({node.name, node.op_type, verdict.supported ? backend.name() : "native",
                                verdict.supported ? "" : verdict.reason});
    if (verdict.supported) {
      current.push_back(n);
    } else if (!current.empty()) {
      runs.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) runs.push_back(std::move(current));
  if (runs.empty()) return result;

  std::vector<bool> dead(graph.nodes.size(), false);
  std::vector<std::pair<int, ir::Node>> stand_ins;  // (first node of the run, its replacement)
  for (const std::vector<int>& run : runs) {
    const ir::Model part = extract(model, run);
    auto compiled = backend.compile(part, options);
    if (!compiled) {
      fall_back(run, compiled.status(), result);
      continue;
    }
    stand_ins.emplace_back(run.front(), partition_node(part, static_cast<int>(result.compiled.size()), backend.name()));
    result.compiled.push_back(std::move(compiled).value());
    for (size_t i = 1; i < run.size(); ++i) dead[run[i]] = true;
  }
  for (auto& [n, stand_in] : stand_ins) graph.nodes[n] = std::move(stand_in);
  passes::remove_nodes(graph, dead);
  if (!stand_ins.empty()) passes::use_edgemm_domain(model);
  return result;
}

std::unique_ptr<kernels::KernelRegistry> partition_kernels(
    std::vector<std::shared_ptr<const CompiledPartition>> compiled, const std::string& backend_name) {
  auto registry = std::make_unique<kernels::KernelRegistry>();
  const std::string kernel_name = "partition__" + backend_name;
  registry->add(ir::kEdgemmDomain, kPartitionOp, 1,
                [compiled = std::move(compiled),
                 kernel_name](const kernels::KernelInfo& info) -> Expected<std::unique_ptr<kernels::Kernel>> {
                  EDGEMM_ASSIGN_OR_RETURN(int64_t index, info.node.attr_int("partition", -1));
                  if (index < 0 || index >= static_cast<int64_t>(compiled.size())) {
                    return ir::node_error(info.node, StatusCode::kInvalidModel,
                                          "attribute partition " + std::to_string(index) + " names no partition");
                  }
                  return std::unique_ptr<kernels::Kernel>(
                      std::make_unique<PartitionKernel>(compiled[static_cast<size_t>(index)], kernel_name));
                });
  return registry;
}

std::string describe_fallbacks(const std::vector<NodePlacement>& placement, const std::string& backend) {
  std::string text;
  int listed = 0, more = 0;
  for (const NodePlacement& p : placement) {
    if (p.backend == backend) continue;
    if (listed == 6) {
      ++more;
      continue;
    }
    const std::string node = p.node.empty() ? p.op_type + " (unnamed)" : p.op_type + " '" + p.node + "'";
    text += (listed ? ", " : "") + node + " (" + p.reason + ")";
    ++listed;
  }
  if (more > 0) text += " and " + std::to_string(more) + " more";
  return text;
}

}  // namespace edgemm::backends
