#include "pipelines/ocr/metrics.h"

#include <algorithm>
#include <clipper.hpp>
#include <cmath>
#include <numeric>

namespace edgemm::ocr {
namespace {

Status invalid_utf8(size_t offset, const char* why) {
  return make_error(StatusCode::kInvalidArgument, "invalid UTF-8 at byte " + std::to_string(offset) + ": " + why);
}

// Unicode's White_Space property (PropList.txt).
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Polygon coordinates are rounded to 1/kScale pixel for Clipper's integer arithmetic.
constexpr double kScale = 64;
constexpr double kMaxCoordinate = 1 << 30;  // pixels; larger values would approach Clipper's range limit

// The polygon in Clipper units, or an empty path (ignored by Clipper) when a coordinate is
// not finite or out of range.
ClipperLib::Path to_clipper_path(const std::array<Point, 4>& polygon) {
  ClipperLib::Path path;
  for (const Point& p : polygon) {
    if (!(std::abs(p.x) <= kMaxCoordinate && std::abs(p.y) <= kMaxCoordinate)) return {};
    path.emplace_back(std::llround(p.x * kScale), std::llround(p.y * kScale));
  }
  return path;
}

// Net area of a Clipper solution: outer rings are positive, holes negative.
double area(const ClipperLib::Paths& paths) {
  double sum = 0;
  for (const ClipperLib::Path& path : paths) sum += ClipperLib::Area(path);
  return sum;
}

// Decoded and normalized text of line `index`; the error names the line.
Expected<std::u32string> comparable_text(const std::string& text, const char* kind, size_t index) {
  Expected<std::u32string> decoded = utf8_to_u32(text);
  if (!decoded) {
    return make_error(StatusCode::kInvalidArgument,
                      std::string(kind) + " line " + std::to_string(index) + ": " + decoded.status().message());
  }
  return normalize_ocr_text(*decoded);
}

}  // namespace

Expected<std::u32string> utf8_to_u32(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  size_t i = 0;
  while (i < utf8.size()) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
    size_t length = 0;
    char32_t code_point = 0;
    char32_t smallest = 0;  // the first code point that needs `length` bytes
    if (lead < 0xC0) return invalid_utf8(i, "continuation byte without a lead byte");
    if (lead < 0xE0) {
      length = 2;
      code_point = lead & 0x1F;
      smallest = 0x80;
    } else if (lead < 0xF0) {
      length = 3;
      code_point = lead & 0x0F;
      smallest = 0x800;
    } else if (lead < 0xF8) {
      length = 4;
      code_point = lead & 0x07;
      smallest = 0x10000;
    } else {
      return invalid_utf8(i, "byte 0xF8..0xFF cannot occur");
    }
    if (utf8.size() - i < length) return invalid_utf8(i, "sequence truncated by the end of the text");
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(utf8[i + k]);
      if ((next & 0xC0) != 0x80) return invalid_utf8(i, "sequence truncated by a byte that is not a continuation");
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if (code_point < smallest) return invalid_utf8(i, "overlong encoding");
    if (code_point >= 0xD800 && code_point <= 0xDFFF) return invalid_utf8(i, "encoded surrogate");
    if (code_point > 0x10FFFF) return invalid_utf8(i, "code point above U+10FFFF");
    out.push_back(code_point);
    i += length;
  }
  return out;
}

std::string u32_to_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = 0xFFFD;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

int64_t edit_distance(std::u32string_view a, std::u32string_view b) {
  if (a.size() < b.size()) std::swap(a, b);  // the row spans the shorter string
  // row[j] = distance between the first i code points of a and the first j of b.
  std::vector<int64_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), int64_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];  // distance(a[0, i-1), b[0, j-1))
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t above = row[j];  // distance(a[0, i-1), b[0, j))
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::u32string normalize_ocr_text(std::u32string_view text) {
  std::u32string out;
  bool space_pending = false;
  for (char32_t c : text) {
    if (is_white_space(c)) {
      space_pending = !out.empty();
      continue;
    }
    if (space_pending) out.push_back(U' ');
    space_pending = false;
    out.push_back(c);
  }
  return out;
}

double polygon_iou(const std::array<Point, 4>& a, const std::array<Point, 4>& b) {
  ClipperLib::Clipper clipper;
  clipper.AddPath(to_clipper_path(a), ClipperLib::ptSubject, true);
  clipper.AddPath(to_clipper_path(b), ClipperLib::ptClip, true);
  ClipperLib::Paths intersection;
  ClipperLib::Paths united;
  clipper.Execute(ClipperLib::ctIntersection, intersection, ClipperLib::pftNonZero, ClipperLib::pftNonZero);
  clipper.Execute(ClipperLib::ctUnion, united, ClipperLib::pftNonZero, ClipperLib::pftNonZero);
  const double union_area = area(united);
  return union_area > 0 ? area(intersection) / union_area : 0.0;
}

Expected<OcrImageScore> score_image(const std::vector<TruthLine>& truth, const std::vector<PredictedLine>& predicted,
                                    double iou_threshold) {
  if (!(iou_threshold > 0 && iou_threshold <= 1)) {
    return make_error(StatusCode::kInvalidArgument,
                      "IoU threshold " + std::to_string(iou_threshold) + " is outside (0, 1]");
  }
  std::vector<std::u32string> truth_texts;
  for (size_t t = 0; t < truth.size(); ++t) {
    EDGEMM_ASSIGN_OR_RETURN(std::u32string text, comparable_text(truth[t].text, "truth", t));
    truth_texts.push_back(std::move(text));
  }
  std::vector<std::u32string> predicted_texts;
  for (size_t p = 0; p < predicted.size(); ++p) {
    EDGEMM_ASSIGN_OR_RETURN(std::u32string text, comparable_text(predicted[p].text, "predicted", p));
    predicted_texts.push_back(std::move(text));
  }

  // Taking the candidates in this order and skipping those whose lines are already matched is
  // the same as repeatedly taking the best remaining pair.
  std::vector<LineMatch> candidates;
  for (size_t t = 0; t < truth.size(); ++t) {
    for (size_t p = 0; p < predicted.size(); ++p) {
      const double iou = polygon_iou(truth[t].polygon, predicted[p].polygon);
      if (iou >= iou_threshold) candidates.push_back({static_cast<int>(t), static_cast<int>(p), iou});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const LineMatch& x, const LineMatch& y) {
    if (x.iou != y.iou) return x.iou > y.iou;
    if (x.truth != y.truth) return x.truth < y.truth;
    return x.predicted < y.predicted;
  });

  OcrImageScore score;
  std::vector<bool> truth_matched(truth.size(), false);
  std::vector<bool> predicted_matched(predicted.size(), false);
  for (LineMatch match : candidates) {
    if (truth_matched[match.truth] || predicted_matched[match.predicted]) continue;
    truth_matched[match.truth] = true;
    predicted_matched[match.predicted] = true;
    match.edits = edit_distance(truth_texts[match.truth], predicted_texts[match.predicted]);
    match.truth_chars = static_cast<int64_t>(truth_texts[match.truth].size());
    score.matches.push_back(match);
    score.edits += match.edits;
  }
  std::sort(score.matches.begin(), score.matches.end(),
            [](const LineMatch& x, const LineMatch& y) { return x.truth < y.truth; });

  for (size_t t = 0; t < truth.size(); ++t) {
    const auto chars = static_cast<int64_t>(truth_texts[t].size());
    score.truth_chars += chars;
    if (!truth_matched[t]) {
      score.unmatched_truth.push_back(static_cast<int>(t));
      score.edits += chars;
    }
  }
  for (size_t p = 0; p < predicted.size(); ++p) {
    if (!predicted_matched[p]) score.unmatched_predicted.push_back(static_cast<int>(p));
  }
  return score;
}

double OcrScoreTotals::cer() const {
  return truth_chars > 0 ? static_cast<double>(edits) / static_cast<double>(truth_chars) : 0.0;
}

double OcrScoreTotals::precision() const {
  return predicted_lines > 0 ? static_cast<double>(matched) / static_cast<double>(predicted_lines) : 1.0;
}

double OcrScoreTotals::recall() const {
  return truth_lines > 0 ? static_cast<double>(matched) / static_cast<double>(truth_lines) : 1.0;
}

void OcrScoreTotals::add(const OcrImageScore& score) {
  const auto matched_here = static_cast<int64_t>(score.matches.size());
  truth_lines += matched_here + static_cast<int64_t>(score.unmatched_truth.size());
  predicted_lines += matched_here + static_cast<int64_t>(score.unmatched_predicted.size());
  matched += matched_here;
  truth_chars += score.truth_chars;
  edits += score.edits;
}

}  // namespace edgemm::ocr
