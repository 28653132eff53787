#pragma once
/// \file chat_template.h
/// Chat templates of Hugging Face model packages (`chat_template` in tokenizer_config.json, or
/// chat_template.json), rendered with a Jinja subset that reproduces npm @huggingface/jinja
/// 0.5.11, the renderer of transformers.js' apply_chat_template, byte for byte. Checked against
/// it (tests/fixtures/chat_templates, the chat_template_oracle test) on the published templates
/// of SmolVLM / Idefics2 / Idefics3, Llama 3 / 3.3, Qwen2 / Qwen2-VL, Phi-3 / 3.5, Gemma and
/// Mistral v0.1 / v0.2 / v0.3.
///
/// Supported (everything else is refused with the construct, line and column):
///  - `{{ }}`, `{% %}`, `{# #}`, `-` whitespace control; as transformers.js: trim_blocks and
///    lstrip_blocks on, one trailing newline dropped, `{% generation %}` tags removed;
///  - statements: if / elif / else, for (tuple targets `for k, v in ...`, `else`, inline
///    `if` filter, loop.index / index0 / revindex / revindex0 / first / last / length /
///    previtem / nextitem, break, continue), set (`a = ...`, `a, b = ...`, `ns.x = ...` on a
///    namespace(), block set), macro (positional, keyword and default parameters);
///  - expressions: string / integer / float / list / tuple / dict literals, `a.b`, `a['b']`,
///    `a[0]`, `a[-1]`, slices `a[1:]` `a[::-1]`, calls with keyword arguments, `x if c else y`,
///    and / or / not, in / not in, == != < > <= >=, + - * / // % ** ~, unary + -;
///  - globals: true / false / none (and True / False / None), namespace(), range(),
///    raise_exception(msg) (an error whose message is msg), strftime_now(fmt) (local time; %Y
///    %m %d %b %B %H %M %%);
///  - filters: abs, capitalize, default(value, boolean), first, float, indent, int, items,
///    join(sep), keys, last, length, list, lower, map(attribute=...), rejectattr, replace,
///    reverse, safe, selectattr (with a test name and value), string, tojson(indent,
///    ensure_ascii, sort_keys, separators), title, trim, unique, upper, values;
///  - tests: boolean, callable, defined, eq / equalto, even, false, integer, iterable, lower,
///    mapping, none, number, odd, sequence, string, true, undefined, upper;
///  - methods: str.strip / lstrip / rstrip / upper / lower / title / capitalize / startswith /
///    endswith / split / replace, .length, dict.get / items / keys / values.
/// Not supported: {% call %}, {% filter %}, {% include %} / {% import %} / {% extends %},
/// `*args` / `**kwargs` in calls, the sort / dictsort / reject / map-without-attribute filters.
///
/// Semantics are @huggingface/jinja's (not Python Jinja's) where they differ: an undefined
/// variable renders as "" and any attribute of it is undefined, but arithmetic on it is an
/// error; booleans print as "true" / "false"; `x == y` is JavaScript's loose equality.
/// Known differences from the reference: string indexing and slicing count code points and
/// `.length` UTF-16 code units as in JavaScript, but `s[i]` on characters outside the BMP
/// differs; two distinct lists or dicts with equal contents compare equal here (the reference
/// compares their identities); tojson(sort_keys=true) orders keys case-insensitively by code
/// point instead of by localeCompare.

#include <memory>
#include <string>
#include <string_view>

#include "edgemm/status.h"

namespace edgemm::text {

struct ChatTemplateImpl;

/// A parsed chat template. Immutable after creation; render() / apply() may be called from
/// several threads at once. Copies share the parsed template.
class ChatTemplate {
 public:
  /// Parses template text. Errors: kInvalidArgument for a syntax error, kUnsupported for a
  /// construct outside the subset; the message names it with its 1-based line and column
  /// (`chat template line 3, column 12: unclosed '{% if %}' block ...`). Never throws.
  static Expected<ChatTemplate> parse(std::string_view source);

  /// Loads the template of a model folder as transformers.js does: `chat_template.json`
  /// ({"chat_template": "..."}) if present, else `tokenizer_config.json`'s `chat_template` (a
  /// string, or a list of {name, template} from which "default" is taken). The special tokens
  /// bos_token, eos_token, unk_token, sep_token, pad_token, cls_token and mask_token (strings or
  /// {"content": ...} objects) are read from tokenizer_config.json into special_tokens().
  /// Errors: kIo when no file can be read, kInvalidModel for malformed JSON or no template, and
  /// the errors of parse().
  static Expected<ChatTemplate> from_model_dir(const std::string& dir);

  /// Renders with the given top-level variables: `variables_json`, the text of a JSON object
  /// (numbers with an integral value are integers, as in JavaScript; keys keep their order).
  /// Errors: kInvalidArgument for malformed JSON, a non-object, or a render error (including
  /// raise_exception, whose message is kept) naming the line and column.
  Expected<std::string> render(std::string_view variables_json) const;

  /// transformers.js' apply_chat_template(messages, {tokenize: false, add_generation_prompt}):
  /// variables messages, add_generation_prompt, tools = null, documents = null, then
  /// special_tokens(), then `extra_json` (a JSON object, or null; later keys win).
  /// `messages_json` is the text of a JSON list of {"role": ..., "content": string or list of
  /// parts such as {"type": "text", "text": ...} / {"type": "image"}}. Errors as render().
  Expected<std::string> apply(std::string_view messages_json, bool add_generation_prompt,
                              std::string_view extra_json = "null") const;

  /// Special tokens read by from_model_dir() as the text of a JSON object ("{}" otherwise), e.g.
  /// {"bos_token": "<s>"}.
  const std::string& special_tokens() const { return special_tokens_; }
  /// Replaces them. Errors: kInvalidArgument unless `tokens_json` is a JSON object.
  Status set_special_tokens(std::string_view tokens_json);
  /// The template text.
  const std::string& source() const;

 private:
  explicit ChatTemplate(std::shared_ptr<const ChatTemplateImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const ChatTemplateImpl> impl_;
  std::string special_tokens_ = "{}";
};

}  // namespace edgemm::text
