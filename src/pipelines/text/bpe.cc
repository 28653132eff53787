// Byte-pair encoding model of tokenizer.json (tokenizers/src/models/bpe in the Rust crate;
// Sennrich et al., "Neural Machine Translation of Rare Words with Subword Units", ACL 2016).
#include <cstdio>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

class Bpe final : public Model {
 public:
  Vocab vocab;
  std::vector<std::string> vocab_r;  // id -> token ("" for ids not in the vocabulary)
  std::vector<bool> has_id;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges;  // (a, b) -> (rank, merged id)
  std::optional<int32_t> unk_id;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix_;

  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kMaxCachedWordBytes = 256;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;

  void tokenize(const std::string& piece, std::vector<int32_t>& ids) const override {
    if (piece.empty()) return;
    if (ignore_merges) {
      if (auto it = vocab.find(piece); it != vocab.end()) {
        ids.push_back(it->second);
        return;
      }
    }
    const bool cacheable = piece.size() < kMaxCachedWordBytes;
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      if (auto it = cache.find(piece); it != cache.end()) {
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    std::vector<int32_t> word = merge_word(piece);
    ids.insert(ids.end(), word.begin(), word.end());
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      if (cache.size() >= kCacheCapacity) cache.clear();
      cache.emplace(piece, std::move(word));
    }
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    auto it = vocab.find(token);
    return it == vocab.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }
  const std::string* id_to_token(int32_t id) const override {
    return id >= 0 && static_cast<size_t>(id) < vocab_r.size() && has_id[static_cast<size_t>(id)]
               ? &vocab_r[static_cast<size_t>(id)]
               : nullptr;
  }
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_r.size()); }
  std::string end_of_word_suffix() const override { return end_of_word_suffix_; }

 private:
  // BPE::merge_word of the crate: characters (with prefix / suffix) to ids, unknown ones to
  // unk (fused when fuse_unk) or bytes (byte_fallback), then the merges by rank, leftmost first.
  std::vector<int32_t> merge_word(const std::string& w) const {
    std::vector<int32_t> symbols;
    int32_t pending_unk = -1;  // an unknown-token run not yet emitted
    size_t i = 0;
    while (i < w.size()) {
      const size_t begin = i;
      next_code_point(w, i);
      std::string s = w.substr(begin, i - begin);
      if (begin != 0 && !continuing_subword_prefix.empty()) s = continuing_subword_prefix + s;
      if (i == w.size()) s += end_of_word_suffix_;
      if (auto it = vocab.find(s); it != vocab.end()) {
        if (pending_unk >= 0) symbols.push_back(pending_unk);
        pending_unk = -1;
        symbols.push_back(it->second);
        continue;
      }
      if (byte_fallback) {
        std::vector<int32_t> bytes;
        for (size_t k = begin; k < i; ++k) {
          char name[8];
          std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(w[k]));
          auto it = vocab.find(std::string_view(name));
          if (it == vocab.end()) break;
          bytes.push_back(it->second);
        }
        if (bytes.size() == i - begin) {
          if (pending_unk >= 0) symbols.push_back(pending_unk);
          pending_unk = -1;
          symbols.insert(symbols.end(), bytes.begin(), bytes.end());
          continue;
        }
      }
      if (unk_id) {
        if (pending_unk >= 0 && !fuse_unk) symbols.push_back(pending_unk);
        pending_unk = *unk_id;
      }
    }
    if (pending_unk >= 0) symbols.push_back(pending_unk);
    return merge_all(symbols);
  }

  const std::pair<int32_t, int32_t>* find_merge(int32_t a, int32_t b) const {
    auto it = merges.find((static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b));
    return it == merges.end() ? nullptr : &it->second;
  }

  // Word::merge_all of the crate: a min-heap of (rank, position) over the live pairs of a linked
  // list of symbols, so the lowest-ranked pair merges first and, among equal ranks, the
  // leftmost; O(n log n) even for a very long pre-token.
  std::vector<int32_t> merge_all(const std::vector<int32_t>& ids) const {
    const int n = static_cast<int>(ids.size());
    if (n < 2) return ids;
    std::vector<int32_t> id = ids;
    std::vector<int> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
    std::vector<bool> alive(static_cast<size_t>(n), true);
    for (int i = 0; i < n; ++i) {
      prev[static_cast<size_t>(i)] = i - 1;
      next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
    }
    struct Candidate {
      int32_t rank;
      int pos;
      int32_t new_id;
      bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    auto push = [&](int pos) {
      if (pos < 0) return;
      const int nx = next[static_cast<size_t>(pos)];
      if (nx < 0) return;
      if (const auto* m = find_merge(id[static_cast<size_t>(pos)], id[static_cast<size_t>(nx)])) {
        queue.push({m->first, pos, m->second});
      }
    };
    for (int i = 0; i + 1 < n; ++i) push(i);
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      const auto pos = static_cast<size_t>(top.pos);
      if (!alive[pos] || next[pos] < 0) continue;
      const auto nx = static_cast<size_t>(next[pos]);
      const auto* m = find_merge(id[pos], id[nx]);
      if (!m || m->second != top.new_id || m->first != top.rank) continue;  // stale entry
      id[pos] = top.new_id;
      alive[nx] = false;
      next[pos] = next[nx];
      if (next[pos] >= 0) prev[static_cast<size_t>(next[pos])] = top.pos;
      push(prev[pos]);
      push(top.pos);
    }
    std::vector<int32_t> out;
    for (int i = 0; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(id[static_cast<size_t>(i)]);
    return out;
  }
};

}  // namespace

Expected<std::unique_ptr<Model>> load_bpe(const Json& j, const std::string& path, const JsonReader& r) {
  auto bpe = std::make_unique<Bpe>();
  EDGEMM_ASSIGN_OR_RETURN(const Json* vocab, r.object(j, path, "vocab"));
  EDGEMM_ASSIGN_OR_RETURN(const Json* merges, r.array(j, path, "merges"));
  if (auto it = j.find("dropout"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() != 0.0) {
      return Status(StatusCode::kUnsupported, r.source() + ": " + path +
                                                  ".dropout is set: BPE dropout (random merges, for "
                                                  "training) is not supported.");
    }
  }
  EDGEMM_RETURN_IF_ERROR(read_vocab(*vocab, path, r, bpe->vocab, bpe->vocab_r, bpe->has_id));
  EDGEMM_ASSIGN_OR_RETURN(auto prefix, r.opt_string(j, path, "continuing_subword_prefix"));
  EDGEMM_ASSIGN_OR_RETURN(auto suffix, r.opt_string(j, path, "end_of_word_suffix"));
  bpe->continuing_subword_prefix = prefix.value_or("");
  bpe->end_of_word_suffix_ = suffix.value_or("");
  EDGEMM_ASSIGN_OR_RETURN(bpe->fuse_unk, r.opt_bool(j, path, "fuse_unk", false));
  EDGEMM_ASSIGN_OR_RETURN(bpe->byte_fallback, r.opt_bool(j, path, "byte_fallback", false));
  EDGEMM_ASSIGN_OR_RETURN(bpe->ignore_merges, r.opt_bool(j, path, "ignore_merges", false));
  EDGEMM_ASSIGN_OR_RETURN(auto unk, r.opt_string(j, path, "unk_token"));
  if (unk) {
    auto id = bpe->token_to_id(*unk);
    if (!id) return r.invalid(path + ".unk_token", "\"" + *unk + "\" is not in the vocabulary.");
    bpe->unk_id = id;
  }
  const size_t prefix_len = bpe->continuing_subword_prefix.size();
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const Json& m = (*merges)[rank];
    const std::string where = path + ".merges[" + std::to_string(rank) + "]";
    std::string a, b;
    if (m.is_string()) {  // "a b"
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        return r.invalid(where, "\"" + s + "\" is not two tokens separated by one space.");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["a", "b"]
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return r.invalid(where, "must be a string \"a b\" or a pair [\"a\", \"b\"].");
    }
    auto a_id = bpe->token_to_id(a), b_id = bpe->token_to_id(b);
    if (!a_id) return r.invalid(where, "names \"" + a + "\", which is not in the vocabulary.");
    if (!b_id) return r.invalid(where, "names \"" + b + "\", which is not in the vocabulary.");
    const std::string merged = a + b.substr(std::min(prefix_len, b.size()));
    auto merged_id = bpe->token_to_id(merged);
    if (!merged_id) return r.invalid(where, "makes \"" + merged + "\", which is not in the vocabulary.");
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(*a_id)) << 32) | static_cast<uint32_t>(*b_id);
    bpe->merges[key] = {static_cast<int32_t>(rank), *merged_id};
  }
  return std::unique_ptr<Model>(std::move(bpe));
}

Expected<std::unique_ptr<Model>> load_model(const Json& j, const std::string& path, const JsonReader& r) {
  if (!j.is_object()) return r.invalid(path, "is missing or not an object.");
  std::string type;
  if (auto it = j.find("type"); it != j.end()) {
    EDGEMM_ASSIGN_OR_RETURN(type, r.type(j, path));
  } else {  // files from before the "type" tag: BPE has merges
    type = j.contains("merges") ? "BPE" : "WordPiece";
  }
  if (type == "BPE") return load_bpe(j, path, r);
  if (type == "WordPiece") return load_wordpiece(j, path, r);
  return r.unsupported(path, type, "BPE, WordPiece");
}

}  // namespace edgemm::text
