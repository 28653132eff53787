// `edgemm tokenize`: encodes texts with a Hugging Face tokenizer.json (or decodes ids), printing
// ids like llama.cpp's llama-tokenize.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/tokenizer.h"

namespace edgemm::cli {

namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::vector<std::string> texts;
  bool json = false;
  bool no_special = false;
  bool decode = false;
  bool skip_special = false;
  bool tokens = false;
  int max_length = 0;
  int pad_to = 0;
};

/// "1022,320 691" -> ids (CLI11 itself splits a "[a, b]" argument into several). Errors: kInvalidArgument naming the
/// bad word.
Expected<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::string word;
  std::string spaced = text;
  for (char& c : spaced) c = c == ',' ? ' ' : c;
  std::istringstream words(spaced);
  while (words >> word) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < 0 || v > INT32_MAX) {
      return Status(StatusCode::kInvalidArgument, "--decode: '" + word + "' is not a token id.");
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

Status run_tokenize(const TokenizeArgs& args) {
  EDGEMM_ASSIGN_OR_RETURN(text::Tokenizer tok, text::Tokenizer::from_file(args.tokenizer));
  if (args.max_length > 0) tok.set_truncation({args.max_length, false});
  if (args.pad_to > 0) {
    text::PaddingOptions padding;
    padding.strategy = text::PaddingOptions::Strategy::kFixed;
    padding.length = args.pad_to;
    const std::string pad_token = tok.config().pad_token.value_or("");
    if (auto id = tok.token_to_id(pad_token)) {
      padding.pad_id = *id;
      padding.pad_token = pad_token;
    }
    tok.set_padding(padding);
  }
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& text : args.texts) {
    if (args.decode) {
      EDGEMM_ASSIGN_OR_RETURN(std::vector<int32_t> ids, parse_ids(text));
      EDGEMM_ASSIGN_OR_RETURN(std::string decoded, tok.decode(ids, args.skip_special));
      if (args.json) {
        results.push_back({{"ids", ids}, {"text", decoded}});
      } else {
        std::cout << decoded << "\n";
      }
      continue;
    }
    EDGEMM_ASSIGN_OR_RETURN(text::Encoding enc, tok.encode(text, !args.no_special));
    if (args.json) {
      results.push_back(
          {{"text", text}, {"ids", enc.ids}, {"tokens", enc.tokens}, {"attention_mask", enc.attention_mask}});
    } else if (args.tokens) {
      for (size_t i = 0; i < enc.ids.size(); ++i) {
        std::cout << std::setw(6) << enc.ids[i] << " -> '" << enc.tokens[i] << "'\n";
      }
    } else {
      std::cout << ids_text(enc.ids) << "\n";
    }
  }
  if (args.json) std::cout << json_text({{"tokenizer", args.tokenizer}, {"results", results}}) << std::endl;
  return Status::ok();
}

}  // namespace

void add_tokenize_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd =
      app.add_subcommand("tokenize", "Encode texts to token ids (or decode ids) with a Hugging Face tokenizer.json");
  cmd->add_option("--tokenizer", args->tokenizer, "tokenizer.json, or a folder holding it (and tokenizer_config.json)")
      ->required();
  cmd->add_option("text", args->texts, "texts to encode (with --decode: ids, e.g. \"1022,320,1023\")")->required();
  cmd->add_flag("--json", args->json, "print JSON: {tokenizer, results: [{text, ids, tokens, attention_mask}]}");
  cmd->add_flag("--no-special", args->no_special, "do not add the post-processor's special tokens (bos/eos)");
  cmd->add_flag("--decode", args->decode, "decode ids back to text instead of encoding");
  cmd->add_flag("--skip-special", args->skip_special, "with --decode: drop special tokens");
  cmd->add_flag("--tokens", args->tokens, "print one line a token: id -> 'token'");
  cmd->add_option("--max-length", args->max_length, "truncate to this many tokens, special tokens included")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--pad-to", args->pad_to, "pad to this many tokens with tokenizer_config's pad_token")
      ->check(CLI::Range(1, 1 << 24));
  cmd->callback([args, &exit_code] {
    const Status status = run_tokenize(*args);
    if (!status.is_ok()) exit_code = report_error("tokenize", status, args->json);
  });
}

}  // namespace edgemm::cli
