// Tokenizer: loads tokenizer.json and runs the pipeline of the Rust `tokenizers` crate
// (tokenizers/src/tokenizer/mod.rs, added_vocabulary.rs): added tokens split out, normalizer,
// pre-tokenizer, model, truncation, post-processor, padding; and decoding.
#include "edgemm/pipelines/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "pipelines/text/components.h"

namespace edgemm::text {

namespace {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false, lstrip = false, rstrip = false, single_word = false, normalized = false;
};

/// Leftmost-longest matcher over added-token strings (the crate uses aho-corasick with
/// MatchKind::LeftmostLongest).
class AddedMatcher {
 public:
  void add(std::string pattern, const AddedToken* token) {
    if (pattern.empty()) return;
    auto& list = by_first_byte_[static_cast<unsigned char>(pattern[0])];
    list.emplace_back(std::move(pattern), token);
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }
  bool empty() const { return by_first_byte_.empty(); }

  /// A piece of text, or an added token (`token` set).
  struct Piece {
    std::string text;
    const AddedToken* token = nullptr;
  };
  void split(std::string_view s, std::vector<Piece>& out) const {
    size_t start = 0, pos = 0;
    while (pos < s.size()) {
      const Entry* match = nullptr;
      if (auto it = by_first_byte_.find(static_cast<unsigned char>(s[pos])); it != by_first_byte_.end()) {
        for (const auto& e : it->second) {
          if (s.compare(pos, e.first.size(), e.first) == 0 && single_word_ok(s, pos, pos + e.first.size(), *e.second)) {
            match = &e;
            break;
          }
        }
      }
      if (!match) {
        next_code_point(s, pos);
        continue;
      }
      size_t b = pos, e = pos + match->first.size();
      if (match->second->lstrip) b = start + trim_whitespace(s.substr(start, b - start), false, true).size();
      if (match->second->rstrip) {
        std::string_view rest = s.substr(e);
        e = s.size() - trim_whitespace(rest, true, false).size();
      }
      if (b > start) out.push_back({std::string(s.substr(start, b - start)), nullptr});
      out.push_back({match->first, match->second});
      pos = start = e;
    }
    if (start < s.size()) out.push_back({std::string(s.substr(start)), nullptr});
  }

 private:
  using Entry = std::pair<std::string, const AddedToken*>;
  static bool single_word_ok(std::string_view s, size_t b, size_t e, const AddedToken& t) {
    if (!t.single_word) return true;
    if (b > 0) {
      size_t i = b - 1;
      while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
      if (is_alphanumeric(next_code_point(s, i))) return false;
    }
    if (e < s.size() && is_alphanumeric(next_code_point(s, e))) return false;
    return true;
  }
  std::unordered_map<unsigned char, std::vector<Entry>> by_first_byte_;
};

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIo, "cannot open tokenizer file '" + path + "'.");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status(StatusCode::kIo, "cannot read tokenizer file '" + path + "'.");
  return ss.str();
}

std::optional<std::string> token_string(const Json& j) {  // "tok" or {"content": "tok", ...}
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object()) {
    if (auto it = j.find("content"); it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

struct TokenizerImpl {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  std::vector<std::unique_ptr<AddedToken>> added;
  std::unordered_map<int32_t, const AddedToken*> added_by_id;
  std::unordered_map<std::string, int32_t> added_by_content;
  AddedMatcher raw_matcher, normalized_matcher;
  TokenizerConfig config;
  TruncationOptions truncation;
  PaddingOptions padding;
  int32_t vocab_size = 0;

  std::vector<int32_t> encode_text(std::string_view text) const {
    std::vector<int32_t> ids;
    std::vector<AddedMatcher::Piece> sections;
    raw_matcher.split(text, sections);
    std::vector<AddedMatcher::Piece> subsections;
    std::vector<std::string> pieces;
    for (const auto& section : sections) {
      if (section.token) {
        ids.push_back(section.token->id);
        continue;
      }
      const std::string normalized = normalizer ? normalizer->normalize(section.text) : section.text;
      subsections.clear();
      normalized_matcher.split(normalized, subsections);
      for (auto& sub : subsections) {
        if (sub.token) {
          ids.push_back(sub.token->id);
          continue;
        }
        pieces.clear();
        pieces.push_back(std::move(sub.text));
        if (pre_tokenizer) pre_tokenizer->pre_tokenize(pieces);
        for (const auto& p : pieces) model->tokenize(p, ids);
      }
    }
    return ids;
  }

  Status load_added_tokens(const Json& root, const JsonReader& r) {
    auto it = root.find("added_tokens");
    if (it == root.end() || it->is_null()) return Status::ok();
    if (!it->is_array()) return r.invalid("added_tokens", "must be an array.");
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& t = (*it)[i];
      const std::string path = "added_tokens[" + std::to_string(i) + "]";
      if (!t.is_object()) return r.invalid(path, "must be an object.");
      auto token = std::make_unique<AddedToken>();
      EDGEMM_ASSIGN_OR_RETURN(int64_t id, r.integer(t, path, "id"));
      if (id < 0 || id > INT32_MAX) return r.invalid(path + ".id", "must be a non-negative id.");
      token->id = static_cast<int32_t>(id);
      EDGEMM_ASSIGN_OR_RETURN(token->content, r.string(t, path, "content"));
      if (token->content.empty()) return r.invalid(path + ".content", "is empty.");
      EDGEMM_ASSIGN_OR_RETURN(token->special, r.opt_bool(t, path, "special", false));
      EDGEMM_ASSIGN_OR_RETURN(token->lstrip, r.opt_bool(t, path, "lstrip", false));
      EDGEMM_ASSIGN_OR_RETURN(token->rstrip, r.opt_bool(t, path, "rstrip", false));
      EDGEMM_ASSIGN_OR_RETURN(token->single_word, r.opt_bool(t, path, "single_word", false));
      EDGEMM_ASSIGN_OR_RETURN(token->normalized, r.opt_bool(t, path, "normalized", !token->special));
      added_by_id[token->id] = token.get();
      added_by_content[token->content] = token->id;
      if (token->normalized && normalizer) {
        normalized_matcher.add(normalizer->normalize(token->content), token.get());
      } else {
        raw_matcher.add(token->content, token.get());
      }
      added.push_back(std::move(token));
    }
    return Status::ok();
  }

  Status load_truncation_padding(const Json& root, const JsonReader& r) {
    if (auto it = root.find("truncation"); it != root.end() && !it->is_null()) {
      EDGEMM_ASSIGN_OR_RETURN(int64_t max_length, r.integer(*it, "truncation", "max_length"));
      if (max_length < 0 || max_length > INT32_MAX) return r.invalid("truncation.max_length", "is out of range.");
      truncation.max_length = static_cast<int>(max_length);
      EDGEMM_ASSIGN_OR_RETURN(auto direction, r.opt_string(*it, "truncation", "direction"));
      truncation.from_left = direction && *direction == "Left";
    }
    if (auto it = root.find("padding"); it != root.end() && !it->is_null()) {
      const Json& p = *it;
      if (!p.is_object()) return r.invalid("padding", "must be an object or null.");
      auto strategy = p.find("strategy");
      if (strategy == p.end() || (strategy->is_string() && *strategy == "BatchLongest")) {
        padding.strategy = PaddingOptions::Strategy::kLongest;
      } else if (strategy->is_object() && strategy->contains("Fixed") && (*strategy)["Fixed"].is_number_integer()) {
        padding.strategy = PaddingOptions::Strategy::kFixed;
        padding.length = (*strategy)["Fixed"].get<int>();
      } else {
        return r.invalid("padding.strategy", "must be \"BatchLongest\" or {\"Fixed\": N}.");
      }
      if (auto m = p.find("pad_to_multiple_of"); m != p.end() && m->is_number_integer()) {
        padding.pad_to_multiple_of = m->get<int>();
      }
      if (auto v = p.find("pad_id"); v != p.end() && v->is_number_integer()) padding.pad_id = v->get<int32_t>();
      if (auto v = p.find("pad_type_id"); v != p.end() && v->is_number_integer()) {
        padding.pad_type_id = v->get<int32_t>();
      }
      EDGEMM_ASSIGN_OR_RETURN(auto pad_token, r.opt_string(p, "padding", "pad_token"));
      if (pad_token) padding.pad_token = *pad_token;
      EDGEMM_ASSIGN_OR_RETURN(auto direction, r.opt_string(p, "padding", "direction"));
      padding.left = direction && *direction == "Left";
    }
    return Status::ok();
  }

  void load_config(const Json& c) {
    if (!c.is_object()) return;
    if (auto it = c.find("model_max_length"); it != c.end() && it->is_number()) {
      const double v = it->get<double>();
      if (v > 0 && v < 1e9) config.model_max_length = static_cast<int64_t>(v);
    }
    if (auto it = c.find("pad_token"); it != c.end()) config.pad_token = token_string(*it);
    if (auto it = c.find("bos_token"); it != c.end()) config.bos_token = token_string(*it);
    if (auto it = c.find("eos_token"); it != c.end()) config.eos_token = token_string(*it);
    if (auto it = c.find("clean_up_tokenization_spaces"); it != c.end() && it->is_boolean()) {
      config.clean_up_tokenization_spaces = it->get<bool>();
    }
  }

  const std::string* id_to_token(int32_t id) const {
    if (auto it = added_by_id.find(id); it != added_by_id.end()) return &it->second->content;
    return model->id_to_token(id);
  }
};

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerImpl> impl)
    : impl_(std::move(impl)), truncation_(impl_->truncation), padding_(impl_->padding) {}

Expected<Tokenizer> Tokenizer::from_json(std::string_view json, std::string_view config_json, std::string source) {
  JsonReader r(source);
  try {
    Json root;
    try {
      root = Json::parse(json.begin(), json.end());
    } catch (const Json::parse_error& e) {
      return Status(StatusCode::kInvalidModel, source + ": is not valid JSON (" + e.what() + ").");
    }
    if (!root.is_object()) return Status(StatusCode::kInvalidModel, source + ": the top level is not a JSON object.");
    auto impl = std::make_shared<TokenizerImpl>();
    auto member = [&](const char* key) -> const Json& {
      static const Json null_json;
      auto it = root.find(key);
      return it == root.end() ? null_json : *it;
    };
    if (!root.contains("model")) return r.invalid("model", "is missing.");
    EDGEMM_ASSIGN_OR_RETURN(impl->normalizer, load_normalizer(member("normalizer"), "normalizer", r));
    EDGEMM_ASSIGN_OR_RETURN(impl->pre_tokenizer, load_pre_tokenizer(member("pre_tokenizer"), "pre_tokenizer", r));
    EDGEMM_ASSIGN_OR_RETURN(impl->model, load_model(member("model"), "model", r));
    EDGEMM_ASSIGN_OR_RETURN(impl->post_processor, load_post_processor(member("post_processor"), "post_processor", r));
    EDGEMM_ASSIGN_OR_RETURN(impl->decoder, load_decoder(member("decoder"), "decoder", r));
    EDGEMM_RETURN_IF_ERROR(impl->load_added_tokens(root, r));
    EDGEMM_RETURN_IF_ERROR(impl->load_truncation_padding(root, r));
    if (impl->decoder) {
      auto contents = std::make_shared<std::unordered_set<std::string>>();
      for (const auto& t : impl->added) contents->insert(t->content);
      impl->decoder->set_added_tokens(std::move(contents));
    }
    impl->vocab_size = impl->model->vocab_size();
    for (const auto& t : impl->added) impl->vocab_size = std::max(impl->vocab_size, t->id + 1);
    if (impl->post_processor) {
      Sequence probe;
      impl->post_processor->process(probe, true);
      for (int32_t id : probe.ids) {
        if (!impl->id_to_token(id)) {
          return r.invalid("post_processor", "adds special token id " + std::to_string(id) +
                                                 ", which is neither in the vocabulary nor an added token.");
        }
      }
    }
    if (!config_json.empty()) {
      Json config = Json::parse(config_json.begin(), config_json.end(), nullptr, false);
      if (config.is_discarded()) {
        return Status(StatusCode::kInvalidModel, "tokenizer_config.json beside " + source + " is not valid JSON.");
      }
      impl->load_config(config);
    }
    return Tokenizer(std::move(impl));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, source + ": out of memory while loading.");
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidModel, source + ": " + e.what());
  }
}

Expected<Tokenizer> Tokenizer::from_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) file = (fs::path(path) / "tokenizer.json").string();
  if (!fs::exists(file, ec)) return Status(StatusCode::kIo, "tokenizer file '" + file + "' does not exist.");
  EDGEMM_ASSIGN_OR_RETURN(std::string json, read_file(file));
  std::string config;
  const fs::path config_path = fs::path(file).parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path, ec)) {
    EDGEMM_ASSIGN_OR_RETURN(config, read_file(config_path.string()));
  }
  return from_json(json, config, file);
}

Expected<Encoding> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  EDGEMM_ASSIGN_OR_RETURN(Encoding enc, encode_unpadded(text, add_special_tokens));
  if (padding_.strategy == PaddingOptions::Strategy::kFixed) {
    std::vector<Encoding> one;
    one.push_back(std::move(enc));
    EDGEMM_RETURN_IF_ERROR(pad(one));
    return std::move(one[0]);
  }
  return enc;
}

Expected<Encoding> Tokenizer::encode_unpadded(std::string_view text, bool add_special_tokens) const {
  if (!is_valid_utf8(text)) return Status(StatusCode::kInvalidArgument, "the text to tokenize is not valid UTF-8.");
  Sequence seq;
  try {
    seq.ids = impl_->encode_text(text);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory while tokenizing.");
  }
  const int added = add_special_tokens && impl_->post_processor ? impl_->post_processor->added_tokens() : 0;
  if (truncation_.max_length > 0) {
    if (truncation_.max_length < added) {
      return Status(StatusCode::kInvalidArgument, "truncation max_length " + std::to_string(truncation_.max_length) +
                                                      " is smaller than the " + std::to_string(added) +
                                                      " special tokens the post-processor adds.");
    }
    const size_t keep = static_cast<size_t>(truncation_.max_length - added);
    if (seq.ids.size() > keep) {
      if (truncation_.from_left) {
        seq.ids.erase(seq.ids.begin(), seq.ids.end() - static_cast<std::ptrdiff_t>(keep));
      } else {
        seq.ids.resize(keep);
      }
    }
  }
  seq.type_ids.assign(seq.ids.size(), 0);
  seq.special.assign(seq.ids.size(), 0);
  if (impl_->post_processor) impl_->post_processor->process(seq, add_special_tokens);
  Encoding enc;
  enc.ids = std::move(seq.ids);
  enc.type_ids = std::move(seq.type_ids);
  enc.special_tokens_mask = std::move(seq.special);
  enc.attention_mask.assign(enc.ids.size(), 1);
  enc.tokens.reserve(enc.ids.size());
  for (int32_t id : enc.ids) {
    const std::string* t = impl_->id_to_token(id);
    enc.tokens.push_back(t ? *t : std::string());
  }
  return enc;
}

Expected<std::vector<Encoding>> Tokenizer::encode_batch(const std::vector<std::string>& texts,
                                                        bool add_special_tokens) const {
  std::vector<Encoding> out;
  out.reserve(texts.size());
  for (const auto& t : texts) {
    EDGEMM_ASSIGN_OR_RETURN(Encoding e, encode_unpadded(t, add_special_tokens));
    out.push_back(std::move(e));
  }
  EDGEMM_RETURN_IF_ERROR(pad(out));
  return out;
}

Status Tokenizer::pad(std::vector<Encoding>& encodings) const {
  if (padding_.strategy == PaddingOptions::Strategy::kNone || encodings.empty()) return Status::ok();
  size_t target = 0;
  if (padding_.strategy == PaddingOptions::Strategy::kFixed) {
    if (padding_.length <= 0) return Status(StatusCode::kInvalidArgument, "fixed padding needs a length above 0.");
    target = static_cast<size_t>(padding_.length);
  } else {
    for (const auto& e : encodings) target = std::max(target, e.ids.size());
  }
  if (padding_.pad_to_multiple_of > 0) {
    const auto m = static_cast<size_t>(padding_.pad_to_multiple_of);
    target = (target + m - 1) / m * m;
  }
  for (auto& e : encodings) {
    if (e.ids.size() >= target) continue;
    const auto n = static_cast<std::ptrdiff_t>(target - e.ids.size());
    auto grow = [&](auto& v, auto value) {
      v.insert(padding_.left ? v.begin() : v.end(), static_cast<size_t>(n), value);
    };
    grow(e.ids, padding_.pad_id);
    grow(e.attention_mask, 0);
    grow(e.type_ids, padding_.pad_type_id);
    grow(e.special_tokens_mask, 1);
    grow(e.tokens, padding_.pad_token);
  }
  return Status::ok();
}

Expected<std::string> Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string* t = impl_->id_to_token(id);
    if (!t) {
      return Status(StatusCode::kInvalidArgument, "token id " + std::to_string(id) + " is not in the vocabulary (" +
                                                      std::to_string(vocab_size()) + " ids).");
    }
    if (skip_special_tokens) {
      auto it = impl_->added_by_id.find(id);
      if (it != impl_->added_by_id.end() && it->second->special) continue;
    }
    tokens.push_back(*t);
  }
  std::string text;
  if (impl_->decoder) {
    for (const auto& s : impl_->decoder->decode_chain(std::move(tokens))) text += s;
    const std::string suffix = impl_->model->end_of_word_suffix();
    if (!suffix.empty()) {  // transformers.js (Tokenizer.decode) and transformers' CLIPTokenizerFast
      std::string replaced;
      size_t prev = 0, pos;
      while ((pos = text.find(suffix, prev)) != std::string::npos) {
        replaced.append(text, prev, pos - prev);
        replaced += ' ';
        prev = pos + suffix.size();
      }
      replaced.append(text, prev);
      text = skip_special_tokens ? std::string(trim_whitespace(replaced, true, true)) : std::move(replaced);
    }
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
  }
  if (impl_->config.clean_up_tokenization_spaces) text = clean_up_tokenization(std::move(text));
  return text;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto it = impl_->added_by_content.find(std::string(token)); it != impl_->added_by_content.end()) {
    return it->second;
  }
  return impl_->model->token_to_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  const std::string* t = impl_->id_to_token(id);
  return t ? *t : std::string();
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }
int Tokenizer::num_special_tokens_to_add() const {
  return impl_->post_processor ? impl_->post_processor->added_tokens() : 0;
}
void Tokenizer::set_truncation(const TruncationOptions& truncation) { truncation_ = truncation; }
void Tokenizer::set_padding(const PaddingOptions& padding) { padding_ = padding; }
const TruncationOptions& Tokenizer::truncation() const { return truncation_; }
const PaddingOptions& Tokenizer::padding() const { return padding_; }
const TokenizerConfig& Tokenizer::config() const { return impl_->config; }

}  // namespace edgemm::text
