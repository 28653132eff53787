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

/// Split-13 (split sizes input), Squeeze-13 / Unsqueeze-13 (axes input), ReduceSum-13 (axes
/// input, noop_with_empty_axes) → the attribute forms of Split-11 / Squeeze-11 / Unsqueeze-11 /
/// ReduceSum-11, and negative axes of these and of the other reductions normalized for targets
/// below 11 (axes_downgrade.cc).
Status downgrade_axes(RewriteContext& ctx, const ir::Node& node);

/// Softmax-13 / LogSoftmax-13 / Hardmax-13 (one axis) → the coerced-2-D form of opsets 1–12:
/// relabelled when the axis is the last one, else Transpose (swap axis and last) → op on the
/// last axis → Transpose back (softmax_downgrade.cc).
Status downgrade_softmax(RewriteContext& ctx, const ir::Node& node);

/// Clip-11+ (min/max inputs) → Clip-6 (min/max float attributes) for targets below 11; the
/// bounds must be constants (clip_downgrade.cc).
Status downgrade_clip(RewriteContext& ctx, const ir::Node& node);

/// Resize-13 (optional roi and scales) → Resize-11 (roi and scales required): absent ones
/// become empty float32 constants (resize_downgrade.cc).
Status downgrade_resize(RewriteContext& ctx, const ir::Node& node);

/// Slice-10+ (starts/ends/axes/steps inputs) → Slice-1 (attributes; constants only, steps 1),
/// and negative axes made non-negative below opset 11 (slice_downgrade.cc).
Status downgrade_slice(RewriteContext& ctx, const ir::Node& node);

}  // namespace edgemm::convert
