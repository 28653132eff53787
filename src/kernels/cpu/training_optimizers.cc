/// \file training_optimizers.cc
/// The optimizers of the ai.onnx.preview.training domain, version 1 (Operators.md
/// "ai.onnx.preview.training.Adagrad", ".Adam", ".Momentum"): one update step of n tensors.
///
/// Inputs: R (learning rate, float32 or float64, one element), T (update count, int64, one
/// element, >= 0), then n groups of n tensors each: the tensors X_1..X_n, their gradients G, and
/// the op's state (Adagrad: accumulated squared gradients H; Adam: accumulated gradients V, then
/// accumulated squared gradients H; Momentum: momenta V). Outputs: the new X_1..X_n, then the new
/// state tensors in the input order. Every G, V, H must have its X's shape and dtype (float32 or
/// float64); outputs take them too. Per element, in float64 (G' = norm_coefficient · X + G):
/// - Adagrad: r = R / (1 + T · decay_factor); H' = H + G'²; X' = X − r · G' / (√H' + epsilon).
///   Attributes decay_factor (0), epsilon (1e-6), norm_coefficient (0).
/// - Adam: V' = alpha · V + (1 − alpha) · G'; H' = beta · H + (1 − beta) · G'²;
///   r = T > 0 ? R · √(1 − betaᵀ) / (1 − alphaᵀ) : R; X' = (1 − norm_coefficient_post) ·
///   (X − r · V' / (√H' + epsilon)). Attributes alpha (0.9), beta (0.999), epsilon (1e-6),
///   norm_coefficient (0), norm_coefficient_post (0).
/// - Momentum: b = T > 0 ? beta : 1; V' = alpha · V + b · G'; mode "standard": X' = X − R · V';
///   mode "nesterov": X' = X − R · (G' + alpha · V'). Attributes alpha, beta, mode and
///   norm_coefficient are required.
///
/// Errors: an input count that is not 2 + k·n (k = 3 for Adagrad and Momentum, 4 for Adam; n >= 1)
/// or an output count other than (k − 1)·n, missing Momentum attributes or another mode are
/// kInvalidModel (at kernel creation); R or T not holding one element, a negative T, a G/V/H whose
/// shape or dtype differs from its X are kInvalidArgument naming the input; other dtypes are
/// unsupported_dtype().

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace training_impl {
namespace {

enum class OptimizerKind { kAdagrad, kAdam, kMomentum };

struct OptimizerAttrs {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  double decay_factor = 0, epsilon = 1e-6, norm_coefficient = 0, norm_coefficient_post = 0;
  double alpha = 0, beta = 0;
  bool nesterov = false;
};

// Input groups per optimized tensor: X, G and the state tensors.
int optimizer_groups(OptimizerKind kind) { return kind == OptimizerKind::kAdam ? 4 : 3; }

// What the groups of inputs hold, for error messages.
const char* optimizer_group_name(OptimizerKind kind, int group) {
  static const char* const adagrad[] = {"optimized tensor", "gradient", "accumulated squared gradient"};
  static const char* const adam[] = {"optimized tensor", "gradient", "accumulated gradient",
                                     "accumulated squared gradient"};
  static const char* const momentum[] = {"optimized tensor", "gradient", "momentum"};
  switch (kind) {
    case OptimizerKind::kAdagrad:
      return adagrad[group];
    case OptimizerKind::kAdam:
      return adam[group];
    case OptimizerKind::kMomentum:
      return momentum[group];
  }
  return "";
}

// Scalar factors of one step, from R and T.
struct StepFactors {
  double rate = 0;  // Adagrad r, Adam r, Momentum R
  double beta = 0;  // Momentum: beta, or 1 at T = 0
};

// One element: x, g and the state values in, the new x and state values out.
inline void optimizer_element(const OptimizerAttrs& a, const StepFactors& f, double x, double g, const double* s,
                              double& x_new, double* s_new) {
  const double gr = a.norm_coefficient * x + g;
  switch (a.kind) {
    case OptimizerKind::kAdagrad: {
      s_new[0] = s[0] + gr * gr;
      x_new = x - f.rate * gr / (std::sqrt(s_new[0]) + a.epsilon);
      break;
    }
    case OptimizerKind::kAdam: {
      s_new[0] = a.alpha * s[0] + (1 - a.alpha) * gr;
      s_new[1] = a.beta * s[1] + (1 - a.beta) * gr * gr;
      x_new = (1 - a.norm_coefficient_post) * (x - f.rate * s_new[0] / (std::sqrt(s_new[1]) + a.epsilon));
      break;
    }
    case OptimizerKind::kMomentum: {
      s_new[0] = a.alpha * s[0] + f.beta * gr;
      x_new = a.nesterov ? x - f.rate * (gr + a.alpha * s_new[0]) : x - f.rate * s_new[0];
      break;
    }
  }
}

// Updates optimized tensor `i` of `n`: reads its X, G and state inputs, writes the wanted outputs.
template <typename T>
Status update_tensor(KernelContext& ctx, const OptimizerAttrs& a, const StepFactors& f, int n, int i) {
  const int groups = optimizer_groups(a.kind);
  const int states = groups - 2;
  const Tensor* in[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int g = 0; g < groups; ++g) in[g] = ctx.input(2 + g * n + i);
  T* out[3] = {nullptr, nullptr, nullptr};
  for (int o = 0; o < groups - 1; ++o) {
    if (!ctx.output_wanted(o * n + i)) continue;
    EDGEMM_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(o * n + i, in[0]->dtype(), in[0]->shape()));
    out[o] = t->data<T>();
  }
  const T* x = in[0]->data<T>();
  const T* g = in[1]->data<T>();
  const T* s0 = in[2]->data<T>();
  const T* s1 = states > 1 ? in[3]->data<T>() : nullptr;
  parallel_for(ctx.threads(), in[0]->element_count(), 16, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const double s[2] = {static_cast<double>(s0[e]), s1 != nullptr ? static_cast<double>(s1[e]) : 0.0};
      double x_new = 0, s_new[2] = {0, 0};
      optimizer_element(a, f, static_cast<double>(x[e]), static_cast<double>(g[e]), s, x_new, s_new);
      if (out[0] != nullptr) out[0][e] = static_cast<T>(x_new);
      if (out[1] != nullptr) out[1][e] = static_cast<T>(s_new[0]);
      if (out[2] != nullptr) out[2][e] = static_cast<T>(s_new[1]);
    }
  });
  return Status::ok();
}

class OptimizerKernel final : public Kernel {
 public:
  explicit OptimizerKernel(OptimizerAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const int groups = optimizer_groups(a_.kind);
    const int n = (ctx.input_count() - 2) / groups;
    const Tensor* r = ctx.input(0);
    const Tensor* t = ctx.input(1);
    if (r == nullptr || t == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'R' and 'T' are required");
    }
    if (r->dtype() != DataType::kFloat32 && r->dtype() != DataType::kFloat64) {
      return unsupported_dtype(node, 0, r->dtype());
    }
    if (t->dtype() != DataType::kInt64) return unsupported_dtype(node, 1, t->dtype());
    if (r->element_count() != 1 || t->element_count() != 1) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "inputs 'R' and 'T' must hold one element each, got shapes " + shape_to_string(r->shape()) +
                                " and " + shape_to_string(t->shape()));
    }
    const double rate = r->dtype() == DataType::kFloat32 ? r->data<float>()[0] : r->data<double>()[0];
    const int64_t count = t->data<int64_t>()[0];
    if (count < 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'T' (update count) must be >= 0, got " + std::to_string(count));
    }
    StepFactors f;
    switch (a_.kind) {
      case OptimizerKind::kAdagrad:
        f.rate = rate / (1 + static_cast<double>(count) * a_.decay_factor);
        break;
      case OptimizerKind::kAdam:
        f.rate = count > 0 ? rate * std::sqrt(1 - std::pow(a_.beta, static_cast<double>(count))) /
                                 (1 - std::pow(a_.alpha, static_cast<double>(count)))
                           : rate;
        break;
      case OptimizerKind::kMomentum:
        f.rate = rate;
        f.beta = count > 0 ? a_.beta : 1.0;
        break;
    }
    for (int i = 0; i < n; ++i) {
      const Tensor* x = ctx.input(2 + i);
      if (x == nullptr) {
        return ir::node_error(node, StatusCode::kInvalidModel, "optimized tensor " + std::to_string(i) + " is missing");
      }
      if (x->dtype() != DataType::kFloat32 && x->dtype() != DataType::kFloat64) {
        return unsupported_dtype(node, 2 + i, x->dtype());
      }
      for (int g = 1; g < groups; ++g) {
        const int index = 2 + g * n + i;
        const Tensor* v = ctx.input(index);
        if (v == nullptr || v->dtype() != x->dtype() || v->shape() != x->shape()) {
          return ir::node_error(
              node, StatusCode::kInvalidArgument,
              "input " + std::to_string(index) + " ('" + node.inputs[index] + "', the " +
                  optimizer_group_name(a_.kind, g) + " of optimized tensor " + std::to_string(i) + " '" +
                  node.inputs[2 + i] + "') must have its dtype " + dtype_name(x->dtype()) + " and shape " +
                  shape_to_string(x->shape()) + ", got " +
                  (v == nullptr ? std::string("no tensor")
                                : std::string(dtype_name(v->dtype())) + " " + shape_to_string(v->shape())));
        }
      }
      EDGEMM_RETURN_IF_ERROR(x->dtype() == DataType::kFloat32 ? update_tensor<float>(ctx, a_, f, n, i)
                                                              : update_tensor<double>(ctx, a_, f, n, i));
    }
    return Status::ok();
  }

 private:
  OptimizerAttrs a_;
};

KernelFactory optimizer_factory(OptimizerKind kind) {
  return [kind](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    const ir::Node& node = info.node;
    const int groups = optimizer_groups(kind);
    const int inputs = static_cast<int>(node.inputs.size()), outputs = static_cast<int>(node.outputs.size());
    const int n = (inputs - 2) / groups;
    if (inputs < 2 + groups || (inputs - 2) % groups != 0 || outputs != (groups - 1) * n) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "expects inputs R, T and " + std::to_string(groups) +
                                " tensors per optimized tensor, and " + std::to_string(groups - 1) +
                                " outputs per optimized tensor; got " + std::to_string(inputs) + " inputs and " +
                                std::to_string(outputs) + " outputs");
    }
    OptimizerAttrs a;
    a.kind = kind;
    if (kind == OptimizerKind::kMomentum) {
      for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"}) {
        if (!node.has_attr(required)) {
          return ir::node_error(node, StatusCode::kInvalidModel,
                                std::string("attribute '") + required + "' is required");
        }
      }
      EDGEMM_ASSIGN_OR_RETURN(std::string mode, node.attr_string("mode", ""));
      if (mode != "standard" && mode != "nesterov") {
        return ir::node_error(node, StatusCode::kInvalidModel,
                              "attribute 'mode' must be 'standard' or 'nesterov', got '" + mode + "'");
      }
      a.nesterov = mode == "nesterov";
    }
    const bool adam = kind == OptimizerKind::kAdam;
    EDGEMM_ASSIGN_OR_RETURN(float alpha, node.attr_float("alpha", adam ? 0.9f : 0.0f));
    EDGEMM_ASSIGN_OR_RETURN(float beta, node.attr_float("beta", adam ? 0.999f : 0.0f));
    EDGEMM_ASSIGN_OR_RETURN(float epsilon, node.attr_float("epsilon", 1e-6f));
    EDGEMM_ASSIGN_OR_RETURN(float decay, node.attr_float("decay_factor", 0.0f));
    EDGEMM_ASSIGN_OR_RETURN(float norm, node.attr_float("norm_coefficient", 0.0f));
    EDGEMM_ASSIGN_OR_RETURN(float norm_post, node.attr_float("norm_coefficient_post", 0.0f));
    a.alpha = alpha;
    a.beta = beta;
    a.epsilon = epsilon;
    a.decay_factor = decay;
    a.norm_coefficient = norm;
    a.norm_coefficient_post = norm_post;
    return std::unique_ptr<Kernel>(std::make_unique<OptimizerKernel>(a));
  };
}

}  // namespace
}  // namespace training_impl

void register_training_optimizer_kernels(KernelRegistry& registry) {
  using training_impl::optimizer_factory;
  using training_impl::OptimizerKind;
  const std::string domain = "ai.onnx.preview.training";
  registry.add(domain, "Adagrad", 1, optimizer_factory(OptimizerKind::kAdagrad));
  registry.add(domain, "Adam", 1, optimizer_factory(OptimizerKind::kAdam));
  registry.add(domain, "Momentum", 1, optimizer_factory(OptimizerKind::kMomentum));
}

}  // namespace edgemm::kernels
