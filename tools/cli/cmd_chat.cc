// `edgemm chat`: an interactive multi-turn conversation with a vision-language model package,
// like llama.cpp's llama-mtmd-cli chat mode. Lines from stdin are user turns; "/image PATH"
// attaches an image to the next turn, "/reset" starts over, "/quit" (or end of input) ends.
// The KV cache is kept between turns: earlier turns are not prefilled again. A turn that fails
// (a missing image, the context full) is reported and dropped; the session goes on, and its exit
// status is the first failure's.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/vlm.h"
#include "vlm_options.h"

namespace edgemm::cli {

namespace {

struct ChatArgs {
  VlmArgs vlm;
  std::vector<std::string> images;
  bool json = false;
};

/// Runs the session; returns the exit code (0, or the first failed turn's, already reported) or a
/// fatal error (the model does not load).
Expected<int> run_chat(const ChatArgs& args) {
  const Status stdin_image(StatusCode::kInvalidArgument,
                           "an image cannot come from standard input ('-') in chat: standard input carries the "
                           "conversation; give an image file");
  if (std::count(args.images.begin(), args.images.end(), "-") > 0) return stdin_image;
  EDGEMM_ASSIGN_OR_RETURN(vlm::VlmModel model, args.vlm.load());
  vlm::ChatSession chat(model);
  const vlm::GenerateOptions gen = args.vlm.generate_options();
  const bool interactive = isatty(STDIN_FILENO) == 1 && !args.json;
  std::vector<std::string> pending = args.images;
  std::string line;
  int turn = 0;
  Status first_error = Status::ok();  // the exit status: the first failed turn's
  while (true) {
    if (interactive) std::cout << "> " << std::flush;
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line.empty()) continue;
    if (line.rfind("/image ", 0) == 0) {
      if (line.substr(7) != "-") {
        pending.push_back(line.substr(7));
      } else {
        if (first_error.is_ok()) first_error = stdin_image;
        std::cerr << "edgemm chat: error: " << stdin_image.to_string() << "\n";
      }
      continue;
    }
    if (line == "/reset") {
      chat.reset();
      turn = 0;
      continue;
    }
    auto on_token = [&args](int64_t, const std::string& piece) {
      if (!args.json) std::cout << piece << std::flush;
    };
    auto result = chat.send(line, pending, gen, on_token);
    if (!result.has_value()) {  // the turn fails, the conversation goes on (without its images)
      if (first_error.is_ok()) first_error = result.status();
      std::cerr << "edgemm chat: error: " << result.status().to_string() << " (turn dropped"
                << (pending.empty() ? "" : " with its images") << "; /reset starts over)\n";
      if (args.json) {
        std::cout << nlohmann::json({{"turn", turn + 1}, {"error", error_json(result.status())}}).dump() << std::endl;
      }
      pending.clear();
      continue;
    }
    pending.clear();
    ++turn;
    if (args.json) {
      const nlohmann::json out = {{"turn", turn},
                                  {"answer", result->text},
                                  {"ids", result->ids},
                                  {"stop_reason", result->stop_reason},
                                  {"timings", timings_json(result->timings)}};
      std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    } else {
      std::cout << std::endl;
    }
  }
  return first_error.is_ok() ? 0 : exit_code(first_error);
}

}  // namespace

void add_chat_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ChatArgs>();
  CLI::App* cmd = app.add_subcommand(
      "chat",
      "Multi-turn chat with a vision-language model package: one user turn per input line; \"/image PATH\" "
      "attaches an image to the next turn, \"/reset\" starts over, \"/quit\" ends; the KV cache is kept between turns");
  add_vlm_options(cmd, args->vlm);
  cmd->add_option("--image", args->images, "image(s) for the first turn");
  cmd->add_flag("--json", args->json,
                "one JSON line per turn: {turn, answer, ids, stop_reason, timings (cached_prompt_tokens: "
                "positions kept from earlier turns)}; errors end the session");
  cmd->callback([args, &exit_code] {
    const auto result = run_chat(*args);
    exit_code = result ? *result : report_error("chat", result.status(), args->json);
  });
}

}  // namespace edgemm::cli
