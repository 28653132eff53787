// Jinja lexer: @huggingface/jinja 0.5.11 src/lexer.ts (preprocess + tokenize), on UTF-8 bytes,
// keeping each character's offset in the original template for error positions.
#include <array>
#include <cstring>

#include "pipelines/text/jinja.h"
#include "pipelines/text/unicode.h"

namespace edgemm::text::jinja {
namespace {

/// Preprocessed text with, for every byte, its offset in the original template.
struct Source {
  std::string text;
  std::vector<size_t> origin;

  void append(const Source& from, size_t begin, size_t end) {
    text.append(from.text, begin, end - begin);
    origin.insert(origin.end(), from.origin.begin() + static_cast<std::ptrdiff_t>(begin),
                  from.origin.begin() + static_cast<std::ptrdiff_t>(end));
  }
};

/// Decodes the code point starting at byte `i` (invalid UTF-8 yields the byte itself).
char32_t code_point_at(std::string_view s, size_t i, size_t* length) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) n = 1;
  if (n == 1) {
    *length = 1;
    return b;
  }
  size_t j = i;
  const char32_t c = next_code_point(s, j);
  *length = j - i;
  return c;
}

/// True when `c` is one of `chars` (never for NUL, unlike strchr).
bool is_one_of(char c, const char* chars) { return c != '\0' && std::strchr(chars, c) != nullptr; }

bool is_line_start(std::string_view s, size_t i) {
  if (i == 0) return true;
  const char p = s[i - 1];
  if (p == '\n' || p == '\r') return true;
  // U+2028 / U+2029 (E2 80 A8 / E2 80 A9) also start a line for JavaScript's multiline ^.
  return i >= 3 && s.substr(i - 3, 2) == "\xE2\x80" && (s[i - 1] == '\xA8' || s[i - 1] == '\xA9');
}

/// lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1".
Source lstrip_blocks(const Source& in) {
  Source out;
  const std::string_view s = in.text;
  size_t i = 0;
  while (i < s.size()) {
    if (is_line_start(s, i)) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' && (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) i = j;
    }
    out.append(in, i, i + 1);
    ++i;
  }
  return out;
}

/// trim_blocks: /([#%-]})\n/g -> "$1".
Source trim_blocks(const Source& in) {
  Source out;
  const std::string_view s = in.text;
  for (size_t i = 0; i < s.size(); ++i) {
    out.append(in, i, i + 1);
    if (s[i] == '}' && i > 0 && is_one_of(s[i - 1], "#%-") && i + 1 < s.size() && s[i + 1] == '\n') ++i;
  }
  return out;
}

size_t skip_js_space(std::string_view s, size_t i) {
  size_t n = 0;
  while (i < s.size() && is_js_space(code_point_at(s, i, &n))) i += n;
  return i;
}

/// Matches `{%-? \s* (end)?generation \s* -?%}` at `i`; returns its end or npos.
size_t match_generation_tag(std::string_view s, size_t i, bool* lstrip, bool* rstrip) {
  if (s.substr(i, 2) != "{%") return std::string_view::npos;
  size_t j = i + 2;
  *lstrip = j < s.size() && s[j] == '-';
  if (*lstrip) ++j;
  j = skip_js_space(s, j);
  if (s.substr(j, 3) == "end") j += 3;
  if (s.substr(j, 10) != "generation") return std::string_view::npos;
  j = skip_js_space(s, j + 10);
  *rstrip = j < s.size() && s[j] == '-';
  if (*rstrip) ++j;
  if (s.substr(j, 2) != "%}") return std::string_view::npos;
  return j + 2;
}

/// Removes transformers' {% generation %} / {% endgeneration %} tags with the reference's regex
/// /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs.
Source strip_generation_tags(const Source& in) {
  Source out;
  const std::string_view s = in.text;
  size_t copied = 0;  // end of the last match (whitespace before a tag never reaches back past it)
  size_t i = 0;
  while (i < s.size()) {
    bool lstrip = false, rstrip = false;
    const size_t end = s[i] == '{' ? match_generation_tag(s, i, &lstrip, &rstrip) : std::string_view::npos;
    if (end == std::string_view::npos) {
      ++i;
      continue;
    }
    size_t before = i;  // start of the whitespace run before the tag
    while (before > copied) {
      size_t k = before - 1;
      while (k > copied && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
      size_t n = 0;
      if (!is_js_space(code_point_at(s, k, &n))) break;
      before = k;
    }
    const size_t after = skip_js_space(s, end);
    out.append(in, copied, lstrip ? before : i);
    if (!rstrip) out.append(in, end, after);
    copied = i = after;
  }
  out.append(in, copied, s.size());
  return out;
}

Source preprocess(std::string_view template_text) {
  Source src;
  src.text = template_text;
  src.origin.resize(src.text.size());
  for (size_t i = 0; i < src.origin.size(); ++i) src.origin[i] = i;
  if (!src.text.empty() && src.text.back() == '\n') {
    src.text.pop_back();
    src.origin.pop_back();
  }
  return strip_generation_tags(trim_blocks(lstrip_blocks(src)));
}

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr std::array<std::pair<const char*, TokenType>, 29> kSymbols = {{
    {"{%", TokenType::kOpenStatement},  {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression}, {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},       {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurly},       {"}", TokenType::kCloseCurly},
    {"[", TokenType::kOpenBracket},     {"]", TokenType::kCloseBracket},
    {",", TokenType::kComma},           {".", TokenType::kDot},
    {":", TokenType::kColon},           {"|", TokenType::kPipe},
    {"<=", TokenType::kComparison},     {">=", TokenType::kComparison},
    {"==", TokenType::kComparison},     {"!=", TokenType::kComparison},
    {"<", TokenType::kComparison},      {">", TokenType::kComparison},
    {"+", TokenType::kAdditive},        {"-", TokenType::kAdditive},
    {"~", TokenType::kAdditive},        {"**", TokenType::kPower},
    {"*", TokenType::kMultiplicative},  {"//", TokenType::kMultiplicative},
    {"/", TokenType::kMultiplicative},  {"%", TokenType::kMultiplicative},
    {"=", TokenType::kEquals},
}};

class Lexer {
 public:
  Lexer(std::string_view original, Source src) : original_(original), src_(std::move(src)), s_(src_.text) {}

  std::vector<Token> run();

 private:
  [[noreturn]] void fail(const std::string& message, size_t at) const {
    int line = 0, column = 0;
    position(at, &line, &column);
    throw TemplateError("syntax error: " + message, line, column);
  }
  void position(size_t at, int* line, int* column) const;
  void push(TokenType type, std::string value, size_t at) {
    Token t{type, std::move(value)};
    position(at, &t.line, &t.column);
    tokens_.push_back(std::move(t));
  }
  TokenType last_type(TokenType none) const { return tokens_.empty() ? none : tokens_.back().type; }
  void strip_trailing_whitespace();
  void skip_leading_whitespace() { i_ = skip_js_space(s_, i_); }
  bool consume_text();
  void consume_comment();
  std::string consume_string(char quote);
  /// Digits, and a fractional part when `fraction` and one follows.
  std::string consume_digits(bool fraction);
  bool consume_sign();

  std::string_view original_;
  Source src_;
  std::string_view s_;
  size_t i_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

void Lexer::position(size_t at, int* line, int* column) const {
  const size_t offset = at < src_.origin.size() ? src_.origin[at] : original_.size();
  *line = 1;
  size_t line_start = 0;
  for (size_t k = 0; k < offset && k < original_.size(); ++k) {
    if (original_[k] == '\n') {
      ++*line;
      line_start = k + 1;
    }
  }
  *column = 1;
  for (size_t k = line_start; k < offset && k < original_.size(); ++k)
    if ((static_cast<unsigned char>(original_[k]) & 0xC0) != 0x80) ++*column;
}

void Lexer::strip_trailing_whitespace() {
  if (tokens_.empty() || tokens_.back().type != TokenType::kText) return;
  std::string& text = tokens_.back().value;
  text = js_trim(text, false, true);
  if (text.empty()) tokens_.pop_back();
}

bool Lexer::consume_text() {
  const size_t start = i_;
  while (i_ < s_.size() && !(s_[i_] == '{' && i_ + 1 < s_.size() && is_one_of(s_[i_ + 1], "%{#"))) ++i_;
  if (i_ == start) return false;
  push(TokenType::kText, std::string(s_.substr(start, i_ - start)), start);
  return true;
}

void Lexer::consume_comment() {
  const size_t start = i_;
  i_ += 2;
  const bool strip_before = i_ < s_.size() && s_[i_] == '-';
  if (strip_before) ++i_;
  std::string comment;
  while (!(i_ + 1 < s_.size() && s_[i_] == '#' && s_[i_ + 1] == '}')) {
    if (i_ + 2 >= s_.size()) fail("missing end of comment tag '#}' for the comment", start);
    comment += s_[i_++];
  }
  const bool strip_after = !comment.empty() && comment.back() == '-';
  if (strip_after) comment.pop_back();
  if (strip_before) strip_trailing_whitespace();
  push(TokenType::kComment, comment, start);
  i_ += 2;
  if (strip_after) skip_leading_whitespace();
}

std::string Lexer::consume_string(char quote) {
  static const std::pair<char, char> kEscapes[] = {{'n', '\n'}, {'t', '\t'},  {'r', '\r'}, {'b', '\b'}, {'f', '\f'},
                                                   {'v', '\v'}, {'\'', '\''}, {'"', '"'},  {'\\', '\\'}};
  const size_t start = i_ - 1;
  std::string out;
  while (i_ < s_.size() && s_[i_] != quote) {
    if (s_[i_] == '\\') {
      if (++i_ >= s_.size()) fail("unexpected end of input in a string literal", start);
      const char e = s_[i_++];
      if (e == 'x' || e == 'u') {
        const size_t n = e == 'x' ? 2 : 4;
        const std::string hex(s_.substr(i_, n));
        if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
          fail("invalid hexadecimal escape sequence \\" + std::string(1, e) + hex, i_ - 2);
        out += to_utf8(std::u32string(1, static_cast<char32_t>(std::stoul(hex, nullptr, 16))));
        i_ += n;
        continue;
      }
      bool known = false;
      for (const auto& [from, to] : kEscapes)
        if (from == e) {
          out += to;
          known = true;
        }
      if (!known) fail("unexpected escaped character '" + std::string(1, e) + "'", i_ - 2);
      continue;
    }
    out += s_[i_++];
  }
  if (i_ >= s_.size()) fail("unterminated string literal", start);
  ++i_;  // closing quote
  return out;
}

std::string Lexer::consume_digits(bool fraction) {
  const size_t start = i_;
  while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
  std::string num(s_.substr(start, i_ - start));
  if (fraction && !num.empty() && i_ + 1 < s_.size() && s_[i_] == '.' && is_digit(s_[i_ + 1])) {
    ++i_;
    const size_t frac = i_;
    while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    num += "." + std::string(s_.substr(frac, i_ - frac));
  }
  return num;
}

/// A '+' or '-' that starts a unary operator (or a signed number); false when it is binary.
bool Lexer::consume_sign() {
  const size_t start = i_;
  const char sign = s_[i_];
  const TokenType last = last_type(TokenType::kText);
  if (last == TokenType::kText) fail(std::string("unexpected character '") + sign + "'", start);
  if (last == TokenType::kIdentifier || last == TokenType::kNumber || last == TokenType::kString ||
      last == TokenType::kCloseParen || last == TokenType::kCloseBracket)
    return false;
  ++i_;
  const std::string num = consume_digits(true);
  push(num.empty() ? TokenType::kUnary : TokenType::kNumber, std::string(1, sign) + num, start);
  return true;
}

std::vector<Token> Lexer::run() {
  while (i_ < s_.size()) {
    const TokenType last = last_type(TokenType::kCloseStatement);
    if ((last == TokenType::kCloseStatement || last == TokenType::kCloseExpression || last == TokenType::kComment) &&
        consume_text())
      continue;
    if (s_.substr(i_, 2) == "{#") {
      consume_comment();
      continue;
    }
    if (s_.substr(i_, 3) == "{%-" || s_.substr(i_, 3) == "{{-") {
      strip_trailing_whitespace();
      const bool statement = s_[i_ + 1] == '%';
      push(statement ? TokenType::kOpenStatement : TokenType::kOpenExpression, statement ? "{%" : "{{", i_);
      if (!statement) curly_depth_ = 0;
      i_ += 3;
      continue;
    }
    skip_leading_whitespace();
    if (i_ >= s_.size()) break;
    if (s_.substr(i_, 3) == "-%}" || s_.substr(i_, 3) == "-}}") {
      const bool statement = s_[i_ + 1] == '%';
      push(statement ? TokenType::kCloseStatement : TokenType::kCloseExpression, statement ? "%}" : "}}", i_);
      i_ += 3;
      skip_leading_whitespace();
      continue;
    }
    const char c = s_[i_];
    if ((c == '-' || c == '+') && consume_sign()) continue;
    bool matched = false;
    for (const auto& [seq, type] : kSymbols) {
      if (type == TokenType::kCloseExpression && curly_depth_ > 0) continue;
      if (s_.substr(i_, std::strlen(seq)) != seq) continue;
      push(type, seq, i_);
      if (type == TokenType::kOpenExpression) curly_depth_ = 0;
      if (type == TokenType::kOpenCurly) ++curly_depth_;
      if (type == TokenType::kCloseCurly) --curly_depth_;
      i_ += std::strlen(seq);
      matched = true;
      break;
    }
    if (matched) continue;
    const size_t start = i_;
    if (c == '\'' || c == '"') {
      ++i_;
      push(TokenType::kString, consume_string(c), start);
    } else if (is_digit(c)) {
      // After a dot (a.0.1) only the integer part is a number.
      push(TokenType::kNumber, consume_digits(last_type(TokenType::kText) != TokenType::kDot), start);
    } else if (is_word(c)) {
      while (i_ < s_.size() && is_word(s_[i_])) ++i_;
      push(TokenType::kIdentifier, std::string(s_.substr(start, i_ - start)), start);
    } else {
      size_t n = 0;
      code_point_at(s_, i_, &n);
      fail("unexpected character '" + std::string(s_.substr(i_, n)) + "'", start);
    }
  }
  return tokens_;
}

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source, preprocess(source)).run(); }

}  // namespace edgemm::text::jinja
