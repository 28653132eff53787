#pragma once
/// \file attention.h
/// com.edgemm Attention (version 1, written by passes::fuse_attention): softmax attention of a
/// transformer encoder as one node, so that the [S, T] scores of a head live in cache a block of
/// query rows at a time instead of as whole tensors in memory (Vaswani et al., "Attention Is All
/// You Need", 2017, eq. 1; the row-block split without online rescaling).
///
/// Inputs (float32, one rank r >= 2 for Q, Kᵀ and V; S queries, T keys, D head size; leading
/// axes broadcast among all operands by numpy rules, as in the MatMuls, to L):
///   0 Q      [..., S, D]
///   1 Kt     [..., D, T]  the keys transposed, as exporters write the MatMul's second operand
///   2 V      [..., T, D]
///   3 mask   additive, rank <= r, ending in [1 or S, 1 or T]; optional (empty name)
/// Attribute: scale (float, default 1), the factor on Q·Kᵀ.
/// Output: Y [L..., S, D] = Softmax(scale · Q·Kᵀ + mask, last axis) · V, the graph
/// MatMul(Q, Kt) → Mul(scale) → Add(mask) → Softmax(axis = -1) → MatMul(·, V) it replaces.
/// Errors (naming the node and input): other dtypes or ranks, S, D, T that do not match, leading
/// axes that do not broadcast, a mask that would widen the scores (an S or T axis other than 1,
/// S or T; the separate ops would broadcast the scores up to it, which this node does not).

#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Factory of com.edgemm Attention kernels: blocks of 32 query rows on matmul_panels.h's tiles
/// where matmul_panels_available(), plain loops elsewhere (the reference). Errors:
/// kInvalidModel for a non-finite scale.
Expected<std::unique_ptr<Kernel>> make_attention(const KernelInfo& info);

}  // namespace edgemm::kernels
