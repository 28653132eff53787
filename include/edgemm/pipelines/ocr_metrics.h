#pragma once
/// \file ocr_metrics.h
/// OCR evaluation (`edgemm eval ocr`): UTF-8 conversion, text normalization, edit distance,
/// polygon overlap, the grouping of predicted lines with true lines, and the scores built on it
/// (character error rate, detection precision and recall).
/// Definitions: CER = Σ edit distance / Σ reference length, as in the OCR literature (e.g.
/// Neudecker et al., "A survey of OCR evaluation tools and metrics", HIP 2021). Lines are
/// matched many-to-many within a row, as the ICDAR 2013 and DetEval protocols allow splits
/// and merges (Wolf and Jolion, "Object count/area graphs for the evaluation of object
/// detection and segmentation algorithms", IJDAR 2006), so that a detector cutting a row
/// differently from the labels is scored on the text it reads; "do not care" lines follow the
/// ICDAR robust reading competitions (Karatzas et al., ICDAR 2015).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgemm/pipelines/ocr.h"
#include "edgemm/status.h"

namespace edgemm::ocr {

/// Decodes UTF-8 (RFC 3629) into code points.
/// Errors: kInvalidArgument naming the byte offset for any ill-formed sequence: a stray
/// continuation byte, a lead byte 0xC0, 0xC1 or 0xF5..0xFF, an overlong form, a surrogate
/// (U+D800..U+DFFF), a value above U+10FFFF, or a sequence truncated by the end of input.
Expected<std::u32string> utf8_to_u32(std::string_view utf8);

/// Encodes code points as UTF-8. Values that are not Unicode scalar values (surrogates, above
/// U+10FFFF) are written as U+FFFD REPLACEMENT CHARACTER.
std::string u32_to_utf8(std::u32string_view text);

/// Levenshtein distance (Levenshtein 1966): the fewest insertions, deletions and
/// substitutions, each of cost 1, turning `a` into `b`, counted in code points.
/// O(|a|·|b|) time, O(min(|a|, |b|)) memory.
int64_t edit_distance(std::u32string_view a, std::u32string_view b);

/// The form in which texts are compared, because OCR engines, typesetters and annotators write
/// the same visible text in different code points and spacing:
/// 1. NFKC (Unicode normalization form KC: full-width ASCII such as "，（" becomes ",(",
///    ligatures such as "ﬁ" become "fi", "…" becomes "...");
/// 2. typographic quotes fold to ASCII (U+2018/2019/201A/201B/2032 to "'", U+201C/201D/201E/2033
///    to '"'), dashes to "-" (U+2010..2015, U+2212) and bullets to "·" (U+2022, U+2219, U+30FB
///    to U+00B7 MIDDLE DOT);
/// 3. leading and trailing whitespace removed, every internal run of whitespace replaced by one
///    U+0020 SPACE; whitespace is Unicode's White_Space property (tab, line breaks, U+00A0,
///    U+3000 IDEOGRAPHIC SPACE, ...);
/// 4. a space next to a CJK character (Han, kana, CJK symbols and punctuation) removed: Chinese
///    and Japanese put no spaces between words, and the gaps that typesetters leave between
///    scripts or in justified lines are layout, not text.
/// Spaces between Latin words count.
std::u32string normalize_ocr_text(std::u32string_view text);

/// Area of a polygon in square pixels, and of the intersection of two. The polygons may be in
/// either winding and need not be convex (a self-intersecting one counts its lobes as inside).
/// Computed exactly with Clipper (Angus Johnson's polyclipping 6.4) on coordinates rounded to
/// 1/64 pixel. A degenerate polygon, or one with a non-finite coordinate or one beyond ±2^30
/// pixels, has area 0.
double polygon_area(const std::array<Point, 4>& polygon);
double intersection_area(const std::array<Point, 4>& a, const std::array<Point, 4>& b);

/// A ground-truth text line: quadrilateral in image pixels (clockwise from the text's own
/// top-left corner) and its UTF-8 transcription. An `ignore` line ("do not care" in the ICDAR
/// robust reading competitions: too small to read, or no text) neither counts nor is
/// penalized: predictions lying mostly on it are left out of the score.
struct TruthLine {
  std::array<Point, 4> polygon;
  std::string text;
  bool ignore = false;
};

/// A recognized text line: quadrilateral in image pixels and the UTF-8 text read.
struct PredictedLine {
  std::array<Point, 4> polygon;
  std::string text;
};

/// A group of true and predicted lines that score_image() compares as one text: the lines of
/// one row that a detector split or merged differently from the labels.
struct LineGroup {
  std::vector<int> truth;      ///< indices into the truth lines, in reading order along the row
  std::vector<int> predicted;  ///< indices into the predicted lines, in reading order along the row
  int64_t edits = 0;           ///< edit_distance() of the joined normalized texts, in code points
  int64_t truth_chars = 0;     ///< code points of the joined normalized true texts
};

/// Scores of one image.
struct OcrImageScore {
  std::vector<LineGroup> groups;         ///< groups with both true and predicted lines, by first truth index
  std::vector<int> unmatched_truth;      ///< ascending; each counts all its characters as errors
  std::vector<int> unmatched_predicted;  ///< ascending; lower precision only, add no edits
  std::vector<int> ignored_predicted;    ///< ascending; lying mostly on `ignore` true lines: not scored
  int64_t truth_lines = 0;               ///< true lines that are not `ignore`
  int64_t truth_chars = 0;               ///< code points of all scored normalized true texts, matched or not
  int64_t edits = 0;                     ///< Σ groups' edits + Σ unmatched true lines' code points
};

/// Matches predicted lines to true lines and compares their texts, tolerating a detector that
/// cuts a row into other pieces than the labels do (a line split at a wide space, two table
/// cells read as one line):
/// 1. overlap(t, p) = area(t ∩ p) / min(area(t), area(p)) (polygon_area(),
///    intersection_area()). A prediction whose area lies at least `min_overlap` on `ignore` lines,
///    taken together, is left out (ignored_predicted).
/// 2. Each remaining prediction is linked to the true line it overlaps most, if that overlap
///    reaches `min_overlap` (its row), and also to every other true line of the same row (centre
///    within half the row's height across the row's direction) that it overlaps by
///    `min_overlap`.
/// 3. Linked lines form groups (connected components). In each group, true and predicted
///    lines are ordered along the row's direction and their normalize_ocr_text() forms joined
///    with one space; the group's edits are the edit_distance() of the two joined texts.
/// 4. True lines in no group count all their characters as errors; predictions in no group
///    lower precision only.
/// With one prediction per true line this is one-to-one matching by overlap.
/// Errors: kInvalidArgument when `min_overlap` is not in (0, 1] or a text is not valid UTF-8
/// (the message names the line).
Expected<OcrImageScore> score_image(const std::vector<TruthLine>& truth, const std::vector<PredictedLine>& predicted,
                                    double min_overlap = 0.5);

/// Sums of OcrImageScore over a data set and the rates derived from them.
struct OcrScoreTotals {
  int64_t truth_lines = 0;      ///< scored (not `ignore`) true lines
  int64_t predicted_lines = 0;  ///< predictions not left out as lying on `ignore` lines
  int64_t matched_truth = 0;    ///< true lines in a group
  int64_t matched_predicted = 0;
  int64_t truth_chars = 0;
  int64_t edits = 0;

  /// Character error rate: edits / truth_chars (can exceed 1); 0 when there are no true
  /// characters.
  double cer() const;
  /// Detection precision: matched_predicted / predicted_lines; 1 when nothing was predicted.
  double precision() const;
  /// Detection recall: matched_truth / truth_lines; 1 when there are no true lines.
  double recall() const;
  /// Adds one image's counts.
  void add(const OcrImageScore& score);
};

}  // namespace edgemm::ocr
