#pragma once
/// \file prune.h
/// Pruning of transformers as graph rewrites, as `edgemm prune` does (docs/clip.md):
/// - attention heads: removes chosen heads from the self-attention of an encoder exported the
///   way Hugging Face / Optimum export it (separate q/k/v/out projections as MatMul + Add, heads
///   split by Reshape → Transpose, one Softmax per layer), leaving a smaller model of standard
///   ONNX ops equal to the unpruned one with those heads' outputs zeroed before the out
///   projection (Michel, Levy and Neubig, "Are Sixteen Heads Really Better than One?", NeurIPS
///   2019, head masking). Which heads: an explicit list, or the lowest scores on calibration data
///   (edgemm/tools/head_scoring.h);
/// - visual tokens: after encoder layer k of a vision transformer, a com.edgemm TokenPrune node
///   keeps the class token and the highest-scoring patch tokens (as EViT, Liang et al., ICLR
///   2022); only edgemm runs the result.
/// Library edgemm::passes.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"

namespace edgemm::passes {

/// One self-attention block as found in the graph (names refer to the graph after
/// the search normalized it: Constant nodes and static shape chains folded, dead nodes dropped).
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

/// Removes the heads in `options` from `model`: slices the q/k/v projection weights' columns
/// and biases and the out projection weight's rows, and rewrites the head count in the
/// head-splitting and head-merging Reshapes of each pruned layer (constant shapes of static
/// exports, or Shape → Gather → Concat pieces of dynamic ones). Every layer keeps at least one
/// head. Errors: kInvalidArgument for a layer outside 0..layers-1, a head outside 0..H-1 (naming
/// the layer and H), or a layer that would lose all its heads; kUnsupported when the model has
/// no Softmax (not a transformer) or a layer does not match the layout above (naming the layer,
/// its Softmax and the node where matching stopped), or for a Reshape shape of neither form;
/// kInvalidModel when projection widths are not H·d (naming the node). On error the model may
/// already be normalized (constants folded) but no head is removed.
Expected<HeadPruningReport> prune_attention_heads(OnnxModel& model, const HeadPruningOptions& options);

/// What to prune. Off unless keep_ratio < 1.
struct TokenPruningOptions {
  int after_layer = 0;      ///< k, 0-based encoder layer; layers 0..k see every token
  float keep_ratio = 1.0f;  ///< share of patch tokens kept, in (0, 1]
  /// "cls_attention" or "mean_abs" (docs/clip.md "Visual token pruning: the rule").
  std::string rule = "cls_attention";
  /// T = 1 + patches, the token count, for graphs that hard-code it in Reshape shapes; -1: taken
  /// from the inferred shape of layer k's output, else from those Reshapes ([B, T, ...]).
  int64_t tokens = -1;
};

/// What prune_visual_tokens() found and changed.
struct TokenPruningReport {
  int layers = 0;              ///< encoder layers found (attention Softmax nodes)
  std::string hidden;          ///< the residual-stream value pruned (layer k's output)
  std::string attention;       ///< layer k's attention probabilities (cls_attention), else ""
  int64_t tokens = -1;         ///< T = 1 + patches when the graph knows it statically, else -1
  int64_t kept_tokens = -1;    ///< 1 + M when tokens is known, else -1
  int reshapes_rewritten = 0;  ///< downstream Reshape shapes whose hard-coded T became 1 + M
};

/// Inserts TokenPrune after encoder layer `options.after_layer` of `model` (a vision encoder with
/// pre-LN layers, one Softmax per layer's attention, as Hugging Face / Optimum export them):
/// every reader of layer k's output reads the pruned tokens instead, and Reshape shapes after it
/// that hard-code the token count T get 1 + M. Errors (kInvalidArgument): keep_ratio outside
/// (0, 1], unknown rule, after_layer outside 0..layers-2 (naming the count found), no
/// LayerNormalization before the next layer's attention, or hard-coded Reshape shapes whose token
/// count cannot be told (naming one; pass options.tokens); kUnsupported for a graph with fewer
/// than 2 Softmax nodes.
Expected<TokenPruningReport> prune_visual_tokens(OnnxModel& model, const TokenPruningOptions& options);

}  // namespace edgemm::passes
