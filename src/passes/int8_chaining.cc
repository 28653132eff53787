/// \file int8_chaining.cc
/// chain_int8: keeps activations in uint8 where int8 convolutions read them. In a QDQ graph the
/// value an Int8Conv reads is written in float by its producer and quantized again by each
/// reader; when every reader quantizes it the same way, the producer (an Int8Conv, an
/// elementwise op or a Concat) can quantize its own output (QuantizeLinear's arithmetic, after
/// its epilogue or last step) and the readers skip theirs:
///
///   Int8Conv_a ─ y (float32 NHWC) ─┬─ Int8Conv_b(x_scale s, x_zero_point z)
///                                  └─ Int8Conv_c(x_scale s, x_zero_point z)
///     ⇒  Int8Conv_a(y_scale s, y_zero_point z) ─ y (uint8 NHWC) ─ Int8Conv_b, Int8Conv_c
///
/// A single elementwise op (Add, Mul, ...) becomes an ElementwiseChain of one step first, a
/// Concat a com.edgemm Concat (kernels/cpu/concat_split.cc). The readers see uint8 input and use
/// it as it is (kernels/cpu/conv_int8.h). Matched when the value is no graph output and every
/// reader is an Int8Conv taking it as input X only, with src_layout "NHWC" (so the value is
/// stored channels-last, assign_chain_layouts) and equal x_scale and x_zero_point; an Int8Conv
/// producer must write it with dst_layout "NHWC". Runs last: other passes expect float values.
/// Memory traffic of such a value falls to a quarter, and its quantization runs once.

#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

bool has_layout(const ir::Node& n, const char* attribute, const char* layout) {
  auto v = n.attr_string(attribute, "");
  return v && *v == layout;
}

bool is_int8_conv(const ir::Node& n) {
  return n.domain == kEdgemmDomain && n.op_type == "Int8Conv" && n.outputs.size() == 1 && !n.inputs.empty();
}

/// An Int8Conv writing NHWC, an ElementwiseChain (a single elementwise op becomes one) or a
/// float32 Concat (becoming com.edgemm Concat): the producers that can write uint8. False,
/// leaving the node alone, for any other.
bool can_write_uint8(const ir::Model& model, int k, ir::Node& n) {
  if (is_int8_conv(n)) return has_layout(n, "dst_layout", "NHWC");
  if (n.domain == kEdgemmDomain && n.op_type == "ElementwiseChain") return n.outputs.size() == 1;
  if (n.domain.empty() && n.op_type == "Concat") {
    for (const std::string& in : n.inputs) {
      const ValueInfo* info = value_info(model.graph, in);
      if (info == nullptr || info->dtype != DataType::kFloat32) return false;
    }
    n.domain = kEdgemmDomain;
    return true;
  }
  std::optional<ir::Node> chain = elementwise_chain_of(model, k);
  if (!chain) return false;
  n = std::move(*chain);
  return true;
}

/// The x_scale and x_zero_point that every reader of `value` uses, when all of them are Int8Convs
/// reading it as X in NHWC with the same parameters.
bool common_quantization(const ir::Graph& graph, const GraphView& view, const std::string& value, ir::Attribute& scale,
                         ir::Attribute& zero_point) {
  const std::vector<int>& readers = view.consumers(value);
  if (readers.empty()) return false;
  for (size_t i = 0; i < readers.size(); ++i) {
    const ir::Node& r = graph.nodes[readers[i]];
    if (!is_int8_conv(r) || r.inputs[0] != value || !has_layout(r, "src_layout", "NHWC")) return false;
    for (size_t k = 1; k < r.inputs.size(); ++k) {
      if (r.inputs[k] == value) return false;
    }
    if (!r.has_attr("x_scale") || !r.has_attr("x_zero_point")) return false;
    const ir::Attribute& s = r.attributes.at("x_scale");
    const ir::Attribute& z = r.attributes.at("x_zero_point");
    if (i == 0) {
      scale = s;
      zero_point = z;
    } else if (s.f != scale.f || z.i != zero_point.i) {
      return false;
    }
  }
  return true;
}

}  // namespace

void chain_int8(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  GraphView view(graph);
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    ir::Node& node = graph.nodes[k];
    if (node.outputs.size() != 1 || view.is_graph_output(node.outputs[0])) continue;
    const std::string y = node.outputs[0];
    ir::Attribute scale, zero_point;
    if (!common_quantization(graph, view, y, scale, zero_point)) continue;
    if (!can_write_uint8(model, static_cast<int>(k), node)) continue;
    node.attributes["y_scale"] = scale;
    node.attributes["y_zero_point"] = zero_point;
    auto info = graph.value_infos.find(y);
    if (info != graph.value_infos.end()) info->second.dtype = DataType::kUInt8;
    ++report.patterns[node.op_type + "→Int8Conv uint8"];
  }
  use_edgemm_domain(model);
}

}  // namespace edgemm::passes
