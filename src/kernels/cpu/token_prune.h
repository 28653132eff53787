#pragma once
/// \file token_prune.h
/// com.edgemm TokenPrune: visual token pruning inside a vision transformer (passes::prune_visual_tokens
/// inserts it after an encoder layer; docs/clip.md "Visual token pruning: the rule").
///
/// Inputs: X (float32 [B, T, D], the residual stream after layer k: token 0 is the class token,
/// tokens 1..T-1 the N = T - 1 patches), P (float32 [B, H, T, T], layer k's softmax attention
/// probabilities; required for rule "cls_attention", unused for "mean_abs").
/// Attributes: keep_ratio (float in (0, 1]), rule ("cls_attention" or "mean_abs").
/// Output: Y (float32 [B, 1 + M, D]), M = ceil(keep_ratio · N): per image the class token and the
/// M patches with the highest score (ties: lower index first), in their original order.
/// Scores of patch j: cls_attention = mean over heads of P[b, h, 0, j]; mean_abs = mean over d
/// of |X[b, j, d]|.

#include <cstdint>
#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// M = ceil(keep_ratio · patches), computed so that a ratio whose product is a whole number in
/// exact arithmetic (0.3 · 10) is not rounded up by float error; at least 1 when patches > 0.
int64_t pruned_patch_count(double keep_ratio, int64_t patches);

/// Factory of com.edgemm TokenPrune kernels. Errors: kInvalidModel for a keep_ratio outside
/// (0, 1] or an unknown rule (naming the node and attribute).
Expected<std::unique_ptr<Kernel>> make_token_prune(const KernelInfo& info);

}  // namespace edgemm::kernels
