#pragma once
/// \file components.h
/// The component families of a Hugging Face tokenizer.json (normalizer, pre-tokenizer, model,
/// post-processor, decoder), each loaded from its JSON object by a factory that reports
/// unsupported types and malformed fields with the JSON path. Behaviour follows the Rust
/// `tokenizers` crate (tokenizers/src/{normalizers,pre_tokenizers,models,processors,decoders}).

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "edgemm/status.h"
#include "pipelines/text/unicode.h"

namespace edgemm::text {

using Json = nlohmann::json;

/// Reads typed fields of a JSON object, producing errors that name the source file and path.
class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  /// kInvalidModel "<source>: <path> <what>".
  Status invalid(const std::string& path, const std::string& what) const;
  /// kUnsupported "<source>: <path>.type "<type>" is not supported (<family> types: <known>)".
  Status unsupported(const std::string& path, const std::string& type, const std::string& known) const;

  /// The object's "type" string. Errors when `j` is not an object or has no string "type".
  Expected<std::string> type(const Json& j, const std::string& path) const;
  /// A required string / int / array / object member.
  Expected<std::string> string(const Json& j, const std::string& path, const char* key) const;
  Expected<int64_t> integer(const Json& j, const std::string& path, const char* key) const;
  Expected<const Json*> array(const Json& j, const std::string& path, const char* key) const;
  Expected<const Json*> object(const Json& j, const std::string& path, const char* key) const;
  /// Optional members: the default when missing or null; an error when of another type.
  Expected<bool> opt_bool(const Json& j, const std::string& path, const char* key, bool def) const;
  Expected<std::optional<std::string>> opt_string(const Json& j, const std::string& path, const char* key) const;
  /// A Replace/Split "pattern": {"String": s} (literal) or {"Regex": r}.
  Expected<std::shared_ptr<const Regex>> pattern(const Json& j, const std::string& path) const;

 private:
  std::string source_;
};

/// Heterogeneous hash so vocabularies are searched with std::string_view without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
/// token -> id.
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

/// Reads a model's "vocab" object (`path` names it) into `vocab`, and its inverse into `vocab_r`
/// (id -> token, "" for ids not used) and `has_id`. Errors: kInvalidModel for an id that is not
/// a non-negative 32-bit integer, naming the token (json_reader.cc).
Status read_vocab(const Json& vocab_json, const std::string& path, const JsonReader& r, Vocab& vocab,
                  std::vector<std::string>& vocab_r, std::vector<bool>& has_id);

// ---- normalizers (normalizers.cc) ---------------------------------------------------------
class Normalizer {
 public:
  virtual ~Normalizer() = default;
  /// Normalizes valid UTF-8 text.
  virtual std::string normalize(std::string_view text) const = 0;
};
/// `j` null -> nullptr (no normalizer).
Expected<std::unique_ptr<Normalizer>> load_normalizer(const Json& j, const std::string& path, const JsonReader& r);

// ---- pre-tokenizers (pre_tokenizers.cc) ---------------------------------------------------
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  /// Splits each piece further (and may rewrite it, e.g. ByteLevel's byte-to-char mapping).
  /// Empty pieces are dropped.
  virtual void pre_tokenize(std::vector<std::string>& pieces) const = 0;
};
Expected<std::unique_ptr<PreTokenizer>> load_pre_tokenizer(const Json& j, const std::string& path, const JsonReader& r);
/// GPT-2's byte-to-unicode table (bytes_to_unicode() in openai/gpt-2 encoder.py), as UTF-8.
const std::vector<std::string>& byte_to_unicode();
/// The inverse: the byte of a code point of that table, or -1.
int unicode_to_byte(char32_t c);

// ---- models (bpe.cc, wordpiece.cc) ---------------------------------------------------------
class Model {
 public:
  virtual ~Model() = default;
  /// Appends the ids of one pre-token.
  virtual void tokenize(const std::string& piece, std::vector<int32_t>& ids) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  /// nullptr when `id` is not in the model's vocabulary.
  virtual const std::string* id_to_token(int32_t id) const = 0;
  /// One more than the largest id.
  virtual int32_t vocab_size() const = 0;
  /// BPE's end_of_word_suffix ("" when none): transformers.js replaces it by " " after decoding.
  virtual std::string end_of_word_suffix() const { return {}; }
};
Expected<std::unique_ptr<Model>> load_model(const Json& j, const std::string& path, const JsonReader& r);
Expected<std::unique_ptr<Model>> load_bpe(const Json& j, const std::string& path, const JsonReader& r);
Expected<std::unique_ptr<Model>> load_wordpiece(const Json& j, const std::string& path, const JsonReader& r);

// ---- post-processors (post_processors.cc) -------------------------------------------------
/// A single sequence being post-processed: parallel vectors.
struct Sequence {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
  std::vector<int32_t> special;  ///< 1 for added special tokens
};
class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  /// Number of tokens process() adds to a single sequence.
  virtual int added_tokens() const = 0;
  /// Adds the special tokens (when `add_special_tokens`) and sets type ids.
  virtual void process(Sequence& seq, bool add_special_tokens) const = 0;
};
/// Special-token ids come from the JSON (RobertaProcessing/BertProcessing "cls"/"sep" pairs,
/// TemplateProcessing's special_tokens map); the tokenizer checks them against its vocabulary.
Expected<std::unique_ptr<PostProcessor>> load_post_processor(const Json& j, const std::string& path,
                                                             const JsonReader& r);

// ---- decoders (decoders.cc) ---------------------------------------------------------------
class Decoder {
 public:
  virtual ~Decoder() = default;
  /// The crate's Decoder::decode_chain: tokens in, strings out (joined by the caller).
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
  /// The contents of the added tokens, set once after loading on the top-level decoder only: a
  /// top-level ByteLevel passes them through as text instead of mapping their characters to
  /// bytes, as transformers.js does (and transformers' Python slow tokenizers); the Rust crate,
  /// and transformers.js inside a decoder Sequence, map "É" of an added token to the lone byte
  /// 0xC9 (decoded as U+FFFD). Sequence does not forward it, to stay with transformers.js.
  virtual void set_added_tokens(std::shared_ptr<const std::unordered_set<std::string>> added) {}
};
Expected<std::unique_ptr<Decoder>> load_decoder(const Json& j, const std::string& path, const JsonReader& r);
/// transformers' clean_up_tokenization: " ." -> ".", " ?" -> "?", " !" -> "!", " ," -> ",",
/// " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " 's" -> "'s", " 've" -> "'ve", " 're" -> "'re".
std::string clean_up_tokenization(std::string s);

}  // namespace edgemm::text
