/// \file partition.cc
/// partition_graph and the BackendPartition kernel (see partition.h).

#include "backends/partition.h"

#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "passes/graph_view.h"

namespace edgemm::backends {
namespace {

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

}  // namespace

PartitionedGraph partition_graph(ir::Model& model, const Backend& backend) {
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
  for (size_t k = 0; k < runs.size(); ++k) {
    ir::Model part = extract(model, runs[k]);
    ir::Node stand_in = partition_node(part, static_cast<int>(k), backend.name());
    for (size_t i = 1; i < runs[k].size(); ++i) dead[runs[k][i]] = true;
    graph.nodes[runs[k].front()] = std::move(stand_in);
    result.partitions.push_back(std::move(part));
  }
  passes::remove_nodes(graph, dead);
  passes::use_edgemm_domain(model);
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
    text += (listed ? ", " : "") + p.op_type + " '" + p.node + "' (" + p.reason + ")";
    ++listed;
  }
  if (more > 0) text += " and " + std::to_string(more) + " more";
  return text;
}

}  // namespace edgemm::backends
