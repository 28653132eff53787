#pragma once
/// \file downgrade_rewrites.h
/// The per-op-family rewrites opset_downgrade.cc dispatches to. Each takes one node whose op
/// changed between the target and source opsets of `ctx`, emits the nodes that compute the same
/// outputs at the target opset (ctx.emit), and counts itself (ctx.count). Errors: kUnsupported
/// (cannot_convert) naming the node when the node's form cannot be expressed at the target
/// (e.g. axes computed at run time, an unknown rank that a rewrite needs).

#include "convert/rewrite_context.h"
#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::convert {

/// LayerNormalization-17 → ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add (ONNX
/// Operators.md LayerNormalization-17, its function body), with Casts around the normalization
/// when stash_type (float32) differs from the input dtype and Reciprocal for the InvStdDev
/// output (layer_norm_downgrade.cc).
Status downgrade_layer_norm(RewriteContext& ctx, const ir::Node& node);

/// Split-13 (split sizes input), Squeeze-13 / Unsqueeze-13 (axes input), ReduceSum-13 and the
/// other reductions at 18 (axes input, noop_with_empty_axes) → the attribute forms of Split-11 /
/// Squeeze-11 / Unsqueeze-11 / Reduce*-11 (or -13 for the other reductions); Split-18's
/// num_outputs → explicit sizes when the axis' size is known, else Split-13's equal split; and
/// negative axes normalized for targets below 11 (axes_downgrade.cc).
Status downgrade_axes(RewriteContext& ctx, const ir::Node& node);

/// Softmax-13 / LogSoftmax-13 / Hardmax-13 (one axis) → the coerced-2-D form of opsets 1–12:
/// relabelled when the axis is the last one, else Transpose (swap axis and last) → op on the
/// last axis → Transpose back (softmax_downgrade.cc).
Status downgrade_softmax(RewriteContext& ctx, const ir::Node& node);

/// Clip-11+ (min/max inputs) → Clip-6 (min/max float attributes) for targets below 11; the
/// bounds must be constants (clip_downgrade.cc).
Status downgrade_clip(RewriteContext& ctx, const ir::Node& node);

/// Resize-18/19 → Resize-13 when antialias, axes, keep_aspect_ratio_policy and the coordinate
/// mode are ones Resize-13 has; Resize-13 (optional roi and scales) → Resize-11 (roi and scales
/// required): absent ones become empty float32 constants (resize_downgrade.cc).
Status downgrade_resize(RewriteContext& ctx, const ir::Node& node);

/// Slice-10+ (starts/ends/axes/steps inputs) → Slice-1 (attributes; constants only, steps 1),
/// and negative axes made non-negative below opset 11 (slice_downgrade.cc).
Status downgrade_slice(RewriteContext& ctx, const ir::Node& node);

// Opsets 18–21 → 17 and below (next_downgrade.cc; ONNX Operators.md of each op).

/// Pad-18 (axes input) → Pad-13 pads for every axis (needs the input's rank); Pad-19's "wrap"
/// mode is refused; targets below 11 (pads as an attribute) are refused.
Status downgrade_pad(RewriteContext& ctx, const ir::Node& node);

/// Mish-18 → Softplus, Tanh, Mul (its function body: X * tanh(softplus(X))).
Status downgrade_mish(RewriteContext& ctx, const ir::Node& node);

/// Gelu-20 → 0.5·X·(1 + Erf(X/√2)), or with approximate "tanh" 0.5·X·(1 + Tanh(√(2/π)·(X +
/// 0.044715·X³))) (its function body); float32/float64 inputs.
Status downgrade_gelu(RewriteContext& ctx, const ir::Node& node);

/// GroupNormalization-18/21 → Reshape to [N, G, -1], InstanceNormalization, Reshape back; with
/// opset 21's per-channel scale and bias applied after, as Mul and Add over [1, C, 1, ...]
/// (needs X's rank); float32 inputs.
Status downgrade_group_norm(RewriteContext& ctx, const ir::Node& node);

/// GridSample-20 → GridSample-16: 4-D input only, modes "linear" / "cubic" renamed "bilinear" /
/// "bicubic".
Status downgrade_grid_sample(RewriteContext& ctx, const ir::Node& node);

/// DFT-20 (axis as an optional input, default -2) → DFT-17 (axis attribute, non-negative with
/// the input's rank).
Status downgrade_dft(RewriteContext& ctx, const ir::Node& node);

}  // namespace edgemm::convert
