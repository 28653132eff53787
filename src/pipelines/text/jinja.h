#pragma once
/// \file jinja.h
/// The Jinja subset behind edgemm::text::ChatTemplate (include/edgemm/pipelines/chat_template.h):
/// lexer, parser and interpreter modelled on npm @huggingface/jinja 0.5.11 (the renderer of
/// transformers.js' apply_chat_template), whose behaviour it reproduces byte for byte on the
/// supported constructs. Internal: errors are thrown as TemplateError and turned into a Status
/// by ChatTemplate; nothing here is thread-hostile (a parsed Program is immutable).

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace edgemm::text::jinja {

/// Data values: null, bool, integer, float, string, array, object (insertion-ordered, like a
/// JavaScript Map).
using Json = nlohmann::ordered_json;

/// A parse or render error at a 1-based line and column of the original template text (0 when
/// unknown). `unsupported` marks a construct outside the subset.
struct TemplateError : std::runtime_error {
  TemplateError(std::string message, int line, int column, bool unsupported = false)
      : std::runtime_error(std::move(message)), line(line), column(column), unsupported(unsupported) {}
  int line;
  int column;
  bool unsupported;
};

// ----------------------------------------------------------------------------------------------
// Lexer

enum class TokenType {
  kText,
  kNumber,
  kString,
  kIdentifier,
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,
  kCloseStatement,
  kOpenExpression,
  kCloseExpression,
  kOpenBracket,
  kCloseBracket,
  kOpenCurly,
  kCloseCurly,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditive,
  kMultiplicative,
  kPower,
  kComparison,
  kUnary,
  kComment
};

/// One token; `line`/`column` locate its first character in the original template.
struct Token {
  TokenType type;
  std::string value;
  int line = 0;
  int column = 0;
};

/// Tokenizes a template as @huggingface/jinja's Template does: drops one trailing newline,
/// applies lstrip_blocks and trim_blocks, removes transformers' {% generation %} tags, then
/// honours `-` whitespace control. Throws TemplateError.
std::vector<Token> tokenize(std::string_view source);

// ----------------------------------------------------------------------------------------------
// Syntax tree

enum class NodeKind {
  // statements
  kText,
  kIf,
  kFor,
  kSet,
  kMacro,
  kBreak,
  kContinue,
  kComment,
  // expressions
  kString,
  kInteger,
  kFloat,
  kIdentifier,
  kArray,
  kTuple,
  kObject,
  kMember,
  kSlice,
  kCall,
  kKeywordArg,
  kBinary,
  kUnary,
  kFilter,
  kTest,
  kSelect,
  kTernary
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

/// A statement or expression. Which fields are used depends on `kind`:
///  kText/kString/kIdentifier/kComment: text; kInteger/kFloat: number;
///  kBinary/kUnary: text = operator, args = operands; kMember: args = {object, property},
///  flag = computed; kSlice: args = {start, stop, step} (null when omitted); kCall: args[0] =
///  callee, args[1..] = arguments; kKeywordArg: text = name, args = {value}; kFilter: args[0] =
///  operand, text = filter name, args[1..] = call arguments (flag = called with parentheses);
///  kTest: args[0] = operand, text = test name, flag = negated; kSelect: args = {value, test};
///  kTernary: args = {condition, if_true, if_false}; kArray/kTuple: args = items; kObject:
///  args = key0, value0, key1, ...; kIf: args[0] = test, body, alternate; kFor: args = {target,
///  iterable}, body, alternate (the else block); kSet: args = {target, value or null}, body
///  (block set); kMacro: text = name, args = parameters (identifiers or keyword args), body.
struct Node {
  NodeKind kind;
  int line = 0;
  int column = 0;
  std::string text;
  Json number;
  bool flag = false;
  std::vector<NodePtr> args;
  std::vector<NodePtr> body;
  std::vector<NodePtr> alternate;
};

/// A parsed template.
struct Program {
  std::vector<NodePtr> body;
};

/// Parses tokens with @huggingface/jinja's grammar and precedence. Throws TemplateError; with
/// `unsupported` set for constructs outside the subset ({% call %}, {% filter %}, `*args`,
/// `**kwargs`).
Program parse(const std::vector<Token>& tokens);

// ----------------------------------------------------------------------------------------------
// Values

struct Value;
struct Scope;
/// Positional arguments, then keyword arguments in call order.
using KeywordArgs = std::vector<std::pair<std::string, Value>>;
using Function = std::function<Value(std::vector<Value>& args, KeywordArgs& kwargs, Scope& caller)>;

/// A runtime value: undefined, data (Json), a namespace (shared, mutable object) or a
/// function (global, macro, or a method bound to its receiver).
struct Value {
  enum class Kind { kUndefined, kData, kNamespace, kFunction };
  Kind kind = Kind::kUndefined;
  Json data;                           ///< kData
  std::shared_ptr<Json> ns;            ///< kNamespace: an object shared by every copy
  std::shared_ptr<const Function> fn;  ///< kFunction

  static Value undefined() { return {}; }
  /// A data value.
  static Value of(Json j) {
    Value v;
    v.kind = Kind::kData;
    v.data = std::move(j);
    return v;
  }
  /// A function value.
  static Value function(Function f) {
    Value v;
    v.kind = Kind::kFunction;
    v.fn = std::make_shared<const Function>(std::move(f));
    return v;
  }
  // Kind and JSON type queries (the reference's value classes).
  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_data() const { return kind == Kind::kData; }
  bool is_null() const { return is_data() && data.is_null(); }
  bool is_string() const { return is_data() && data.is_string(); }
  bool is_array() const { return is_data() && data.is_array(); }
  bool is_object() const { return is_data() && data.is_object(); }
  bool is_number() const { return is_data() && data.is_number(); }
  bool is_integer() const { return is_data() && data.is_number_integer(); }
  bool is_float() const { return is_data() && data.is_number_float(); }
  bool is_bool() const { return is_data() && data.is_boolean(); }
};

/// @huggingface/jinja's type name of a value (e.g. "StringValue"), for error messages.
std::string type_name(const Value& v);
/// Converts input data as convertToRuntimeValues does: integral floats become integers.
Json normalize_input(const Json& j);
/// The value as stored inside an array or object: namespaces become objects, undefined and
/// functions become null.
Json to_data(const Value& v);
/// Truthiness (__bool__): empty strings, arrays and objects, 0, null and undefined are false.
bool truthy(const Value& v);
/// The text `{{ v }}` writes (toString): floats keep ".0", containers print as JSON.
std::string display(const Value& v);
/// JavaScript's String(v.value), used by `~`, `+` on strings and `join`: 5.0 prints "5".
std::string raw_string(const Value& v);
/// JavaScript's number-to-string conversion.
std::string js_number(double x);
/// JavaScript's loose equality on the values (`==`); containers compare by content (the
/// reference compares identities), namespaces by identity.
bool loose_equal(const Value& a, const Value& b);
/// Strict equality as in `x === y` on the values (used by `in`, `unique`, `equalto`).
bool strict_equal(const Value& a, const Value& b);

/// Options of the tojson filter.
struct JsonOptions {
  int indent = 0;  ///< 0 = none
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool has_separators = false;
  std::string item_separator;
  std::string key_separator;
};
/// The reference's toJSON (Python json.dumps-like spacing).
std::string to_json(const Value& v, const JsonOptions& options, bool undefined_to_null = true);

/// Decodes valid UTF-8 into code points.
std::u32string to_u32(std::string_view s);
/// Encodes code points as UTF-8.
std::string to_utf8(std::u32string_view s);
/// JavaScript's WhiteSpace or LineTerminator (String.prototype.trim, \s).
bool is_js_space(char32_t c);
/// String.prototype.trim / trimStart / trimEnd on UTF-8 text.
std::string js_trim(std::string_view s, bool left, bool right);
/// String length in UTF-16 code units (JavaScript's .length).
int64_t js_length(std::string_view s);

// ----------------------------------------------------------------------------------------------
// Interpreter

/// A variable scope; lookups walk up to the globals.
struct Scope {
  explicit Scope(Scope* parent = nullptr) : parent(parent) {}
  /// The innermost binding of `name`, or undefined.
  Value lookup(const std::string& name) const;
  /// Binds `name` in this scope (never in a parent).
  void set(const std::string& name, Value v) { vars[name] = std::move(v); }
  Scope* parent;                                ///< not owned; outlives this scope
  std::unordered_map<std::string, Value> vars;  ///< this scope's bindings
};

/// Renders a program with `globals` (already holding namespace, range, raise_exception, ...
/// and the caller's variables). Throws TemplateError.
std::string render(const Program& program, Scope& globals);

/// Adds the reference's global functions and constants (true/false/none and their Python
/// spellings, namespace, range, raise_exception, strftime_now) to `scope`.
void add_globals(Scope& scope);

class Interpreter;
/// Applies filter node `f` (kFilter) to `operand`. Throws TemplateError.
Value apply_filter(Interpreter& interp, const Value& operand, const Node& f, Scope& scope);
/// Runs test `name` on `operand` (the reference has no arguments for tests in `is`).
bool run_test(const std::string& name, const std::vector<Value>& operands, const Node& where);
/// A method of a string, array or object (`s.strip`, `d.items`, `a.length`), or undefined.
Value builtin_member(const Value& object, const std::string& name);

/// Evaluates nodes; shared with the filters (which evaluate their arguments).
class Interpreter {
 public:
  /// Evaluates an expression or statement (statements yield their output text, or null).
  Value eval(const Node& n, Scope& scope);
  /// Concatenated output of statements (null and undefined values print nothing).
  std::string eval_block(const std::vector<NodePtr>& body, Scope& scope);
  /// Evaluates call arguments: positional values and keyword arguments.
  void eval_args(const std::vector<NodePtr>& args, size_t first, Scope& scope, std::vector<Value>& positional,
                 KeywordArgs& keywords);

 private:
  Value eval_statement(const Node& n, Scope& scope);
  Value eval_binary(const Node& n, Scope& scope);
  Value eval_unary(const Node& n, Scope& scope);
  Value eval_member(const Node& n, Scope& scope);
  Value eval_slice(const Value& object, const Node& n, Scope& scope);
  Value eval_call(const Node& n, Scope& scope);
  Value eval_test(const Node& n, Scope& scope);
  std::string eval_for(const Node& n, Scope& scope);
  int depth_ = 0;  ///< evaluation nesting (expressions, blocks, macro calls), bounded
  void eval_set(const Node& n, Scope& scope);
  void define_macro(const Node& n, Scope& scope);
};

}  // namespace edgemm::text::jinja
