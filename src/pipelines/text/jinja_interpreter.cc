// Jinja interpreter: statements and expressions as @huggingface/jinja 0.5.11 src/runtime.ts
// (class Interpreter, setupGlobals) evaluates them.
#include <cmath>
#include <ctime>

#include "pipelines/text/jinja.h"

namespace edgemm::text::jinja {
namespace {

struct BreakSignal {};
struct ContinueSignal {};

[[noreturn]] void fail_at(const Node& n, const std::string& message) { throw TemplateError(message, n.line, n.column); }

bool is_numeric_like(const Value& v) { return v.is_number() || v.is_bool(); }
double numeric(const Value& v) { return v.is_bool() ? (v.data.get<bool>() ? 1.0 : 0.0) : v.data.get<double>(); }

/// A number result: an integer when `integer` and representable, else a float.
Value number_value(double x, bool integer) {
  if (integer && std::isfinite(x) && std::fabs(x) < 9.2e18) return Value::of(Json(static_cast<int64_t>(x)));
  return Value::of(Json(x));
}

Value arithmetic(const std::string& op, const Value& l, const Value& r, const Node& n) {
  const bool is_int = l.is_integer() && r.is_integer();
  if (is_int && (op == "+" || op == "-" || op == "*")) {
    const int64_t a = l.data.get<int64_t>(), b = r.data.get<int64_t>();
    return Value::of(Json(op == "+" ? a + b : op == "-" ? a - b : a * b));
  }
  const double a = l.data.get<double>(), b = r.data.get<double>();
  if (op == "+") return Value::of(Json(a + b));
  if (op == "-") return Value::of(Json(a - b));
  if (op == "*") return Value::of(Json(a * b));
  if (op == "/") return Value::of(Json(a / b));
  if (op == "//") return number_value(std::floor(a / b), is_int);
  if (op == "%") return number_value(std::fmod(a, b), is_int);
  if (op == "<") return Value::of(a < b);
  if (op == ">") return Value::of(a > b);
  if (op == "<=") return Value::of(a <= b);
  if (op == ">=") return Value::of(a >= b);
  fail_at(n, "unknown operator \"" + op + "\" between " + type_name(l) + " and " + type_name(r));
}

Value power(const Value& l, const Value& r, const Node& n) {
  const double a = numeric(l), b = numeric(r);
  if (a == 0 && b < 0) fail_at(n, "0.0 cannot be raised to a negative power");
  const double x = std::pow(a, b);
  if (!std::isfinite(x)) fail_at(n, "exponentiation result is not a finite real number");
  return number_value(x, !l.is_float() && !r.is_float() && b >= 0);
}

/// range(start, stop, step) as the reference's utils.range.
Value range(std::vector<Value>& args) {
  std::vector<double> a;
  for (const auto& v : args)
    if (v.is_number()) a.push_back(v.data.get<double>());
  if (a.empty() || a.size() != args.size()) throw TemplateError("range() expects 1 to 3 numbers", 0, 0);
  double start = 0, stop = a[0], step = 1;
  if (a.size() >= 2) start = a[0], stop = a[1];
  if (a.size() >= 3) step = a[2];
  if (step == 0) throw TemplateError("range() step must not be zero", 0, 0);
  Json out = Json::array();
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(normalize_input(Json(i)));
  return Value::of(std::move(out));
}

/// strftime_now(format) as the reference's utils.strftime (local time; %Y %m %d %b %B %H %M %%,
/// English month names as Intl's en-US).
std::string strftime_now(const std::string& format) {
  static const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                  "July",    "August",   "September", "October", "November", "December"};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  auto pad2 = [](int v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = i + 1 < format.size() && format[i] == '%' ? format[i + 1] : '\0';
    std::string rep;
    switch (c) {
      case 'Y':
        rep = std::to_string(tm.tm_year + 1900);
        break;
      case 'm':
        rep = pad2(tm.tm_mon + 1);
        break;
      case 'd':
        rep = pad2(tm.tm_mday);
        break;
      case 'b':
        rep = std::string(kMonths[tm.tm_mon]).substr(0, 3);
        break;
      case 'B':
        rep = kMonths[tm.tm_mon];
        break;
      case 'H':
        rep = pad2(tm.tm_hour);
        break;
      case 'M':
        rep = pad2(tm.tm_min);
        break;
      case '%':
        rep = "%";
        break;
      default:
        out += format[i];
        continue;
    }
    out += rep;
    ++i;
  }
  return out;
}

Value make_namespace(std::vector<Value>& args, KeywordArgs& kwargs) {
  if (args.size() > 1)
    throw TemplateError("namespace expected at most 1 argument, got " + std::to_string(args.size()), 0, 0);
  Value ns;
  ns.kind = Value::Kind::kNamespace;
  ns.ns = std::make_shared<Json>(Json::object());
  if (args.size() == 1) {
    if (args[0].is_object()) {
      *ns.ns = args[0].data;
    } else if (args[0].is_array()) {
      for (const auto& pair : args[0].data) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string())
          throw TemplateError("namespace expected an object or an iterable of [key, value] pairs", 0, 0);
        (*ns.ns)[pair[0].get<std::string>()] = pair[1];
      }
    } else {
      throw TemplateError("'" + type_name(args[0]) + "' object is not iterable", 0, 0);
    }
  }
  for (auto& [k, v] : kwargs) (*ns.ns)[k] = to_data(v);
  return ns;
}

}  // namespace

Value Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  return Value::undefined();
}

void add_globals(Scope& scope) {
  scope.set("true", Value::of(true));
  scope.set("false", Value::of(false));
  scope.set("none", Value::of(nullptr));
  scope.set("True", Value::of(true));
  scope.set("False", Value::of(false));
  scope.set("None", Value::of(nullptr));
  scope.set("namespace",
            Value::function([](std::vector<Value>& a, KeywordArgs& k, Scope&) { return make_namespace(a, k); }));
  scope.set("raise_exception", Value::function([](std::vector<Value>& a, KeywordArgs&, Scope&) -> Value {
              throw TemplateError("raise_exception: " + (a.empty() ? std::string("undefined") : raw_string(a[0])), 0,
                                  0);
            }));
  scope.set("range", Value::function([](std::vector<Value>& a, KeywordArgs&, Scope&) { return range(a); }));
  scope.set("strftime_now", Value::function([](std::vector<Value>& a, KeywordArgs&, Scope&) {
              return Value::of(strftime_now(a.empty() ? std::string("undefined") : raw_string(a[0])));
            }));
}

std::string render(const Program& program, Scope& globals) {
  Interpreter interp;
  try {
    return interp.eval_block(program.body, globals);
  } catch (const BreakSignal&) {
    throw TemplateError("'{% break %}' outside a loop", 0, 0);
  } catch (const ContinueSignal&) {
    throw TemplateError("'{% continue %}' outside a loop", 0, 0);
  }
}

std::string Interpreter::eval_block(const std::vector<NodePtr>& body, Scope& scope) {
  std::string out;
  for (const auto& n : body) {
    const Value v = eval(*n, scope);
    if (!v.is_undefined() && !v.is_null()) out += display(v);
  }
  return out;
}

Value Interpreter::eval(const Node& n, Scope& scope) {
  constexpr int kMaxDepth = 1000;
  struct DepthGuard {
    int& depth;
    ~DepthGuard() { --depth; }
  } guard{++depth_};
  if (depth_ > kMaxDepth)
    throw TemplateError(
        "evaluation nested deeper than " + std::to_string(kMaxDepth) + " levels (runaway macro recursion?)", n.line,
        n.column);
  try {
    switch (n.kind) {
      case NodeKind::kText:
      case NodeKind::kString:
        return Value::of(n.text);
      case NodeKind::kInteger:
      case NodeKind::kFloat:
        return Value::of(n.number);
      case NodeKind::kIdentifier:
        return scope.lookup(n.text);
      case NodeKind::kArray:
      case NodeKind::kTuple: {
        Json a = Json::array();
        for (const auto& e : n.args) a.push_back(to_data(eval(*e, scope)));
        return Value::of(std::move(a));
      }
      case NodeKind::kObject: {
        Json o = Json::object();
        for (size_t i = 0; i + 1 < n.args.size(); i += 2) {
          const Value key = eval(*n.args[i], scope);
          if (!key.is_string()) fail_at(*n.args[i], "object keys must be strings: got " + type_name(key));
          o[key.data.get<std::string>()] = to_data(eval(*n.args[i + 1], scope));
        }
        return Value::of(std::move(o));
      }
      case NodeKind::kMember:
        return eval_member(n, scope);
      case NodeKind::kCall:
        return eval_call(n, scope);
      case NodeKind::kBinary:
        return eval_binary(n, scope);
      case NodeKind::kUnary:
        return eval_unary(n, scope);
      case NodeKind::kFilter:
        return apply_filter(*this, eval(*n.args[0], scope), n, scope);
      case NodeKind::kTest:
        return eval_test(n, scope);
      case NodeKind::kSelect:
        return truthy(eval(*n.args[1], scope)) ? eval(*n.args[0], scope) : Value::undefined();
      case NodeKind::kTernary:
        return eval(*n.args[truthy(eval(*n.args[0], scope)) ? 1 : 2], scope);
      case NodeKind::kSlice:
      case NodeKind::kKeywordArg:
        fail_at(n, "a slice or keyword argument cannot stand alone");
      default:
        return eval_statement(n, scope);
    }
  } catch (const TemplateError& e) {
    if (e.line != 0) throw;
    throw TemplateError(e.what(), n.line, n.column, e.unsupported);
  }
}

Value Interpreter::eval_statement(const Node& n, Scope& scope) {
  switch (n.kind) {
    case NodeKind::kIf:
      return Value::of(eval_block(truthy(eval(*n.args[0], scope)) ? n.body : n.alternate, scope));
    case NodeKind::kFor:
      return Value::of(eval_for(n, scope));
    case NodeKind::kSet:
      eval_set(n, scope);
      return Value::of(nullptr);
    case NodeKind::kMacro:
      define_macro(n, scope);
      return Value::of(nullptr);
    case NodeKind::kBreak:
      throw BreakSignal{};
    case NodeKind::kContinue:
      throw ContinueSignal{};
    default:
      return Value::of(nullptr);  // comments
  }
}

Value Interpreter::eval_binary(const Node& n, Scope& scope) {
  const std::string& op = n.text;
  const Value l = eval(*n.args[0], scope);
  if (op == "and") return truthy(l) ? eval(*n.args[1], scope) : l;
  if (op == "or") return truthy(l) ? l : eval(*n.args[1], scope);
  const Value r = eval(*n.args[1], scope);
  if (op == "==") return Value::of(loose_equal(l, r));
  if (op == "!=") return Value::of(!loose_equal(l, r));
  const bool membership = op == "in" || op == "not in";
  if (l.is_undefined() || r.is_undefined()) {
    if (r.is_undefined() && membership) return Value::of(op == "not in");
    fail_at(n, "cannot perform operation " + op + " on undefined values");
  }
  if (l.is_null() || r.is_null()) fail_at(n, "cannot perform operation " + op + " on null values");
  if (op == "~") return Value::of(raw_string(l) + raw_string(r));
  if (op == "**" && is_numeric_like(l) && is_numeric_like(r)) return power(l, r, n);
  if (l.is_number() && r.is_number() && !membership && op != "**") return arithmetic(op, l, r, n);
  if (l.is_array() && r.is_array() && op == "+") {
    Json a = l.data;
    for (const auto& e : r.data) a.push_back(e);
    return Value::of(std::move(a));
  }
  if (r.is_array() && membership) {
    bool found = false;
    for (const auto& e : r.data) found = found || strict_equal(l, Value::of(e));
    return Value::of(found == (op == "in"));
  }
  if ((l.is_string() || r.is_string()) && op == "+") return Value::of(raw_string(l) + raw_string(r));
  if (l.is_string() && r.is_string() && membership) {
    const bool found =
        r.data.get_ref<const std::string&>().find(l.data.get_ref<const std::string&>()) != std::string::npos;
    return Value::of(found == (op == "in"));
  }
  if (l.is_string() && r.is_object() && membership)
    return Value::of(r.data.contains(l.data.get<std::string>()) == (op == "in"));
  fail_at(n, "unknown operator \"" + op + "\" between " + type_name(l) + " and " + type_name(r));
}

Value Interpreter::eval_unary(const Node& n, Scope& scope) {
  const Value v = eval(*n.args[0], scope);
  if (n.text == "not") return Value::of(!truthy(v));
  if (!is_numeric_like(v)) fail_at(n, "unknown operator \"" + n.text + "\" for " + type_name(v));
  const double x = (n.text == "-" ? -1.0 : 1.0) * numeric(v);
  return number_value(x, !v.is_float());
}

Value Interpreter::eval_member(const Node& n, Scope& scope) {
  const Value object = eval(*n.args[0], scope);
  const Node& p = *n.args[1];
  if (n.flag && p.kind == NodeKind::kSlice) return eval_slice(object, p, scope);
  const Value property = n.flag                         ? eval(p, scope)
                         : p.kind == NodeKind::kInteger ? Value::of(p.number)
                                                        : Value::of(p.text);
  if (object.kind == Value::Kind::kNamespace || object.is_object()) {
    if (!property.is_string()) fail_at(n, "cannot access property with non-string: got " + type_name(property));
    const std::string& key = property.data.get_ref<const std::string&>();
    const Json& map = object.kind == Value::Kind::kNamespace ? *object.ns : object.data;
    if (map.contains(key)) return Value::of(map[key]);
    return object.is_object() ? builtin_member(object, key) : Value::undefined();
  }
  if (object.is_array() || object.is_string()) {
    if (property.is_integer()) {
      int64_t i = property.data.get<int64_t>();
      if (object.is_array()) {
        const auto size = static_cast<int64_t>(object.data.size());
        if (i < 0) i += size;
        return i >= 0 && i < size ? Value::of(object.data[static_cast<size_t>(i)]) : Value::undefined();
      }
      const std::u32string s = to_u32(object.data.get<std::string>());
      const auto size = static_cast<int64_t>(s.size());
      if (i < 0) i += size;
      return i >= 0 && i < size ? Value::of(to_utf8(s.substr(static_cast<size_t>(i), 1))) : Value::undefined();
    }
    if (property.is_string()) return builtin_member(object, property.data.get<std::string>());
    fail_at(n, "cannot access property with non-string/non-number: got " + type_name(property));
  }
  if (!property.is_string()) fail_at(n, "cannot access property with non-string: got " + type_name(property));
  return Value::undefined();
}

namespace {

/// The reference's utils.slice (Python semantics, negative steps included).
std::vector<size_t> slice_indices(int64_t length, const Value& start_v, const Value& stop_v, const Value& step_v) {
  const int64_t step = step_v.is_undefined() ? 1 : step_v.data.get<int64_t>();
  const int64_t direction = step > 0 ? 1 : step < 0 ? -1 : 0;
  int64_t start = 0, stop = 0;
  if (direction >= 0) {
    start = start_v.is_undefined() ? 0 : start_v.data.get<int64_t>();
    stop = stop_v.is_undefined() ? length : stop_v.data.get<int64_t>();
    start = start < 0 ? std::max<int64_t>(length + start, 0) : std::min(start, length);
    stop = stop < 0 ? std::max<int64_t>(length + stop, 0) : std::min(stop, length);
  } else {
    start = start_v.is_undefined() ? length - 1 : start_v.data.get<int64_t>();
    stop = stop_v.is_undefined() ? -1 : stop_v.data.get<int64_t>();
    start = start < 0 ? std::max<int64_t>(length + start, -1) : std::min(start, length - 1);
    stop = stop < -1 ? std::max<int64_t>(length + stop, -1) : std::min(stop, length - 1);
  }
  std::vector<size_t> out;
  if (direction == 0) return out;  // the reference loops forever; refused by the caller
  for (int64_t i = start; direction * i < direction * stop; i += step) out.push_back(static_cast<size_t>(i));
  return out;
}

}  // namespace

Value Interpreter::eval_slice(const Value& object, const Node& n, Scope& scope) {
  if (!object.is_array() && !object.is_string()) fail_at(n, "slice object must be an array or string");
  Value parts[3];
  for (int i = 0; i < 3; ++i) {
    if (n.args[i]) parts[i] = eval(*n.args[i], scope);
    if (!parts[i].is_undefined() && !parts[i].is_integer())
      fail_at(n, std::string("slice ") +
                     (i == 0   ? "start"
                      : i == 1 ? "stop"
                               : "step") +
                     " must be numeric or undefined");
  }
  if (parts[2].is_integer() && parts[2].data.get<int64_t>() == 0) fail_at(n, "slice step cannot be zero");
  if (object.is_array()) {
    Json out = Json::array();
    for (size_t i : slice_indices(static_cast<int64_t>(object.data.size()), parts[0], parts[1], parts[2]))
      out.push_back(object.data[i]);
    return Value::of(std::move(out));
  }
  const std::u32string s = to_u32(object.data.get<std::string>());
  std::u32string out;
  for (size_t i : slice_indices(static_cast<int64_t>(s.size()), parts[0], parts[1], parts[2])) out += s[i];
  return Value::of(to_utf8(out));
}

void Interpreter::eval_args(const std::vector<NodePtr>& args, size_t first, Scope& scope,
                            std::vector<Value>& positional, KeywordArgs& keywords) {
  for (size_t i = first; i < args.size(); ++i)
    if (args[i]->kind != NodeKind::kKeywordArg) positional.push_back(eval(*args[i], scope));
  for (size_t i = first; i < args.size(); ++i) {
    if (args[i]->kind != NodeKind::kKeywordArg) continue;
    for (const auto& kw : keywords)
      if (kw.first == args[i]->text) fail_at(*args[i], "got multiple values for keyword argument '" + kw.first + "'");
    keywords.emplace_back(args[i]->text, eval(*args[i]->args[0], scope));
  }
}

Value Interpreter::eval_call(const Node& n, Scope& scope) {
  std::vector<Value> positional;
  KeywordArgs keywords;
  eval_args(n.args, 1, scope, positional, keywords);
  const Value fn = eval(*n.args[0], scope);
  if (fn.kind != Value::Kind::kFunction)
    fail_at(n, "cannot call something that is not a function: got " + type_name(fn));
  return (*fn.fn)(positional, keywords, scope);
}

Value Interpreter::eval_test(const Node& n, Scope& scope) {
  const bool result = run_test(n.text, {eval(*n.args[0], scope)}, n);
  return Value::of(n.flag ? !result : result);
}

std::string Interpreter::eval_for(const Node& n, Scope& scope) {
  Scope loop_scope(&scope);
  const Node* iterable_node = n.args[1].get();
  const Node* filter = nullptr;
  if (iterable_node->kind == NodeKind::kSelect) {
    filter = iterable_node->args[1].get();
    iterable_node = iterable_node->args[0].get();
  }
  const Value iterable = eval(*iterable_node, loop_scope);
  Json items = Json::array();
  if (iterable.is_object()) {
    for (const auto& [k, v] : iterable.data.items()) items.push_back(k);
  } else if (iterable.is_array()) {
    items = iterable.data;
  } else {
    fail_at(*iterable_node, "expected iterable or object type in for loop: got " + type_name(iterable));
  }
  const Node& target = *n.args[0];
  auto bind = [&](Scope& s, const Json& item) {
    if (target.kind == NodeKind::kIdentifier) return s.set(target.text, Value::of(item));
    if (!item.is_array()) fail_at(target, "cannot unpack non-iterable type: " + type_name(Value::of(item)));
    if (item.size() != target.args.size())
      fail_at(target, std::string("too ") + (target.args.size() > item.size() ? "few" : "many") + " items to unpack");
    for (size_t j = 0; j < item.size(); ++j) {
      if (target.args[j]->kind != NodeKind::kIdentifier) fail_at(target, "cannot unpack to a non-identifier");
      s.set(target.args[j]->text, Value::of(item[j]));
    }
  };
  std::vector<const Json*> kept;
  for (const auto& item : items) {
    if (filter) {
      Scope test_scope(&loop_scope);
      bind(test_scope, item);
      if (!truthy(eval(*filter, test_scope))) continue;
    }
    kept.push_back(&item);
  }
  std::string out;
  bool iterated = false;
  const auto count = static_cast<int64_t>(kept.size());
  for (int64_t i = 0; i < count; ++i) {
    Json loop = {{"index", i + 1},        {"index0", i},
                 {"revindex", count - i}, {"revindex0", count - i - 1},
                 {"first", i == 0},       {"last", i == count - 1},
                 {"length", count}};
    if (i > 0) loop["previtem"] = *kept[static_cast<size_t>(i - 1)];
    if (i + 1 < count) loop["nextitem"] = *kept[static_cast<size_t>(i + 1)];
    loop_scope.set("loop", Value::of(std::move(loop)));
    bind(loop_scope, *kept[static_cast<size_t>(i)]);
    try {
      out += eval_block(n.body, loop_scope);
    } catch (const ContinueSignal&) {
      continue;
    } catch (const BreakSignal&) {
      break;
    }
    iterated = true;
  }
  if (!iterated) out += eval_block(n.alternate, loop_scope);
  return out;
}

void Interpreter::eval_set(const Node& n, Scope& scope) {
  const Value value = n.args[1] ? eval(*n.args[1], scope) : Value::of(eval_block(n.body, scope));
  const Node& target = *n.args[0];
  if (target.kind == NodeKind::kIdentifier) return scope.set(target.text, value);
  if (target.kind == NodeKind::kTuple) {
    if (!value.is_array()) fail_at(target, "cannot unpack non-iterable type in set: " + type_name(value));
    if (value.data.size() != target.args.size())
      fail_at(target, std::string("too ") + (target.args.size() > value.data.size() ? "few" : "many") +
                          " items to unpack in set");
    for (size_t j = 0; j < target.args.size(); ++j) {
      if (target.args[j]->kind != NodeKind::kIdentifier) fail_at(target, "cannot unpack to a non-identifier in set");
      scope.set(target.args[j]->text, Value::of(value.data[j]));
    }
    return;
  }
  if (target.kind == NodeKind::kMember) {
    const Value object = eval(*target.args[0], scope);
    if (object.kind != Value::Kind::kNamespace) fail_at(target, "cannot assign attribute on non-namespace object");
    if (target.flag || target.args[1]->kind != NodeKind::kIdentifier)
      fail_at(target, "cannot assign to member with non-identifier property");
    (*object.ns)[target.args[1]->text] = to_data(value);
    return;
  }
  fail_at(target, "invalid left-hand side of '{% set %}'");
}

void Interpreter::define_macro(const Node& n, Scope& scope) {
  const Node* macro = &n;
  scope.set(n.text, Value::function([this, macro](std::vector<Value>& args, KeywordArgs& kwargs, Scope& caller) {
              Scope local(&caller);
              const auto& params = macro->args;
              if (args.size() > params.size())
                throw TemplateError(
                    "macro '" + macro->text + "' takes not more than " + std::to_string(params.size()) + " argument(s)",
                    0, 0);
              std::vector<const Node*> defaults;
              for (size_t i = 0; i < params.size(); ++i) {
                const std::string& name = params[i]->text;
                Value v;
                bool given = i < args.size();
                if (given) v = args[i];
                for (auto it = kwargs.begin(); !given && it != kwargs.end(); ++it) {
                  if (it->first != name) continue;
                  v = it->second;
                  kwargs.erase(it);
                  given = true;
                  break;
                }
                if (!given && params[i]->kind == NodeKind::kKeywordArg) defaults.push_back(params[i].get());
                local.set(name, v);
              }
              if (!kwargs.empty())
                throw TemplateError("macro '" + macro->text + "' takes no keyword argument '" + kwargs[0].first + "'",
                                    0, 0);
              for (const Node* d : defaults) local.set(d->text, eval(*d->args[0], local));
              return Value::of(eval_block(macro->body, local));
            }));
}

}  // namespace edgemm::text::jinja
