/// \file inspect.cc
/// passes::inspect_model (edgemm/tools/inspect.h): `edgemm inspect`'s description of a model.

#include "edgemm/tools/inspect.h"

#include "edgemm/onnx_model.h"
#include "ir/flops.h"
#include "ir/memory_estimate.h"
#include "ir/onnx_model_access.h"
#include "kernels/kernel.h"
#include "passes/passes.h"

namespace edgemm::passes {

namespace {

bool all_inputs_static(const ir::Graph& g) {
  for (const auto& in : g.inputs) {
    if (!in.rank_known) return false;
    for (const auto& d : in.shape) {
      if (!d.is_static()) return false;
    }
  }
  return true;
}

/// Elements and bytes of the initializers and of the tensors of Constant nodes (Paddle exports
/// store weights that way).
void count_parameters(const ir::Graph& g, ModelSummary& summary) {
  for (const auto& [name, t] : g.initializers) {
    summary.parameters += t.element_count();
    summary.parameter_bytes += static_cast<int64_t>(t.byte_size());
  }
  for (const auto& n : g.nodes) {
    if (const Tensor* t = n.op_type == "Constant" ? n.attr_tensor("value") : nullptr) {
      summary.parameters += t->element_count();
      summary.parameter_bytes += static_cast<int64_t>(t->byte_size());
    }
  }
}

/// Ops of `graph` and its subgraphs (If branches, Loop and Scan bodies) without a CPU kernel
/// at the model's opset of their domain, as op_histogram names them.
void collect_ops_without_kernel(const ir::Model& model, const ir::Graph& graph, std::set<std::string>& ops) {
  for (const ir::Node& node : graph.nodes) {
    if (kernels::cpu_registry().find(node.domain, node.op_type, model.opset(node.domain)) == nullptr) {
      ops.insert((node.domain.empty() ? "" : node.domain + ".") + node.op_type);
    }
    for (const auto& [key, attr] : node.attributes) {
      if (attr.kind == ir::Attribute::Kind::kGraph && attr.g) collect_ops_without_kernel(model, *attr.g, ops);
    }
  }
}

}  // namespace

Expected<ModelSummary> inspect_model(const std::string& path, const InspectOptions& options) {
  OnnxLoadOptions load;
  load.fixed_input_shapes = options.shapes;
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel handle, OnnxModel::load(path, load));
  ir::Model& model = ir::model_of(handle);
  ModelSummary summary;
  summary.memory = ir::estimate_memory(model.graph);  // of the file's graph
  if (options.optimized) {
    summary.optimized.emplace();
    optimize(model, *summary.optimized, kernel_pass_options());
  }
  summary.ir_version = model.ir_version;
  summary.producer_name = model.producer_name;
  summary.opsets = model.opsets;
  summary.inputs = model.graph.inputs;
  summary.outputs = model.graph.outputs;
  summary.nodes = model.graph.nodes.size();
  summary.op_histogram = handle.op_histogram();
  collect_ops_without_kernel(model, model.graph, summary.ops_without_kernel);
  count_parameters(model.graph, summary);
  summary.shapes_known = all_inputs_static(model.graph);
  summary.flops = ir::estimate_flops(model.graph);
  return summary;
}

}  // namespace edgemm::passes
