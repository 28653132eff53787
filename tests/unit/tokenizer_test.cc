// Tokenizers from tokenizer.json (src/pipelines/text): hand-computed small cases, bad input, and
// (TokenizerOracle.*) exact ids against npm @huggingface/tokenizers on the committed corpus, for
// a GPT-2 tokenizer (real vocabulary) and the CLIP-style fixture. The oracle references come
// from tools/reference/make_tokenizer_refs.sh (CTest fixture tokenizer_refs); the oracle tests
// skip when EDGEMM_TOKENIZER_REFS is not set.
#include "edgemm/pipelines/tokenizer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "source_dir.h"

namespace edgemm::text {
namespace tokenizer_test {  // named for the file: unity batches merge anonymous namespaces

using nlohmann::json;

const std::string kClipDir = std::string(edgemm::testing::source_dir()) + "/tests/fixtures/tokenizers/clip_bpe";

Tokenizer load(const json& j) {
  auto t = Tokenizer::from_json(j.dump());
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return std::move(t).value();
}

std::vector<int32_t> ids_of(const Tokenizer& t, const std::string& text, bool special = true) {
  auto e = t.encode(text, special);
  EXPECT_TRUE(e.has_value()) << e.status().to_string();
  return e.has_value() ? e->ids : std::vector<int32_t>{};
}

/// A 10-token BPE whose merges can be followed by hand.
json tiny_bpe() {
  return json::parse(R"({
    "added_tokens": [
      {"id": 7, "content": "[CLS]", "special": true},
      {"id": 8, "content": "[SEP]", "special": true},
      {"id": 9, "content": "[PAD]", "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "WhitespaceSplit"},
    "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 7], "sep": ["[SEP]", 8]},
    "decoder": null,
    "model": {"type": "BPE", "unk_token": "<unk>",
              "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "<unk>": 6,
                        "[CLS]": 7, "[SEP]": 8, "[PAD]": 9},
              "merges": ["a b", ["ab", "c"], "b c"]}
  })");
}

TEST(TokenizerBpe, HandComputedMerges) {
  Tokenizer t = load(tiny_bpe());
  // "abc": (a,b) rank 0 -> ab c; (ab,c) rank 1 -> abc.  "bca": only (b,c) rank 2 -> bc a.
  // "abab": both (a,b) pairs, leftmost first -> ab ab.  "cd": d is unknown -> c <unk>.
  EXPECT_EQ(ids_of(t, "abc bca abab cd"), (std::vector<int32_t>{7, 5, 4, 0, 3, 3, 2, 6, 8}));
  EXPECT_EQ(ids_of(t, "abc", false), (std::vector<int32_t>{5}));
  // Without fuse_unk, each unknown character is its own <unk>; with it, a run is one.
  EXPECT_EQ(ids_of(t, "dda", false), (std::vector<int32_t>{6, 6, 0}));
  json fused = tiny_bpe();
  fused["model"]["fuse_unk"] = true;
  EXPECT_EQ(ids_of(load(fused), "dda", false), (std::vector<int32_t>{6, 0}));
  auto enc = t.encode("abc");
  ASSERT_TRUE(enc.has_value());
  EXPECT_EQ(enc->tokens, (std::vector<std::string>{"[CLS]", "abc", "[SEP]"}));
  EXPECT_EQ(enc->special_tokens_mask, (std::vector<int32_t>{1, 0, 1}));
  // No decoder: tokens joined by spaces; special tokens dropped on request.
  EXPECT_EQ(t.decode({7, 5, 4, 8}, true).value(), "abc bc");
  EXPECT_EQ(t.decode({7, 5, 8}, false).value(), "[CLS] abc [SEP]");
}

TEST(TokenizerBpe, IgnoreMergesAndSuffix) {
  json j = tiny_bpe();
  j["model"]["vocab"]["abab"] = 10;
  j["model"]["ignore_merges"] = true;
  EXPECT_EQ(ids_of(load(j), "abab", false), (std::vector<int32_t>{10}));
  // end_of_word_suffix: the last character carries "</w>"; (b, c</w>) is a separate merge.
  json s = json::parse(R"({"model": {"type": "BPE", "end_of_word_suffix": "</w>",
      "vocab": {"a": 0, "b": 1, "c</w>": 2, "b</w>": 3, "bc</w>": 4, "ab</w>": 5},
      "merges": [["b", "c</w>"], ["a", "b</w>"]]}, "pre_tokenizer": {"type": "WhitespaceSplit"}})");
  EXPECT_EQ(ids_of(load(s), "abc ab"), (std::vector<int32_t>{0, 4, 5}));
}

TEST(TokenizerBpe, AddedTokensStripAndSingleWord) {
  json j = tiny_bpe();
  j["added_tokens"].push_back({{"id", 10}, {"content", "<m>"}, {"lstrip", true}, {"rstrip", true}});
  j["added_tokens"].push_back({{"id", 11}, {"content", "bb"}, {"single_word", true}});
  Tokenizer t = load(j);
  // lstrip/rstrip swallow the spaces around <m>; "bb" only matches as a whole word.
  EXPECT_EQ(ids_of(t, "a  <m>  c", false), (std::vector<int32_t>{0, 10, 2}));
  EXPECT_EQ(ids_of(t, "a bb abb", false), (std::vector<int32_t>{0, 11, 3, 1}));
  EXPECT_EQ(t.token_to_id("<m>"), 10);
  EXPECT_EQ(t.vocab_size(), 12);
}

TEST(TokenizerBpe, TemplateProcessingAndPadding) {
  json j = tiny_bpe();
  j["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 1}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
      "pair": [],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [7], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [8], "tokens": ["[SEP]"]}}})");
  j["padding"] = json::parse(R"({"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": null,
      "pad_id": 9, "pad_type_id": 0, "pad_token": "[PAD]"})");
  Tokenizer t = load(j);
  EXPECT_EQ(t.num_special_tokens_to_add(), 2);
  auto batch = t.encode_batch({"abc", "a b c"});
  ASSERT_TRUE(batch.has_value()) << batch.status().to_string();
  EXPECT_EQ((*batch)[0].ids, (std::vector<int32_t>{7, 5, 8, 9, 9}));
  EXPECT_EQ((*batch)[0].attention_mask, (std::vector<int32_t>{1, 1, 1, 0, 0}));
  EXPECT_EQ((*batch)[0].type_ids, (std::vector<int32_t>{0, 1, 1, 0, 0}));
  EXPECT_EQ((*batch)[1].ids, (std::vector<int32_t>{7, 0, 1, 2, 8}));
  // Truncation keeps the special tokens: 4 = [CLS] + 2 tokens + [SEP].
  t.set_truncation({4, false});
  EXPECT_EQ(ids_of(t, "a b c"), (std::vector<int32_t>{7, 0, 1, 8}));
  t.set_truncation({4, true});
  EXPECT_EQ(ids_of(t, "a b c"), (std::vector<int32_t>{7, 1, 2, 8}));
  t.set_truncation({1, false});
  EXPECT_EQ(t.encode("a").status().code(), StatusCode::kInvalidArgument);
  PaddingOptions fixed;
  fixed.strategy = PaddingOptions::Strategy::kFixed;
  fixed.length = 6;
  fixed.pad_id = 9;
  t.set_truncation({});
  t.set_padding(fixed);
  EXPECT_EQ(ids_of(t, "abc"), (std::vector<int32_t>{7, 5, 8, 9, 9, 9}));
}

TEST(TokenizerWordPiece, GreedyLongestMatch) {
  Tokenizer t = load(json::parse(R"({
    "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "!": 4, "aff": 5}}})"));
  // "unaffable" -> un ##aff ##able; "xyz" -> [UNK]; punctuation is its own word (Whitespace).
  EXPECT_EQ(ids_of(t, "UnAffable xyz!"), (std::vector<int32_t>{1, 2, 3, 0, 4}));
  EXPECT_EQ(t.decode({1, 2, 3, 4}).value(), "unaffable!");
}

TEST(TokenizerPreTokenizers, SplitBehaviors) {
  auto split_ids = [](const std::string& behavior, bool invert) {
    json j = json::parse(R"({"model": {"type": "BPE", "unk_token": "?",
        "vocab": {"?": 0, "a": 1, "-": 2, "a-": 3, "-a": 4, "--": 5, "aa": 6}, "merges": []}})");
    // Merges would hide the splits: make every piece a vocabulary token or unknown.
    j["model"]["ignore_merges"] = true;
    j["pre_tokenizer"] = {
        {"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}};
    return ids_of(load(j), "a-a--a", false);
  };
  EXPECT_EQ(split_ids("Removed", false), (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(split_ids("Isolated", false), (std::vector<int32_t>{1, 2, 1, 2, 2, 1}));
  EXPECT_EQ(split_ids("MergedWithPrevious", false), (std::vector<int32_t>{3, 3, 2, 1}));
  EXPECT_EQ(split_ids("MergedWithNext", false), (std::vector<int32_t>{1, 4, 2, 4}));
  EXPECT_EQ(split_ids("Contiguous", false), (std::vector<int32_t>{1, 2, 1, 5, 1}));
  EXPECT_EQ(split_ids("Removed", true), (std::vector<int32_t>{2, 2, 2}));
}

TEST(TokenizerNormalizers, UnicodeForms) {
  json j = json::parse(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "decoder": {"type": "Fuse"}})");
  // The model has no vocabulary, so check the normalizer through the added-token splitter:
  // a normalized added token matches only after normalization.
  j["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"},
      {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Strip"}]})");
  j["added_tokens"] = json::parse(R"([{"id": 0, "content": "fine abc", "normalized": true},
                                       {"id": 1, "content": "straße", "normalized": true}])");
  Tokenizer t = load(j);
  EXPECT_EQ(ids_of(t, "  \xEF\xAC\x81ne\t\n ＡＢＣ "), (std::vector<int32_t>{0}));  // "ﬁne" + full-width
  EXPECT_EQ(ids_of(t, "STRASSE"), (std::vector<int32_t>{}));                        // lowercase is not case folding
  EXPECT_EQ(ids_of(t, "STRAßE"), (std::vector<int32_t>{1}));
}

// ---- bad input ------------------------------------------------------------------------------

Status load_error(const std::string& text) { return Tokenizer::from_json(text).status(); }

TEST(TokenizerErrors, MalformedFiles) {
  Status s = load_error("{\"model\": ");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("not valid JSON"), std::string::npos) << s.message();
  EXPECT_EQ(load_error("[1, 2]").code(), StatusCode::kInvalidModel);
  s = load_error("{}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("model is missing"), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "merges": []}})");
  EXPECT_NE(s.message().find("model.vocab is missing"), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}}})");
  EXPECT_NE(s.message().find("model.merges is missing"), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("model.merges[0] makes \"ab\", which is not in the vocabulary"), std::string::npos)
      << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "ab": 1}, "merges": [["a", "x"]]}})");
  EXPECT_NE(s.message().find("model.merges[0] names \"x\", which is not in the vocabulary"), std::string::npos)
      << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"}})");
  EXPECT_NE(s.message().find("model.unk_token"), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                     "post_processor": {"type": "RobertaProcessing", "cls": ["<s>", 5], "sep": ["</s>", 6]}})");
  EXPECT_NE(s.message().find("special token id 5"), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
                     "normalizer": {"type": "Replace", "pattern": {"Regex": "(["}, "content": ""}})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("normalizer.pattern"), std::string::npos) << s.message();
}

TEST(TokenizerErrors, UnsupportedComponentsNameThePath) {
  Status s = load_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Metaspace"}]}})");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message().rfind("tokenizer.json: pre_tokenizer.pretokenizers[1].type \"Metaspace\" is not supported", 0),
            0u)
      << s.message();
  s = load_error(R"({"model": {"type": "Unigram", "vocab": []}})");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("model.type \"Unigram\""), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "normalizer": {"type": "Precompiled"}})");
  EXPECT_NE(s.message().find("normalizer.type \"Precompiled\""), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "decoder": {"type": "CTC"}})");
  EXPECT_NE(s.message().find("decoder.type \"CTC\""), std::string::npos) << s.message();
  s = load_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": [], "dropout": 0.1}})");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(TokenizerErrors, FilesTextAndIds) {
  EXPECT_EQ(Tokenizer::from_file("/nonexistent/tokenizer.json").status().code(), StatusCode::kIo);
  EXPECT_EQ(Tokenizer::from_file(std::string(edgemm::testing::source_dir()) + "/tests/fixtures").status().code(),
            StatusCode::kIo);
  auto clip = Tokenizer::from_file(kClipDir);
  ASSERT_TRUE(clip.has_value()) << clip.status().to_string();
  EXPECT_EQ(clip->encode("bad \xC3\x28 utf-8").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(clip->decode({1024}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(clip->decode({-1}).status().code(), StatusCode::kInvalidArgument);
}

TEST(TokenizerClip, FixtureLayout) {
  auto clip = Tokenizer::from_file(kClipDir);
  ASSERT_TRUE(clip.has_value()) << clip.status().to_string();
  EXPECT_EQ(clip->vocab_size(), 1024);
  EXPECT_EQ(clip->token_to_id("<|startoftext|>"), 1022);
  EXPECT_EQ(clip->token_to_id("<|endoftext|>"), 1023);
  EXPECT_EQ(clip->config().model_max_length, 77);
  EXPECT_EQ(clip->config().pad_token, "<|endoftext|>");
  EXPECT_EQ(clip->num_special_tokens_to_add(), 2);
}

TEST(TokenizerClip, VeryLongWordRoundTrips) {
  // One 100000-character pre-token: the merges use a heap (the crate's Word::merge_all), not a
  // rescan per merge.
  auto clip = Tokenizer::from_file(kClipDir);
  ASSERT_TRUE(clip.has_value()) << clip.status().to_string();
  std::string word;
  for (int i = 0; i < 25000; ++i) word += "cats";
  auto enc = clip->encode(word, false);
  ASSERT_TRUE(enc.has_value()) << enc.status().to_string();
  EXPECT_LT(enc->ids.size(), word.size());  // merged, not one token a character
  EXPECT_EQ(clip->decode(enc->ids, true).value(), word);
}

// ---- oracle: npm @huggingface/tokenizers ----------------------------------------------------

/// Corpus lines are escaped: \n, \t, \r, \\ (tools/reference/tokenize.js does the same).
std::string unescape(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      const char c = line[i + 1];
      if (c == '\\' || c == 'n' || c == 't' || c == 'r') {
        out += c == '\\' ? '\\' : c == 'n' ? '\n' : c == 't' ? '\t' : '\r';
        ++i;
        continue;
      }
    }
    out += line[i];
  }
  return out;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Oracle {
  std::string dir;
  std::vector<std::string> texts;
  static std::optional<Oracle> get() {
    const char* dir = std::getenv("EDGEMM_TOKENIZER_REFS");
    if (!dir || !*dir) return std::nullopt;
    Oracle o{dir, {}};
    for (const auto& line :
         read_lines(std::string(edgemm::testing::source_dir()) + "/tests/fixtures/tokenizers/corpus.txt")) {
      o.texts.push_back(unescape(line));
    }
    return o;
  }
  std::vector<json> refs(const std::string& name) const {
    std::vector<json> out;
    for (const auto& line : read_lines(dir + "/" + name + ".jsonl")) out.push_back(json::parse(line));
    EXPECT_EQ(out.size(), texts.size()) << name;
    return out;
  }
};

#define SKIP_WITHOUT_ORACLE(o)                                                                            \
  auto o = Oracle::get();                                                                                 \
  if (!o) GTEST_SKIP() << "EDGEMM_TOKENIZER_REFS is not set (ctest -R tokenizer_oracle runs the oracle)"; \
  do {                                                                                                    \
  } while (0)

/// Encodes every corpus line and compares ids (and decoded text) with the references; returns
/// the number of lines that match exactly.
int check_corpus(const Tokenizer& t, const Oracle& o, const std::string& name, bool special, bool decode) {
  const auto refs = o.refs(name);
  int matched = 0;
  for (size_t i = 0; i < refs.size() && i < o.texts.size(); ++i) {
    auto enc = t.encode(o.texts[i], special);
    EXPECT_TRUE(enc.has_value()) << enc.status().to_string();
    if (!enc.has_value()) continue;
    const auto want = refs[i]["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(enc->ids, want) << name << " line " << i + 1 << ": " << o.texts[i];
    bool ok = enc->ids == want;
    if (decode && !want.empty()) {
      const auto text = t.decode(want, false), text_skip = t.decode(want, true);
      EXPECT_EQ(text.value(), refs[i]["text"].get<std::string>()) << name << " decode, line " << i + 1;
      EXPECT_EQ(text_skip.value(), refs[i]["text_skip"].get<std::string>()) << name << " decode, line " << i + 1;
      ok = ok && text.value() == refs[i]["text"] && text_skip.value() == refs[i]["text_skip"];
    }
    matched += ok ? 1 : 0;
  }
  std::cout << "[ oracle   ] " << name << ": " << matched << "/" << refs.size() << " corpus lines match exactly\n";
  return matched;
}

void check_padded(Tokenizer t, const Oracle& o, const std::string& name) {
  const auto refs = o.refs(name);
  auto batch = t.encode_batch(o.texts);
  ASSERT_TRUE(batch.has_value()) << batch.status().to_string();
  int matched = 0;
  for (size_t i = 0; i < refs.size() && i < batch->size(); ++i) {
    EXPECT_EQ((*batch)[i].ids, refs[i]["ids"].get<std::vector<int32_t>>()) << name << " line " << i + 1;
    EXPECT_EQ((*batch)[i].attention_mask, refs[i]["attention_mask"].get<std::vector<int32_t>>())
        << name << " line " << i + 1;
    matched += (*batch)[i].ids == refs[i]["ids"].get<std::vector<int32_t>>() ? 1 : 0;
  }
  std::cout << "[ oracle   ] " << name << ": " << matched << "/" << refs.size() << " corpus lines match exactly\n";
}

TEST(TokenizerOracle, Gpt2Corpus) {
  SKIP_WITHOUT_ORACLE(o);
  auto t = Tokenizer::from_file(o->dir + "/gpt2");
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(check_corpus(*t, *o, "gpt2", true, true), static_cast<int>(o->texts.size()));
  EXPECT_EQ(check_corpus(*t, *o, "gpt2_nospecial", false, false), static_cast<int>(o->texts.size()));
  // Byte-level BPE is lossless: decode(encode(text)) == text.
  for (const auto& text : o->texts) EXPECT_EQ(t->decode(ids_of(*t, text)).value(), text);
  Tokenizer padded = *t;
  padded.set_truncation({8, false});
  PaddingOptions p;
  p.strategy = PaddingOptions::Strategy::kLongest;
  p.pad_id = 50256;
  padded.set_padding(p);
  check_padded(padded, *o, "gpt2_trunc8_longest");
}

TEST(TokenizerOracle, Gpt2VariantCorpus) {
  SKIP_WITHOUT_ORACLE(o);
  auto t = Tokenizer::from_file(o->dir + "/gpt2_variant");
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(check_corpus(*t, *o, "gpt2_variant", true, true), static_cast<int>(o->texts.size()));
}

TEST(TokenizerOracle, WordPieceCorpus) {
  SKIP_WITHOUT_ORACLE(o);
  auto t = Tokenizer::from_file(o->dir + "/wordpiece");
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(check_corpus(*t, *o, "wordpiece", true, true), static_cast<int>(o->texts.size()));
}

TEST(TokenizerOracle, ClipCorpus) {
  SKIP_WITHOUT_ORACLE(o);
  auto t = Tokenizer::from_file(kClipDir);
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(check_corpus(*t, *o, "clip", true, true), static_cast<int>(o->texts.size()));
  EXPECT_EQ(check_corpus(*t, *o, "clip_nospecial", false, false), static_cast<int>(o->texts.size()));
  Tokenizer padded = *t;
  padded.set_truncation({12, false});
  PaddingOptions p;
  p.strategy = PaddingOptions::Strategy::kFixed;
  p.length = 12;
  p.pad_id = *t->token_to_id(*t->config().pad_token);
  padded.set_padding(p);
  check_padded(padded, *o, "clip_trunc12_pad12");
}

}  // namespace tokenizer_test
}  // namespace edgemm::text
