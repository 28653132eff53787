#pragma once
/// \file unicode.h
/// Unicode helpers for the tokenizers, on ICU: UTF-8 validation, normalization forms, case
/// mapping, White_Space, and a regex that finds matches in UTF-8 text (ICU regex syntax,
/// which covers the Oniguruma patterns of Hugging Face tokenizer.json files: \p{L}, \p{N},
/// lookahead, (?i:...); ICU's \s is Unicode White_Space, like Oniguruma's).

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::text {

/// True when `s` is well-formed UTF-8 (no surrogates, no overlongs).
bool is_valid_utf8(std::string_view s);

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };
/// Unicode normalization of valid UTF-8 text (ICU Normalizer2).
std::string normalize_utf8(std::string_view s, NormalForm form);
/// Full Unicode lowercase mapping (root locale; final sigma in context), as Rust's
/// str::to_lowercase.
std::string lowercase_utf8(std::string_view s);
/// Full Unicode uppercase mapping (root locale, e.g. "ß" -> "SS"), as JavaScript's
/// String.prototype.toUpperCase.
std::string uppercase_utf8(std::string_view s);
/// Unicode White_Space (Rust's char::is_whitespace).
bool is_whitespace(char32_t c);
/// Rust's char::is_alphanumeric: Alphabetic or a number (Nd, Nl, No).
bool is_alphanumeric(char32_t c);
/// General category C* (Cc, Cf, Cs, Co, Cn): Rust's char::is_other.
bool is_other(char32_t c);
/// Removes nonspacing marks (Mn) from valid UTF-8 (the crate's StripAccents; precomposed letters
/// keep their accents unless NFD ran first, as BertNormalizer does).
std::string strip_nonspacing_marks(std::string_view s);
/// Decodes the code point at byte `i` of valid UTF-8 `s`; advances `i`.
char32_t next_code_point(std::string_view s, size_t& i);
/// Trims White_Space from the left and/or right of valid UTF-8 text.
std::string_view trim_whitespace(std::string_view s, bool left, bool right);

/// A compiled regular expression (immutable, shareable between threads).
class Regex {
 public:
  /// Compiles an ICU pattern. Errors: kInvalidModel naming `where` and the ICU error.
  static Expected<std::shared_ptr<const Regex>> compile(const std::string& pattern, const std::string& where);
  /// A pattern matching `literal` exactly (the tokenizer.json `{"String": ...}` form).
  static Expected<std::shared_ptr<const Regex>> literal(const std::string& literal, const std::string& where);
  ~Regex();
  /// Byte ranges [begin, end) of the successive non-overlapping matches in valid UTF-8 `s`,
  /// left to right (empty matches included, as Rust's find_iter).
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;
  /// Replaces every match with `content` (no group references).
  std::string replace_all(std::string_view s, std::string_view content) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Regex();
};

}  // namespace edgemm::text
