// Pre-tokenizers of tokenizer.json (tokenizers/src/pre_tokenizers in the Rust crate).
#include <mutex>

#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct Segment {
  size_t begin, end;
  bool flag;  // before the behavior: is a match; after: is to be removed
};

/// NormalizedString::split of the crate: the matches of `regex` (flipped by `invert`) are
/// removed, isolated or merged with a neighbour; empty pieces are dropped.
void split_piece(const std::string& piece, const Regex& regex, Behavior behavior, bool invert,
                 std::vector<std::string>& out) {
  std::vector<Segment> matches;
  size_t prev = 0;
  for (const auto& [b, e] : regex.find_all(piece)) {
    if (prev != b) matches.push_back({prev, b, false});
    matches.push_back({b, e, true});
    prev = e;
  }
  if (prev != piece.size()) matches.push_back({prev, piece.size(), false});
  if (invert) {
    for (auto& m : matches) m.flag = !m.flag;
  }
  std::vector<Segment> splits;
  switch (behavior) {
    case Behavior::kRemoved:
      splits = matches;
      break;
    case Behavior::kIsolated:
      for (auto m : matches) splits.push_back({m.begin, m.end, false});
      break;
    case Behavior::kContiguous: {
      bool previous = false;
      for (const auto& m : matches) {
        if (m.flag == previous && !splits.empty()) {
          splits.back().end = m.end;
        } else {
          splits.push_back({m.begin, m.end, false});
        }
        previous = m.flag;
      }
      break;
    }
    case Behavior::kMergedWithPrevious: {
      bool previous = false;
      for (const auto& m : matches) {
        if (m.flag && !previous && !splits.empty()) {
          splits.back().end = m.end;
        } else {
          splits.push_back({m.begin, m.end, false});
        }
        previous = m.flag;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool previous = false;
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->flag && !previous && !splits.empty()) {
          splits.back().begin = it->begin;
        } else {
          splits.push_back({it->begin, it->end, false});
        }
        previous = it->flag;
      }
      std::reverse(splits.begin(), splits.end());
      break;
    }
  }
  for (const auto& s : splits) {
    if (!s.flag && s.end > s.begin) out.push_back(piece.substr(s.begin, s.end - s.begin));
  }
}

void split_all(std::vector<std::string>& pieces, const Regex& regex, Behavior behavior, bool invert) {
  std::vector<std::string> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) split_piece(p, regex, behavior, invert, out);
  pieces = std::move(out);
}

constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, std::shared_ptr<const Regex> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    if (add_prefix_space_) {
      for (auto& p : pieces) {
        if (!p.empty() && p[0] != ' ') p.insert(p.begin(), ' ');
      }
    }
    if (regex_) split_all(pieces, *regex_, Behavior::kIsolated, false);
    const auto& table = byte_to_unicode();
    for (auto& p : pieces) {
      std::string mapped;
      mapped.reserve(p.size() * 2);
      for (unsigned char c : p) mapped += table[c];
      p = std::move(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  std::shared_ptr<const Regex> regex_;  // null: use_regex false
};

class Split final : public PreTokenizer {
 public:
  Split(std::shared_ptr<const Regex> regex, Behavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override { split_all(pieces, *regex_, behavior_, invert_); }

 private:
  std::shared_ptr<const Regex> regex_;
  Behavior behavior_;
  bool invert_;
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    std::vector<std::string> out;
    for (const auto& p : pieces) {
      size_t i = 0, start = std::string::npos;
      while (i < p.size()) {
        const size_t at = i;
        const bool space = is_whitespace(next_code_point(p, i));
        if (space && start != std::string::npos) {
          out.push_back(p.substr(start, at - start));
          start = std::string::npos;
        } else if (!space && start == std::string::npos) {
          start = at;
        }
      }
      if (start != std::string::npos) out.push_back(p.substr(start));
    }
    pieces = std::move(out);
  }
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    for (const auto& p : parts_) p->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

}  // namespace

const std::vector<std::string>& byte_to_unicode() {
  static const std::vector<std::string> table = [] {
    std::vector<char32_t> cps(256, 0);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      cps[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
    }
    std::vector<std::string> t(256);
    for (int b = 0; b < 256; ++b) {
      const char32_t c = cps[static_cast<size_t>(b)];
      std::string& s = t[static_cast<size_t>(b)];
      if (c < 0x80) {
        s += static_cast<char>(c);
      } else {  // all table code points are below 0x800
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
      }
    }
    return t;
  }();
  return table;
}

int unicode_to_byte(char32_t c) {
  static const std::vector<int> inverse = [] {
    std::vector<int> inv(512, -1);
    const auto& table = byte_to_unicode();
    for (int b = 0; b < 256; ++b) {
      size_t i = 0;
      inv[next_code_point(table[static_cast<size_t>(b)], i)] = b;
    }
    return inv;
  }();
  return c < inverse.size() ? inverse[c] : -1;
}

Expected<std::unique_ptr<PreTokenizer>> load_pre_tokenizer(const Json& j, const std::string& path,
                                                           const JsonReader& r) {
  if (j.is_null()) return std::unique_ptr<PreTokenizer>();
  EDGEMM_ASSIGN_OR_RETURN(std::string type, r.type(j, path));
  if (type == "ByteLevel") {
    EDGEMM_ASSIGN_OR_RETURN(bool add_prefix_space, r.opt_bool(j, path, "add_prefix_space", true));
    EDGEMM_ASSIGN_OR_RETURN(bool use_regex, r.opt_bool(j, path, "use_regex", true));
    std::shared_ptr<const Regex> regex;
    if (use_regex) {
      static const auto gpt2 = Regex::compile(kGpt2Pattern, "ByteLevel");
      if (!gpt2) return gpt2.status();
      regex = *gpt2;
    }
    return std::unique_ptr<PreTokenizer>(new ByteLevel(add_prefix_space, std::move(regex)));
  }
  if (type == "Split") {
    EDGEMM_ASSIGN_OR_RETURN(auto regex, r.pattern(j, path));
    EDGEMM_ASSIGN_OR_RETURN(std::string behavior_name, r.string(j, path, "behavior"));
    EDGEMM_ASSIGN_OR_RETURN(bool invert, r.opt_bool(j, path, "invert", false));
    Behavior behavior;
    if (behavior_name == "Removed") {
      behavior = Behavior::kRemoved;
    } else if (behavior_name == "Isolated") {
      behavior = Behavior::kIsolated;
    } else if (behavior_name == "MergedWithPrevious") {
      behavior = Behavior::kMergedWithPrevious;
    } else if (behavior_name == "MergedWithNext") {
      behavior = Behavior::kMergedWithNext;
    } else if (behavior_name == "Contiguous") {
      behavior = Behavior::kContiguous;
    } else {
      return Status(StatusCode::kUnsupported, r.source() + ": " + path + ".behavior \"" + behavior_name +
                                                  "\" is not supported (supported: Removed, Isolated, "
                                                  "MergedWithPrevious, MergedWithNext, Contiguous).");
    }
    return std::unique_ptr<PreTokenizer>(new Split(std::move(regex), behavior, invert));
  }
  if (type == "Whitespace") {
    // The crate: regex \w+|[^\w\s]+, matches kept (Removed with invert).
    static const auto regex = Regex::compile(R"(\w+|[^\w\s]+)", "Whitespace");
    if (!regex) return regex.status();
    return std::unique_ptr<PreTokenizer>(new Split(*regex, Behavior::kRemoved, true));
  }
  if (type == "BertPreTokenizer") {
    // The crate: split on whitespace (removed), then isolate every punctuation character (ASCII
    // punctuation or Unicode P*).
    static const auto spaces = Regex::compile(R"(\s+)", "BertPreTokenizer");
    static const auto punct =
        Regex::compile(R"([\p{P}\x{21}-\x{2F}\x{3A}-\x{40}\x{5B}-\x{60}\x{7B}-\x{7E}])", "BertPreTokenizer");
    if (!spaces) return spaces.status();
    if (!punct) return punct.status();
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    parts.emplace_back(new Split(*spaces, Behavior::kRemoved, false));
    parts.emplace_back(new Split(*punct, Behavior::kIsolated, false));
    return std::unique_ptr<PreTokenizer>(new SequencePreTokenizer(std::move(parts)));
  }
  if (type == "WhitespaceSplit") return std::unique_ptr<PreTokenizer>(new WhitespaceSplit());
  if (type == "Digits") {
    // The crate: split on char::is_numeric (Unicode N*), every digit alone (individual_digits) or
    // runs of digits together (Contiguous).
    EDGEMM_ASSIGN_OR_RETURN(bool individual, r.opt_bool(j, path, "individual_digits", false));
    static const auto regex = Regex::compile(R"(\p{N})", "Digits");
    if (!regex) return regex.status();
    return std::unique_ptr<PreTokenizer>(
        new Split(*regex, individual ? Behavior::kIsolated : Behavior::kContiguous, false));
  }
  if (type == "Sequence") {
    EDGEMM_ASSIGN_OR_RETURN(const Json* list, r.array(j, path, "pretokenizers"));
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (size_t i = 0; i < list->size(); ++i) {
      EDGEMM_ASSIGN_OR_RETURN(auto part,
                              load_pre_tokenizer((*list)[i], path + ".pretokenizers[" + std::to_string(i) + "]", r));
      if (part) parts.push_back(std::move(part));
    }
    return std::unique_ptr<PreTokenizer>(new SequencePreTokenizer(std::move(parts)));
  }
  return r.unsupported(path, type, "ByteLevel, Split, Whitespace, WhitespaceSplit, BertPreTokenizer, Digits, Sequence");
}

}  // namespace edgemm::text
