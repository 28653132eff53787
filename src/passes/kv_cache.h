#pragma once
/// \file kv_cache.h
/// bind_kv_cache: rewrites an exported decoder so that its KV cache lives in caller-owned
/// buffers appended in place (docs/vlm.md "KV cache"). Each layer's attention
///   present = Concat(past, new) → [Unsqueeze → Expand → Reshape (grouped-query repeat)] →
///   Transpose → MatMul(Q, ·) → [Mul/Div scale] → [Add mask] → Softmax → MatMul(·, V)
/// becomes one com.edgemm KvAttention (kernels/cpu/kv_attention.h) reading new graph inputs
/// kv_cache.N.key / kv_cache.N.value [batch, kv_heads, capacity, head_dim]; the present.N.*
/// outputs are dropped, and past_key_values.N.* are then read only for their shape (the caller
/// passes a [batch, kv_heads, P, head_dim] view of the cache: nothing reads its bytes). An
/// Optimum merged decoder (an If on the `use_cache_branch` input) is first replaced by its
/// with-past branch, which also serves the first step with a zero-length past.

#include <cstdint>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// What bind_kv_cache did.
struct KvCacheReport {
  int layers = 0;           ///< attention layers rewritten (one per past_key_values.N pair)
  bool inlined_if = false;  ///< the use_cache_branch If was replaced by its with-past branch
};

/// Rewrites `model` as described above, for caches of `capacity` positions (declared on the
/// kv_cache inputs). Errors: kInvalidArgument for capacity < 1; kUnsupported naming the node
/// when a layer's attention does not have the shape above or something other than Shape and
/// KvAttention still reads a past input's data (the model is then left unusable: reload it).
Expected<KvCacheReport> bind_kv_cache(ir::Model& model, int64_t capacity);

}  // namespace edgemm::passes
