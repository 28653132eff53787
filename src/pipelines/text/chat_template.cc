// ChatTemplate: loading from a model folder and rendering through the Jinja subset (jinja.h).
#include "edgemm/pipelines/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipelines/text/jinja.h"

namespace edgemm::text {

struct ChatTemplateImpl {
  std::string source;
  jinja::Program program;
};

namespace {

Status template_error(const jinja::TemplateError& e, StatusCode code) {
  std::string where = "chat template";
  if (e.line > 0) where += " line " + std::to_string(e.line) + ", column " + std::to_string(e.column);
  return Status(e.unsupported ? StatusCode::kUnsupported : code, where + ": " + e.what());
}

Expected<jinja::Json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIo, "cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  jinja::Json j = jinja::Json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kInvalidModel, path.string() + ": malformed JSON");
  return j;
}

/// tokenizer_config.json's chat_template: a string, or [{name, template}, ...] ("default").
Expected<std::string> template_text(const jinja::Json& value, const std::string& file) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    for (const auto& t : value)
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") && t["template"].is_string())
        return t["template"].get<std::string>();
    return Status(StatusCode::kInvalidModel,
                  file + ": chat_template lists several templates and none is named \"default\"");
  }
  return Status(StatusCode::kInvalidModel, file + ": chat_template is not a string");
}

}  // namespace

Expected<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  auto impl = std::make_shared<ChatTemplateImpl>();
  impl->source = source;
  try {
    impl->program = jinja::parse(jinja::tokenize(impl->source));
  } catch (const jinja::TemplateError& e) {
    return template_error(e, StatusCode::kInvalidArgument);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("chat template: ") + e.what());
  }
  return ChatTemplate(std::move(impl));
}

Expected<ChatTemplate> ChatTemplate::from_model_dir(const std::string& dir) {
  const std::filesystem::path root(dir);
  const auto config_path = root / "tokenizer_config.json";
  const auto template_path = root / "chat_template.json";
  jinja::Json config = jinja::Json::object();
  if (std::filesystem::exists(config_path)) {
    EDGEMM_ASSIGN_OR_RETURN(config, read_json(config_path));
  }
  std::string text;
  if (std::filesystem::exists(template_path)) {
    EDGEMM_ASSIGN_OR_RETURN(jinja::Json t, read_json(template_path));
    if (!t.is_object() || !t.contains("chat_template"))
      return Status(StatusCode::kInvalidModel, template_path.string() + ": no chat_template field");
    EDGEMM_ASSIGN_OR_RETURN(text, template_text(t["chat_template"], template_path.string()));
  } else if (config.is_object() && config.contains("chat_template")) {
    EDGEMM_ASSIGN_OR_RETURN(text, template_text(config["chat_template"], config_path.string()));
  } else if (!std::filesystem::exists(config_path)) {
    return Status(StatusCode::kIo, "no chat_template.json or tokenizer_config.json in " + dir);
  } else {
    return Status(StatusCode::kInvalidModel,
                  config_path.string() + " has no chat_template (and there is no chat_template.json)");
  }
  auto parsed = parse(text);
  if (!parsed) return Status(parsed.status().code(), dir + ": " + parsed.status().message());
  ChatTemplate result = std::move(*parsed);
  jinja::Json tokens = jinja::Json::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!config.is_object() || !config.contains(key)) continue;
    const jinja::Json& t = config[key];
    const jinja::Json content = t.is_object() ? t.value("content", jinja::Json()) : t;
    if (content.is_string() && !content.get<std::string>().empty()) tokens[key] = content;
  }
  result.special_tokens_ = tokens.dump();
  return result;
}

namespace {

// `text` parsed as JSON (objects keep their key order). Errors: kInvalidArgument naming `what`.
Expected<jinja::Json> parse_argument(std::string_view text, const std::string& what) {
  jinja::Json j = jinja::Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kInvalidArgument, what + " are not valid JSON");
  return j;
}

Expected<std::string> render_variables(const jinja::Program& program, const jinja::Json& variables) {
  if (!variables.is_object())
    return Status(StatusCode::kInvalidArgument, "chat template variables must be a JSON object");
  try {
    jinja::Scope globals;
    jinja::add_globals(globals);
    for (const auto& [name, value] : variables.items())
      globals.set(name, jinja::Value::of(jinja::normalize_input(value)));
    return jinja::render(program, globals);
  } catch (const jinja::TemplateError& e) {
    return template_error(e, StatusCode::kInvalidArgument);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("chat template: ") + e.what());
  }
}

}  // namespace

Expected<std::string> ChatTemplate::render(std::string_view variables_json) const {
  EDGEMM_ASSIGN_OR_RETURN(jinja::Json variables, parse_argument(variables_json, "chat template variables"));
  return render_variables(impl_->program, variables);
}

Expected<std::string> ChatTemplate::apply(std::string_view messages_json, bool add_generation_prompt,
                                          std::string_view extra_json) const {
  EDGEMM_ASSIGN_OR_RETURN(jinja::Json messages, parse_argument(messages_json, "chat messages"));
  EDGEMM_ASSIGN_OR_RETURN(jinja::Json extra, parse_argument(extra_json, "extra chat template variables"));
  if (!messages.is_array()) return Status(StatusCode::kInvalidArgument, "chat messages must be a JSON list");
  if (!extra.is_null() && !extra.is_object())
    return Status(StatusCode::kInvalidArgument, "extra chat template variables must be a JSON object");
  jinja::Json vars = {{"messages", std::move(messages)},
                      {"add_generation_prompt", add_generation_prompt},
                      {"tools", nullptr},
                      {"documents", nullptr}};
  const jinja::Json special_tokens = jinja::Json::parse(special_tokens_);
  for (const auto& [k, v] : special_tokens.items()) vars[k] = v;
  if (extra.is_object())
    for (const auto& [k, v] : extra.items()) vars[k] = v;
  return render_variables(impl_->program, vars);
}

Status ChatTemplate::set_special_tokens(std::string_view tokens_json) {
  EDGEMM_ASSIGN_OR_RETURN(jinja::Json tokens, parse_argument(tokens_json, "special tokens"));
  if (!tokens.is_object()) return Status(StatusCode::kInvalidArgument, "special tokens must be a JSON object");
  special_tokens_ = tokens.dump();
  return Status::ok();
}

const std::string& ChatTemplate::source() const { return impl_->source; }

}  // namespace edgemm::text
