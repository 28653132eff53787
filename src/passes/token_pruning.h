#pragma once
/// \file token_pruning.h
/// Visual token pruning as a graph rewrite: after encoder layer k of a vision transformer, a
/// com.edgemm TokenPrune node (kernels/cpu/token_prune.h) keeps the class token and the
/// highest-scoring patch tokens, and layers k+1.. run on those. The rule (scores, count, order)
/// is in docs/clip.md "Visual token pruning: the rule"; the idea follows token-dropping work such
/// as EViT (Liang et al., ICLR 2022: keep the tokens the class token attends to most).

#include <cstdint>
#include <string>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// What to prune. Off unless keep_ratio < 1.
struct TokenPruningOptions {
  int after_layer = 0;                 ///< k, 0-based encoder layer; layers 0..k see every token
  float keep_ratio = 1.0f;             ///< share of patch tokens kept, in (0, 1]
  std::string rule = "cls_attention";  ///< "cls_attention" or "mean_abs" (token_prune.h)
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

/// Inserts TokenPrune after encoder layer `options.after_layer` of `model` (a vision encoder in
/// the layout Hugging Face / Optimum export: pre-LN layers, one Softmax per layer's attention).
/// Layers are the Softmax nodes in graph order; layer k's output is the input of the
/// LayerNormalization nearest before Softmax k+1 (decomposed LayerNorms are fused first). Every
/// reader of that value reads the pruned tokens instead. Reshape shapes after it that hard-code
/// the token count T (static exports) get 1 + M instead, and stale inferred shapes of the
/// values after it are dropped. T comes from options.tokens, else from the inferred shape of the
/// pruned value, else from the hard-coded Reshape shapes after it when they all agree on axis 1
/// ([B, T, ...] as exporters write them). Errors (kInvalidArgument): keep_ratio outside (0, 1],
/// unknown rule, after_layer outside 0..layers-2 (naming the count found), no LayerNormalization
/// before the next layer's attention, or hard-coded Reshape shapes whose token count cannot be
/// told (naming one; pass options.tokens); kUnsupported for a graph with fewer than 2 Softmax
/// nodes (not a transformer encoder).
Expected<TokenPruningReport> prune_visual_tokens(ir::Model& model, const TokenPruningOptions& options);

}  // namespace edgemm::passes
