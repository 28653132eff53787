/// \file conv_folding.cc
/// Folds per-output-channel affine maps that follow a Conv or ConvTranspose into its weights
/// and bias: BatchNormalization in inference form (Operators.md "BatchNormalization":
/// y = (x - mean) / sqrt(var + epsilon) * scale + B) and Mul / Div / Add / Sub by a constant
/// that is a scalar or varies only along the channel axis (PP-LCNet's "learnable affine
/// blocks"). The result uses standard ONNX ops only.

#include <cmath>
#include <optional>
#include <vector>

#include "passes/graph_view.h"
#include "passes/passes.h"

namespace edgemm::passes {
namespace {

bool is_conv(const ir::Node& node) {
  return node.domain.empty() && (node.op_type == "Conv" || node.op_type == "ConvTranspose");
}

/// A Conv / ConvTranspose with constant float32 weights (rank >= 3) and, if present, bias.
struct ConvWeights {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;  // nullptr when the node has no bias
  int64_t out_channels = 0;
};

std::optional<ConvWeights> conv_weights(const ir::Graph& graph, const ir::Node& conv) {
  if (conv.inputs.size() < 2) return std::nullopt;
  ConvWeights cw;
  cw.w = constant(graph, conv.inputs[1]);
  if (cw.w == nullptr || cw.w->dtype() != DataType::kFloat32 || cw.w->rank() < 3) return std::nullopt;
  auto group = conv.attr_int("group", 1);
  if (!group || *group < 1) return std::nullopt;
  cw.out_channels = conv.op_type == "Conv" ? cw.w->shape()[0] : cw.w->shape()[1] * *group;
  if (conv.op_type == "ConvTranspose" && cw.w->shape()[0] % *group != 0) return std::nullopt;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    cw.b = constant(graph, conv.inputs[2]);
    if (cw.b == nullptr || cw.b->dtype() != DataType::kFloat32 || cw.b->element_count() != cw.out_channels) {
      return std::nullopt;
    }
  }
  return cw;
}

/// Per-output-channel values of `k` read as broadcast against a Conv output of rank `rank`
/// with `channels` channels: k must be a scalar or vary only along axis 1.
std::optional<std::vector<float>> per_channel(const Tensor* k, int64_t rank, int64_t channels) {
  if (k == nullptr || k->dtype() != DataType::kFloat32 || k->rank() > rank) return std::nullopt;
  const Shape& s = k->shape();
  const int64_t offset = rank - k->rank();  // k's axis i lines up with output axis offset + i
  for (int64_t i = 0; i < k->rank(); ++i) {
    const int64_t axis = offset + i;
    if (s[i] != 1 && !(axis == 1 && s[i] == channels)) return std::nullopt;
  }
  std::vector<float> v(static_cast<size_t>(channels));
  const float* p = k->data<float>();
  for (int64_t c = 0; c < channels; ++c) v[c] = k->element_count() == 1 ? p[0] : p[c];
  return v;
}

/// New weights and bias for out(c) → scale[c] · out(c) + shift[c].
void rewrite_conv(ir::Graph& graph, ir::Node& conv, const ConvWeights& cw, const std::vector<float>& scale,
                  const std::vector<float>& shift) {
  const Shape& ws = cw.w->shape();
  std::vector<float> w(cw.w->data<float>(), cw.w->data<float>() + cw.w->element_count());
  const int64_t group = *conv.attr_int("group", 1);
  int64_t kernel = 1;
  for (size_t i = 2; i < ws.size(); ++i) kernel *= ws[i];
  if (conv.op_type == "Conv") {
    const int64_t per_out = ws[1] * kernel;
    for (int64_t m = 0; m < ws[0]; ++m) {
      for (int64_t i = 0; i < per_out; ++i) w[m * per_out + i] *= scale[m];
    }
  } else {
    // ConvTranspose weights are [C, M/group, k...]; input channel c belongs to group c / (C/group).
    const int64_t in_per_group = ws[0] / group, out_per_group = ws[1];
    for (int64_t c = 0; c < ws[0]; ++c) {
      for (int64_t j = 0; j < out_per_group; ++j) {
        const int64_t m = (c / in_per_group) * out_per_group + j;
        float* row = w.data() + (c * out_per_group + j) * kernel;
        for (int64_t i = 0; i < kernel; ++i) row[i] *= scale[m];
      }
    }
  }
  std::vector<float> b(static_cast<size_t>(cw.out_channels));
  for (int64_t m = 0; m < cw.out_channels; ++m) {
    b[m] = (cw.b != nullptr ? cw.b->data<float>()[m] : 0.f) * scale[m] + shift[m];
  }
  conv.inputs.resize(3);
  conv.inputs[1] = add_initializer(graph, conv.inputs[1] + "_folded", Tensor::from_floats(ws, w));
  conv.inputs[2] = add_initializer(graph, conv.name + "_folded_bias", Tensor::from_floats({cw.out_channels}, b));
}

/// scale/shift of an inference BatchNormalization with constant parameters, or nullopt.
bool batch_norm_affine(const ir::Graph& graph, const ir::Node& bn, int64_t channels, std::vector<float>& scale,
                       std::vector<float>& shift) {
  if (bn.inputs.size() != 5 || bn.outputs.size() != 1) return false;
  auto training = bn.attr_int("training_mode", 0);
  auto epsilon = bn.attr_float("epsilon", 1e-5f);
  if (!training || *training != 0 || !epsilon) return false;
  std::vector<const Tensor*> p;
  for (int i = 1; i < 5; ++i) {
    const Tensor* t = constant(graph, bn.inputs[i]);
    if (t == nullptr || t->dtype() != DataType::kFloat32 || t->element_count() != channels) return false;
    p.push_back(t);
  }
  scale.resize(static_cast<size_t>(channels));
  shift.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double s = p[0]->data<float>()[c] / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + *epsilon);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(p[1]->data<float>()[c] - p[2]->data<float>()[c] * s);
  }
  return true;
}

/// scale/shift of Mul/Div/Add/Sub(conv output, constant k) when k is per channel or scalar.
bool constant_affine(const ir::Graph& graph, const ir::Node& op, const std::string& conv_out, int64_t rank,
                     int64_t channels, std::vector<float>& scale, std::vector<float>& shift) {
  if (!op.domain.empty() || op.inputs.size() != 2 || op.outputs.size() != 1) return false;
  const bool first = op.inputs[0] == conv_out;
  if (first == (op.inputs[1] == conv_out)) return false;
  const bool commutes = op.op_type == "Mul" || op.op_type == "Add";
  if (!first && !commutes) return false;
  auto k = per_channel(constant(graph, op.inputs[first ? 1 : 0]), rank, channels);
  if (!k) return false;
  scale.assign(static_cast<size_t>(channels), 1.f);
  shift.assign(static_cast<size_t>(channels), 0.f);
  for (int64_t c = 0; c < channels; ++c) {
    const float v = (*k)[c];
    if (op.op_type == "Mul")
      scale[c] = v;
    else if (op.op_type == "Div")
      scale[c] = 1.f / v;
    else if (op.op_type == "Add")
      shift[c] = v;
    else if (op.op_type == "Sub")
      shift[c] = -v;
    else
      return false;
  }
  return true;
}

}  // namespace

void fold_conv_affine(ir::Model& model, PassReport& report) {
  ir::Graph& graph = model.graph;
  bool changed = true;
  while (changed) {
    changed = false;
    GraphView view(graph);
    std::vector<bool> dead(graph.nodes.size(), false);
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      ir::Node& conv = graph.nodes[k];
      if (dead[k] || !is_conv(conv) || conv.outputs.size() != 1) continue;
      const std::string& out = conv.outputs[0];
      if (!view.single_use(out)) continue;
      const int reader = view.consumers(out)[0];
      if (dead[reader]) continue;
      const ir::Node& next = graph.nodes[reader];
      auto cw = conv_weights(graph, conv);
      if (!cw) continue;
      std::vector<float> scale, shift;
      std::string pattern;
      if (next.domain.empty() && next.op_type == "BatchNormalization" && next.inputs[0] == out &&
          batch_norm_affine(graph, next, cw->out_channels, scale, shift)) {
        pattern = "BatchNormalization→" + conv.op_type;
      } else if (constant_affine(graph, next, out, cw->w->rank(), cw->out_channels, scale, shift)) {
        pattern = next.op_type + "(constant)→" + conv.op_type;
      } else {
        continue;
      }
      rewrite_conv(graph, conv, *cw, scale, shift);
      conv.outputs[0] = next.outputs[0];
      dead[reader] = true;
      ++report.patterns[pattern];
      changed = true;
    }
    remove_nodes(graph, dead);
  }
}

}  // namespace edgemm::passes
