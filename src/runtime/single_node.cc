#include "runtime/single_node.h"

#include "runtime/compiled_graph.h"
#include "runtime/executor.h"

namespace edgemm::runtime {

Expected<std::vector<Tensor>> run_node(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset,
                                       int threads) {
  auto graph = std::make_shared<ir::Graph>();
  graph->name = "single_node";
  ir::Node copy = node;
  if (copy.name.empty()) copy.name = node.op_type;
  for (size_t i = 0; i < copy.inputs.size(); ++i) {
    const bool present = i < inputs.size() && inputs[i].defined();
    if (!present) {
      copy.inputs[i].clear();
      continue;
    }
    copy.inputs[i] = "in" + std::to_string(i);
    graph->initializers[copy.inputs[i]] = inputs[i];
  }
  for (size_t i = 0; i < copy.outputs.size(); ++i) {
    if (copy.outputs[i].empty()) continue;
    copy.outputs[i] = "out" + std::to_string(i);
    graph->outputs.push_back(ValueInfo{copy.outputs[i], DataType::kUndefined, {}, false});
  }
  graph->nodes.push_back(std::move(copy));
  const std::string domain = node.domain == "ai.onnx" ? "" : node.domain;
  std::map<std::string, int64_t> opsets = {{domain, opset}};
  if (!domain.empty()) opsets[""] = 17;
  EDGEMM_ASSIGN_OR_RETURN(auto compiled, CompiledGraph::compile(graph, opsets, {}));
  ExecOptions options;
  options.threads = threads < 1 ? 1 : threads;
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> produced, execute(*compiled, {}, nullptr, options, nullptr));
  // Outputs in node order; omitted outputs stay undefined.
  std::vector<Tensor> result(node.outputs.size());
  size_t k = 0;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!graph->nodes[0].outputs[i].empty()) result[i] = produced[k++];
  }
  return result;
}

}  // namespace edgemm::runtime
