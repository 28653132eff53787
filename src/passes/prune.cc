/// \file prune.cc
/// edgemm/tools/prune.h on OnnxModel: the rewrites of head_pruning.h and token_pruning.h.

#include "edgemm/tools/prune.h"

#include "ir/onnx_model_access.h"
#include "passes/head_pruning.h"
#include "passes/token_pruning.h"

namespace edgemm::passes {

Expected<HeadPruningReport> prune_attention_heads(OnnxModel& model, const HeadPruningOptions& options) {
  return prune_attention_heads(ir::model_of(model), options);
}

Expected<TokenPruningReport> prune_visual_tokens(OnnxModel& model, const TokenPruningOptions& options) {
  return prune_visual_tokens(ir::model_of(model), options);
}

}  // namespace edgemm::passes
