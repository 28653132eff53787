// Decoders of tokenizer.json (tokenizers/src/decoders in the Rust crate): token strings back to
// text.
#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

/// Invalid UTF-8 becomes U+FFFD, one per maximal ill-formed subpart (Rust's from_utf8_lossy,
/// WHATWG TextDecoder).
std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t begin = i;
    if (static_cast<unsigned char>(bytes[i]) < 0x80) {
      out += bytes[i++];
      continue;
    }
    const char32_t c = next_code_point(bytes, i);
    if (c == 0xFFFD && bytes.compare(begin, 3, "\xEF\xBF\xBD") != 0) {
      out += "\xEF\xBF\xBD";
    } else {
      out.append(bytes, begin, i - begin);
    }
  }
  return out;
}

class ByteLevel final : public Decoder {
 public:
  // Runs of ordinary tokens: characters mapped back to bytes, then UTF-8 decoded (lossy); a
  // token with a character outside the byte table contributes its own UTF-8 bytes (the crate).
  // Added tokens are passed through between the runs (transformers.js ByteLevelDecoder).
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    for (auto& t : tokens) {
      if (added_ && added_->count(t)) {
        if (!bytes.empty()) out.push_back(utf8_lossy(bytes));
        bytes.clear();
        out.push_back(std::move(t));
        continue;
      }
      std::string mapped;
      bool all = true;
      for (size_t i = 0; i < t.size();) {
        const int b = unicode_to_byte(next_code_point(t, i));
        if (b < 0) {
          all = false;
          break;
        }
        mapped += static_cast<char>(b);
      }
      bytes += all ? mapped : t;
    }
    if (!bytes.empty()) out.push_back(utf8_lossy(bytes));
    return out;
  }
  void set_added_tokens(std::shared_ptr<const std::unordered_set<std::string>> added) override {
    added_ = std::move(added);
  }

 private:
  std::shared_ptr<const std::unordered_set<std::string>> added_;
};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t prev = 0, pos;
  while ((pos = s.find(from, prev)) != std::string::npos) {
    out.append(s, prev, pos - prev);
    out.append(to);
    prev = pos + from.size();
  }
  out.append(s, prev);
  s = std::move(out);
}

class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
    return tokens;
  }

 private:
  std::string suffix_;
};

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      auto& t = tokens[i];
      if (i != 0) {
        if (!prefix_.empty() && t.compare(0, prefix_.size(), prefix_) == 0) {
          t.erase(0, prefix_.size());
        } else {
          t.insert(t.begin(), ' ');
        }
      }
      if (cleanup_) t = clean_up_tokenization(t);
    }
    return tokens;
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class Fuse final : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    return {all};
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      for (size_t i = 0; i < start_ && !content_.empty() && t.compare(0, content_.size(), content_) == 0; ++i) {
        t.erase(0, content_.size());
      }
      for (size_t i = 0; i < stop_ && !content_.empty() && t.size() >= content_.size() &&
                         t.compare(t.size() - content_.size(), content_.size(), content_) == 0;
           ++i) {
        t.erase(t.size() - content_.size());
      }
    }
    return tokens;
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::shared_ptr<const Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) t = pattern_->replace_all(t, content_);
    return tokens;
  }

 private:
  std::shared_ptr<const Regex> pattern_;
  std::string content_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (const auto& p : parts_) tokens = p->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

}  // namespace

std::string clean_up_tokenization(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
  return s;
}

Expected<std::unique_ptr<Decoder>> load_decoder(const Json& j, const std::string& path, const JsonReader& r) {
  if (j.is_null()) return std::unique_ptr<Decoder>();
  EDGEMM_ASSIGN_OR_RETURN(std::string type, r.type(j, path));
  if (type == "ByteLevel") return std::unique_ptr<Decoder>(new ByteLevel());
  if (type == "BPEDecoder") {
    EDGEMM_ASSIGN_OR_RETURN(auto suffix, r.opt_string(j, path, "suffix"));
    return std::unique_ptr<Decoder>(new BpeDecoder(suffix.value_or("</w>")));
  }
  if (type == "WordPiece") {
    EDGEMM_ASSIGN_OR_RETURN(auto prefix, r.opt_string(j, path, "prefix"));
    EDGEMM_ASSIGN_OR_RETURN(bool cleanup, r.opt_bool(j, path, "cleanup", true));
    return std::unique_ptr<Decoder>(new WordPieceDecoder(prefix.value_or("##"), cleanup));
  }
  if (type == "Fuse") return std::unique_ptr<Decoder>(new Fuse());
  if (type == "Strip") {
    EDGEMM_ASSIGN_OR_RETURN(std::string content, r.string(j, path, "content"));
    EDGEMM_ASSIGN_OR_RETURN(int64_t start, r.integer(j, path, "start"));
    EDGEMM_ASSIGN_OR_RETURN(int64_t stop, r.integer(j, path, "stop"));
    if (start < 0 || stop < 0) return r.invalid(path, "start and stop must not be negative.");
    return std::unique_ptr<Decoder>(
        new StripDecoder(std::move(content), static_cast<size_t>(start), static_cast<size_t>(stop)));
  }
  if (type == "Replace") {
    EDGEMM_ASSIGN_OR_RETURN(auto pattern, r.pattern(j, path));
    EDGEMM_ASSIGN_OR_RETURN(std::string content, r.string(j, path, "content"));
    return std::unique_ptr<Decoder>(new ReplaceDecoder(std::move(pattern), std::move(content)));
  }
  if (type == "Sequence") {
    EDGEMM_ASSIGN_OR_RETURN(const Json* list, r.array(j, path, "decoders"));
    std::vector<std::unique_ptr<Decoder>> parts;
    for (size_t i = 0; i < list->size(); ++i) {
      EDGEMM_ASSIGN_OR_RETURN(auto part, load_decoder((*list)[i], path + ".decoders[" + std::to_string(i) + "]", r));
      if (part) parts.push_back(std::move(part));
    }
    return std::unique_ptr<Decoder>(new SequenceDecoder(std::move(parts)));
  }
  return r.unsupported(path, type, "ByteLevel, BPEDecoder, WordPiece, Fuse, Strip, Replace, Sequence");
}

}  // namespace edgemm::text
