#include "pipelines/text/unicode.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

namespace edgemm::text {

bool is_valid_utf8(std::string_view s) {
  int32_t i = 0;
  const auto n = static_cast<int32_t>(s.size());
  while (i < n) {
    UChar32 c;
    U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, n, c);
    if (c < 0) return false;
  }
  return true;
}

char32_t next_code_point(std::string_view s, size_t& i) {
  auto j = static_cast<int32_t>(i);
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), j, static_cast<int32_t>(s.size()), c);
  i = static_cast<size_t>(j);
  return c < 0 ? 0xFFFD : static_cast<char32_t>(c);
}

namespace {

icu::UnicodeString to_unicode(std::string_view s) {
  return icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
}

std::string to_utf8(const icu::UnicodeString& u) {
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace

std::string normalize_utf8(std::string_view s, NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = nullptr;
  switch (form) {
    case NormalForm::kNFC:
      normalizer = icu::Normalizer2::getNFCInstance(status);
      break;
    case NormalForm::kNFD:
      normalizer = icu::Normalizer2::getNFDInstance(status);
      break;
    case NormalForm::kNFKC:
      normalizer = icu::Normalizer2::getNFKCInstance(status);
      break;
    case NormalForm::kNFKD:
      normalizer = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || normalizer == nullptr) return std::string(s);
  icu::UnicodeString out = normalizer->normalize(to_unicode(s), status);
  return U_FAILURE(status) ? std::string(s) : to_utf8(out);
}

std::string lowercase_utf8(std::string_view s) {
  icu::UnicodeString u = to_unicode(s);
  u.toLower(icu::Locale::getRoot());
  return to_utf8(u);
}

std::string uppercase_utf8(std::string_view s) {
  icu::UnicodeString u = to_unicode(s);
  u.toUpper(icu::Locale::getRoot());
  return to_utf8(u);
}

bool is_whitespace(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

bool is_alphanumeric(char32_t c) {
  const auto cp = static_cast<UChar32>(c);
  const int8_t type = u_charType(cp);
  return u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER ||
         type == U_OTHER_NUMBER;
}

bool is_other(char32_t c) {
  const int8_t type = u_charType(static_cast<UChar32>(c));
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_SURROGATE || type == U_PRIVATE_USE_CHAR ||
         type == U_UNASSIGNED;
}

std::string strip_nonspacing_marks(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t begin = i;
    const char32_t c = next_code_point(s, i);
    if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) out.append(s, begin, i - begin);
  }
  return out;
}

std::string_view trim_whitespace(std::string_view s, bool left, bool right) {
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!is_whitespace(next_code_point(s, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      auto j = static_cast<int32_t>(end);
      UChar32 c;
      U8_PREV(reinterpret_cast<const uint8_t*>(s.data()), static_cast<int32_t>(begin), j, c);
      if (c < 0 || !is_whitespace(static_cast<char32_t>(c))) break;
      end = static_cast<size_t>(j);
    }
  }
  return s.substr(begin, end - begin);
}

struct Regex::Impl {
  std::unique_ptr<icu::RegexPattern> pattern;
};

Regex::Regex() : impl_(std::make_unique<Impl>()) {}
Regex::~Regex() = default;

Expected<std::shared_ptr<const Regex>> Regex::compile(const std::string& pattern, const std::string& where) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error{};
  std::unique_ptr<icu::RegexPattern> compiled(icu::RegexPattern::compile(to_unicode(pattern), 0, parse_error, status));
  if (U_FAILURE(status) || !compiled) {
    return Status(StatusCode::kInvalidModel, where + ": regex \"" + pattern + "\" does not compile (" +
                                                 u_errorName(status) + " at offset " +
                                                 std::to_string(parse_error.offset) + ").");
  }
  std::shared_ptr<Regex> regex(new Regex());
  regex->impl_->pattern = std::move(compiled);
  return std::shared_ptr<const Regex>(std::move(regex));
}

Expected<std::shared_ptr<const Regex>> Regex::literal(const std::string& literal, const std::string& where) {
  // \Q...\E quotes everything except a literal "\E", which is spliced in escaped.
  std::string pattern = "\\Q";
  for (size_t i = 0; i < literal.size(); ++i) {
    if (literal.compare(i, 2, "\\E") == 0) {
      pattern += "\\E\\\\E\\Q";
      ++i;
    } else {
      pattern += literal[i];
    }
  }
  pattern += "\\E";
  return compile(pattern, where);
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view s) const {
  std::vector<std::pair<size_t, size_t>> out;
  if (s.empty()) return out;
  icu::UnicodeString u = to_unicode(s);
  // UTF-16 index -> UTF-8 byte offset.
  std::vector<size_t> byte_at(static_cast<size_t>(u.length()) + 1, s.size());
  {
    size_t byte = 0;
    int32_t i = 0;
    while (i < u.length()) {
      byte_at[static_cast<size_t>(i)] = byte;
      const UChar32 c = u.char32At(i);
      const int32_t units = U16_LENGTH(c);
      for (int32_t k = 1; k < units; ++k) byte_at[static_cast<size_t>(i + k)] = byte;
      byte += static_cast<size_t>(U8_LENGTH(c));
      i += units;
    }
  }
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(impl_->pattern->matcher(u, status));
  if (U_FAILURE(status)) return out;
  while (matcher->find(status) && U_SUCCESS(status)) {
    const int32_t b = matcher->start(status), e = matcher->end(status);
    out.emplace_back(byte_at[static_cast<size_t>(b)], byte_at[static_cast<size_t>(e)]);
  }
  return out;
}

std::string Regex::replace_all(std::string_view s, std::string_view content) const {
  std::string out;
  size_t prev = 0;
  for (const auto& [b, e] : find_all(s)) {
    out.append(s.substr(prev, b - prev));
    out.append(content);
    prev = e;
  }
  out.append(s.substr(prev));
  return out;
}

}  // namespace edgemm::text
