#pragma once
/// \file rewrite_load.h
/// Loading a model with a graph rewrite applied between import and compilation, for pipelines
/// that adapt a published graph to the runtime (vlm: passes::bind_kv_cache).

#include <functional>
#include <memory>

#include "edgemm/inferencer.h"
#include "ir/graph.h"

namespace edgemm::session {

/// A graph rewrite run on the imported model; its inputs and outputs become the Inferencer's.
using ModelRewrite = std::function<Status(ir::Model&)>;

/// Inferencer::create with `rewrite` applied to the imported model before the optimization
/// passes. Native backend only (config.backend must be "native"). Errors: those of
/// Inferencer::create, kInvalidArgument for another backend, and the rewrite's own, prefixed
/// with the model path.
Expected<std::unique_ptr<Inferencer>> create_with_rewrite(const InferencerConfig& config, const ModelRewrite& rewrite);

}  // namespace edgemm::session
