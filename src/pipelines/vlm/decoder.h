#pragma once
/// \file decoder.h
/// Drives a decoder-only language model exported to ONNX with a KV cache, in the two forms
/// published exports use (docs/vlm.md "Decoder forms"): one graph that accepts a zero-length past,
/// and Optimum's merged graph with a `use_cache_branch` input choosing between an If's branches.
/// Inputs are found by the names transformers.js 4.3.1 feeds (src/models/modeling_utils.js,
/// decoder_forward): inputs_embeds, attention_mask, position_ids, past_key_values.N.key/value,
/// use_cache_branch, num_logits_to_keep; outputs logits and present.N.key/value.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::vlm {

/// Shape of the KV cache the decoder declares: past_key_values.N.key/value are float32
/// [batch, kv_heads, past_length, head_dim].
struct KvLayout {
  int layers = 0;    ///< number of past_key_values.N.key inputs (N = 0 .. layers-1)
  int kv_heads = 0;  ///< axis 1 of the past inputs
  int head_dim = 0;  ///< axis 3 of the past inputs
  int hidden = 0;    ///< last axis of inputs_embeds
};

/// One decoder Inferencer plus its KV cache, for batch 1. Not thread-safe (one sequence).
/// With a decoder rewritten by passes::bind_kv_cache (inputs kv_cache.N.key/value), the session
/// owns the [1, kv_heads, capacity, head_dim] cache buffers, lends them to every run and passes
/// each past_key_values.N.* as a [1, kv_heads, P, head_dim] view of them (only its shape is read);
/// otherwise each step's present outputs become the next step's past.
class DecoderSession {
 public:
  /// Wraps `decoder` (borrowed; must outlive the session). `kv_heads`/`head_dim`/`layers` from
  /// config.json fill axes the model leaves symbolic (0 = take them from the model).
  /// Errors: kInvalidModel naming the file and the missing or mistyped input/output (no
  /// inputs_embeds, no past_key_values.N.key/value pairs — "decoder without KV inputs" —, no
  /// logits, a present output missing for a past input).
  static Expected<DecoderSession> create(const Inferencer& decoder, const std::string& file, const KvLayout& hint);

  /// Runs the decoder on `inputs_embeds` float32 [1, S, hidden] after everything fed so far
  /// (positions past_length() .. past_length()+S-1, attention to all of them), appends the S new
  /// positions to the cache and returns the logits of the last position, float32 [vocab].
  /// Errors: kInvalidArgument for a wrong shape or dtype, kInvalidArgument when the context would
  /// exceed `max_context` (> 0), those of Inferencer::run.
  Expected<std::vector<float>> step(const Tensor& inputs_embeds);

  /// Drops the cache (the next step starts a new sequence).
  void reset();
  /// Keeps only the first `positions` positions of the cache (a conversation that departs from
  /// what was fed). Errors: kInvalidArgument when `positions` is negative or more than past_length().
  Status truncate(int64_t positions);
  /// Positions in the cache.
  int64_t past_length() const { return past_length_; }
  /// Context limit checked by step(); 0 = none.
  void set_max_context(int64_t tokens) { max_context_ = tokens; }
  /// The positions step() accepts in all: the smaller of the bound caches' capacity and
  /// set_max_context() (0 = no limit).
  int64_t context_limit() const;
  /// Bytes of KV cache the last step wrote: with bound caches, its S new positions
  /// (2 × layers × kv_heads × S × head_dim × 4); otherwise the whole present outputs, which the
  /// graph's Concat rewrites every step (2 × layers × kv_heads × (past + S) × head_dim × 4).
  int64_t last_step_kv_bytes_copied() const { return last_kv_bytes_; }
  /// True when the decoder reads caller-owned caches (kv_cache.N.* inputs).
  bool bound_cache() const { return !cache_names_.empty(); }
  /// Positions the bound caches hold (0 without them).
  int64_t cache_capacity() const { return capacity_; }

 private:
  DecoderSession() = default;
  /// Whether the bound caches' capacity, not the model's max_context, sets context_limit().
  bool cache_is_the_limit() const;
  Expected<std::vector<std::pair<std::string, Tensor>>> feeds(const Tensor& inputs_embeds);
  /// Finds the kv_cache.N.* inputs of a bound decoder and allocates their buffers.
  Status find_caches(const std::string& file);

  const Inferencer* decoder_ = nullptr;
  std::string file_;
  KvLayout layout_;
  std::string embeds_name_, mask_name_, position_name_, branch_name_, logits_keep_name_, logits_name_;
  DataType mask_dtype_ = DataType::kInt64, position_dtype_ = DataType::kInt64;
  std::vector<std::string> past_names_, present_names_;  // key, value per layer, in that order
  std::vector<Tensor> past_;                             // one per past name (unbound caches)
  std::vector<std::string> cache_names_;                 // kv_cache.N.key/value, per past name
  std::vector<Tensor> caches_;                           // [1, kv_heads, capacity, head_dim] each
  int64_t capacity_ = 0;
  int64_t past_length_ = 0;
  int64_t max_context_ = 0;
  int64_t last_kv_bytes_ = 0;
};

}  // namespace edgemm::vlm
