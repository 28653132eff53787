/// \file transpose.cc
/// Axis permutations of the default ONNX domain, opsets 7–17 (ONNX Operators.md):
/// Transpose-1/13 (perm, default reversed axes), DepthToSpace-1/11/13 (blocksize; mode DCR
/// or CRD from 11), SpaceToDepth-1/13. DepthToSpace/SpaceToDepth are the spec's
/// reshape → transpose → reshape, done as one strided copy. All dtypes, copied as bytes;
/// strided_copy merges axes, memcpys contiguous runs, tiles moved inner axes and uses
/// several threads for large tensors.

#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/copy_util.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

using ir::node_error;

/// Writes `in` viewed as `view_shape` (contiguous), permuted by `perm`, into `out`
/// (contiguous, holding the permuted view's elements).
void permute_copy(const Tensor& in, const Shape& view_shape, const std::vector<int64_t>& perm,
                  Tensor& out, int threads) {
  const std::vector<int64_t> in_strides = contiguous_strides(view_shape);
  Shape out_shape(perm.size());
  std::vector<int64_t> src_strides(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    out_shape[k] = view_shape[perm[k]];
    src_strides[k] = in_strides[perm[k]];
  }
  strided_copy(out.raw_data(), contiguous_strides(out_shape), in.raw_data(), src_strides, out_shape,
               dtype_size(in.dtype()), threads);
}

Status run_transpose(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "data"));
  const int64_t rank = in->rank();
  std::vector<int64_t> perm;
  if (node.has_attr("perm")) {
    EDGEMM_ASSIGN_OR_RETURN(perm, node.attr_ints("perm"));
    if (static_cast<int64_t>(perm.size()) != rank) {
      return node_error(node, StatusCode::kInvalidArgument,
                        "attribute 'perm' has " + std::to_string(perm.size()) +
                            " entries but the input has rank " + std::to_string(rank));
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t& p : perm) {
      const int64_t original = p;
      if (p < 0) p += rank;  // tolerated, as ONNX Runtime does
      if (p < 0 || p >= rank || seen[p]) {
        return node_error(node, StatusCode::kInvalidArgument,
                          "attribute 'perm' is not a permutation of 0.." +
                              std::to_string(rank - 1) + " (bad entry " + std::to_string(original) +
                              ")");
      }
      seen[p] = true;
    }
  } else {
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
  }
  Shape out_shape(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) out_shape[k] = in->shape()[perm[k]];
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  permute_copy(*in, in->shape(), perm, *out, ctx.threads());
  return Status::ok();
}

Expected<int64_t> read_blocksize(const ir::Node& node) {
  if (!node.has_attr("blocksize")) {
    return node_error(node, StatusCode::kInvalidModel, "requires attribute 'blocksize'");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t b, node.attr_int("blocksize", 0));
  if (b <= 0) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "attribute 'blocksize' must be positive, got " + std::to_string(b));
  }
  return b;
}

Status check_rank4(const ir::Node& node, const Tensor& in) {
  if (in.rank() == 4) return Status::ok();
  return node_error(
      node, StatusCode::kInvalidArgument,
      "input 'input' must be 4-D [N,C,H,W], got shape " + shape_to_string(in.shape()));
}

/// DepthToSpace: [N,C,H,W] → [N, C/b², H·b, W·b].
/// DCR: view [N,b,b,C/b²,H,W], perm [0,3,4,1,5,2]; CRD: view [N,C/b²,b,b,H,W],
/// perm [0,1,4,2,5,3].
Status run_depth_to_space(KernelContext& ctx, int64_t opset) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_RETURN_IF_ERROR(check_rank4(node, *in));
  EDGEMM_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node));
  std::string mode = "DCR";
  if (opset >= 11) {
    EDGEMM_ASSIGN_OR_RETURN(mode, node.attr_string("mode", "DCR"));
  }
  if (mode != "DCR" && mode != "CRD") {
    return node_error(node, StatusCode::kInvalidArgument,
                      "attribute 'mode' must be DCR or CRD, got '" + mode + "'");
  }
  const int64_t n = in->dim(0), c = in->dim(1), h = in->dim(2), w = in->dim(3);
  if (b > c || c % (b * b) != 0) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "channel count " + std::to_string(c) +
                          " is not divisible by blocksize² = " + std::to_string(b) + "²");
  }
  const int64_t oc = c / (b * b);
  const Shape out_shape = {n, oc, h * b, w * b};
  EDGEMM_RETURN_IF_ERROR(check_output_shape(node, out_shape, in->dtype(), "output"));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  if (mode == "DCR") {
    permute_copy(*in, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, *out, ctx.threads());
  } else {
    permute_copy(*in, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, *out, ctx.threads());
  }
  return Status::ok();
}

/// SpaceToDepth: [N,C,H,W] → [N, C·b², H/b, W/b]: view [N,C,H/b,b,W/b,b], perm [0,3,5,1,2,4].
Status run_space_to_depth(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* in, required_input(ctx, 0, "input"));
  EDGEMM_RETURN_IF_ERROR(check_rank4(node, *in));
  EDGEMM_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node));
  const int64_t n = in->dim(0), c = in->dim(1), h = in->dim(2), w = in->dim(3);
  if (h % b != 0 || w % b != 0) {
    return node_error(node, StatusCode::kInvalidArgument,
                      "spatial size " + std::to_string(h) + "x" + std::to_string(w) +
                          " is not divisible by blocksize " + std::to_string(b));
  }
  const Shape out_shape = {n, c * b * b, h / b, w / b};
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in->dtype(), out_shape));
  permute_copy(*in, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, *out, ctx.threads());
  return Status::ok();
}

}  // namespace

void register_transpose_kernels(KernelRegistry& registry) {
  registry.add("", "Transpose", 1, simple_kernel(run_transpose, "transpose__strided"));
  registry.add("", "DepthToSpace", 1, versioned_kernel(run_depth_to_space));
  registry.add("", "SpaceToDepth", 1, simple_kernel(run_space_to_depth));
}

}  // namespace edgemm::kernels
