// DecoderSession: feeds a KV-cache decoder step by step.

#include "pipelines/vlm/decoder.h"

#include <cstring>

namespace edgemm::vlm {
namespace {

const ValueInfo* find(const std::vector<ValueInfo>& values, const std::string& name) {
  for (const ValueInfo& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

bool is_integer(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

/// Extent of axis `axis` of `v` when static, else `fallback`.
int static_dim(const ValueInfo& v, size_t axis, int fallback) {
  if (v.rank_known && axis < v.shape.size() && v.shape[axis].is_static()) return static_cast<int>(v.shape[axis].value);
  return fallback;
}

Tensor integer_tensor(DataType dtype, Shape shape, int64_t first, bool count_up) {
  Tensor t = Tensor::create(dtype, std::move(shape)).value();
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const int64_t v = count_up ? first + i : first;
    if (dtype == DataType::kInt64) {
      t.data<int64_t>()[i] = v;
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

}  // namespace

Expected<DecoderSession> DecoderSession::create(const Inferencer& decoder, const std::string& file,
                                                const KvLayout& hint) {
  DecoderSession s;
  s.decoder_ = &decoder;
  s.file_ = file;
  s.layout_ = hint;
  const auto& ins = decoder.inputs();
  const auto& outs = decoder.outputs();
  const ValueInfo* embeds = find(ins, "inputs_embeds");
  if (embeds == nullptr || embeds->dtype != DataType::kFloat32) {
    return Status(StatusCode::kInvalidModel, file +
                                                 ": the decoder has no float32 input 'inputs_embeds' [batch, "
                                                 "sequence, hidden] (the VLM layout of transformers.js)");
  }
  s.embeds_name_ = embeds->name;
  s.layout_.hidden = static_dim(*embeds, 2, hint.hidden);
  if (const ValueInfo* v = find(ins, "attention_mask")) {
    if (!is_integer(v->dtype)) return Status(StatusCode::kInvalidModel, file + ": 'attention_mask' is not int64/int32");
    s.mask_name_ = v->name;
    s.mask_dtype_ = v->dtype;
  }
  if (const ValueInfo* v = find(ins, "position_ids")) {
    if (!is_integer(v->dtype)) return Status(StatusCode::kInvalidModel, file + ": 'position_ids' is not int64/int32");
    s.position_name_ = v->name;
    s.position_dtype_ = v->dtype;
  }
  if (const ValueInfo* v = find(ins, "use_cache_branch")) {
    if (v->dtype != DataType::kBool)
      return Status(StatusCode::kInvalidModel, file + ": 'use_cache_branch' is not bool");
    s.branch_name_ = v->name;
  }
  if (find(ins, "num_logits_to_keep") != nullptr) s.logits_keep_name_ = "num_logits_to_keep";
  const ValueInfo* logits = find(outs, "logits");
  if (logits == nullptr) return Status(StatusCode::kInvalidModel, file + ": the decoder has no output 'logits'");
  s.logits_name_ = logits->name;

  for (int layer = 0;; ++layer) {
    const std::string prefix = "past_key_values." + std::to_string(layer);
    const ValueInfo* key = find(ins, prefix + ".key");
    const ValueInfo* value = find(ins, prefix + ".value");
    if (key == nullptr && value == nullptr) break;
    if (key == nullptr || value == nullptr) {
      return Status(StatusCode::kInvalidModel, file + ": '" + prefix + (key ? ".value" : ".key") +
                                                   "' is missing (the cache needs a key and a value per layer)");
    }
    for (const ValueInfo* past : {key, value}) {
      if (past->dtype != DataType::kFloat32 || (past->rank_known && past->shape.size() != 4)) {
        return Status(StatusCode::kInvalidModel,
                      file + ": '" + past->name + "' must be float32 [batch, kv_heads, past_length, head_dim]");
      }
      const std::string present = "present" + past->name.substr(std::strlen("past_key_values"));
      if (find(outs, present) == nullptr && find(ins, "kv_cache.0.key") == nullptr) {
        return Status(StatusCode::kInvalidModel,
                      file + ": output '" + present + "' for input '" + past->name + "' is missing");
      }
      s.past_names_.push_back(past->name);
      s.present_names_.push_back(present);
    }
    s.layout_.kv_heads = static_dim(*key, 1, hint.kv_heads);
    s.layout_.head_dim = static_dim(*key, 3, hint.head_dim);
  }
  s.layout_.layers = static_cast<int>(s.past_names_.size() / 2);
  if (s.layout_.layers == 0) {
    return Status(StatusCode::kInvalidModel, file +
                                                 ": decoder without KV inputs: no 'past_key_values.0.key' / "
                                                 "'past_key_values.0.value' inputs (export it with use_cache=True)");
  }
  if (s.layout_.kv_heads <= 0 || s.layout_.head_dim <= 0 || s.layout_.hidden <= 0) {
    return Status(StatusCode::kInvalidModel,
                  file +
                      ": the KV cache shape is symbolic and config.json does not give num_key_value_heads, "
                      "head_dim and hidden_size");
  }
  if (hint.layers > 0 && hint.layers != s.layout_.layers) {
    return Status(StatusCode::kInvalidModel, file + ": " + std::to_string(s.layout_.layers) +
                                                 " past_key_values layers, but config.json says num_hidden_layers " +
                                                 std::to_string(hint.layers));
  }
  EDGEMM_RETURN_IF_ERROR(s.find_caches(file));
  s.reset();
  return s;
}

Status DecoderSession::find_caches(const std::string& file) {
  const auto& ins = decoder_->inputs();
  if (find(ins, "kv_cache.0.key") == nullptr) return Status::ok();
  for (const std::string& past : past_names_) {
    const std::string name = "kv_cache" + past.substr(std::strlen("past_key_values"));
    const ValueInfo* cache = find(ins, name);
    const int64_t capacity = cache != nullptr ? static_dim(*cache, 2, 0) : 0;
    if (capacity <= 0 || (capacity_ > 0 && capacity != capacity_)) {
      return Status(StatusCode::kInvalidModel,
                    file + ": input '" + name + "' for '" + past + "' is missing or has no fixed capacity on axis 2");
    }
    capacity_ = capacity;
    cache_names_.push_back(name);
    EDGEMM_ASSIGN_OR_RETURN(Tensor buffer,
                            Tensor::create(DataType::kFloat32, {1, layout_.kv_heads, capacity_, layout_.head_dim}));
    caches_.push_back(std::move(buffer));
  }
  return Status::ok();
}

void DecoderSession::reset() {
  past_.clear();
  for (size_t i = 0; i < past_names_.size() && !bound_cache(); ++i) {
    past_.push_back(Tensor::create(DataType::kFloat32, {1, layout_.kv_heads, 0, layout_.head_dim}).value());
  }
  past_length_ = 0;
  last_kv_bytes_ = 0;
}

Status DecoderSession::truncate(int64_t positions) {
  if (positions < 0 || positions > past_length_) {
    return Status(StatusCode::kInvalidArgument, "cannot keep " + std::to_string(positions) + " of the " +
                                                    std::to_string(past_length_) + " cached positions");
  }
  if (positions == past_length_) return Status::ok();
  if (positions == 0) {
    reset();
    return Status::ok();
  }
  for (Tensor& past : past_) {  // unbound caches: copy the leading positions of each head
    const int64_t heads = past.dim(1), d = past.dim(3);
    EDGEMM_ASSIGN_OR_RETURN(Tensor kept, Tensor::create(DataType::kFloat32, {1, heads, positions, d}));
    for (int64_t h = 0; h < heads; ++h) {
      std::memcpy(kept.data<float>() + h * positions * d, past.data<float>() + h * past_length_ * d,
                  sizeof(float) * positions * d);
    }
    past = std::move(kept);
  }
  past_length_ = positions;  // bound caches: later rows are overwritten by the next steps
  return Status::ok();
}

Expected<std::vector<std::pair<std::string, Tensor>>> DecoderSession::feeds(const Tensor& inputs_embeds) {
  const int64_t s = inputs_embeds.dim(1);
  std::vector<std::pair<std::string, Tensor>> in;
  in.emplace_back(embeds_name_, inputs_embeds);
  if (!mask_name_.empty()) in.emplace_back(mask_name_, integer_tensor(mask_dtype_, {1, past_length_ + s}, 1, false));
  if (!position_name_.empty()) {
    in.emplace_back(position_name_, integer_tensor(position_dtype_, {1, s}, past_length_, true));
  }
  if (!branch_name_.empty()) {
    Tensor branch = Tensor::create(DataType::kBool, {1}).value();
    branch.data<bool>()[0] = past_length_ > 0;
    in.emplace_back(branch_name_, std::move(branch));
  }
  if (!logits_keep_name_.empty()) in.emplace_back(logits_keep_name_, Tensor::from_int64s({}, {1}));
  for (size_t i = 0; i < past_names_.size(); ++i) {
    if (!bound_cache()) {
      in.emplace_back(past_names_[i], past_[i]);
      continue;
    }
    // A view with the past's shape; only its shape is read (passes/kv_cache.h).
    Tensor& cache = caches_[i];
    in.emplace_back(
        past_names_[i],
        Tensor::borrow(DataType::kFloat32, {1, layout_.kv_heads, past_length_, layout_.head_dim}, cache.raw_data()));
    in.emplace_back(cache_names_[i], cache);
  }
  return in;
}

bool DecoderSession::cache_is_the_limit() const {
  return bound_cache() && (max_context_ <= 0 || capacity_ < max_context_);
}

int64_t DecoderSession::context_limit() const { return cache_is_the_limit() ? capacity_ : max_context_; }

Expected<std::vector<float>> DecoderSession::step(const Tensor& inputs_embeds) {
  if (inputs_embeds.dtype() != DataType::kFloat32 || inputs_embeds.rank() != 3 || inputs_embeds.dim(0) != 1 ||
      inputs_embeds.dim(1) < 1 || inputs_embeds.dim(2) != layout_.hidden) {
    return Status(StatusCode::kInvalidArgument, "inputs_embeds must be float32 [1, S >= 1, " +
                                                    std::to_string(layout_.hidden) + "], got " +
                                                    shape_to_string(inputs_embeds.shape()));
  }
  const int64_t s = inputs_embeds.dim(1);
  const int64_t limit = context_limit();
  if (limit > 0 && past_length_ + s > limit) {
    return Status(StatusCode::kInvalidArgument, "the context would hold " + std::to_string(past_length_ + s) +
                                                    " tokens, more than the " + std::to_string(limit) +
                                                    (cache_is_the_limit() ? " of the KV cache" : " of the model"));
  }
  EDGEMM_ASSIGN_OR_RETURN(auto in, feeds(inputs_embeds));
  std::vector<std::string> wanted = {logits_name_};
  if (!bound_cache()) wanted.insert(wanted.end(), present_names_.begin(), present_names_.end());
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> out, decoder_->run(in, wanted));
  const Tensor& logits = out[0];
  if (logits.dtype() != DataType::kFloat32 || logits.rank() != 3 || logits.dim(0) != 1 || logits.dim(1) < 1) {
    return Status(StatusCode::kInvalidModel,
                  file_ + ": logits are " + shape_to_string(logits.shape()) + "; expected float32 [1, S, vocab]");
  }
  const int64_t vocab = logits.dim(2);
  const float* last = logits.data<float>() + (logits.dim(1) - 1) * vocab;
  last_kv_bytes_ = bound_cache() ? static_cast<int64_t>(past_names_.size()) * layout_.kv_heads * s * layout_.head_dim *
                                       static_cast<int64_t>(sizeof(float))
                                 : 0;
  for (size_t i = 0; i < past_.size(); ++i) {
    Tensor& present = out[i + 1];
    if (present.rank() != 4 || present.dim(2) != past_length_ + s) {
      return Status(StatusCode::kInvalidModel, file_ + ": '" + present_names_[i] + "' is " +
                                                   shape_to_string(present.shape()) + "; expected past length " +
                                                   std::to_string(past_length_ + s) + " on axis 2");
    }
    last_kv_bytes_ += static_cast<int64_t>(present.byte_size());
    past_[i] = std::move(present);
  }
  past_length_ += s;
  return std::vector<float>(last, last + vocab);
}

}  // namespace edgemm::vlm
