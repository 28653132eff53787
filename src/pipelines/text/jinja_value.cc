// Jinja values: conversions, truthiness, printing and JSON as @huggingface/jinja 0.5.11
// src/runtime.ts does them (JavaScript number formatting and equality included).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "pipelines/text/jinja.h"
#include "pipelines/text/unicode.h"

namespace edgemm::text::jinja {

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

std::string to_utf8(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

bool is_js_space(char32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0B || c == 0x0C || c == 0x0D || c == 0x20 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 ||
         c == 0xFEFF;
}

std::string js_trim(std::string_view s, bool left, bool right) {
  std::u32string u = to_u32(s);
  size_t begin = 0, end = u.size();
  if (left)
    while (begin < end && is_js_space(u[begin])) ++begin;
  if (right)
    while (end > begin && is_js_space(u[end - 1])) --end;
  return to_utf8(std::u32string_view(u).substr(begin, end - begin));
}

int64_t js_length(std::string_view s) {
  int64_t n = 0;
  for (char32_t c : to_u32(s)) n += c >= 0x10000 ? 2 : 1;
  return n;
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined:
      return "UndefinedValue";
    case Value::Kind::kNamespace:
      return "NamespaceValue";
    case Value::Kind::kFunction:
      return "FunctionValue";
    case Value::Kind::kData:
      break;
  }
  const Json& j = v.data;
  if (j.is_null()) return "NullValue";
  if (j.is_boolean()) return "BooleanValue";
  if (j.is_number_float()) return "FloatValue";
  if (j.is_number()) return "IntegerValue";
  if (j.is_string()) return "StringValue";
  if (j.is_array()) return "ArrayValue";
  return "ObjectValue";
}

Json normalize_input(const Json& j) {
  if (j.is_number_float()) {
    const double x = j.get<double>();
    if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 9.2e18) return Json(static_cast<int64_t>(x));
    return j;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& e : j) out.push_back(normalize_input(e));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (const auto& [k, e] : j.items()) out[k] = normalize_input(e);
    return out;
  }
  return j;
}

Json to_data(const Value& v) {
  if (v.kind == Value::Kind::kData) return v.data;
  if (v.kind == Value::Kind::kNamespace) return *v.ns;
  return nullptr;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kNamespace:
    case Value::Kind::kFunction:
      return true;
    case Value::Kind::kData:
      break;
  }
  const Json& j = v.data;
  if (j.is_null()) return false;
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number()) {
    const double x = j.get<double>();
    return x != 0 && !std::isnan(x);
  }
  if (j.is_string()) return !j.get_ref<const std::string&>().empty();
  return !j.empty();
}

std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0) return "0";
  char buf[64];
  // Shortest round-trip digits in scientific form: d.ddde[+-]x.
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // position of the decimal point
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21)
    return sign + digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  if (-6 < n && n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  const std::string exp = (n - 1 >= 0 ? "+" : "-") + std::to_string(std::abs(n - 1));
  return sign + digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" + exp;
}

namespace {

std::string number_text(const Json& j) {
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number_unsigned()) return std::to_string(j.get<uint64_t>());
  return js_number(j.get<double>());
}

/// JSON.stringify of a string (no escaping of non-ASCII or '/'), optionally ASCII-only as the
/// reference's makeAsciiSafe (\uXXXX per UTF-16 code unit from U+007F).
std::string json_string(const std::string& s, bool ensure_ascii) {
  std::string out = "\"";
  char buf[16];
  for (char32_t c : to_u32(s)) {
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c >= 0x10000) {
        const char32_t v = c - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                      static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      out += to_utf8(std::u32string(1, c));
    }
  }
  return out + "\"";
}

std::string json_data(const Json& j, const JsonOptions& o, int depth) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number()) return number_text(j);
  if (j.is_string()) return json_string(j.get_ref<const std::string&>(), o.ensure_ascii);
  const std::string item_sep = o.has_separators ? o.item_separator : o.indent ? "," : ", ";
  const std::string key_sep = o.has_separators ? o.key_separator : ": ";
  const std::string unit(static_cast<size_t>(o.indent), ' ');
  std::string base = "\n";
  for (int d = 0; d < depth; ++d) base += unit;
  const std::string child = base + unit;
  std::vector<std::string> parts;
  if (j.is_array()) {
    for (const auto& e : j) parts.push_back(json_data(e, o, depth + 1));
  } else {
    std::vector<std::pair<std::string, const Json*>> entries;
    for (const auto& [k, e] : j.items()) entries.emplace_back(k, &e);
    if (o.sort_keys) {
      // localeCompare on the keys; for ASCII keys this is a case-insensitive-first ordering.
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const std::string la = lowercase_utf8(a.first), lb = lowercase_utf8(b.first);
        return la != lb ? la < lb : a.first > b.first;
      });
    }
    for (const auto& [k, e] : entries)
      parts.push_back((o.indent ? child : "") + json_string(k, o.ensure_ascii) + key_sep + json_data(*e, o, depth + 1));
  }
  const bool arr = j.is_array();
  std::string out(1, arr ? '[' : '{');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += item_sep;
    if (arr && o.indent) out += child;
    out += parts[i];
  }
  if (o.indent && !parts.empty()) out += base;
  return out + (arr ? ']' : '}');
}

}  // namespace

std::string to_json(const Value& v, const JsonOptions& options, bool undefined_to_null) {
  if (v.kind == Value::Kind::kUndefined) return undefined_to_null ? "null" : "undefined";
  if (v.kind == Value::Kind::kFunction) throw TemplateError("cannot convert a function (FunctionValue) to JSON", 0, 0);
  return json_data(to_data(v), options, 0);
}

std::string display(const Value& v) {
  if (v.kind == Value::Kind::kUndefined) return "";
  if (v.kind == Value::Kind::kFunction) return "[function]";
  if (v.kind == Value::Kind::kNamespace) return to_json(v, {}, false);
  const Json& j = v.data;
  if (j.is_null()) return "";
  if (j.is_number_float()) {
    const double x = j.get<double>();
    if (x == 0 && std::signbit(x)) return "-0.0";
    if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e21) return js_number(x) + ".0";
    return js_number(x);
  }
  if (j.is_array() || j.is_object()) return to_json(v, {}, false);
  return raw_string(v);
}

std::string raw_string(const Value& v) {
  if (v.kind != Value::Kind::kData) return display(v);
  const Json& j = v.data;
  if (j.is_null()) return "null";
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number()) return number_text(j);
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object()) return "[object Map]";
  std::string out;  // Array.prototype.toString of the items' toString()
  for (size_t i = 0; i < j.size(); ++i) out += (i ? "," : "") + display(Value::of(j[i]));
  return out;
}

namespace {

/// JavaScript's ToNumber of a string (trimmed decimal; "" is 0; otherwise NaN).
double js_to_number(const std::string& s) {
  const std::string t = js_trim(s, true, true);
  if (t.empty()) return 0;
  double x = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), x);
  return res.ec == std::errc() && res.ptr == t.data() + t.size() ? x : std::nan("");
}

}  // namespace

bool loose_equal(const Value& a, const Value& b) {
  const bool a_nullish = a.is_undefined() || a.is_null();
  const bool b_nullish = b.is_undefined() || b.is_null();
  if (a_nullish || b_nullish) return a_nullish && b_nullish;
  if (a.kind == Value::Kind::kNamespace || b.kind == Value::Kind::kNamespace) return a.ns == b.ns;
  if (a.kind == Value::Kind::kFunction || b.kind == Value::Kind::kFunction) return a.fn == b.fn;
  const Json &x = a.data, &y = b.data;
  if (x.is_string() && y.is_string()) return x == y;
  const bool x_container = x.is_array() || x.is_object(), y_container = y.is_array() || y.is_object();
  if (x_container || y_container) return x == y;
  const double nx = x.is_string()    ? js_to_number(x.get<std::string>())
                    : x.is_boolean() ? x.get<bool>()
                                     : x.get<double>();
  const double ny = y.is_string()    ? js_to_number(y.get<std::string>())
                    : y.is_boolean() ? y.get<bool>()
                                     : y.get<double>();
  return nx == ny;
}

bool strict_equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Value::Kind::kUndefined) return true;
  if (a.kind == Value::Kind::kNamespace) return a.ns == b.ns;
  if (a.kind == Value::Kind::kFunction) return a.fn == b.fn;
  if (a.data.is_number() && b.data.is_number()) return a.data.get<double>() == b.data.get<double>();
  return a.data == b.data;
}

}  // namespace edgemm::text::jinja
