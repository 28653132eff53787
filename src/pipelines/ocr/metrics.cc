#include "edgemm/pipelines/ocr_metrics.h"

#include <algorithm>
#include <clipper.hpp>
#include <cmath>
#include <map>
#include <numeric>

#include "pipelines/text/unicode.h"

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

// Han ideographs, kana, CJK symbols and punctuation, and what is left of the half/full-width
// forms after NFKC.
bool is_cjk(char32_t c) {
  return (c >= 0x2E80 && c <= 0x2FDF) || (c >= 0x3000 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFFEF) ||
         (c >= 0x20000 && c <= 0x2FA1F);
}

char32_t fold_punctuation(char32_t c) {
  switch (c) {
    case 0x2018:
    case 0x2019:
    case 0x201A:
    case 0x201B:
    case 0x2032:
      return U'\'';
    case 0x201C:
    case 0x201D:
    case 0x201E:
    case 0x2033:
      return U'"';
    case 0x2010:
    case 0x2011:
    case 0x2012:
    case 0x2013:
    case 0x2014:
    case 0x2015:
    case 0x2212:
      return U'-';
    case 0x2022:
    case 0x2219:
    case 0x30FB:
      return U'\u00B7';
    default:
      return c;
  }
}

// Centre of a quadrilateral (mean of its corners).
Point centre(const std::array<Point, 4>& q) {
  return {(q[0].x + q[1].x + q[2].x + q[3].x) / 4, (q[0].y + q[1].y + q[2].y + q[3].y) / 4};
}

// A row's frame: unit vector along the text (top edge, top-left to top-right) and its height.
struct RowFrame {
  double along_x = 1, along_y = 0, height = 0;
};

RowFrame row_frame(const std::array<Point, 4>& q) {
  RowFrame f;
  const double dx = q[1].x - q[0].x, dy = q[1].y - q[0].y;
  const double length = std::hypot(dx, dy);
  if (length > 0) {
    f.along_x = dx / length;
    f.along_y = dy / length;
  }
  f.height = (std::hypot(q[3].x - q[0].x, q[3].y - q[0].y) + std::hypot(q[2].x - q[1].x, q[2].y - q[1].y)) / 2;
  return f;
}

// Union-find over true lines [0, t) and predicted lines [t, t + p).
int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
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
  const std::string nfkc = text::normalize_utf8(u32_to_utf8(text), text::NormalForm::kNFKC);
  Expected<std::u32string> decoded = utf8_to_u32(nfkc);
  const std::u32string folded = decoded ? std::move(*decoded) : std::u32string(text);
  std::u32string out;
  bool space_pending = false;
  for (char32_t c : folded) {
    if (is_white_space(c)) {
      space_pending = !out.empty();
      continue;
    }
    c = fold_punctuation(c);
    if (space_pending && !is_cjk(c) && !is_cjk(out.back())) out.push_back(U' ');
    space_pending = false;
    out.push_back(c);
  }
  return out;
}

double polygon_area(const std::array<Point, 4>& polygon) {
  ClipperLib::Clipper clipper;
  clipper.AddPath(to_clipper_path(polygon), ClipperLib::ptSubject, true);
  ClipperLib::Paths united;
  clipper.Execute(ClipperLib::ctUnion, united, ClipperLib::pftNonZero, ClipperLib::pftNonZero);
  return area(united) / (kScale * kScale);
}

double intersection_area(const std::array<Point, 4>& a, const std::array<Point, 4>& b) {
  ClipperLib::Clipper clipper;
  clipper.AddPath(to_clipper_path(a), ClipperLib::ptSubject, true);
  clipper.AddPath(to_clipper_path(b), ClipperLib::ptClip, true);
  ClipperLib::Paths intersection;
  clipper.Execute(ClipperLib::ctIntersection, intersection, ClipperLib::pftNonZero, ClipperLib::pftNonZero);
  return area(intersection) / (kScale * kScale);
}

Expected<OcrImageScore> score_image(const std::vector<TruthLine>& truth, const std::vector<PredictedLine>& predicted,
                                    double min_overlap) {
  if (!(min_overlap > 0 && min_overlap <= 1)) {
    return make_error(StatusCode::kInvalidArgument,
                      "minimum overlap " + std::to_string(min_overlap) + " is outside (0, 1]");
  }
  const int truths = static_cast<int>(truth.size());
  const int predictions = static_cast<int>(predicted.size());
  std::vector<std::u32string> truth_texts, predicted_texts;
  std::vector<double> truth_areas, predicted_areas;
  for (int t = 0; t < truths; ++t) {
    EDGEMM_ASSIGN_OR_RETURN(std::u32string text, comparable_text(truth[t].text, "truth", t));
    truth_texts.push_back(std::move(text));
    truth_areas.push_back(polygon_area(truth[t].polygon));
  }
  for (int p = 0; p < predictions; ++p) {
    EDGEMM_ASSIGN_OR_RETURN(std::u32string text, comparable_text(predicted[p].text, "predicted", p));
    predicted_texts.push_back(std::move(text));
    predicted_areas.push_back(polygon_area(predicted[p].polygon));
  }

  OcrImageScore score;
  std::vector<int> parent(truths + predictions);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> scored_prediction(predictions, false);
  for (int p = 0; p < predictions; ++p) {
    std::vector<double> overlap(truths, 0.0);
    double on_ignored = 0;
    int best = -1;
    for (int t = 0; t < truths; ++t) {
      const double shared = intersection_area(truth[t].polygon, predicted[p].polygon);
      if (shared <= 0) continue;
      if (truth[t].ignore) {
        on_ignored += shared;
        continue;
      }
      overlap[t] = shared / std::max(std::min(truth_areas[t], predicted_areas[p]), 1e-9);
      if (best < 0 || overlap[t] > overlap[best]) best = t;
    }
    if (predicted_areas[p] > 0 && on_ignored >= min_overlap * predicted_areas[p]) {
      score.ignored_predicted.push_back(p);
      continue;
    }
    scored_prediction[p] = true;
    if (best < 0 || overlap[best] < min_overlap) continue;
    // The prediction's row is that of the true line it overlaps most; it joins other true lines
    // of that row that it overlaps enough (a merge of cells), never lines of the rows around.
    const RowFrame row = row_frame(truth[best].polygon);
    const Point row_centre = centre(truth[best].polygon);
    for (int t = 0; t < truths; ++t) {
      if (overlap[t] < min_overlap) continue;
      const Point c = centre(truth[t].polygon);
      const double across = std::abs(-(c.x - row_centre.x) * row.along_y + (c.y - row_centre.y) * row.along_x);
      if (t == best || across < row.height / 2) parent[find_root(parent, truths + p)] = find_root(parent, t);
    }
  }

  std::map<int, LineGroup> by_root;
  for (int t = 0; t < truths; ++t) {
    if (!truth[t].ignore) by_root[find_root(parent, t)].truth.push_back(t);
  }
  for (int p = 0; p < predictions; ++p) {
    if (scored_prediction[p]) by_root[find_root(parent, truths + p)].predicted.push_back(p);
  }
  for (auto& [root, group] : by_root) {
    if (group.truth.empty()) {
      score.unmatched_predicted.insert(score.unmatched_predicted.end(), group.predicted.begin(), group.predicted.end());
      continue;
    }
    const int64_t chars = static_cast<int64_t>(truth_texts[group.truth[0]].size());
    if (group.predicted.empty()) {
      score.unmatched_truth.push_back(group.truth[0]);
      score.truth_chars += chars;
      score.edits += chars;
      continue;
    }
    // Order both sides along the row and join their texts.
    const RowFrame row = row_frame(truth[group.truth[0]].polygon);
    auto along = [&](const std::array<Point, 4>& q) {
      const Point c = centre(q);
      return c.x * row.along_x + c.y * row.along_y;
    };
    std::stable_sort(group.truth.begin(), group.truth.end(),
                     [&](int a, int b) { return along(truth[a].polygon) < along(truth[b].polygon); });
    std::stable_sort(group.predicted.begin(), group.predicted.end(),
                     [&](int a, int b) { return along(predicted[a].polygon) < along(predicted[b].polygon); });
    auto join = [](const std::vector<int>& indices, const std::vector<std::u32string>& texts) {
      std::u32string joined;
      for (int i : indices) joined += (joined.empty() ? U"" : U" ") + texts[i];
      return normalize_ocr_text(joined);
    };
    const std::u32string truth_text = join(group.truth, truth_texts);
    group.truth_chars = static_cast<int64_t>(truth_text.size());
    group.edits = edit_distance(truth_text, join(group.predicted, predicted_texts));
    score.truth_chars += group.truth_chars;
    score.edits += group.edits;
    score.groups.push_back(std::move(group));
  }
  std::sort(score.groups.begin(), score.groups.end(), [](const LineGroup& a, const LineGroup& b) {
    return *std::min_element(a.truth.begin(), a.truth.end()) < *std::min_element(b.truth.begin(), b.truth.end());
  });
  std::sort(score.unmatched_truth.begin(), score.unmatched_truth.end());
  std::sort(score.unmatched_predicted.begin(), score.unmatched_predicted.end());
  for (const TruthLine& line : truth) score.truth_lines += line.ignore ? 0 : 1;
  return score;
}

double OcrScoreTotals::cer() const {
  return truth_chars > 0 ? static_cast<double>(edits) / static_cast<double>(truth_chars) : 0.0;
}

double OcrScoreTotals::precision() const {
  return predicted_lines > 0 ? static_cast<double>(matched_predicted) / static_cast<double>(predicted_lines) : 1.0;
}

double OcrScoreTotals::recall() const {
  return truth_lines > 0 ? static_cast<double>(matched_truth) / static_cast<double>(truth_lines) : 1.0;
}

void OcrScoreTotals::add(const OcrImageScore& score) {
  int64_t grouped_truth = 0, grouped_predicted = 0;
  for (const LineGroup& group : score.groups) {
    grouped_truth += static_cast<int64_t>(group.truth.size());
    grouped_predicted += static_cast<int64_t>(group.predicted.size());
  }
  truth_lines += score.truth_lines;
  predicted_lines += grouped_predicted + static_cast<int64_t>(score.unmatched_predicted.size());
  matched_truth += grouped_truth;
  matched_predicted += grouped_predicted;
  truth_chars += score.truth_chars;
  edits += score.edits;
}

}  // namespace edgemm::ocr
