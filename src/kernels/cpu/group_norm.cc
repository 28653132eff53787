/// \file group_norm.cc
/// GroupNormalization of the default ONNX domain (Operators.md "GroupNormalization" 18 and 21),
/// inference semantics.
///
/// X [N, C, D1, ..., Dk] (rank >= 2) → Y of X's shape. The C channels form num_groups groups of
/// C / num_groups consecutive channels; per (n, group) the mean and population variance are
/// taken over the group's channels and all spatial positions, and
///   Y = (X - mean) / sqrt(variance + epsilon) * scale + bias.
/// - GroupNormalization-18: scale and bias have shape [num_groups], one value per group (the
///   version ONNX deprecated for that reason).
/// - GroupNormalization-21: scale and bias have shape [C], one value per channel; stash_type
///   (default 1 = float32, or 11 = float64) is the precision of the first stage (statistics and
///   normalization); the second stage (scale, bias) is computed in float32 for 16-bit inputs,
///   else in X's type. Version 18 normalizes in float64 for float64 X, else in float32.
/// Sums are accumulated in float64 in either case.
/// Attributes: num_groups (required, > 0, must divide C), epsilon (default 1e-5).
/// dtypes: float16, float32, float64, bfloat16; scale and bias must have X's dtype.
/// Errors (kInvalidArgument unless noted) name the node and the value: missing inputs
/// (kInvalidModel), rank < 2, num_groups not dividing C, scale/bias of the wrong shape or dtype,
/// a stash_type other than 1 or 11 (kUnsupported), num_groups <= 0 (kInvalidModel).

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace group_norm_impl {
namespace {

struct GroupNormAttrs {
  int64_t num_groups = 0;
  float epsilon = 1e-5f;
  bool per_channel = false;    // opset 21: scale/bias [C]
  bool stash_float64 = false;  // stash_type 11
  bool stash_from_x = true;    // opset 18: float64 X normalizes in float64
};

/// Normalizes X (float or double storage `T`) into Y; `S` is the first stage's type.
template <typename T, typename S>
void group_norm(const GroupNormAttrs& at, const Shape& shape, const T* x, const T* scale, const T* bias, T* y,
                int threads) {
  const int64_t n = shape[0], channels = shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  const int64_t per_group = channels / at.num_groups;
  const int64_t group_len = per_group * spatial;
  parallel_for(threads, n * at.num_groups, group_len * 4, [&](int64_t begin, int64_t end) {
    for (int64_t ng = begin; ng < end; ++ng) {
      const int64_t g = ng % at.num_groups;
      const T* xg = x + ng * group_len;
      T* yg = y + ng * group_len;
      double sum = 0;
      for (int64_t i = 0; i < group_len; ++i) sum += static_cast<double>(xg[i]);
      const double mean = sum / static_cast<double>(group_len);
      double sq = 0;
      for (int64_t i = 0; i < group_len; ++i) {
        const double d = static_cast<double>(xg[i]) - mean;
        sq += d * d;
      }
      const double var = sq / static_cast<double>(group_len);
      const S mean_s = static_cast<S>(mean);
      const S inv_std = static_cast<S>(1.0 / std::sqrt(var + static_cast<double>(at.epsilon)));
      for (int64_t c = 0; c < per_group; ++c) {
        const int64_t p = at.per_channel ? g * per_group + c : g;
        const T s = scale[p], b = bias[p];
        const T* xc = xg + c * spatial;
        T* yc = yg + c * spatial;
        for (int64_t i = 0; i < spatial; ++i) {
          const T normalized = static_cast<T>((static_cast<S>(xc[i]) - mean_s) * inv_std);
          yc[i] = normalized * s + b;
        }
      }
    }
  });
}

class GroupNormKernel final : public Kernel {
 public:
  explicit GroupNormKernel(GroupNormAttrs at) : at_(at) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (x == nullptr || scale == nullptr || bias == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'X', 'scale' and 'bias' are required");
    }
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64 && !elementwise::is_half(dt)) {
      return unsupported_dtype(node, 0, dt);
    }
    if (x->rank() < 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + elementwise::input_name(node, 0) +
                                "' must have rank >= 2 [N, C, ...], got shape " + shape_to_string(x->shape()));
    }
    const int64_t channels = x->shape()[1];
    if (channels % at_.num_groups != 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "num_groups " + std::to_string(at_.num_groups) + " does not divide the " +
                                std::to_string(channels) + " channels of '" + elementwise::input_name(node, 0) + "' " +
                                shape_to_string(x->shape()));
    }
    const int64_t want = at_.per_channel ? channels : at_.num_groups;
    const char* what = at_.per_channel ? "[C] (opset 21)" : "[num_groups] (opset 18)";
    for (int i : {1, 2}) {
      const Tensor* p = ctx.input(i);
      const std::string name = std::string(i == 1 ? "scale" : "bias") + " '" + elementwise::input_name(node, i) + "'";
      if (p->dtype() != dt) {
        return ir::node_error(
            node, StatusCode::kInvalidArgument,
            name + " has dtype " + dtype_name(p->dtype()) + ", expected " + dtype_name(dt) + " as 'X'");
      }
      if (p->rank() != 1 || p->shape()[0] != want) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              name + " must have shape " + what + " = [" + std::to_string(want) + "], got " +
                                  shape_to_string(p->shape()));
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
    if (y->element_count() == 0) return Status::ok();
    const int threads = ctx.threads();
    const bool s64 = at_.stash_from_x ? dt == DataType::kFloat64 : at_.stash_float64;
    if (dt == DataType::kFloat64) {
      if (s64) {
        group_norm<double, double>(at_, x->shape(), x->data<double>(), scale->data<double>(), bias->data<double>(),
                                   y->data<double>(), threads);
      } else {
        group_norm<double, float>(at_, x->shape(), x->data<double>(), scale->data<double>(), bias->data<double>(),
                                  y->data<double>(), threads);
      }
      return Status::ok();
    }
    if (dt == DataType::kFloat32) {
      if (s64) {
        group_norm<float, double>(at_, x->shape(), x->data<float>(), scale->data<float>(), bias->data<float>(),
                                  y->data<float>(), threads);
      } else {
        group_norm<float, float>(at_, x->shape(), x->data<float>(), scale->data<float>(), bias->data<float>(),
                                 y->data<float>(), threads);
      }
      return Status::ok();
    }
    // float16 / bfloat16: through float32 copies, rounded once at the end.
    EDGEMM_ASSIGN_OR_RETURN(Tensor x32, elementwise::to_float32(node, *x, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor s32, elementwise::to_float32(node, *scale, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor b32, elementwise::to_float32(node, *bias, threads));
    EDGEMM_ASSIGN_OR_RETURN(Tensor y32, Tensor::create(DataType::kFloat32, x->shape()));
    if (s64) {
      group_norm<float, double>(at_, x->shape(), x32.data<float>(), s32.data<float>(), b32.data<float>(),
                                y32.data<float>(), threads);
    } else {
      group_norm<float, float>(at_, x->shape(), x32.data<float>(), s32.data<float>(), b32.data<float>(),
                               y32.data<float>(), threads);
    }
    return elementwise::convert_tensor(node, y32, *y, threads);
  }

 private:
  GroupNormAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_group_norm(const KernelInfo& info, int since) {
  const ir::Node& node = info.node;
  GroupNormAttrs at;
  if (!node.has_attr("num_groups")) {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute num_groups is required");
  }
  EDGEMM_ASSIGN_OR_RETURN(at.num_groups, node.attr_int("num_groups", 0));
  if (at.num_groups <= 0) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute num_groups must be > 0, got " + std::to_string(at.num_groups));
  }
  EDGEMM_ASSIGN_OR_RETURN(at.epsilon, node.attr_float("epsilon", 1e-5f));
  if (since >= 21) {
    at.per_channel = true;
    at.stash_from_x = false;
    EDGEMM_ASSIGN_OR_RETURN(int64_t stash, node.attr_int("stash_type", 1));
    if (stash != 1 && stash != 11) {
      return ir::node_error(
          node, StatusCode::kUnsupported,
          "attribute stash_type " + std::to_string(stash) + " is not supported (1 = float32 or 11 = float64)");
    }
    at.stash_float64 = stash == 11;
  }
  return std::unique_ptr<Kernel>(std::make_unique<GroupNormKernel>(at));
}

}  // namespace
}  // namespace group_norm_impl

/// Registers GroupNormalization (opsets 18 and 21) in `registry`.
void register_group_norm_kernels(KernelRegistry& registry) {
  for (int since : {18, 21}) {
    registry.add("", "GroupNormalization", since,
                 [since](const KernelInfo& info) { return group_norm_impl::make_group_norm(info, since); });
  }
}

}  // namespace edgemm::kernels
