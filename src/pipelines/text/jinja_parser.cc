// Jinja parser: the grammar and precedence of @huggingface/jinja 0.5.11 src/parser.ts, from
// loosest to tightest: ternary / select (`a if b else c`), or, and, not, comparisons and
// (not) in, + - ~, * / // %, **, `is` tests, `|` filters, unary + -, calls and member access.
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>

#include "pipelines/text/jinja.h"

namespace edgemm::text::jinja {
namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Program run() {
    Program program;
    while (!at_end()) program.body.push_back(parse_any());
    return program;
  }

 private:
  bool at_end() const { return pos_ >= tokens_.size(); }
  const Token& peek(size_t ahead = 0) const {
    static const Token kEnd{TokenType::kText, "", 0, 0};
    return pos_ + ahead < tokens_.size() ? tokens_[pos_ + ahead] : kEnd;
  }
  bool is(TokenType type) const { return !at_end() && peek().type == type; }
  bool is_identifier(const char* name, size_t ahead = 0) const {
    return pos_ + ahead < tokens_.size() && peek(ahead).type == TokenType::kIdentifier && peek(ahead).value == name;
  }
  bool is_statement(std::initializer_list<const char*> names) const {
    if (!is(TokenType::kOpenStatement)) return false;
    for (const char* name : names)
      if (is_identifier(name, 1)) return true;
    return false;
  }
  [[noreturn]] void fail(const std::string& message, bool unsupported = false) const {
    const Token& t = at_end() && !tokens_.empty() ? tokens_.back() : peek();
    throw TemplateError(
        (unsupported ? "" : "syntax error: ") + message + (at_end() ? " (at the end of the template)" : ""), t.line,
        t.column, unsupported);
  }
  const Token& expect(TokenType type, const char* what) {
    if (!is(type)) fail(std::string("expected ") + what + (at_end() ? "" : ", got '" + peek().value + "'"));
    return tokens_[pos_++];
  }
  void expect_identifier(const char* name) {
    if (!is_identifier(name)) fail(std::string("expected '") + name + "'");
    ++pos_;
  }
  NodePtr node(NodeKind kind, const Token& at) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->line = at.line;
    n->column = at.column;
    return n;
  }
  /// Parses statements until one of `ends` ({% name %}); fails naming the unclosed block.
  void parse_body(std::vector<NodePtr>& body, std::initializer_list<const char*> ends, const Token& opened,
                  const char* block) {
    while (!is_statement(ends)) {
      if (at_end())
        throw TemplateError(std::string("syntax error: unclosed '{% ") + block + " %}' block: expected '{% end" +
                                block + " %}' before the end of the template",
                            opened.line, opened.column);
      body.push_back(parse_any());
    }
  }
  void expect_end(const char* name) {
    expect(TokenType::kOpenStatement, "'{%'");
    expect_identifier(name);
    expect(TokenType::kCloseStatement, "'%}'");
  }

  NodePtr parse_any();
  NodePtr parse_statement();
  NodePtr parse_set(const Token& at);
  NodePtr parse_if(const Token& at);
  NodePtr parse_for(const Token& at);
  NodePtr parse_macro(const Token& at);
  NodePtr parse_sequence(bool primary);
  NodePtr parse_expression() { return parse_expression_level(&Parser::parse_ternary); }
  /// Parses with `level`, counting the nesting depth.
  NodePtr parse_expression_level(NodePtr (Parser::*level)());
  NodePtr parse_ternary();
  NodePtr parse_or();
  NodePtr parse_and();
  NodePtr parse_not();
  NodePtr parse_comparison();
  NodePtr parse_binary_level(TokenType type, NodePtr (Parser::*next)());
  NodePtr parse_additive() { return parse_binary_level(TokenType::kAdditive, &Parser::parse_multiplicative); }
  NodePtr parse_multiplicative() { return parse_binary_level(TokenType::kMultiplicative, &Parser::parse_power); }
  NodePtr parse_power() { return parse_binary_level(TokenType::kPower, &Parser::parse_test); }
  NodePtr parse_test();
  NodePtr parse_filter();
  NodePtr parse_unary();
  NodePtr parse_call_member();
  NodePtr parse_call(NodePtr callee);
  void parse_args(Node& call);
  NodePtr parse_member(NodePtr object);
  NodePtr parse_subscript(const Token& at);
  NodePtr parse_primary();

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  ///< expression nesting, bounded so that deep input cannot exhaust the stack
};

NodePtr Parser::parse_expression_level(NodePtr (Parser::*level)()) {
  constexpr int kMaxDepth = 256;
  if (++depth_ > kMaxDepth) fail("expressions nested deeper than " + std::to_string(kMaxDepth) + " levels");
  auto n = (this->*level)();
  --depth_;
  return n;
}

NodePtr Parser::parse_any() {
  const Token& t = peek();
  switch (t.type) {
    case TokenType::kComment: {
      ++pos_;
      return node(NodeKind::kComment, t);
    }
    case TokenType::kText: {
      auto n = node(NodeKind::kText, t);
      n->text = t.value;
      ++pos_;
      return n;
    }
    case TokenType::kOpenStatement:
      return parse_statement();
    case TokenType::kOpenExpression: {
      ++pos_;
      auto n = parse_expression();
      expect(TokenType::kCloseExpression, "'}}'");
      return n;
    }
    default:
      fail("unexpected '" + t.value + "' outside '{{ }}' or '{% %}'");
  }
}

NodePtr Parser::parse_statement() {
  const Token& open = expect(TokenType::kOpenStatement, "'{%'");
  if (!is(TokenType::kIdentifier)) fail("expected a statement name after '{%'");
  const Token& name = tokens_[pos_++];
  const std::string& s = name.value;
  if (s == "set") return parse_set(open);
  if (s == "if") {
    auto n = parse_if(open);
    expect_end("endif");
    return n;
  }
  if (s == "for") {
    auto n = parse_for(open);
    expect_end("endfor");
    return n;
  }
  if (s == "macro") {
    auto n = parse_macro(open);
    expect_end("endmacro");
    return n;
  }
  if (s == "break" || s == "continue") {
    expect(TokenType::kCloseStatement, "'%}'");
    return node(s == "break" ? NodeKind::kBreak : NodeKind::kContinue, open);
  }
  --pos_;
  if (s == "call" || s == "filter") fail("the '{% " + s + " %}' block is not supported by edgemm's Jinja subset", true);
  fail("unknown statement '{% " + s + " %}'", s.rfind("end", 0) != 0 && s != "elif" && s != "else");
}

NodePtr Parser::parse_set(const Token& at) {
  auto n = node(NodeKind::kSet, at);
  n->args.push_back(parse_sequence(false));
  if (is(TokenType::kEquals)) {
    ++pos_;
    n->args.push_back(parse_sequence(false));
  } else {
    n->args.push_back(nullptr);
    expect(TokenType::kCloseStatement, "'%}'");
    parse_body(n->body, {"endset"}, at, "set");
    expect(TokenType::kOpenStatement, "'{%'");
    expect_identifier("endset");
  }
  expect(TokenType::kCloseStatement, "'%}'");
  return n;
}

NodePtr Parser::parse_if(const Token& at) {
  auto n = node(NodeKind::kIf, at);
  n->args.push_back(parse_expression());
  expect(TokenType::kCloseStatement, "'%}'");
  parse_body(n->body, {"elif", "else", "endif"}, at, "if");
  if (is_statement({"elif"})) {
    const Token& elif = peek();
    pos_ += 2;
    n->alternate.push_back(parse_if(elif));
  } else if (is_statement({"else"})) {
    pos_ += 2;
    expect(TokenType::kCloseStatement, "'%}'");
    parse_body(n->alternate, {"endif"}, at, "if");
  }
  return n;
}

NodePtr Parser::parse_for(const Token& at) {
  auto n = node(NodeKind::kFor, at);
  auto target = parse_sequence(true);
  if (target->kind != NodeKind::kIdentifier && target->kind != NodeKind::kTuple)
    fail("expected an identifier or a tuple as the loop variable");
  n->args.push_back(std::move(target));
  if (!is_identifier("in")) fail("expected 'in' after the loop variable");
  ++pos_;
  n->args.push_back(parse_expression());
  expect(TokenType::kCloseStatement, "'%}'");
  parse_body(n->body, {"endfor", "else"}, at, "for");
  if (is_statement({"else"})) {
    pos_ += 2;
    expect(TokenType::kCloseStatement, "'%}'");
    parse_body(n->alternate, {"endfor"}, at, "for");
  }
  return n;
}

NodePtr Parser::parse_macro(const Token& at) {
  auto n = node(NodeKind::kMacro, at);
  auto name = parse_primary();
  if (name->kind != NodeKind::kIdentifier) fail("expected the macro's name");
  n->text = name->text;
  auto call = node(NodeKind::kCall, at);
  parse_args(*call);
  for (auto& p : call->args) {
    if (p->kind != NodeKind::kIdentifier && p->kind != NodeKind::kKeywordArg)
      throw TemplateError("syntax error: expected an identifier for a macro parameter", p->line, p->column);
    n->args.push_back(std::move(p));
  }
  expect(TokenType::kCloseStatement, "'%}'");
  parse_body(n->body, {"endmacro"}, at, "macro");
  return n;
}

NodePtr Parser::parse_sequence(bool primary) {
  const Token& at = peek();
  auto first = primary ? parse_primary() : parse_expression();
  if (!is(TokenType::kComma)) return first;
  auto tuple = node(NodeKind::kTuple, at);
  tuple->args.push_back(std::move(first));
  while (is(TokenType::kComma)) {
    ++pos_;
    tuple->args.push_back(primary ? parse_primary() : parse_expression());
  }
  return tuple;
}

NodePtr Parser::parse_ternary() {
  auto a = parse_or();
  if (!is_identifier("if")) return a;
  const Token& at = tokens_[pos_++];
  auto test = parse_or();
  if (is_identifier("else")) {
    ++pos_;
    auto n = node(NodeKind::kTernary, at);
    n->args.push_back(std::move(test));
    n->args.push_back(std::move(a));
    n->args.push_back(parse_ternary());
    return n;
  }
  auto n = node(NodeKind::kSelect, at);
  n->args.push_back(std::move(a));
  n->args.push_back(std::move(test));
  return n;
}

NodePtr Parser::parse_or() {
  auto left = parse_and();
  while (is_identifier("or")) {
    auto n = node(NodeKind::kBinary, tokens_[pos_++]);
    n->text = "or";
    n->args.push_back(std::move(left));
    n->args.push_back(parse_and());
    left = std::move(n);
  }
  return left;
}

NodePtr Parser::parse_and() {
  auto left = parse_not();
  while (is_identifier("and")) {
    auto n = node(NodeKind::kBinary, tokens_[pos_++]);
    n->text = "and";
    n->args.push_back(std::move(left));
    n->args.push_back(parse_not());
    left = std::move(n);
  }
  return left;
}

NodePtr Parser::parse_not() {
  if (!is_identifier("not")) return parse_comparison();
  auto n = node(NodeKind::kUnary, tokens_[pos_++]);
  n->text = "not";
  n->args.push_back(parse_expression_level(&Parser::parse_not));
  return n;
}

NodePtr Parser::parse_comparison() {
  auto left = parse_additive();
  while (true) {
    const Token& at = peek();
    std::string op;
    if (is_identifier("not") && is_identifier("in", 1)) {
      op = "not in";
      pos_ += 2;
    } else if (is_identifier("in") || is(TokenType::kComparison)) {
      op = tokens_[pos_++].value;
    } else {
      return left;
    }
    auto n = node(NodeKind::kBinary, at);
    n->text = op;
    n->args.push_back(std::move(left));
    n->args.push_back(parse_additive());
    left = std::move(n);
  }
}

NodePtr Parser::parse_binary_level(TokenType type, NodePtr (Parser::*next)()) {
  auto left = (this->*next)();
  while (is(type)) {
    auto n = node(NodeKind::kBinary, peek());
    n->text = tokens_[pos_++].value;
    n->args.push_back(std::move(left));
    n->args.push_back((this->*next)());
    left = std::move(n);
  }
  return left;
}

NodePtr Parser::parse_test() {
  auto operand = parse_filter();
  while (is_identifier("is")) {
    auto n = node(NodeKind::kTest, tokens_[pos_++]);
    n->flag = is_identifier("not");
    if (n->flag) ++pos_;
    auto test = parse_primary();
    if (test->kind != NodeKind::kIdentifier) fail("expected the name of a test after 'is'");
    n->text = test->text;
    n->args.push_back(std::move(operand));
    operand = std::move(n);
  }
  return operand;
}

NodePtr Parser::parse_filter() {
  auto operand = parse_unary();
  while (is(TokenType::kPipe)) {
    auto n = node(NodeKind::kFilter, tokens_[pos_++]);
    auto name = parse_primary();
    if (name->kind != NodeKind::kIdentifier) fail("expected the name of a filter after '|'");
    n->text = name->text;
    n->line = name->line;
    n->column = name->column;
    n->args.push_back(std::move(operand));
    if (is(TokenType::kOpenParen)) {
      n->flag = true;
      parse_args(*n);
    }
    operand = std::move(n);
  }
  return operand;
}

NodePtr Parser::parse_unary() {
  const Token& t = peek();
  if ((t.type == TokenType::kUnary || t.type == TokenType::kAdditive) && (t.value == "-" || t.value == "+")) {
    auto n = node(NodeKind::kUnary, tokens_[pos_++]);
    n->text = t.value;
    n->args.push_back(parse_expression_level(&Parser::parse_unary));
    return n;
  }
  return parse_call_member();
}

NodePtr Parser::parse_call_member() {
  auto member = parse_member(parse_primary());
  return is(TokenType::kOpenParen) ? parse_call(std::move(member)) : std::move(member);
}

NodePtr Parser::parse_call(NodePtr callee) {
  auto n = node(NodeKind::kCall, peek());
  n->line = callee->line;  // errors of a call point at its callee
  n->column = callee->column;
  n->args.push_back(std::move(callee));
  parse_args(*n);
  auto expr = parse_member(std::move(n));
  return is(TokenType::kOpenParen) ? parse_call(std::move(expr)) : std::move(expr);
}

/// `( a, b, name=value )` appended to call.args.
void Parser::parse_args(Node& call) {
  expect(TokenType::kOpenParen, "'('");
  bool keyword_seen = false;
  while (!is(TokenType::kCloseParen)) {
    if (at_end()) fail("expected ')' to close the argument list");
    if (is(TokenType::kPower) || (is(TokenType::kMultiplicative) && peek().value == "*"))
      fail("argument unpacking ('*' / '**') is not supported by edgemm's Jinja subset", true);
    auto arg = parse_expression();
    if (is(TokenType::kEquals)) {
      ++pos_;
      if (arg->kind != NodeKind::kIdentifier) fail("expected an identifier before '=' in an argument list");
      auto kw = node(NodeKind::kKeywordArg, tokens_[pos_ - 1]);
      kw->line = arg->line;
      kw->column = arg->column;
      kw->text = arg->text;
      kw->args.push_back(parse_expression());
      arg = std::move(kw);
      keyword_seen = true;
    } else if (keyword_seen) {
      fail("positional arguments must come before keyword arguments");
    }
    call.args.push_back(std::move(arg));
    if (is(TokenType::kComma)) ++pos_;
  }
  ++pos_;
}

NodePtr Parser::parse_member(NodePtr object) {
  while (is(TokenType::kDot) || is(TokenType::kOpenBracket)) {
    const Token& op = tokens_[pos_++];
    auto n = node(NodeKind::kMember, op);
    n->flag = op.type == TokenType::kOpenBracket;
    n->args.push_back(std::move(object));
    if (n->flag) {
      n->args.push_back(parse_subscript(op));
      expect(TokenType::kCloseBracket, "']'");
    } else {
      auto property = parse_primary();
      if (property->kind != NodeKind::kIdentifier && property->kind != NodeKind::kInteger)
        fail("expected an identifier or an integer after '.'");
      n->args.push_back(std::move(property));
    }
    object = std::move(n);
  }
  return object;
}

/// The inside of `[...]`: an expression or a slice `start:stop:step`.
NodePtr Parser::parse_subscript(const Token& at) {
  std::vector<NodePtr> parts;
  bool slice = false;
  while (!is(TokenType::kCloseBracket)) {
    if (at_end()) fail("expected ']'");
    if (is(TokenType::kColon)) {
      parts.push_back(nullptr);
      ++pos_;
      slice = true;
    } else {
      parts.push_back(parse_expression());
      if (is(TokenType::kColon)) {
        ++pos_;
        slice = true;
      }
    }
  }
  if (parts.empty()) fail("expected an index or a slice inside '[]'");
  if (!slice) return std::move(parts[0]);
  if (parts.size() > 3) fail("a slice takes at most 3 parts (start:stop:step)");
  auto n = node(NodeKind::kSlice, at);
  parts.resize(3);
  n->args = std::move(parts);
  return n;
}

NodePtr Parser::parse_primary() {
  if (at_end()) fail("expected an expression");
  const Token& t = tokens_[pos_++];
  switch (t.type) {
    case TokenType::kNumber: {
      const bool is_float = t.value.find('.') != std::string::npos;
      auto n = node(is_float ? NodeKind::kFloat : NodeKind::kInteger, t);
      try {
        n->number = is_float ? Json(std::stod(t.value)) : Json(std::stoll(t.value));
      } catch (const std::out_of_range&) {
        n->number = Json(std::strtod(t.value.c_str(), nullptr));  // beyond int64: a float, as JavaScript's Number
      }
      return n;
    }
    case TokenType::kString: {
      auto n = node(NodeKind::kString, t);
      n->text = t.value;
      while (is(TokenType::kString)) n->text += tokens_[pos_++].value;
      return n;
    }
    case TokenType::kIdentifier: {
      auto n = node(NodeKind::kIdentifier, t);
      n->text = t.value;
      return n;
    }
    case TokenType::kOpenParen: {
      auto n = parse_sequence(false);
      expect(TokenType::kCloseParen, "')'");
      return n;
    }
    case TokenType::kOpenBracket: {
      auto n = node(NodeKind::kArray, t);
      while (!is(TokenType::kCloseBracket)) {
        if (at_end()) fail("expected ']' to close the list");
        n->args.push_back(parse_expression());
        if (is(TokenType::kComma)) ++pos_;
      }
      ++pos_;
      return n;
    }
    case TokenType::kOpenCurly: {
      auto n = node(NodeKind::kObject, t);
      while (!is(TokenType::kCloseCurly)) {
        if (at_end()) fail("expected '}' to close the mapping");
        n->args.push_back(parse_expression());
        expect(TokenType::kColon, "':' between a key and its value");
        n->args.push_back(parse_expression());
        if (is(TokenType::kComma)) ++pos_;
      }
      ++pos_;
      return n;
    }
    default:
      --pos_;
      fail("unexpected '" + t.value + "' in an expression");
  }
}

}  // namespace

Program parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace edgemm::text::jinja
