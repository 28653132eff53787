#pragma once
/// \file tokenizer.h
/// Text tokenizers loaded from a Hugging Face `tokenizer.json` (the file format of the Rust
/// `tokenizers` crate, https://huggingface.co/docs/tokenizers/api/tokenizer, also read by
/// transformers.js). Supported components (behaviour as in the `tokenizers` crate):
///  - normalizers: NFC, NFD, NFKC, NFKD, Lowercase, Replace (String or Regex pattern), Strip,
///    StripAccents, Prepend, BertNormalizer, Sequence;
///  - pre-tokenizers: ByteLevel (add_prefix_space, use_regex with GPT-2's pattern), Split
///    (String or Regex pattern; behavior Removed, Isolated, MergedWithPrevious, MergedWithNext,
///    Contiguous; invert), Whitespace, WhitespaceSplit, BertPreTokenizer, Sequence;
///  - models: BPE (vocab; merges as "a b" strings or ["a", "b"] pairs; unk_token, fuse_unk,
///    byte_fallback, continuing_subword_prefix, end_of_word_suffix, ignore_merges), WordPiece;
///  - post-processors: ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing,
///    Sequence;
///  - decoders: ByteLevel, BPEDecoder, WordPiece, Fuse, Strip, Replace, Sequence;
///  - added tokens (special, lstrip, rstrip, single_word, normalized), padding and truncation.
/// Unicode (normalization forms, case mapping, regex with \p{..} classes) comes from ICU.
/// Anything else is refused at load time with kUnsupported naming the JSON path and type.
/// Only single sequences are encoded (no text pairs); offsets are not tracked.
///
/// Checked against npm @huggingface/tokenizers 0.2.0 and transformers.js 4.3.1 (exact ids and
/// decoded text on tests/fixtures/tokenizers/corpus.txt for GPT-2, a GPT-2 variant, WordPiece
/// and CLIP styles). Where the crate and transformers.js differ, edgemm follows:
///  - the crate for regex classes: \s is Unicode White_Space (Oniguruma; JavaScript's \s also
///    has U+FEFF and lacks U+0085) and Whitespace's \w is Unicode (transformers.js: ASCII);
///  - the crate for continuing_subword_prefix in BPE (transformers.js reads a suffix instead);
///  - the crate for truncation: max_length counts the special tokens and keeps them
///    (transformers.js cuts the ids after adding them, dropping a CLIP text's eos);
///  - transformers.js for decoding: a BPE end_of_word_suffix ("</w>") becomes " ", and a
///    top-level ByteLevel decoder passes added tokens through as text.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::text {

/// One encoded text. All vectors have the same length (tokens).
struct Encoding {
  std::vector<int32_t> ids;                  ///< token ids, including special tokens and padding
  std::vector<int32_t> attention_mask;       ///< 1 for real tokens, 0 for padding
  std::vector<int32_t> type_ids;             ///< segment ids from the post-processor (0 for one sequence)
  std::vector<int32_t> special_tokens_mask;  ///< 1 for tokens added by the post-processor or padding
  std::vector<std::string> tokens;           ///< token strings (vocabulary form, e.g. "Ġworld")
};

/// Truncation (the crate's TruncationParams for a single sequence). `max_length` counts the
/// special tokens the post-processor adds: the text's own tokens are cut to
/// `max_length - added` and the special tokens are then added.
struct TruncationOptions {
  int max_length = 0;      ///< tokens; 0 = no truncation
  bool from_left = false;  ///< direction Left: drop tokens at the start instead of the end
};

/// Padding (the crate's PaddingParams), applied by encode_batch() (and by encode() when a
/// fixed length is set). Padding is on the right unless `left` is set.
struct PaddingOptions {
  enum class Strategy { kNone, kLongest, kFixed };
  Strategy strategy = Strategy::kNone;
  int length = 0;                   ///< kFixed: the length (tokens); texts longer than this are not cut
  int pad_to_multiple_of = 0;       ///< round the target length up to a multiple of this; 0 = off
  int32_t pad_id = 0;               ///< id of the padding (CLIP: 1023, its <|endoftext|>)
  int32_t pad_type_id = 0;          ///< type id of the padding
  std::string pad_token = "[PAD]";  ///< token string reported in Encoding::tokens for padding
  bool left = false;                ///< direction Left: pad before the text
};

/// Options read from `tokenizer_config.json` beside `tokenizer.json` (transformers' file),
/// when present.
struct TokenizerConfig {
  std::optional<int64_t> model_max_length;  ///< e.g. 77 for CLIP; absent or huge = none
  std::optional<std::string> pad_token;     ///< e.g. "<|endoftext|>" for CLIP
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  /// transformers' clean_up_tokenization_spaces (" ." -> "." etc. after decoding); true when
  /// the file does not say, as transformers.js.
  bool clean_up_tokenization_spaces = true;
};

struct TokenizerImpl;

/// A loaded tokenizer. encode / decode are const and may be called from several threads at
/// once (the BPE word cache is locked); set_padding() / set_truncation() must not race with
/// them. Copies share the loaded tables (vocabulary, merges) and own their padding and
/// truncation settings (initialized from tokenizer.json's `padding` and `truncation`).
class Tokenizer {
 public:
  /// Loads `path`: a tokenizer.json file, or a folder holding `tokenizer.json` (and optionally
  /// `tokenizer_config.json`, read into config()).
  /// Errors: kIo when the file cannot be read; kInvalidModel for malformed JSON, a missing or
  /// mistyped field, a merge naming a token not in the vocabulary, or a special token of a
  /// post-processor missing from the vocabulary; kUnsupported for a component type edgemm does
  /// not implement (the message names the JSON path, e.g. `tokenizer.json:
  /// pre_tokenizer.pretokenizers[1].type "Metaspace" is not supported`). Never throws.
  static Expected<Tokenizer> from_file(const std::string& path);

  /// Loads from the text of a tokenizer.json; `source` names it in error messages.
  /// `config_json` is the text of a tokenizer_config.json, or empty. Errors as from_file().
  static Expected<Tokenizer> from_json(std::string_view json, std::string_view config_json = {},
                                       std::string source = "tokenizer.json");

  /// Encodes one text (UTF-8): added tokens are split out, the rest normalized,
  /// pre-tokenized and run through the model; then truncation, the post-processor's special
  /// tokens when `add_special_tokens`, and fixed-length padding.
  /// Errors: kInvalidArgument when `text` is not valid UTF-8, or truncation's max_length is
  /// smaller than the number of special tokens to add.
  Expected<Encoding> encode(std::string_view text, bool add_special_tokens = true) const;

  /// Encodes several texts, then pads them as set by set_padding() (longest: to the longest of
  /// the batch). Errors as encode().
  Expected<std::vector<Encoding>> encode_batch(const std::vector<std::string>& texts,
                                               bool add_special_tokens = true) const;

  /// Decodes ids back to text with the decoder; tokens of special added tokens are dropped
  /// when `skip_special_tokens`. As transformers.js: a BPE end_of_word_suffix left in the text
  /// becomes " " (CLIP; trimmed when skipping special tokens), and
  /// config().clean_up_tokenization_spaces applies.
  /// Errors: kInvalidArgument for an id outside [0, vocab_size()).
  Expected<std::string> decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  /// The id of a token string (model vocabulary or added token), if any.
  std::optional<int32_t> token_to_id(std::string_view token) const;
  /// The token string of an id; empty when unknown.
  std::string id_to_token(int32_t id) const;
  /// One more than the largest id (model vocabulary and added tokens).
  int32_t vocab_size() const;
  /// Number of special tokens the post-processor adds to one sequence (2 for CLIP, 0 for GPT-2).
  int num_special_tokens_to_add() const;

  void set_truncation(const TruncationOptions& truncation);
  void set_padding(const PaddingOptions& padding);
  const TruncationOptions& truncation() const;
  const PaddingOptions& padding() const;
  const TokenizerConfig& config() const;

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl);
  Expected<Encoding> encode_unpadded(std::string_view text, bool add_special_tokens) const;
  Status pad(std::vector<Encoding>& encodings) const;
  std::shared_ptr<const TokenizerImpl> impl_;
  TruncationOptions truncation_;
  PaddingOptions padding_;
};

}  // namespace edgemm::text
