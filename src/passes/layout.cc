/// \file layout.cc
/// Gives convolution chains the activation layout oneDNN's convolutions use on the CPU, blocked
/// nChw8c (stored [N, C/8, H, W, 8]) or channels-last NHWC (stored [N, H, W, C]; see
/// kernels/cpu/layout.h), so that activations are reordered only at a chain's edges, not around
/// every Conv (PP-OCRv4 det: 63 reorders, ~19 ms of 126 ms on one thread). A value is in the
/// chain layout ("chained") when it is a float32 [N, C, H, W] (for nChw8c with C a multiple of
/// 8) and is produced by
///  - a 2-D Conv/ConvTranspose/FusedConv(Transpose)/Int8Conv with constant weights (which
///    becomes a FusedConv(Transpose) with dst_layout "nChw8c" or "NHWC"; a ConvTranspose only
///    with a multiple of 8 output channels, which edgemm's strided kernel writes in blocks of 8,
///    see conv_transpose_strided.h), or
///  - a layout-agnostic op all of whose tensor inputs are chained values, scalar constants or
///    per-channel constants (rewritten to [1, C/8, 1, 1, 8] or [1, 1, 1, C]): elementwise ops and
///    ElementwiseChain, Concat on channels, nearest Resize with constant scales (nChw8c: a fifth
///    scale of 1 added; NHWC: the scales permuted), GlobalAveragePool (as com.edgemm
///    GlobalAveragePool, which pools blocked or channels-last planes).
/// Any other reader of a chained value (and a graph output) gets it back in NCHW through one
/// com.edgemm Reorder (nChw8c) or Transpose (NHWC) node per value.

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/elementwise_steps.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"
#include "passes/graph_view.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace edgemm::passes {
namespace {

constexpr int64_t kBlock = 8;

using ir::ActivationLayout;
using ir::layout_name;

bool is_conv(const ir::Node& n) {
  const bool onnx = n.domain.empty() && (n.op_type == "Conv" || n.op_type == "ConvTranspose");
  const bool fused = n.domain == ir::kEdgemmDomain &&
                     (n.op_type == "FusedConv" || n.op_type == "FusedConvTranspose" || n.op_type == "Int8Conv");
  return (onnx || fused) && n.outputs.size() == 1 && n.inputs.size() >= 2;
}

bool is_elementwise(const ir::Node& n) {
  static const std::unordered_set<std::string> kOps = {"Add",     "Sub",         "Mul",  "Div",       "Relu", "Clip",
                                                       "Sigmoid", "HardSigmoid", "Tanh", "HardSwish", "Max",  "Min"};
  return (n.domain.empty() && kOps.count(n.op_type)) ||
         (n.domain == ir::kEdgemmDomain && n.op_type == "ElementwiseChain");
}

/// Channels of a float32 rank-4 value with a fixed channel axis, or -1.
int64_t channels_of(const ir::Graph& graph, const std::string& value) {
  const ValueInfo* info = value_info(graph, value);
  if (info == nullptr || !info->rank_known || info->shape.size() != 4) return -1;
  if (info->dtype != DataType::kFloat32 || !info->shape[1].is_static()) return -1;
  return info->shape[1].value;
}

/// The pass's state: blocked values and the NCHW copies made of them.
class LayoutPlanner {
 public:
  LayoutPlanner(ir::Model& model, ActivationLayout layout) : model_(model), graph_(model.graph), layout_(layout) {}

  void run(PassReport& report) {
    std::vector<ir::Node> out;
    for (ir::Node& node : graph_.nodes) {
      if (!place(node, out)) {
        for (auto& in : node.inputs) in = plain(in, out);
      }
      out.push_back(std::move(node));
    }
    for (const auto& o : graph_.outputs) {
      // Once per value: a value listed twice among the outputs would otherwise be renamed
      // again, turning the first Reorder into one that reads and writes the same name.
      if (!blocked_.erase(o.name)) continue;
      // The producer writes a renamed blocked value; a Reorder writes the graph output.
      const std::string inner = o.name + "_" + layout_name(layout_);
      for (auto& n : out) {
        for (auto& name : n.outputs) name = name == o.name ? inner : name;
        for (auto& name : n.inputs) name = name == o.name ? inner : name;
      }
      out.push_back(to_nchw_node(inner, o.name));
      ++report.patterns[exit_pattern()];
      // The blocked value is now `inner`: it gets the output's type (from value_info when the
      // model declared one there too, which stays NCHW: the Reorder's result), made blocked below.
      blocked_.insert(inner);
      auto it = graph_.value_infos.find(o.name);
      ValueInfo info = it != graph_.value_infos.end() ? it->second : o;
      info.name = inner;
      graph_.value_infos[inner] = std::move(info);
    }
    graph_.nodes = std::move(out);
    for (const auto& v : blocked_) set_blocked_info(v);
    if (blocked_.empty()) return;
    const std::string values =
        layout_ == ActivationLayout::kNhwc ? "channels-last (NHWC) values" : "blocked (nChw8c) values";
    report.patterns[values] += static_cast<int>(blocked_.size());
    if (!plain_copies_.empty()) report.patterns[exit_pattern()] += static_cast<int>(plain_copies_.size());
    use_edgemm_domain(model_);
  }

 private:
  /// Rewrites `node` to work on blocked values when it can; false when it must read NCHW.
  bool place(ir::Node& node, std::vector<ir::Node>& out) {
    if (is_conv(node)) return place_conv(node, out);
    if (node.outputs.size() != 1) return false;
    if (!fits(channels_of(graph_, node.outputs[0]))) return false;
    if (is_elementwise(node)) return place_elementwise(node);
    if (node.domain.empty() && node.op_type == "Concat") return place_concat(node);
    if (node.domain.empty() && node.op_type == "Resize") return place_resize(node);
    if (node.domain.empty() && node.op_type == "GlobalAveragePool") return place_global_pool(node);
    return false;
  }

  bool place_conv(ir::Node& node, std::vector<ir::Node>& out) {
    const Tensor* w = constant(graph_, node.inputs[1]);
    const DataType weight_type = node.op_type == "Int8Conv" ? DataType::kInt8 : DataType::kFloat32;
    if (w == nullptr || w->rank() != 4 || w->dtype() != weight_type) return false;
    // edgemm's strided ConvTranspose kernel writes NHWC in blocks of 8 channels.
    const int64_t c = channels_of(graph_, node.outputs[0]);
    const bool transpose = node.op_type.find("Transpose") != std::string::npos;
    bool dst = fits(c) && (!transpose || c % kBlock == 0);
    for (size_t i = 3; i < node.inputs.size() && dst; ++i) dst = blockable_operand(node.inputs[i]);
    const bool src = blocked_.count(node.inputs[0]) != 0;
    if (!dst && !src) return false;
    if (node.domain.empty()) {
      node.op_type = node.op_type == "Conv" ? "FusedConv" : "FusedConvTranspose";
      node.domain = ir::kEdgemmDomain;
      node.inputs.resize(3);
      ir::write_steps(node, {});
    }
    if (dst) {
      for (size_t i = 3; i < node.inputs.size(); ++i) node.inputs[i] = blocked_operand(node.inputs[i]);
      blocked_.insert(node.outputs[0]);
      set_string(node, "dst_layout", layout_name(layout_));
    } else {
      for (size_t i = 3; i < node.inputs.size(); ++i) node.inputs[i] = plain(node.inputs[i], out);
    }
    if (src) set_string(node, "src_layout", layout_name(layout_));
    return true;
  }

  bool place_elementwise(ir::Node& node) {
    bool any = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      if (in.empty()) continue;
      if (blocked_.count(in)) {
        any = true;
      } else if (!(i > 0 && node.op_type == "Clip") && !blockable_constant(in)) {
        return false;
      }
    }
    if (!any) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!(i > 0 && node.op_type == "Clip") && !node.inputs[i].empty())
        node.inputs[i] = blocked_operand(node.inputs[i]);
    }
    blocked_.insert(node.outputs[0]);
    return true;
  }

  bool place_concat(ir::Node& node) {
    auto axis = node.attr_int("axis", 0);
    if (!axis || (*axis != 1 && *axis != -3)) return false;
    for (const auto& in : node.inputs) {
      if (!blocked_.count(in)) return false;
    }
    node.attributes["axis"].i = layout_ == ActivationLayout::kNhwc ? 3 : 1;
    blocked_.insert(node.outputs[0]);
    return true;
  }

  bool place_resize(ir::Node& node) {
    auto mode = node.attr_string("mode", "nearest");
    if (!mode || *mode != "nearest" || node.inputs.size() != 3 || !blocked_.count(node.inputs[0])) return false;
    // Resize-18 `axes` would reorder the scales read below (and not fit the blocked rank).
    if (node.has_attr("axes")) return false;
    const Tensor* roi = node.inputs[1].empty() ? nullptr : constant(graph_, node.inputs[1]);
    const Tensor* scales = constant(graph_, node.inputs[2]);
    if ((roi != nullptr && roi->element_count() != 0) || (!node.inputs[1].empty() && roi == nullptr)) return false;
    if (scales == nullptr || scales->dtype() != DataType::kFloat32 || scales->element_count() != 4) return false;
    const float* s = scales->data<float>();
    if (s[0] != 1.f || s[1] != 1.f) return false;
    const std::string name = node.inputs[2] + "_" + layout_name(layout_);
    node.inputs[2] = layout_ == ActivationLayout::kNhwc
                         ? add_initializer(graph_, name, Tensor::from_floats({4}, {1, s[2], s[3], 1}))
                         : add_initializer(graph_, name, Tensor::from_floats({5}, {1, 1, s[2], s[3], 1}));
    blocked_.insert(node.outputs[0]);
    return true;
  }

  bool place_global_pool(ir::Node& node) {
    if (!blocked_.count(node.inputs[0])) return false;
    node.domain = ir::kEdgemmDomain;  // the same op on [N, C/8, H, W, 8] or [N, H, W, C]
    if (layout_ == ActivationLayout::kNhwc) set_string(node, "layout", "NHWC");
    blocked_.insert(node.outputs[0]);
    return true;
  }

  /// A constant that keeps its meaning on blocked values: one element, or per channel.
  bool blockable_constant(const std::string& name) const {
    const Tensor* t = constant(graph_, name);
    if (t == nullptr || t->dtype() != DataType::kFloat32 || t->rank() > 4) return false;
    if (t->element_count() == 1) return true;
    const Shape& s = t->shape();
    const size_t offset = 4 - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const bool channel = offset + i == 1 && fits(s[i]);
      if (s[i] != 1 && !channel) return false;
    }
    return true;
  }

  bool blockable_operand(const std::string& name) const { return blocked_.count(name) || blockable_constant(name); }

  /// Whether a value of `channels` channels can be chained.
  bool fits(int64_t channels) const {
    return channels > 0 && (layout_ == ActivationLayout::kNhwc || channels % kBlock == 0);
  }

  /// The name to read `name` through on a chained node: itself, or a per-channel constant as
  /// [1, C/8, 1, 1, 8] or [1, 1, 1, C] (same bytes).
  std::string blocked_operand(const std::string& name) {
    const Tensor* t = constant(graph_, name);
    if (blocked_.count(name) || t == nullptr || t->element_count() == 1) return name;
    const int64_t c = t->element_count();
    std::vector<float> values(t->data<float>(), t->data<float>() + c);
    const Shape shape = layout_ == ActivationLayout::kNhwc ? Shape{1, 1, 1, c} : Shape{1, c / kBlock, 1, 1, kBlock};
    return add_initializer(graph_, name + "_" + layout_name(layout_), Tensor::from_floats(shape, values));
  }

  /// The NCHW form of `name`: itself when not chained, else the output of a Reorder or
  /// Transpose (one per value).
  std::string plain(const std::string& name, std::vector<ir::Node>& out) {
    if (name.empty() || !blocked_.count(name)) return name;
    auto it = plain_copies_.find(name);
    if (it != plain_copies_.end()) return it->second;
    const std::string copy = name + "_nchw";
    out.push_back(to_nchw_node(name, copy));
    plain_copies_[name] = copy;
    return copy;
  }

  /// The node writing chained `in` as NCHW `out`: com.edgemm Reorder from nChw8c, or a
  /// Transpose with perm [0, 3, 1, 2] from NHWC.
  ir::Node to_nchw_node(const std::string& in, const std::string& out) const {
    ir::Node n;
    n.name = out + "_reorder";
    n.inputs = {in};
    n.outputs = {out};
    if (layout_ == ActivationLayout::kNhwc) {
      n.op_type = "Transpose";
      ir::Attribute perm;
      perm.kind = ir::Attribute::Kind::kInts;
      perm.ints = {0, 3, 1, 2};
      n.attributes["perm"] = perm;
      return n;
    }
    n.op_type = "Reorder";
    n.domain = ir::kEdgemmDomain;
    set_string(n, "to", "NCHW");
    return n;
  }

  std::string exit_pattern() const {
    return layout_ == ActivationLayout::kNhwc ? "Transpose NHWC→NCHW" : "Reorder nChw8c→NCHW";
  }

  static void set_string(ir::Node& node, const std::string& key, const std::string& value) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kString;
    a.s = value;
    node.attributes[key] = a;
  }

  /// value_infos of a chained value: its physical [N, C/8, H, W, 8] or [N, H, W, C].
  void set_blocked_info(const std::string& value) {
    auto it = graph_.value_infos.find(value);
    if (it == graph_.value_infos.end() || it->second.shape.size() != 4) return;
    std::vector<Dim>& d = it->second.shape;
    if (layout_ == ActivationLayout::kNhwc) {
      d = {d[0], d[2], d[3], d[1]};
      return;
    }
    d[1].value /= kBlock;
    d.push_back(Dim{kBlock, ""});
  }

  ir::Model& model_;
  ir::Graph& graph_;
  ActivationLayout layout_;
  std::unordered_set<std::string> blocked_;  ///< chained values
  std::unordered_map<std::string, std::string> plain_copies_;
};

bool has_subgraphs(const ir::Graph& graph) {
  for (const auto& n : graph.nodes) {
    for (const auto& [key, attr] : n.attributes) {
      if (attr.kind == ir::Attribute::Kind::kGraph) return true;
    }
  }
  return false;
}

}  // namespace

PassOptions kernel_pass_options() {
  PassOptions options;
  if (!kernels::onednn::enabled()) {
    options.chain_layout = ActivationLayout::kNchw;
  } else if (kernels::onednn::prefers_nhwc()) {
    options.chain_layout = ActivationLayout::kNhwc;
  }
  options.fuse_attention = kernels::matmul_panels_available();
  return options;
}

void assign_chain_layouts(ir::Model& model, PassReport& report, ActivationLayout layout) {
  if (has_subgraphs(model.graph)) return;  // outer values read inside subgraphs stay NCHW
  LayoutPlanner(model, layout).run(report);
}

}  // namespace edgemm::passes
