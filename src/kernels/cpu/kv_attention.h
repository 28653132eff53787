#pragma once
/// \file kv_attention.h
/// com.edgemm KvAttention: scaled dot-product attention of a decoder step over a KV cache that
/// the caller owns and the kernel appends to in place, so a decode step copies only its new keys
/// and values (passes::bind_kv_cache puts it into decoders; docs/vlm.md "KV cache"). The same
/// contract as ONNX Runtime's com.microsoft GroupQueryAttention with past_present_share_buffer.
///
/// Inputs (B batch, Hq query heads, Hkv key/value heads dividing Hq, S new positions, P cached
/// positions, T = P + S, C cache capacity, D head size; all float32):
///   0 Q      [B, Hq, S, D]  queries (rotary positions applied)
///   1 K      [B, Hkv, S, D] new keys (rotary positions applied)
///   2 V      [B, Hkv, S, D] new values
///   3 mask   additive, broadcastable to [B, Hq, S, T] (rank 4, each of the first three axes 1 or
///            full); optional (empty name)
///   4 past   [B, Hkv, P, D] only its shape is read: P, the positions already in the cache
///   5 cache_k [B, Hkv, C, D] the key cache: rows [P, P + S) are overwritten with K
///   6 cache_v [B, Hkv, C, D] the value cache, likewise with V
/// Attribute: scale (float, the factor on Q·Kᵀ).
/// Output: Y [B, Hq, S, D] = softmax(scale · Q·Kᵀ + mask) · V over the T positions, query head h
/// reading key/value head h / (Hq / Hkv).
/// Errors (naming node and input): shapes that do not fit, T > C ("the KV cache holds C positions").

#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Factory of com.edgemm KvAttention kernels. Errors: kInvalidModel for a non-positive scale.
Expected<std::unique_ptr<Kernel>> make_kv_attention(const KernelInfo& info);

}  // namespace edgemm::kernels
