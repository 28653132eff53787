// Chat templates (include/edgemm/pipelines/chat_template.h): byte-exact agreement with npm
// @huggingface/jinja 0.5.11 on published templates (ChatTemplateOracle.*, references rendered
// live by tools/reference/make_chat_template_refs.sh), and bad input.
#include "edgemm/pipelines/chat_template.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "source_dir.h"

namespace chat_template_test {  // named for the file: unity batches merge anonymous namespaces

using edgemm::StatusCode;
using edgemm::text::ChatTemplate;
using Json = nlohmann::ordered_json;

const std::string kFixtures = std::string(edgemm::testing::source_dir()) + "/tests/fixtures/chat_templates";

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

std::string render(const std::string& source, const Json& messages, bool gen = false, const Json& extra = nullptr) {
  auto t = ChatTemplate::parse(source);
  EXPECT_TRUE(t) << t.status().to_string();
  if (!t) return "<parse error>";
  auto out = t->apply(messages.dump(), gen, extra.dump());
  EXPECT_TRUE(out) << out.status().to_string();
  return out ? *out : "<render error>";
}

edgemm::Status render_error(const std::string& source, const Json& messages = Json::array()) {
  auto t = ChatTemplate::parse(source);
  if (!t) return t.status();
  auto out = t->apply(messages.dump(), false);
  return out ? edgemm::Status::ok() : out.status();
}

TEST(ChatTemplateOracle, PublishedTemplatesByteExact) {
  const char* refs_path = std::getenv("EDGEMM_CHAT_TEMPLATE_REFS");
  if (!refs_path)
    GTEST_SKIP() << "EDGEMM_CHAT_TEMPLATE_REFS is not set (ctest -R chat_template_oracle runs the oracle)";
  std::map<std::string, Json> refs;
  std::ifstream in(refs_path);
  for (std::string line; std::getline(in, line);) {
    Json r = Json::parse(line);
    refs[r["name"].get<std::string>()] = r;
  }
  const Json templates = read_json(kFixtures + "/templates.json");
  const Json conversations = read_json(kFixtures + "/conversations.json");
  int compared = 0, outputs = 0;
  for (const auto& t : templates) {
    auto parsed = ChatTemplate::parse(t["template"].get<std::string>());
    ASSERT_TRUE(parsed) << t["name"] << ": " << parsed.status().to_string();
    ASSERT_TRUE(parsed->set_special_tokens(t["special_tokens"].dump()).is_ok());
    for (const auto& c : conversations) {
      for (bool gen : {false, true}) {
        const std::string name =
            t["name"].get<std::string>() + "/" + c["name"].get<std::string>() + "/gen" + (gen ? "1" : "0");
        ASSERT_TRUE(refs.count(name)) << "no reference for " << name;
        const Json& ref = refs[name];
        auto out = parsed->apply(c["messages"].dump(), gen, c.value("extra", Json(nullptr)).dump());
        ++compared;
        if (ref.contains("error")) {
          EXPECT_FALSE(out) << name << ": the reference fails (" << ref["error"] << ") but edgemm renders\n" << *out;
          continue;
        }
        ++outputs;
        ASSERT_TRUE(out) << name << ": " << out.status().to_string();
        EXPECT_EQ(*out, ref["output"].get<std::string>()) << name;
      }
    }
  }
  EXPECT_EQ(compared, static_cast<int>(refs.size()));
  std::cout << compared << " cases compared, " << outputs << " rendered by the reference, " << compared - outputs
            << " refused by both\n";
}

TEST(ChatTemplate, HandComputed) {
  const Json msgs = Json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}])");
  EXPECT_EQ(render("{% for m in messages %}<{{ m.role }}>{{ m['content'] }}{% endfor %}", msgs),
            "<user>Hi<assistant>Yo");
  EXPECT_EQ(render("{{ messages[-1].content }}{{ messages | length }}", msgs), "Yo2");
  EXPECT_EQ(render("{% if add_generation_prompt %}A:{% endif %}", msgs, true), "A:");
  EXPECT_EQ(render("a\n  {%- if true %} b {% endif -%}\n  c", msgs), "a b c");
  EXPECT_EQ(render("{{ bos_token }}{{ x }}", msgs, false, Json{{"bos_token", "<s>"}, {"x", 2.0}}), "<s>2");
  EXPECT_EQ(render("{{ true }} {{ none }} {{ 1.5 }} {{ 2.0 }} {{ [1, 'a'] }}", msgs), "true  1.5 2.0 [1, \"a\"]");
  EXPECT_EQ(render("{{ 'abc'[::-1] }}{{ 'abc'[1:] }}", msgs), "cbabc");
  EXPECT_EQ(render(std::string("a{\0b\0}\nc", 8), msgs), std::string("a{\0b\0}\nc", 8));  // NUL bytes are text
}

TEST(ChatTemplate, UndefinedBehavesAsTheReference) {
  // Undefined renders as "", its attributes are undefined, `is defined` is false...
  EXPECT_EQ(render("[{{ nope }}][{{ nope.x.y }}][{{ nope is defined }}][{{ nope | default('d') }}]", Json::array()),
            "[][][false][d]");
  // ...but arithmetic and most filters on it are errors.
  EXPECT_EQ(render_error("{{ nope + 1 }}").code(), StatusCode::kInvalidArgument);
  EXPECT_NE(render_error("{{ nope | upper }}").message().find("UndefinedValue"), std::string::npos);
}

TEST(ChatTemplate, RaiseExceptionKeepsTheMessage) {
  const auto s = render_error("ok\n{{ raise_exception('Conversation roles must alternate') }}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Conversation roles must alternate"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("line 2, column 4"), std::string::npos) << s.message();
}

TEST(ChatTemplate, BadInputIsAClearError) {
  auto unknown_filter = render_error("{{ 'a' | frobnicate }}");
  EXPECT_NE(unknown_filter.message().find("frobnicate"), std::string::npos) << unknown_filter.message();
  auto unclosed = ChatTemplate::parse("x\n{% if a %}\n{% for m in messages %}{{ m }}{% endfor %}");
  ASSERT_FALSE(unclosed);
  EXPECT_EQ(unclosed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unclosed.status().message().find("unclosed '{% if %}'"), std::string::npos) << unclosed.status().message();
  EXPECT_NE(unclosed.status().message().find("line 2, column 1"), std::string::npos) << unclosed.status().message();
  auto unsupported = ChatTemplate::parse("{% filter upper %}x{% endfilter %}");
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(unsupported.status().message().find("filter"), std::string::npos);
  for (const char* bad : {"{{", "{{ 'abc }}", "{{ a b }}", "{% endif %}", "{# open", "{{ (1 }}", "{{ [1, }}",
                          "{% for in x %}{% endfor %}", "{{ x[] }}", "{% set %}", "{{ f(a=1, 2) }}", "{{ @ }}"}) {
    auto t = ChatTemplate::parse(bad);
    EXPECT_FALSE(t) << bad;
  }
  EXPECT_FALSE(render_error("{{ messages[0].content.strip() }}", Json::array()).is_ok());  // calling undefined
  EXPECT_FALSE(render_error("{% for c in 'abc' %}{% endfor %}").is_ok());                  // strings are not iterable

  // Malformed or mistyped JSON arguments.
  auto t = ChatTemplate::parse("{{ x }}");
  ASSERT_TRUE(t);
  for (auto [messages, extra, part] :
       {std::tuple{"[{", "null", "chat messages are not valid JSON"},
        std::tuple{"{}", "null", "chat messages must be a JSON list"},
        std::tuple{"[]", "[1]", "extra chat template variables must be a JSON object"},
        std::tuple{"[]", "{\"x\":", "extra chat template variables are not valid JSON"}}) {
    auto out = t->apply(messages, false, extra);
    ASSERT_FALSE(out) << messages << " " << extra;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status().message();
  }
  EXPECT_FALSE(t->render("[1]"));
  EXPECT_FALSE(t->set_special_tokens("\"<s>\"").is_ok());
  EXPECT_EQ(*t->render(R"({"x": 2})"), "2");
}

TEST(ChatTemplate, MutatedTemplatesNeverCrash) {
  // Seeded random edits of the published templates (and pathological nesting) must parse or fail
  // with a Status, and render or fail with a Status: never crash or throw.
  const Json templates = read_json(kFixtures + "/templates.json");
  const Json conversations = read_json(kFixtures + "/conversations.json");
  const std::string alphabet = "{}%#-()[]'\"|.,:=~+*/ \nxifnotinsetforend0123";
  uint64_t state = 12345;
  auto next = [&state](size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  int parsed = 0, rendered = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string t = templates[next(templates.size())]["template"].get<std::string>();
    for (int edits = 1 + static_cast<int>(next(3)); edits > 0 && !t.empty(); --edits) {
      const size_t at = next(t.size());
      switch (next(3)) {
        case 0:
          t.erase(at, 1 + next(4));
          break;
        case 1:
          t.insert(at, 1, alphabet[next(alphabet.size())]);
          break;
        default:
          t.insert(at, t.substr(next(t.size()), next(12)));
          break;
      }
    }
    auto tmpl = ChatTemplate::parse(t);
    if (!tmpl) continue;
    ++parsed;
    const auto& c = conversations[next(conversations.size())];
    if (tmpl->apply(c["messages"].dump(), next(2) == 1, c.value("extra", Json(nullptr)).dump())) ++rendered;
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rendered, 0);
  EXPECT_FALSE(ChatTemplate::parse("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"));
  std::string nots = "{{ ", minuses = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ", minuses += "- ";
  EXPECT_FALSE(ChatTemplate::parse(nots + "1 }}"));
  EXPECT_FALSE(ChatTemplate::parse(minuses + "1 }}"));
  EXPECT_FALSE(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").is_ok());
  EXPECT_EQ(render("{{ 99999999999999999999 }}", Json::array()), "100000000000000000000.0");
}

TEST(ChatTemplate, FromModelDir) {
  const auto dir = std::filesystem::temp_directory_path() / "edgemm_chat_template_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "chat_template": [{"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"}]})";
  auto t = ChatTemplate::from_model_dir(dir.string());
  ASSERT_TRUE(t) << t.status().to_string();
  auto out = t->apply(R"([{"role": "user", "content": "x"}])", false);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "<s>x</s>");
  std::ofstream(dir / "chat_template.json") << R"({"chat_template": "{{ messages | length }}"})";
  auto t2 = ChatTemplate::from_model_dir(dir.string());
  ASSERT_TRUE(t2);
  EXPECT_EQ(*t2->apply("[]", false), "0");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(ChatTemplate::from_model_dir(dir.string()).status().code(), StatusCode::kIo);
}

}  // namespace chat_template_test
