// WordPiece model of tokenizer.json (tokenizers/src/models/wordpiece in the Rust crate): greedy
// longest-match-first over each pre-token, as BERT's original tokenizer.
#include <unordered_map>

#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

class WordPiece final : public Model {
 public:
  Vocab vocab;
  std::vector<std::string> vocab_r;
  std::vector<bool> has_id;
  int32_t unk_id = 0;
  std::string prefix = "##";
  size_t max_input_chars_per_word = 100;

  void tokenize(const std::string& piece, std::vector<int32_t>& ids) const override {
    size_t chars = 0;
    for (size_t i = 0; i < piece.size(); ++chars) next_code_point(piece, i);
    if (chars > max_input_chars_per_word) {
      ids.push_back(unk_id);
      return;
    }
    std::vector<size_t> bounds;  // code point boundaries
    for (size_t i = 0; i < piece.size();) {
      bounds.push_back(i);
      next_code_point(piece, i);
    }
    bounds.push_back(piece.size());
    std::vector<int32_t> out;
    size_t start = 0;  // index into bounds
    while (start + 1 < bounds.size()) {
      std::optional<int32_t> found;
      size_t end = bounds.size() - 1;
      for (; end > start; --end) {
        std::string sub = piece.substr(bounds[start], bounds[end] - bounds[start]);
        if (start > 0) sub = prefix + sub;
        if (auto it = vocab.find(sub); it != vocab.end()) {
          found = it->second;
          break;
        }
      }
      if (!found) {
        ids.push_back(unk_id);
        return;
      }
      out.push_back(*found);
      start = end;
    }
    ids.insert(ids.end(), out.begin(), out.end());
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
};

}  // namespace

Expected<std::unique_ptr<Model>> load_wordpiece(const Json& j, const std::string& path, const JsonReader& r) {
  auto wp = std::make_unique<WordPiece>();
  EDGEMM_ASSIGN_OR_RETURN(const Json* vocab, r.object(j, path, "vocab"));
  EDGEMM_RETURN_IF_ERROR(read_vocab(*vocab, path, r, wp->vocab, wp->vocab_r, wp->has_id));
  EDGEMM_ASSIGN_OR_RETURN(std::string unk, r.string(j, path, "unk_token"));
  auto unk_id = wp->token_to_id(unk);
  if (!unk_id) return r.invalid(path + ".unk_token", "\"" + unk + "\" is not in the vocabulary.");
  wp->unk_id = *unk_id;
  EDGEMM_ASSIGN_OR_RETURN(auto prefix, r.opt_string(j, path, "continuing_subword_prefix"));
  if (prefix) wp->prefix = *prefix;
  if (auto it = j.find("max_input_chars_per_word"); it != j.end() && !it->is_null()) {
    if (!it->is_number_unsigned()) return r.invalid(path + ".max_input_chars_per_word", "must be a count.");
    wp->max_input_chars_per_word = it->get<size_t>();
  }
  return std::unique_ptr<Model>(std::move(wp));
}

}  // namespace edgemm::text
