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
#include "edgemm/tools/prune.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// prune_visual_tokens of edgemm/tools/prune.h on an ir::Model. Layers are the Softmax nodes in
/// graph order; layer k's output is the input of the LayerNormalization nearest before Softmax k+1
/// (decomposed LayerNorms are fused first). T comes from options.tokens, else from the inferred
/// shape of the pruned value, else from the hard-coded Reshape shapes after it when they all
/// agree on axis 1 ([B, T, ...] as exporters write them); stale inferred shapes of the values
/// after it are dropped. Errors: as the public one.
Expected<TokenPruningReport> prune_visual_tokens(ir::Model& model, const TokenPruningOptions& options);

}  // namespace edgemm::passes
