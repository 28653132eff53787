// `edgemm chat-template`: renders a chat template (Hugging Face tokenizer_config.json /
// chat_template.json, or a template file) for a conversation, as transformers.js'
// apply_chat_template(messages, {tokenize: false}) does.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/chat_template.h"

namespace edgemm::cli {

namespace {

using Json = nlohmann::ordered_json;

struct ChatTemplateArgs {
  std::string template_file;
  std::string model_dir;
  std::string messages_file;
  std::string vars_file;
  bool add_generation_prompt = false;
  bool json = false;
};

Expected<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIo, "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Expected<Json> read_json_file(const std::string& path) {
  EDGEMM_ASSIGN_OR_RETURN(std::string text, read_text(path));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kInvalidArgument, path + ": malformed JSON");
  return j;
}

Status run_chat_template(const ChatTemplateArgs& args) {
  if (args.template_file.empty() == args.model_dir.empty())
    return Status(StatusCode::kInvalidArgument, "give exactly one of --template FILE and --model DIR");
  Expected<text::ChatTemplate> tmpl = Status(StatusCode::kInternal, "unset");
  if (!args.model_dir.empty()) {
    tmpl = text::ChatTemplate::from_model_dir(args.model_dir);
  } else {
    EDGEMM_ASSIGN_OR_RETURN(std::string source, read_text(args.template_file));
    tmpl = text::ChatTemplate::parse(source);
  }
  if (!tmpl) return tmpl.status();
  EDGEMM_ASSIGN_OR_RETURN(Json messages, read_json_file(args.messages_file));
  Json vars = nullptr;
  if (!args.vars_file.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(vars, read_json_file(args.vars_file));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string text, tmpl->apply(messages.dump(), args.add_generation_prompt, vars.dump()));
  if (args.json) {
    std::cout << Json{{"text", text}, {"special_tokens", Json::parse(tmpl->special_tokens())}}.dump(2) << std::endl;
  } else {
    std::cout << text;
  }
  return Status::ok();
}

}  // namespace

void add_chat_template_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ChatTemplateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "chat-template", "Render a model's chat template for a conversation (Jinja subset of @huggingface/jinja)");
  cmd->add_option("--template", args->template_file, "a file holding the template text");
  cmd->add_option("--model", args->model_dir,
                  "a model folder: chat_template.json or tokenizer_config.json (template and special tokens)");
  cmd->add_option("--messages", args->messages_file,
                  "JSON list of {role, content}; content a string or a list of {type: text, text} / {type: image}")
      ->required();
  cmd->add_option("--vars", args->vars_file, "JSON object of extra variables (e.g. tools, date_string, bos_token)");
  cmd->add_flag("--add-generation-prompt", args->add_generation_prompt, "end with the assistant turn's opening");
  cmd->add_flag("--json", args->json, "print JSON: {text, special_tokens}");
  cmd->callback([args, &exit_code] {
    const Status status = run_chat_template(*args);
    if (!status.is_ok()) exit_code = report_error("chat-template", status, args->json);
  });
}

}  // namespace edgemm::cli
