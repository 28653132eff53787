/// \file qdq_fusion.cc
/// fuse_qdq: a Conv or MatMul whose inputs come through QDQ pairs (ONNX QuantizeLinear/
/// DequantizeLinear 13, as edgemm quantize and ONNX Runtime's quantizer write them) becomes one
/// com.edgemm Int8Conv (kernels/cpu/conv_int8.h) or Int8MatMul (kernels/cpu/matmul_int8.h) that
/// reads the float input before QuantizeLinear:
///
///   x ─ QuantizeLinear(s, z) ─ DequantizeLinear(s, z) ─┐
///   W_int8 ─ DequantizeLinear(w_s[M] or w_s, 0, axis 0) ─┴─ Conv(B) ─ y
///     ⇒  x ─ Int8Conv(W_int8, B; x_scale s, x_zero_point z, w_scales) ─ y
///
///   x ─ Q ─ DQ ─┐, B_int8 [K, N] ─ DequantizeLinear(b_s[N] or b_s, 0, axis 1) ─┴─ MatMul ─ y
///     ⇒  x ─ Int8MatMul(B_int8; x_scale s, x_zero_point z, w_scales) ─ y
///
/// Matched when: s is a positive float32 scalar constant and z a uint8 scalar constant (or
/// absent), equal on both nodes; W_int8 an int8 constant with zero points all 0 (or absent)
/// and scales one per output channel (Conv: axis 0; MatMul: axis 1, the columns of B) or one
/// for all; Conv's B absent or a float32 constant [M]; no Q/DQ with opset 21's block_size > 0
/// or a QuantizeLinear output_dtype other than uint8. A MatMul's bias Add is absorbed later
/// by fuse_matmul_add. The QDQ nodes stay for other readers; dead ones are removed by the later passes. Runs
/// before constant folding, which would otherwise turn DequantizeLinear(W_int8) into float
/// weights.

#include <cmath>
#include <optional>

#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

/// The inputs of a QuantizeLinear or DequantizeLinear node, resolved to constants.
struct QdqNode {
  const ir::Node* node = nullptr;
  const Tensor* scale = nullptr;
  const Tensor* zero_point = nullptr;  // nullptr when absent
  int64_t axis = 1;
};

std::optional<QdqNode> qdq_producer(const GraphView& view, const ir::Graph& graph, const std::string& value,
                                    const char* op_type) {
  const int k = producer_of(view, graph, value, op_type);
  if (k < 0) return std::nullopt;
  const ir::Node& n = graph.nodes[k];
  QdqNode q;
  q.node = &n;
  q.scale = n.inputs.size() > 1 ? constant(graph, n.inputs[1]) : nullptr;
  q.zero_point = n.inputs.size() > 2 && !n.inputs[2].empty() ? constant(graph, n.inputs[2]) : nullptr;
  if (q.scale == nullptr || q.scale->dtype() != DataType::kFloat32) return std::nullopt;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && q.zero_point == nullptr) return std::nullopt;
  auto axis = n.attr_int("axis", 1);
  if (!axis) return std::nullopt;
  q.axis = *axis;
  // Opset 21: blocked parameters (block_size > 0) are neither per tensor nor per channel, and
  // a QuantizeLinear output_dtype other than uint8 (2) gives an absent zero point another
  // dtype; such nodes are left alone.
  auto block_size = n.attr_int("block_size", 0);
  auto output_dtype = n.attr_int("output_dtype", 0);
  if (!block_size || *block_size != 0 || !output_dtype || (*output_dtype != 0 && *output_dtype != 2)) {
    return std::nullopt;
  }
  return q;
}

bool positive_finite(const Tensor& scale) {
  for (int64_t i = 0; i < scale.element_count(); ++i) {
    const float s = scale.data<float>()[i];
    if (!(s > 0) || !std::isfinite(s)) return false;
  }
  return true;
}

/// The uint8 zero point of a per-tensor Q/DQ (0 when absent), or -1 when it is not one.
int32_t uint8_zero_point(const QdqNode& q) {
  if (q.scale->element_count() != 1 || !positive_finite(*q.scale)) return -1;
  if (q.zero_point == nullptr) return 0;
  if (q.zero_point->dtype() != DataType::kUInt8 || q.zero_point->element_count() != 1) return -1;
  return q.zero_point->data<uint8_t>()[0];
}

/// Activation input: DequantizeLinear(QuantizeLinear(x)) with equal uint8 parameters. Sets the
/// float input, scale and zero point.
bool match_activation(const GraphView& view, const ir::Graph& graph, const std::string& value, std::string& x,
                      float& scale, int32_t& zero_point) {
  auto dq = qdq_producer(view, graph, value, "DequantizeLinear");
  if (!dq) return false;
  auto q = qdq_producer(view, graph, dq->node->inputs[0], "QuantizeLinear");
  if (!q) return false;
  const int32_t zq = uint8_zero_point(*q), zdq = uint8_zero_point(*dq);
  if (zq < 0 || zq != zdq || q->scale->data<float>()[0] != dq->scale->data<float>()[0]) return false;
  x = q->node->inputs[0];
  scale = dq->scale->data<float>()[0];
  zero_point = zq;
  return true;
}

/// Weight input: DequantizeLinear of an int8 constant with zero points 0, per channel along
/// `channel_axis` (Conv: axis 0 of [M, C/group, k...]; MatMul: axis 1 of [K, N]) or per tensor.
/// Sets the int8 constant's name and one scale per channel.
bool match_weight(const GraphView& view, const ir::Graph& graph, const std::string& value, int64_t channel_axis,
                  std::string& w, std::vector<float>& scales) {
  auto dq = qdq_producer(view, graph, value, "DequantizeLinear");
  if (!dq) return false;
  const Tensor* q = constant(graph, dq->node->inputs[0]);
  if (q == nullptr || q->dtype() != DataType::kInt8) return false;
  const bool conv_rank = q->rank() >= 3 && q->rank() <= 5;
  if (channel_axis == 0 ? !conv_rank : q->rank() != 2) return false;
  const int64_t m = q->dim(channel_axis);
  const int64_t n = dq->scale->element_count();
  const bool per_channel =
      n == m && dq->scale->rank() == 1 && (dq->axis == channel_axis || dq->axis == channel_axis - q->rank());
  if (!(n == 1 || per_channel) || !positive_finite(*dq->scale)) return false;
  if (dq->zero_point != nullptr) {
    if (dq->zero_point->dtype() != DataType::kInt8 || dq->zero_point->element_count() != n) return false;
    for (int64_t i = 0; i < n; ++i) {
      if (dq->zero_point->data<int8_t>()[i] != 0) return false;
    }
  }
  w = dq->node->inputs[0];
  scales.resize(static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) scales[c] = dq->scale->data<float>()[n == 1 ? 0 : c];
  return true;
}

ir::Attribute float_attr(float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

}  // namespace

void fuse_qdq(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  GraphView view(graph);
  bool fused = false;
  for (ir::Node& node : graph.nodes) {
    const bool conv = node.op_type == "Conv";
    if (!node.domain.empty() || !(conv || node.op_type == "MatMul") || node.inputs.size() < 2 ||
        node.outputs.size() != 1) {
      continue;
    }
    std::string x, w;
    float x_scale = 0;
    int32_t x_zero_point = 0;
    std::vector<float> w_scales;
    if (!match_activation(view, graph, node.inputs[0], x, x_scale, x_zero_point)) continue;
    if (!match_weight(view, graph, node.inputs[1], conv ? 0 : 1, w, w_scales)) continue;
    const bool has_bias = conv && node.inputs.size() > 2 && !node.inputs[2].empty();
    if (has_bias) {
      const Tensor* b = constant(graph, node.inputs[2]);
      if (b == nullptr || b->dtype() != DataType::kFloat32 ||
          b->shape() != Shape{static_cast<int64_t>(w_scales.size())}) {
        continue;
      }
    }
    node.domain = ir::kEdgemmDomain;
    node.op_type = conv ? "Int8Conv" : "Int8MatMul";
    node.inputs =
        conv ? std::vector<std::string>{x, w, has_bias ? node.inputs[2] : ""} : std::vector<std::string>{x, w};
    node.attributes["x_scale"] = float_attr(x_scale);
    ir::Attribute zp;
    zp.kind = ir::Attribute::Kind::kInt;
    zp.i = x_zero_point;
    node.attributes["x_zero_point"] = zp;
    ir::Attribute scales;
    scales.kind = ir::Attribute::Kind::kFloats;
    scales.floats = std::move(w_scales);
    node.attributes["w_scales"] = std::move(scales);
    ++report.patterns[conv ? "QDQ Conv→Int8Conv" : "QDQ MatMul→Int8MatMul"];
    fused = true;
  }
  if (fused) use_edgemm_domain(model);
}

}  // namespace edgemm::passes
