// Normalizers of tokenizer.json (tokenizers/src/normalizers in the Rust crate).
#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  std::string normalize(std::string_view text) const override { return normalize_utf8(text, form_); }

 private:
  NormalForm form_;
};

class Lowercase final : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override { return lowercase_utf8(text); }
};

class Replace final : public Normalizer {
 public:
  Replace(std::shared_ptr<const Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string normalize(std::string_view text) const override { return pattern_->replace_all(text, content_); }

 private:
  std::shared_ptr<const Regex> pattern_;
  std::string content_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string_view text) const override {
    return std::string(trim_whitespace(text, left_, right_));
  }

 private:
  bool left_, right_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prepend) : prepend_(std::move(prepend)) {}
  // The crate prepends only to non-empty text.
  std::string normalize(std::string_view text) const override {
    return text.empty() ? std::string() : prepend_ + std::string(text);
  }

 private:
  std::string prepend_;
};

/// BERT's normalizer (BertNormalizer of the crate, after google-research/bert tokenization.py).
class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text), chinese_chars_(chinese_chars), strip_accents_(strip_accents), lowercase_(lowercase) {}
  std::string normalize(std::string_view text) const override {
    std::string s;
    s.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const size_t begin = i;
      const char32_t c = next_code_point(text, i);
      if (clean_text_) {
        if (c == 0 || c == 0xFFFD || (c != '\t' && c != '\n' && c != '\r' && is_other(c))) continue;
        if (is_whitespace(c)) {
          s += ' ';
          continue;
        }
      }
      if (chinese_chars_ && is_chinese_char(c)) {
        s += ' ';
        s.append(text, begin, i - begin);
        s += ' ';
        continue;
      }
      s.append(text, begin, i - begin);
    }
    if (strip_accents_) s = strip_nonspacing_marks(normalize_utf8(s, NormalForm::kNFD));
    if (lowercase_) s = lowercase_utf8(s);
    return s;
  }

 private:
  static bool is_chinese_char(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
  }
  bool clean_text_, chinese_chars_, strip_accents_, lowercase_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  std::string normalize(std::string_view text) const override {
    std::string s(text);
    for (const auto& p : parts_) s = p->normalize(s);
    return s;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

Expected<std::unique_ptr<Normalizer>> load_normalizer(const Json& j, const std::string& path, const JsonReader& r) {
  if (j.is_null()) return std::unique_ptr<Normalizer>();
  EDGEMM_ASSIGN_OR_RETURN(std::string type, r.type(j, path));
  if (type == "NFC") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::kNFC));
  if (type == "NFD") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::kNFD));
  if (type == "NFKC") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::kNFKC));
  if (type == "NFKD") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::kNFKD));
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new Lowercase());
  if (type == "Replace") {
    EDGEMM_ASSIGN_OR_RETURN(auto pattern, r.pattern(j, path));
    EDGEMM_ASSIGN_OR_RETURN(std::string content, r.string(j, path, "content"));
    return std::unique_ptr<Normalizer>(new Replace(std::move(pattern), std::move(content)));
  }
  if (type == "Strip") {
    EDGEMM_ASSIGN_OR_RETURN(bool left, r.opt_bool(j, path, "strip_left", true));
    EDGEMM_ASSIGN_OR_RETURN(bool right, r.opt_bool(j, path, "strip_right", true));
    return std::unique_ptr<Normalizer>(new Strip(left, right));
  }
  if (type == "BertNormalizer") {
    EDGEMM_ASSIGN_OR_RETURN(bool clean_text, r.opt_bool(j, path, "clean_text", true));
    EDGEMM_ASSIGN_OR_RETURN(bool chinese_chars, r.opt_bool(j, path, "handle_chinese_chars", true));
    EDGEMM_ASSIGN_OR_RETURN(bool lowercase, r.opt_bool(j, path, "lowercase", true));
    EDGEMM_ASSIGN_OR_RETURN(bool strip_accents, r.opt_bool(j, path, "strip_accents", lowercase));  // null: as lowercase
    return std::unique_ptr<Normalizer>(new BertNormalizer(clean_text, chinese_chars, strip_accents, lowercase));
  }
  if (type == "StripAccents") {
    struct StripAccents final : Normalizer {
      std::string normalize(std::string_view text) const override { return strip_nonspacing_marks(text); }
    };
    return std::unique_ptr<Normalizer>(new StripAccents());
  }
  if (type == "Prepend") {
    EDGEMM_ASSIGN_OR_RETURN(std::string prepend, r.string(j, path, "prepend"));
    return std::unique_ptr<Normalizer>(new Prepend(std::move(prepend)));
  }
  if (type == "Sequence") {
    EDGEMM_ASSIGN_OR_RETURN(const Json* list, r.array(j, path, "normalizers"));
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (size_t i = 0; i < list->size(); ++i) {
      EDGEMM_ASSIGN_OR_RETURN(auto part,
                              load_normalizer((*list)[i], path + ".normalizers[" + std::to_string(i) + "]", r));
      if (part) parts.push_back(std::move(part));
    }
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
  }
  return r.unsupported(
      path, type, "NFC, NFD, NFKC, NFKD, Lowercase, Replace, Strip, StripAccents, Prepend, BertNormalizer, Sequence");
}

}  // namespace edgemm::text
