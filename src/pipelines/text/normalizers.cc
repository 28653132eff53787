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
  return r.unsupported(path, type, "NFC, NFD, NFKC, NFKD, Lowercase, Replace, Strip, Prepend, Sequence");
}

}  // namespace edgemm::text
