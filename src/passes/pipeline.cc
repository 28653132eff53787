// The pass pipelines: which passes run, in which order, for simplify() (standard ONNX ops only,
// what `edgemm convert --simplify` and the backends' partitioning see) and optimize() (the native
// runtime's fusions). Declared in passes.h.
#include "passes/passes.h"

namespace edgemm::passes {

void simplify(ir::Model& model, PassReport& report) {
  report.nodes_before = static_cast<int>(model.graph.nodes.size());
  fold_constants(model, report, /*keep_dequantize=*/true);
  eliminate_dead_nodes(model.graph, report);
  simplify_transpose_reshape(model, report);
  fold_conv_affine(model, report);
  eliminate_dead_nodes(model.graph, report);
  report.nodes_after = static_cast<int>(model.graph.nodes.size());
}

void optimize(ir::Model& model, PassReport& report, const PassOptions& options) {
  report.nodes_before = static_cast<int>(model.graph.nodes.size());
  fuse_qdq(model, report);  // before folding turns the int8 weights' DequantizeLinear into floats
  fold_constants(model, report);
  eliminate_dead_nodes(model.graph, report);
  // Layout clean-up first: it exposes the shorter chains the fusions below match.
  simplify_transpose_reshape(model, report);
  fold_conv_affine(model, report);
  recognize_activations(model, report);
  // Transformer fusions, before the elementwise chains would take their Sub/Div/Add/Mul nodes.
  fuse_layer_norm(model, report);
  fuse_gelu(model, report);
  if (options.fuse_attention) fuse_attention(model, report);
  fuse_matmul_add(model, report);
  fuse_epilogues(model, report);  // before the chains: a Conv takes the ops that follow it
  fuse_elementwise_chains(model, report);
  if (options.chain_layout != ir::ActivationLayout::kNchw) {
    assign_chain_layouts(model, report, options.chain_layout);
    chain_int8(model, report);
  }
  eliminate_dead_nodes(model.graph, report);  // initializers that became step parameters
  report.nodes_after = static_cast<int>(model.graph.nodes.size());
}

}  // namespace edgemm::passes
