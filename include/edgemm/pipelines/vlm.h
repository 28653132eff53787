#pragma once
/// \file vlm.h
/// Vision-language generation on model packages in the layout transformers.js 4.3.1 runs for
/// Idefics3 / SmolVLM (src/models/idefics3): config.json, preprocessor_config.json,
/// processor_config.json, tokenizer.json (+ tokenizer_config.json), optional
/// generation_config.json, and onnx/vision_encoder.onnx (pixel_values, pixel_attention_mask →
/// image_features), onnx/embed_tokens.onnx (input_ids → inputs_embeds),
/// onnx/decoder_model_merged.onnx (inputs_embeds, attention_mask, position_ids,
/// past_key_values.N.key/value [, use_cache_branch] → logits, present.N.key/value). Shapes, head
/// counts, the image token and the special tokens come from the files (docs/vlm.md).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/image_view.h"
#include "edgemm/inferencer.h"
#include "edgemm/pipelines/clip.h"
#include "edgemm/pipelines/ocr.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::vlm {

/// The fields of config.json, generation_config.json, processor_config.json and
/// preprocessor_config.json the pipeline uses (Hugging Face names).
struct VlmConfig {
  std::string model_type;        ///< config.json `model_type` ("idefics3", "smolvlm")
  int64_t image_token_id = -1;   ///< `image_token_id` (or `image_token_index`)
  int layers = 0;                ///< text_config.num_hidden_layers
  int kv_heads = 0;              ///< text_config.num_key_value_heads (num_attention_heads when absent)
  int head_dim = 0;              ///< text_config.head_dim (hidden_size / num_attention_heads when absent)
  int hidden = 0;                ///< text_config.hidden_size
  int max_context = 0;           ///< text_config.max_position_embeddings, tokens (0 = no limit known)
  std::vector<int64_t> eos_ids;  ///< generation_config.json (else config.json) `eos_token_id`, int or list
  int image_seq_len = 0;         ///< processor_config.json `image_seq_len`: image tokens per frame
  /// preprocessor_config.json read as the CLIP processor reads it (resize by `size`, resample,
  /// rescale, normalize: transformers.js' ImageProcessor.preprocess), before the frames below.
  clip::ImageProcessorConfig image_processor;
  int max_image_size = 0;           ///< `max_image_size.longest_edge`: side of every frame, pixels
  bool do_image_splitting = false;  ///< large images become a grid of frames + the global frame
};

/// Loading options.
/// RuntimeOptions apply to the vision encoder, the embedder and the decoder. The decoder with a
/// bound KV cache (bind_kv_cache) runs on backend "native" only (kInvalidArgument otherwise).
struct VlmOptions : RuntimeOptions {
  /// Decoder file in onnx/: "decoder_model_merged.onnx" (either form: zero-length past, or
  /// Optimum's use_cache_branch + If). Other files, e.g. an int4 "decoder_model_merged_q4.onnx".
  std::string decoder_file = "decoder_model_merged.onnx";
  /// Rewrite the decoder so that its KV cache is appended in place (passes::bind_kv_cache,
  /// docs/vlm.md "KV cache"); a decoder the rewrite does not recognise runs as published, its
  /// Concat copying the whole cache every step (kv_cache_mode() says which and why).
  bool bind_kv_cache = true;
  /// Positions the bound cache holds; 0 = text_config.max_position_embeddings, at most 4096.
  int kv_capacity = 0;
};

/// Token selection (docs/vlm.md "Sampling"; src/pipelines/vlm/sampling.h; names and defaults of transformers'
/// GenerationConfig).
struct SamplingOptions {
  bool do_sample = false;           ///< false: greedy
  float temperature = 1.0f;         ///< >= 0; 0 = greedy
  int top_k = 50;                   ///< >= 0; 0 = no top-k
  float top_p = 1.0f;               ///< in (0, 1]; 1 = no top-p
  float repetition_penalty = 1.0f;  ///< > 0; 1 = none
  uint64_t seed = 0;                ///< seed of the std::mt19937_64 generator
};

/// Generation options.
struct GenerateOptions {
  SamplingOptions sampling;         ///< greedy by default
  int max_new_tokens = 64;          ///< stop after this many new tokens
  std::vector<int64_t> stop_ids;    ///< stop tokens added to the model's eos ids
  bool skip_special_tokens = true;  ///< in the returned text
  /// Asked after each new token (after the TokenCallback); when it returns true, generation ends
  /// with stop_reason "cancelled" and the tokens so far (e.g. a server whose client went away, a
  /// deadline, a stop string). May be empty. Runs on the generating thread.
  std::function<bool()> should_stop;
};

/// Timings of one generate() call, milliseconds.
struct GenerateTimings {
  double preprocess_ms = 0;               ///< image decoding and preprocessing, tokenization
  double vision_ms = 0;                   ///< vision encoder
  double prefill_ms = 0;                  ///< embed_tokens + the decoder over the prompt
  double decode_ms = 0;                   ///< all later decoder steps
  double first_token_ms = 0;              ///< from the start of generate() to the first new token
  int64_t prompt_tokens = 0;              ///< prompt length after image-token expansion
  int64_t cached_prompt_tokens = 0;       ///< of those, positions already in the KV cache (not prefilled again)
  int64_t new_tokens = 0;                 ///< generated tokens (including a final stop token)
  int64_t kv_bytes_copied_last_step = 0;  ///< KV cache bytes moved by the last decode step
};

/// Result of generate().
struct GenerateResult {
  std::vector<int64_t> ids;  ///< new token ids, in order (a stop token included when reached)
  std::string text;          ///< decoded new tokens
  /// "stop_token", "max_new_tokens", "context": the context limit (the model's, or the KV cache
  /// capacity) was reached, and the last id was not fed back (the answer so far is kept), or
  /// "cancelled": GenerateOptions::should_stop returned true.
  std::string stop_reason;
  GenerateTimings timings;
};

/// OCR+VQA (docs/vlm.md "OCR+VQA"): the question a VLM gets after OCR, the recognized lines in
/// reading order, each with the top-left corner of its box in image pixels, before the question:
///   "Text in the image (OCR, reading order, [x, y] = top-left corner in pixels):\n"
///   "[x, y] line\n" per line, then "\nQuestion: " + question.
/// With no line: "Text in the image (OCR): none.\n\nQuestion: " + question.
std::string ocr_grounded_question(const ocr::OcrResult& ocr, const std::string& question);

/// One part of a chat message's content: text, or the place of an image.
struct ChatPart {
  enum class Type { kText, kImage };
  Type type = Type::kText;
  std::string text;  ///< the text of a kText part
};

/// One message of a conversation, as chat templates read it: {role, content: [parts]}.
struct ChatMessage {
  std::string role;  ///< "user", "assistant" or "system"
  std::vector<ChatPart> content;
};

/// Receives each new token id and the text it adds. The pieces joined are always a prefix of
/// GenerateResult::text, never text that changes later: a character whose bytes span several
/// tokens comes whole with its last token (the pieces before are empty). When generation is
/// cancelled (should_stop) right after such a partial character, its U+FFFD is only in `text`.
using TokenCallback = std::function<void(int64_t id, const std::string& piece)>;

class VlmModelImpl;

/// A loaded VLM package. Not thread-safe: one generation at a time. Owns its models.
class VlmModel {
 public:
  ~VlmModel();
  VlmModel(VlmModel&&) noexcept;
  VlmModel& operator=(VlmModel&&) noexcept;

  /// Loads the package in folder `dir`. Errors: kIo naming a missing folder or file,
  /// kInvalidModel for malformed JSON or models whose inputs/outputs do not fit (naming the file
  /// and the field or input, e.g. a decoder without KV inputs), kUnsupported for settings edgemm
  /// does not implement. Never throws.
  static Expected<VlmModel> load(const std::string& dir, const VlmOptions& options = {});

  /// Generates after `prompt`, a chat-formatted text in which each "<image>" stands for one of
  /// `image_paths`, in order (the processor expands it to the image's tokens), starting a new
  /// conversation (the KV cache is cleared). `on_token` (may be empty) streams the answer.
  /// Errors: kInvalidArgument when the numbers of "<image>" and images differ, the prompt is longer
  /// than the context, or an image file cannot be decoded (naming it); kInvalidModel when the
  /// vision encoder's image token count differs from the prompt's (naming both numbers); those of
  /// the tokenizer, the sampler and Inferencer::run.
  Expected<GenerateResult> generate(const std::string& prompt, const std::vector<std::string>& image_paths,
                                    const GenerateOptions& options, const TokenCallback& on_token = {});
  /// As generate() with in-memory images (edgemm/image_view.h; alpha dropped, gray expanded);
  /// kInvalidArgument for an inconsistent view.
  Expected<GenerateResult> generate(const std::string& prompt, const std::vector<ImageView>& images,
                                    const GenerateOptions& options, const TokenCallback& on_token = {});

  /// Continues the conversation: `prompt` is the whole conversation so far (earlier turns, the
  /// answers as the chat template renders them, the new turn), its "<image>" markers the earlier
  /// images then `new_images`. Positions the KV cache already holds for the prompt's leading
  /// tokens are not computed again (GenerateTimings::cached_prompt_tokens); where the prompt
  /// departs from what was fed, the cache is cut back. Errors as generate().
  Expected<GenerateResult> extend(const std::string& prompt, const std::vector<std::string>& new_images,
                                  const GenerateOptions& options, const TokenCallback& on_token = {});
  /// As extend() with in-memory images (as generate()).
  Expected<GenerateResult> extend(const std::string& prompt, const std::vector<ImageView>& new_images,
                                  const GenerateOptions& options, const TokenCallback& on_token = {});

  /// The package's chat template applied to one user turn: `images` image parts, then `question`
  /// as text, and the generation prompt (transformers.js apply_chat_template). Errors:
  /// kInvalidModel when the package has no chat template (chat_template.json or
  /// tokenizer_config.json), those of text::ChatTemplate.
  Expected<std::string> chat_prompt(const std::string& question, int images) const;
  /// The chat template applied to a whole conversation (messages as ChatSession::messages()),
  /// with the generation prompt.
  Expected<std::string> chat_prompt(const std::vector<ChatMessage>& messages) const;

  const VlmConfig& config() const;
  /// "bound (capacity N)" when the decoder appends to edgemm's cache in place, else "concat" and
  /// the reason the rewrite did not apply.
  const std::string& kv_cache_mode() const;

 private:
  explicit VlmModel(std::unique_ptr<VlmModelImpl> impl);
  std::unique_ptr<VlmModelImpl> impl_;
};

/// A multi-turn chat (`edgemm chat`) over a VlmModel, which keeps the KV cache between turns:
/// each turn renders the whole conversation with the package's chat template and extend()s, so
/// earlier turns are not prefilled again. Borrows the model (it must outlive the session).
class ChatSession {
 public:
  explicit ChatSession(VlmModel& model) : model_(&model) {}

  /// One user turn: `image_paths` (image parts first), then `text`; generates the answer and adds
  /// it to the conversation. Errors: those of VlmModel::chat_prompt and extend(); on error the
  /// turn is not added.
  Expected<GenerateResult> send(const std::string& text, const std::vector<std::string>& image_paths,
                                const GenerateOptions& options, const TokenCallback& on_token = {});
  /// As send() with in-memory images (as VlmModel::generate()).
  Expected<GenerateResult> send(const std::string& text, const std::vector<ImageView>& images,
                                const GenerateOptions& options, const TokenCallback& on_token = {});
  /// Starts a new conversation.
  void reset();
  /// The conversation so far: user turns (image parts, then text) and the answers.
  const std::vector<ChatMessage>& messages() const { return messages_; }

 private:
  template <typename Image>
  Expected<GenerateResult> send_turn(const std::string& text, const std::vector<Image>& images,
                                     const GenerateOptions& options, const TokenCallback& on_token);

  VlmModel* model_;
  std::vector<ChatMessage> messages_;
  bool started_ = false;
};

}  // namespace edgemm::vlm
