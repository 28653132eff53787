/// \file matmul_add_fusion.cc
/// fuse_matmul_add: MatMul(A, B) followed by Add(·, bias), B a float32 constant [K, N] and bias
/// a float32 constant that varies along the last axis only ([N], [1, N], [1], ...):
/// - A known to be 2-D (opset >= 7) → ONNX Gemm(A, B, bias) (Operators.md "Gemm": C broadcasts to [M, N]);
///   any runtime can run it, edgemm's Gemm puts the bias into oneDNN's matmul.
/// - otherwise → kEdgemmDomain FusedMatMul(A, B, bias[N]): numpy MatMul semantics on A's
///   leading axes plus the bias on every row (matmul.cc).
/// A com.edgemm Int8MatMul(A, B_int8) (from fuse_qdq) followed by such an Add takes the bias
/// as its third input [N] (matmul_int8.h).

#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// A MatMul node and the Add node reading its output, with the bias operand.
struct MatMulAdd {
  int matmul = -1;
  int add = -1;
  std::string bias;
};

/// True when the constant `bias` broadcasts over [..., N] along the last axis only, without
/// raising the rank of the MatMul result (A's rank when known, else 1 for a bias of rank <= 1).
bool bias_fits(const Tensor& bias, int64_t n, int64_t a_rank) {
  if (bias.dtype() != DataType::kFloat32 || bias.element_count() == 0) return false;
  if (bias.rank() > 1 && bias.rank() > a_rank) return false;
  for (int64_t i = 0; i + 1 < bias.rank(); ++i) {
    if (bias.shape()[i] != 1) return false;
  }
  return bias.element_count() == n || bias.element_count() == 1;
}

/// True for an Int8MatMul without a bias yet.
bool is_int8_matmul(const ir::Node& n) {
  return n.domain == kEdgemmDomain && n.op_type == "Int8MatMul" && n.inputs.size() == 2;
}

/// Matches MatMul node `k` (B constant 2-D float32) or Int8MatMul node `k` (B int8) and its
/// single Add reader with a fitting bias.
std::optional<MatMulAdd> match(const ir::Graph& graph, const GraphView& view, const Rewrite& rw, int k) {
  const ir::Node& mm = graph.nodes[k];
  if (mm.inputs.size() != 2) return std::nullopt;
  const Tensor* b = constant(graph, mm.inputs[1]);
  const DataType b_type = is_int8_matmul(mm) ? DataType::kInt8 : DataType::kFloat32;
  if (b == nullptr || b->dtype() != b_type || b->rank() != 2) return std::nullopt;
  const std::string& y = mm.outputs[0];
  if (!view.single_use(y)) return std::nullopt;
  const int add_k = view.consumers(y)[0];
  const ir::Node& add = graph.nodes[add_k];
  if (!add.domain.empty() || add.op_type != "Add" || !rw.untouched(add_k)) return std::nullopt;
  const std::string bias = other_input(add, y);
  const Tensor* c = constant(graph, bias);
  if (c == nullptr || !bias_fits(*c, b->dim(1), known_rank(graph, mm.inputs[0]))) return std::nullopt;
  return MatMulAdd{k, add_k, bias};
}

/// The bias as a [N] float32 constant (a single value repeated N times when it is one).
std::string bias_vector(ir::Graph& graph, const std::string& name, int64_t n, const std::string& hint) {
  const Tensor* c = constant(graph, name);
  if (c->rank() == 1 && c->element_count() == n) return name;
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) values[j] = c->data<float>()[c->element_count() == 1 ? 0 : j];
  return add_initializer(graph, hint, Tensor::from_floats({n}, values));
}

}  // namespace

void fuse_matmul_add(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  const GraphView view(graph);
  Rewrite rw(graph);
  int gemms = 0, fused = 0, int8 = 0;
  for (int k = 0; k < static_cast<int>(graph.nodes.size()); ++k) {
    const ir::Node& node = graph.nodes[k];
    const bool quantized = is_int8_matmul(node);
    if (!((node.domain.empty() && node.op_type == "MatMul") || quantized) || !rw.untouched(k)) continue;
    const auto m = match(graph, view, rw, k);
    if (!m) continue;
    const std::string a = node.inputs[0], b = node.inputs[1];
    const int64_t n = constant(graph, b)->dim(1);
    ir::Node out;
    out.name = graph.nodes[m->add].name + "/MatMul+Add";
    out.outputs = graph.nodes[m->add].outputs;
    if (quantized) {  // keeps the MatMul's name, which quantize reports and profiles use
      out.name = node.name;
      out.op_type = node.op_type;
      out.domain = node.domain;
      out.attributes = node.attributes;
      out.inputs = {a, b, bias_vector(graph, m->bias, n, out.name + "/bias")};
      ++int8;
    } else if (known_rank(graph, a) == 2 && model.opset("") >= 7) {  // Gemm-7 broadcasts C without an attribute
      out.op_type = "Gemm";
      out.inputs = {a, b, m->bias};
      ++gemms;
    } else {
      out.op_type = "FusedMatMul";
      out.domain = kEdgemmDomain;
      out.inputs = {a, b, bias_vector(graph, m->bias, n, out.name + "/bias")};
      ++fused;
    }
    rw.replace(graph, {k, m->add}, std::move(out));
  }
  if (gemms + fused + int8 == 0) return;
  remove_nodes(graph, rw.dead);
  if (gemms > 0) report.patterns["MatMul+Add→Gemm"] += gemms;
  if (int8 > 0) report.patterns["Int8MatMul+Add→Int8MatMul(bias)"] += int8;
  if (fused > 0) {
    use_edgemm_domain(model);
    report.patterns["MatMul+Add→FusedMatMul"] += fused;
  }
}

}  // namespace edgemm::passes
