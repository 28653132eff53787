/// \file layout.cc
/// com.edgemm Reorder-1: converts a float32 activation between logical NCHW [N, C, H, W] and the
/// blocked nChw8c layout stored as [N, C/8, H, W, 8] (attribute `to` = "nChw8c" or "NCHW"; see
/// layout.h). The layout pass puts these at the edges of blocked convolution chains.

#include "kernels/cpu/layout.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

Shape blocked_shape(const Shape& logical) {
  return {logical[0], logical[1] / kChannelBlock, logical[2], logical[3], kChannelBlock};
}

Shape logical_shape(const Shape& blocked) { return {blocked[0], blocked[1] * kChannelBlock, blocked[2], blocked[3]}; }

void to_blocked(const float* src, float* dst, const Shape& logical, int threads) {
  const int64_t blocks = logical[1] / kChannelBlock, plane = logical[2] * logical[3];
  parallel_for(threads, logical[0] * blocks, plane * kChannelBlock, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const float* s = src + nb * kChannelBlock * plane;  // channels nb*8 .. nb*8+7 of batch n
      float* d = dst + nb * plane * kChannelBlock;
      for (int64_t i = 0; i < plane; ++i) {
        for (int64_t j = 0; j < kChannelBlock; ++j) d[i * kChannelBlock + j] = s[j * plane + i];
      }
    }
  });
}

void from_blocked(const float* src, float* dst, const Shape& logical, int threads) {
  const int64_t blocks = logical[1] / kChannelBlock, plane = logical[2] * logical[3];
  parallel_for(threads, logical[0] * blocks, plane * kChannelBlock, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const float* s = src + nb * plane * kChannelBlock;
      float* d = dst + nb * kChannelBlock * plane;
      for (int64_t j = 0; j < kChannelBlock; ++j) {
        for (int64_t i = 0; i < plane; ++i) d[j * plane + i] = s[i * kChannelBlock + j];
      }
    }
  });
}

Shape physical_shape(const Shape& logical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNChw8c) return blocked_shape(logical);
  if (layout == ActivationLayout::kNhwc) return {logical[0], logical[2], logical[3], logical[1]};
  return logical;
}

bool is_physical(const Shape& physical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNChw8c) return physical.size() == 5 && physical[4] == kChannelBlock;
  return physical.size() == 4;
}

Shape logical_of(const Shape& physical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNChw8c) return logical_shape(physical);
  if (layout == ActivationLayout::kNhwc) return {physical[0], physical[3], physical[1], physical[2]};
  return physical;
}

Status check_src_layout(const ir::Node& node, const Shape& physical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNchw || is_physical(physical, layout)) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "input '" + node.inputs[0] + "' has shape " + shape_to_string(physical) + "; src_layout " +
                            layout_name(layout) + " expects " +
                            (layout == ActivationLayout::kNChw8c ? "[N, C/8, H, W, 8]" : "[N, H, W, C]"));
}

Status check_dst_layout(const ir::Node& node, const Shape& logical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNchw) return Status::ok();
  const bool blocks = layout != ActivationLayout::kNChw8c || (logical.size() == 4 && logical[1] % kChannelBlock == 0);
  if (logical.size() == 4 && blocks) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        std::string("dst_layout ") + layout_name(layout) + " needs a 2-D convolution" +
                            (layout == ActivationLayout::kNChw8c ? " with a multiple of 8 output channels" : ""));
}

namespace {

/// Strides of NCHW [N, C, S] and NHWC [N, S, C] (S = H * W) walked as (n, c, s): the two sides of
/// strided_copy's tiled transpose between them.
std::vector<int64_t> nchw_strides(const Shape& logical) {
  const int64_t s = logical[2] * logical[3];
  return {logical[1] * s, s, 1};
}
std::vector<int64_t> nhwc_strides(const Shape& logical) {
  const int64_t s = logical[2] * logical[3];
  return {logical[1] * s, 1, logical[1]};
}
Shape walk(const Shape& logical) { return {logical[0], logical[1], logical[2] * logical[3]}; }

}  // namespace

void to_layout(const float* src, float* dst, const Shape& logical, ActivationLayout layout, int threads) {
  if (layout == ActivationLayout::kNChw8c) {
    to_blocked(src, dst, logical, threads);
  } else if (layout == ActivationLayout::kNhwc) {
    strided_copy(dst, nhwc_strides(logical), src, nchw_strides(logical), walk(logical), sizeof(float), threads);
  } else {
    std::copy_n(src, logical[0] * logical[1] * logical[2] * logical[3], dst);
  }
}

void from_layout(const float* src, float* dst, const Shape& logical, ActivationLayout layout, int threads) {
  if (layout == ActivationLayout::kNChw8c) {
    from_blocked(src, dst, logical, threads);
  } else if (layout == ActivationLayout::kNhwc) {
    strided_copy(dst, nchw_strides(logical), src, nhwc_strides(logical), walk(logical), sizeof(float), threads);
  } else {
    std::copy_n(src, logical[0] * logical[1] * logical[2] * logical[3], dst);
  }
}

namespace {

class ReorderKernel final : public Kernel {
 public:
  explicit ReorderKernel(bool to_blocked) : to_blocked_(to_blocked) {}
  const char* name() const override {
    return to_blocked_ ? "f32_reorder_nchw_to_nChw8c" : "f32_reorder_nChw8c_to_nchw";
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input is missing");
    if (x->dtype() != DataType::kFloat32) return unsupported_dtype(node, 0, x->dtype());
    const Shape& s = x->shape();
    const bool ok = to_blocked_ ? s.size() == 4 && s[1] % kChannelBlock == 0 : s.size() == 5 && s[4] == kChannelBlock;
    if (!ok) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          "input '" + node.inputs[0] + "' has shape " + shape_to_string(s) +
              (to_blocked_ ? "; expected [N, C, H, W] with C a multiple of 8" : "; expected [N, C/8, H, W, 8]"));
    }
    const Shape logical = to_blocked_ ? s : logical_shape(s);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.allocate_output(0, DataType::kFloat32, to_blocked_ ? blocked_shape(s) : logical));
    if (to_blocked_) {
      to_blocked(x->data<float>(), y->data<float>(), logical, ctx.threads());
    } else {
      from_blocked(x->data<float>(), y->data<float>(), logical, ctx.threads());
    }
    return Status::ok();
  }

 private:
  bool to_blocked_;
};

}  // namespace

void register_layout_kernels(KernelRegistry& registry) {
  registry.add(ir::kEdgemmDomain, "Reorder", 1, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(std::string to, info.node.attr_string("to", ""));
    if (to != "nChw8c" && to != "NCHW") {
      return ir::node_error(info.node, StatusCode::kInvalidModel,
                            "attribute 'to' must be \"nChw8c\" or \"NCHW\", got \"" + to + "\"");
    }
    return std::unique_ptr<Kernel>(std::make_unique<ReorderKernel>(to == "nChw8c"));
  });
}

}  // namespace edgemm::kernels
