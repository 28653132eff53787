#pragma once
/// \file metrics.h
/// OCR evaluation: UTF-8 conversion, edit distance, polygon IoU, one-to-one matching of
/// predicted lines to ground truth, and the scores built on it (character error rate,
/// detection precision and recall).
/// Definitions: CER = Σ edit distance / Σ reference length, as in the OCR literature (e.g.
/// Neudecker et al., "A survey of OCR evaluation tools and metrics", HIP 2021); a prediction
/// detects a true line when their polygons' IoU reaches 0.5 under one-to-one matching, as in
/// the ICDAR robust reading competitions (Karatzas et al., "ICDAR 2015 competition on Robust
/// Reading"). Unlike the competition's script (rrc_evaluation_funcs, script.py), which takes
/// the first pair in index order with IoU > 0.5, score_image() takes pairs by highest IoU
/// and accepts IoU = threshold.

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

/// The form in which texts are compared: leading and trailing whitespace removed and every
/// internal run of whitespace replaced by one U+0020 SPACE, because OCR engines and
/// annotators place and count spaces inconsistently. Whitespace is Unicode's White_Space
/// property (tab, line breaks, U+0020, U+00A0, U+3000 IDEOGRAPHIC SPACE, ...).
std::u32string normalize_ocr_text(std::u32string_view text);

/// Intersection over union of two polygons in pixels: area(a ∩ b) / area(a ∪ b), in [0, 1].
/// The polygons may be in either winding and need not be convex (a self-intersecting one
/// counts its lobes as inside). Computed exactly with Clipper (Angus Johnson's polyclipping
/// 6.4) on coordinates rounded to 1/64 pixel. Returns 0 when the union has zero area (both
/// polygons degenerate); a degenerate polygon, or one with a non-finite coordinate or one
/// beyond ±2^30 pixels, has no area and so IoU 0 against anything.
double polygon_iou(const std::array<Point, 4>& a, const std::array<Point, 4>& b);

/// A ground-truth text line: quadrilateral in image pixels and its UTF-8 transcription.
struct TruthLine {
  std::array<Point, 4> polygon;
  std::string text;
};

/// A recognized text line: quadrilateral in image pixels and the UTF-8 text read.
struct PredictedLine {
  std::array<Point, 4> polygon;
  std::string text;
};

/// One matched pair of score_image().
struct LineMatch {
  int truth = 0;            ///< index into the truth lines
  int predicted = 0;        ///< index into the predicted lines
  double iou = 0;           ///< polygon_iou() of the pair, ≥ the threshold
  int64_t edits = 0;        ///< edit_distance() of the normalized texts, in code points
  int64_t truth_chars = 0;  ///< code points of the normalized true text
};

/// Scores of one image.
struct OcrImageScore {
  std::vector<LineMatch> matches;        ///< ascending truth index
  std::vector<int> unmatched_truth;      ///< ascending; each counts all its characters as errors
  std::vector<int> unmatched_predicted;  ///< ascending; lower precision only, add no edits
  int64_t truth_chars = 0;               ///< code points of all normalized true texts, matched or not
  int64_t edits = 0;                     ///< Σ matches' edits + Σ unmatched true lines' code points
};

/// Matches predicted lines to true lines one to one and compares their texts.
/// Matching: every pair's polygon_iou() is computed; then, repeatedly, the pair with the
/// highest IoU ≥ `iou_threshold` (ties: lower truth index, then lower predicted index) is
/// matched and both lines leave the pool. Texts are compared after normalize_ocr_text().
/// Errors: kInvalidArgument when `iou_threshold` is not in (0, 1] or a text is not valid
/// UTF-8 (the message names the line).
Expected<OcrImageScore> score_image(const std::vector<TruthLine>& truth, const std::vector<PredictedLine>& predicted,
                                    double iou_threshold = 0.5);

/// Sums of OcrImageScore over a data set and the rates derived from them.
struct OcrScoreTotals {
  int64_t truth_lines = 0;
  int64_t predicted_lines = 0;
  int64_t matched = 0;
  int64_t truth_chars = 0;
  int64_t edits = 0;

  /// Character error rate: edits / truth_chars (can exceed 1); 0 when there are no true
  /// characters.
  double cer() const;
  /// Detection precision: matched / predicted_lines; 1 when nothing was predicted.
  double precision() const;
  /// Detection recall: matched / truth_lines; 1 when there are no true lines.
  double recall() const;
  /// Adds one image's counts.
  void add(const OcrImageScore& score);
};

}  // namespace edgemm::ocr
