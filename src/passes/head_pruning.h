#pragma once
/// \file head_pruning.h
/// Static attention-head pruning as a graph rewrite: removes chosen heads from the self-attention
/// of a transformer encoder exported the way Hugging Face / Optimum export it (separate q/k/v/out
/// projections as MatMul + Add, heads split by Reshape → Transpose, one Softmax per layer), and
/// leaves a smaller model of standard ONNX ops. Removing head h of a layer with H heads of size d
/// drops columns [h·d, (h+1)·d) of the q, k and v projection weights (MatMul B, [D, H·d]) and
/// biases, and rows [h·d, (h+1)·d) of the out projection's weight ([H·d, D]); the out projection's
/// bias stays. The result equals the unpruned model with those heads' outputs zeroed before the
/// out projection (Michel, Levy and Neubig, "Are Sixteen Heads Really Better than One?",
/// NeurIPS 2019, head masking). Rule and choices: docs/clip.md "Attention-head pruning".

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tools/prune.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// Finds every attention layer of `model` by structure. Normalizes the graph first (Constant
/// nodes and statically known shape chains folded into initializers: passes::fold_constants; dead
/// nodes and unused initializers dropped: passes::eliminate_dead_nodes), which does not change
/// what the model computes. For each Softmax, in graph order: its scores
/// come from a MatMul of two computed operands (through an optional mask Add and scalar Mul/Div),
/// its probabilities are read by a MatMul with V; Q, K and V each lead back, through Transposes,
/// one head-splitting Reshape ([..., H, d]), optional Mul/Div by a constant (the scale) and Add of a
/// constant (the bias), to a MatMul with a 2-D float32 weight initializer; the head outputs lead
/// forward through Transposes and one head-merging Reshape to the out projection MatMul with a
/// 2-D float32 weight [H·d, D_out]. Errors: kUnsupported when the model has no Softmax (not a
/// transformer) or a Softmax whose surroundings do not match, naming the layer, the Softmax and
/// the node where matching stopped; kInvalidModel when shapes disagree (projection widths that are
/// not H·d, naming the node).
Expected<std::vector<AttentionLayer>> find_attention_layers(ir::Model& model);

/// prune_attention_heads of edgemm/tools/prune.h on an ir::Model (layers found by
/// find_attention_layers()): the same rewrite and errors. New initializers and Concats get fresh
/// names; the old ones and stale inferred shapes are dropped.
Expected<HeadPruningReport> prune_attention_heads(ir::Model& model, const HeadPruningOptions& options);

}  // namespace edgemm::passes
