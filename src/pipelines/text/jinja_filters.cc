// Jinja filters, tests and the methods of strings, arrays and objects, as @huggingface/jinja
// 0.5.11 src/runtime.ts (Interpreter.applyFilter, Environment.TESTS, *Value.builtins).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "pipelines/text/jinja.h"
#include "pipelines/text/unicode.h"

namespace edgemm::text::jinja {
namespace {

[[noreturn]] void fail(const std::string& message) { throw TemplateError(message, 0, 0); }

bool is_ascii_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// utils.titleCase: /\b\w/g upper-cased (ASCII word characters only).
std::string title_case(const std::string& s) {
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i)
    if (is_ascii_word(out[i]) && (i == 0 || !is_ascii_word(out[i - 1])))
      out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  return out;
}

/// charAt(0).toUpperCase() + slice(1): only the first character changes.
std::string capitalize(const std::string& s) {
  if (s.empty()) return s;
  size_t i = 0;
  next_code_point(s, i);
  return uppercase_utf8(s.substr(0, i)) + s.substr(i);
}

/// str.split(sep, maxsplit) as the reference (sep null: runs of whitespace).
Json split(const std::string& s, const Value& sep, int64_t maxsplit) {
  Json out = Json::array();
  if (sep.is_undefined() || sep.is_null()) {
    const std::u32string u = to_u32(js_trim(s, true, false));
    size_t i = 0;
    while (i < u.size()) {
      size_t j = i;
      while (j < u.size() && !is_js_space(u[j])) ++j;
      if (maxsplit != -1 && static_cast<int64_t>(out.size()) >= maxsplit) {
        out.push_back(to_utf8(u.substr(i)));
        break;
      }
      out.push_back(to_utf8(u.substr(i, j - i)));
      while (j < u.size() && is_js_space(u[j])) ++j;
      i = j;
    }
    return out;
  }
  if (!sep.is_string()) fail("sep argument must be a string or null");
  const std::string& d = sep.data.get_ref<const std::string&>();
  if (d.empty()) fail("empty separator");
  size_t start = 0;
  while (true) {
    const size_t at = s.find(d, start);
    if (at == std::string::npos || (maxsplit != -1 && static_cast<int64_t>(out.size()) >= maxsplit)) break;
    out.push_back(s.substr(start, at - start));
    start = at + d.size();
  }
  out.push_back(s.substr(start));
  return out;
}

/// utils.replace: `count` replacements from the left (-1 = all); "" matches between code points.
std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (count == 0) return s;
  std::string out;
  int64_t done = 0;
  if (from.empty()) {
    const std::u32string u = to_u32(s);
    for (size_t i = 0; i <= u.size(); ++i) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      if (i < u.size()) out += to_utf8(u.substr(i, 1));
    }
    return out;
  }
  size_t start = 0;
  for (size_t at; (count < 0 || done < count) && (at = s.find(from, start)) != std::string::npos; ++done) {
    out += s.substr(start, at - start) + to;
    start = at + from.size();
  }
  return out + s.substr(start);
}

bool affix_match(const std::string& s, const Value& pattern, bool prefix, const char* name) {
  auto one = [&](const Json& p) {
    if (!p.is_string()) fail(std::string(name) + "() tuple elements must be strings");
    const std::string& q = p.get_ref<const std::string&>();
    return q.size() <= s.size() &&
           (prefix ? s.compare(0, q.size(), q) : s.compare(s.size() - q.size(), q.size(), q)) == 0;
  };
  if (pattern.is_string()) return one(pattern.data);
  if (pattern.is_array()) {
    for (const auto& p : pattern.data)
      if (one(p)) return true;
    return false;
  }
  fail(std::string(name) + "() argument must be a string or tuple of strings");
}

Value string_method(const std::string& s, const std::string& name, std::vector<Value>& args, KeywordArgs& kwargs) {
  if (name == "upper") return Value::of(uppercase_utf8(s));
  if (name == "lower") return Value::of(lowercase_utf8(s));
  if (name == "strip") return Value::of(js_trim(s, true, true));
  if (name == "lstrip") return Value::of(js_trim(s, true, false));
  if (name == "rstrip") return Value::of(js_trim(s, false, true));
  if (name == "title") return Value::of(title_case(s));
  if (name == "capitalize") return Value::of(capitalize(s));
  if (name == "startswith" || name == "endswith") {
    if (args.empty()) fail(name + "() requires at least one argument");
    return Value::of(affix_match(s, args[0], name == "startswith", name.c_str()));
  }
  if (name == "split") {
    const Value sep = args.empty() ? Value::of(nullptr) : args[0];
    if (args.size() > 1 && !args[1].is_integer()) fail("maxsplit argument must be a number");
    return Value::of(split(s, sep, args.size() > 1 ? args[1].data.get<int64_t>() : -1));
  }
  // replace(old, new[, count])
  if (args.size() < 2) fail("replace() requires at least two arguments");
  if (!args[0].is_string() || !args[1].is_string()) fail("replace() arguments must be strings");
  Value count = args.size() > 2 ? args[2] : Value::of(nullptr);
  for (const auto& [k, v] : kwargs)
    if (k == "count" && args.size() <= 2) count = v;
  if (!count.is_integer() && !count.is_null()) fail("replace() count argument must be a number or null");
  return Value::of(replace(s, args[0].data.get<std::string>(), args[1].data.get<std::string>(),
                           count.is_null() ? -1 : count.data.get<int64_t>()));
}

Json object_items(const Json& o) {
  Json out = Json::array();
  for (const auto& [k, v] : o.items()) out.push_back(Json::array({k, v}));
  return out;
}

Value object_method(const Json& o, const std::string& name, std::vector<Value>& args) {
  if (name == "items") return Value::of(object_items(o));
  Json out = Json::array();
  if (name == "keys" || name == "values") {
    for (const auto& [k, v] : o.items()) out.push_back(name == "keys" ? Json(k) : v);
    return Value::of(std::move(out));
  }
  // get(key[, default])
  if (args.empty() || !args[0].is_string())
    fail("object key must be a string: got " + (args.empty() ? std::string("UndefinedValue") : type_name(args[0])));
  const std::string& key = args[0].data.get_ref<const std::string&>();
  if (o.contains(key)) return Value::of(o[key]);
  return args.size() > 1 ? args[1] : Value::of(nullptr);
}

JsonOptions json_options(const KeywordArgs& kwargs) {
  JsonOptions o;
  for (const auto& [k, v] : kwargs) {
    if (k == "indent") {
      if (!v.is_integer() && !v.is_null()) fail("if set, indent must be a number");
      o.indent = v.is_integer() ? static_cast<int>(v.data.get<int64_t>()) : 0;
    } else if (k == "ensure_ascii" || k == "sort_keys") {
      if (!v.is_bool()) fail("if set, " + k + " must be a boolean");
      (k == "ensure_ascii" ? o.ensure_ascii : o.sort_keys) = v.data.get<bool>();
    } else if (k == "separators" && !v.is_null()) {
      if (!v.is_array() || v.data.size() != 2 || !v.data[0].is_string() || !v.data[1].is_string())
        fail("separators must be a tuple of two strings");
      o.has_separators = true;
      o.item_separator = v.data[0].get<std::string>();
      o.key_separator = v.data[1].get<std::string>();
    }
  }
  return o;
}

/// parseInt(s, 10) / parseFloat(s); false when NaN.
bool parse_number(const std::string& s, bool integer, double* out) {
  const std::string t = js_trim(s, true, false);
  char* end = nullptr;
  *out = integer ? static_cast<double>(std::strtoll(t.c_str(), &end, 10)) : std::strtod(t.c_str(), &end);
  if (integer && *out == 0 && end == t.c_str()) return false;
  return end != t.c_str();
}

Value int_or_float(const Value& operand, const std::string& name, const Value& fallback) {
  const bool integer = name == "int";
  if (operand.is_string()) {
    double x = 0;
    if (!parse_number(operand.data.get<std::string>(), integer, &x)) return fallback;
    return integer ? Value::of(Json(static_cast<int64_t>(x))) : Value::of(Json(x));
  }
  if (operand.is_bool())
    return integer ? Value::of(Json(operand.data.get<bool>() ? 1 : 0))
                   : Value::of(operand.data.get<bool>() ? 1.0 : 0.0);
  if (operand.is_number()) return operand;
  fail("cannot apply filter \"" + name + "\" to type: " + type_name(operand));
}

Value select_attr(const Value& operand, const std::string& name, const std::vector<Value>& args) {
  for (const auto& item : operand.data)
    if (!item.is_object()) fail("`" + name + "` can only be applied to array of objects");
  for (const auto& a : args)
    if (!a.is_string()) fail("arguments of `" + name + "` must be strings");
  if (args.empty()) fail("`" + name + "` needs an attribute name");
  const std::string attr = args[0].data.get<std::string>();
  Json out = Json::array();
  for (const auto& item : operand.data) {
    bool result = false;
    if (item.contains(attr)) {
      const Value a = Value::of(item[attr]);
      std::vector<Value> operands{a};
      if (args.size() > 2) operands.push_back(args[2]);
      result = args.size() > 1 ? run_test(args[1].data.get<std::string>(), operands, Node{}) : truthy(a);
    }
    if (result == (name == "selectattr")) out.push_back(item);
  }
  return Value::of(std::move(out));
}

/// Filters written without parentheses (`x | trim`).
Value plain_filter(const Value& v, const std::string& name) {
  if (name == "safe") return v;
  if (name == "tojson") return Value::of(to_json(v, {}));
  if (v.is_array()) {
    const Json& a = v.data;
    if (name == "list") return v;
    if (name == "first") return a.empty() ? Value::undefined() : Value::of(a.front());
    if (name == "last") return a.empty() ? Value::undefined() : Value::of(a.back());
    if (name == "length") return Value::of(Json(static_cast<int64_t>(a.size())));
    if (name == "reverse") {
      Json out = Json::array();
      for (auto it = a.rbegin(); it != a.rend(); ++it) out.push_back(*it);
      return Value::of(std::move(out));
    }
    if (name == "string") return Value::of(to_json(v, {}, false));
    if (name == "join") {
      std::string out;
      for (const auto& e : a) out += e.is_null() ? "" : raw_string(Value::of(e));
      return Value::of(out);
    }
    if (name == "unique") {
      Json out = Json::array();
      for (const auto& e : a) {
        bool seen = false;
        for (const auto& o : out) seen = seen || strict_equal(Value::of(e), Value::of(o));
        if (!seen) out.push_back(e);
      }
      return Value::of(std::move(out));
    }
    fail("unknown ArrayValue filter: " + name);
  }
  if (v.is_string()) {
    const std::string& s = v.data.get_ref<const std::string&>();
    if (name == "length") return Value::of(Json(js_length(s)));
    if (name == "trim") return Value::of(js_trim(s, true, true));
    if (name == "join" || name == "string") return v;
    if (name == "int" || name == "float")
      return int_or_float(v, name, name == "int" ? Value::of(Json(0)) : Value::of(0.0));
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
      std::vector<Value> none;
      KeywordArgs no_kwargs;
      return string_method(s, name, none, no_kwargs);
    }
    if (name == "indent") {
      std::string out;
      size_t start = 0, line = 0;
      while (true) {
        const size_t nl = s.find('\n', start);
        const std::string part = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        out += (line > 0 && !part.empty() ? "    " : "") + part;
        if (nl == std::string::npos) break;
        out += "\n";
        start = nl + 1;
        ++line;
      }
      return Value::of(out);
    }
    fail("unknown StringValue filter: " + name);
  }
  if (v.is_number()) {
    if (name == "abs")
      return v.is_integer() ? Value::of(Json(std::llabs(v.data.get<int64_t>())))
                            : Value::of(std::fabs(v.data.get<double>()));
    if (name == "int") return Value::of(Json(static_cast<int64_t>(std::floor(v.data.get<double>()))));
    if (name == "float") return Value::of(v.data.get<double>());
    if (name == "string") return Value::of(display(v));
    fail("unknown NumericValue filter: " + name);
  }
  if (v.is_object()) {
    if (name == "items") return Value::of(object_items(v.data));
    if (name == "length") return Value::of(Json(static_cast<int64_t>(v.data.size())));
    if (name == "keys" || name == "values") {
      std::vector<Value> none;
      return object_method(v.data, name, none);
    }
    fail("unknown ObjectValue filter: " + name);
  }
  if (v.is_bool()) {
    const bool b = v.data.get<bool>();
    if (name == "bool") return v;
    if (name == "int") return Value::of(Json(b ? 1 : 0));
    if (name == "float") return Value::of(b ? 1.0 : 0.0);
    if (name == "string") return Value::of(b ? "true" : "false");
    fail("unknown BooleanValue filter: " + name);
  }
  fail("cannot apply filter \"" + name + "\" to type: " + type_name(v));
}

/// Filters called with parentheses (`x | join(", ")`).
Value called_filter(const Value& v, const std::string& name, std::vector<Value>& args, KeywordArgs& kwargs) {
  auto kwarg = [&](const char* key) -> const Value* {
    for (const auto& [k, val] : kwargs)
      if (k == key) return &val;
    return nullptr;
  };
  if (name == "tojson") return Value::of(to_json(v, json_options(kwargs)));
  if (name == "join") {
    if (!v.is_string() && !v.is_array()) fail("cannot apply filter \"join\" to type: " + type_name(v));
    const Value* sep = !args.empty() ? &args[0] : kwarg("separator");
    if (sep && !sep->is_string()) fail("separator must be a string");
    const std::string d = sep ? sep->data.get<std::string>() : "";
    std::string out;
    if (v.is_string()) {
      const std::u32string u = to_u32(v.data.get<std::string>());
      for (size_t i = 0; i < u.size(); ++i) out += (i ? d : "") + to_utf8(u.substr(i, 1));
    } else {
      for (size_t i = 0; i < v.data.size(); ++i)
        out += (i ? d : "") + (v.data[i].is_null() ? "" : raw_string(Value::of(v.data[i])));
    }
    return Value::of(out);
  }
  if (name == "int" || name == "float") {
    const Value* d = !args.empty() ? &args[0] : kwarg("default");
    return int_or_float(v, name, d ? *d : name == "int" ? Value::of(Json(0)) : Value::of(0.0));
  }
  if (name == "default") {
    const Value fallback = args.empty() ? Value::of("") : args[0];
    const Value* flag = args.size() > 1 ? &args[1] : kwarg("boolean");
    if (flag && !flag->is_bool()) fail("`default` filter flag must be a boolean");
    const bool boolean = flag && flag->data.get<bool>();
    return v.is_undefined() || (boolean && !truthy(v)) ? fallback : v;
  }
  if (v.is_array() && (name == "selectattr" || name == "rejectattr")) return select_attr(v, name, args);
  if (v.is_array() && name == "map") {
    const Value* attr = kwarg("attribute");
    if (!attr) fail("`map` expressions without `attribute` set are not currently supported.");
    if (!attr->is_string()) fail("attribute must be a string");
    const Value* fallback = kwarg("default");
    Json out = Json::array();
    for (const auto& item : v.data) {
      if (!item.is_object()) fail("items in map must be an object");
      const std::string key = attr->data.get<std::string>();
      out.push_back(item.contains(key) ? item[key] : fallback ? to_data(*fallback) : Json(nullptr));
    }
    return Value::of(std::move(out));
  }
  if (v.is_string() && name == "replace") return string_method(v.data.get<std::string>(), name, args, kwargs);
  if (v.is_object() && (name == "items" || name == "keys" || name == "values" || name == "get"))
    return object_method(v.data, name, args);
  fail("unknown or unsupported filter \"" + name + "(...)\" for type " + type_name(v));
}

}  // namespace

Value builtin_member(const Value& object, const std::string& name) {
  static const char* kStringMethods[] = {"upper",  "lower",      "strip",    "title", "capitalize", "rstrip",
                                         "lstrip", "startswith", "endswith", "split", "replace"};
  if (object.is_string()) {
    const std::string s = object.data.get<std::string>();
    if (name == "length") return Value::of(Json(js_length(s)));
    for (const char* m : kStringMethods)
      if (name == m)
        return Value::function(
            [s, name](std::vector<Value>& a, KeywordArgs& k, Scope&) { return string_method(s, name, a, k); });
    return Value::undefined();
  }
  if (object.is_array() && name == "length") return Value::of(Json(static_cast<int64_t>(object.data.size())));
  if (object.is_object() && (name == "get" || name == "items" || name == "keys" || name == "values")) {
    const Json o = object.data;
    return Value::function(
        [o, name](std::vector<Value>& a, KeywordArgs&, Scope&) { return object_method(o, name, a); });
  }
  return Value::undefined();
}

Value apply_filter(Interpreter& interp, const Value& operand, const Node& f, Scope& scope) {
  if (!f.flag) return plain_filter(operand, f.text);
  std::vector<Value> args;
  KeywordArgs kwargs;
  interp.eval_args(f.args, 1, scope, args, kwargs);
  return called_filter(operand, f.text, args, kwargs);
}

bool run_test(const std::string& name, const std::vector<Value>& operands, const Node& where) {
  const Value& v = operands.at(0);
  if (name == "boolean") return v.is_bool();
  if (name == "callable") return v.kind == Value::Kind::kFunction;
  if (name == "odd" || name == "even") {
    if (!v.is_integer()) throw TemplateError("cannot " + name + " on " + type_name(v), where.line, where.column);
    return (v.data.get<int64_t>() % 2 != 0) == (name == "odd");
  }
  if (name == "false" || name == "true") return v.is_bool() && v.data.get<bool>() == (name == "true");
  if (name == "none") return v.is_null();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is_integer();
  if (name == "iterable") return v.is_array() || v.is_string();
  if (name == "mapping") return v.is_object();
  if (name == "sequence") return v.is_array() || v.is_object() || v.is_string();
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    const std::string& s = v.data.get_ref<const std::string&>();
    return s == (name == "lower" ? lowercase_utf8(s) : uppercase_utf8(s));
  }
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "equalto" || name == "eq") return operands.size() > 1 ? strict_equal(v, operands[1]) : v.is_undefined();
  throw TemplateError("unknown test: " + name, where.line, where.column);
}

}  // namespace edgemm::text::jinja
