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
#include "ir/graph.h"

namespace edgemm::passes {

/// One self-attention block as found in the graph (names refer to the graph after
/// find_attention_layers() normalized it).
struct AttentionLayer {
  int layer = 0;           ///< 0-based, the Softmax nodes in graph order
  std::string softmax;     ///< the Softmax node's name
  int64_t heads = 0;       ///< H
  int64_t head_dim = 0;    ///< d (unchanged by pruning, so is the attention scale)
  int64_t hidden = 0;      ///< D, rows of the q/k/v projection weights
  std::string q_weight;    ///< initializer [D, H·d] of the q projection MatMul (likewise k, v)
  std::string k_weight;    ///< initializer [D, H·d] of the k projection MatMul
  std::string v_weight;    ///< initializer [D, H·d] of the v projection MatMul
  std::string out_weight;  ///< initializer [H·d, D_out] of the out projection MatMul
  std::string out_matmul;  ///< the out projection MatMul node's name
  /// The value holding every head's output, softmax(QKᵀ)·V, [B, H, T, d] (the MatMul after the
  /// Softmax), i.e. what head scoring observes.
  std::string head_outputs;
};

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

/// What to prune: layer → head indices to remove (0-based; repeats ignored). Layers not listed
/// keep every head.
struct HeadPruningOptions {
  std::map<int, std::vector<int>> remove;  ///< layer → heads to remove
};

/// One layer's outcome in a HeadPruningReport.
struct PrunedLayer {
  int layer = 0;             ///< 0-based attention layer
  std::string softmax;       ///< the layer's Softmax node
  int64_t heads = 0;         ///< H before pruning
  int64_t head_dim = 0;      ///< d
  std::vector<int> removed;  ///< sorted head indices removed
  std::vector<int> kept;     ///< sorted head indices kept (renumbered 0.. in the pruned model)
  int shapes_rewritten = 0;  ///< Reshape shapes (constants or Concat pieces) rewritten
};

/// What prune_attention_heads() found and changed.
struct HeadPruningReport {
  int layers = 0;                   ///< attention layers found
  std::vector<PrunedLayer> pruned;  ///< one entry per attention layer, in layer order
  int64_t heads_before = 0;         ///< total over layers
  int64_t heads_after = 0;
  int64_t weight_bytes_before = 0;  ///< bytes of all initializers before the rewrite (after normalizing)
  int64_t weight_bytes_after = 0;   ///< bytes of all initializers after it
};

/// Parses an explicit head list "L:h,L:h,..." (e.g. "0:1,2:0,2:3": layer 0 head 1, layer 2 heads 0
/// and 3) into options. Errors: kInvalidArgument naming the entry that is not two non-negative
/// integers separated by ':' (an empty list is an error too).
Expected<HeadPruningOptions> parse_head_list(const std::string& text);

/// Removes the heads in `options` from `model` (find_attention_layers() finds the layers): slices
/// the q/k/v projection weights' columns and biases (and per-channel scales, if any) and the out
/// projection weight's rows, and rewrites the head count H → H' in the head-splitting Reshapes and
/// H·d → H'·d in the head-merging Reshape of each pruned layer, whether their shapes are
/// constants (static exports: [B, T, H, d], [B, T, H·d]) or Concats of Shape → Gather → Unsqueeze
/// pieces with constant H and d (dynamic exports; the merging Reshape's hidden piece, which
/// exporters take from the layer input's shape, becomes the constant H'·d). New initializers and
/// Concats get fresh names; the old ones and stale inferred shapes are dropped. Every layer keeps
/// at least one head. Errors: kInvalidArgument for a layer outside 0..layers-1, a head outside
/// 0..H-1 (naming the layer and H), or a layer that would lose all its heads; the errors of
/// find_attention_layers(); kUnsupported for a Reshape shape that is neither (naming it). On error
/// the model may already be normalized (folded) but no head is removed.
Expected<HeadPruningReport> prune_attention_heads(ir::Model& model, const HeadPruningOptions& options);

}  // namespace edgemm::passes
