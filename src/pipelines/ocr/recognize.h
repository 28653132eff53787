#pragma once
/// \file recognize.h
/// The per-crop stages of PP-OCR: 0°/180° angle classification (ppocr mobile v2.0 cls,
/// tools/infer/predict_cls.py) and CTC text recognition (PP-OCRv4 SVTR_LCNet rec,
/// tools/infer/predict_rec.py). Crops are 8-bit BGR images from crop_text_region().

#include <array>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/pipelines/ocr.h"
#include "pipelines/ocr/ctc.h"

namespace edgemm::ocr {

/// Input height of both the classifier and the recognizer, in pixels.
inline constexpr int kLineHeight = 48;
/// Classifier input width: crops are resized to height 48 keeping their aspect ratio, up to this width.
inline constexpr int kClsWidth = 192;
/// The classifier sees at most this much of a line (width over height, from its start): beyond
/// it, PaddleOCR's squeeze into kClsWidth makes the classifier unreliable (docs/ocr.md).
inline constexpr double kClsMaxAspect = 12.0;
/// Smallest recognizer input width (PP-OCRv4 rec_image_shape 3,48,320).
inline constexpr int kRecMinWidth = 320;
/// Extents a model's first input fixes ([N, C, H, W]); 0 where the axis is symbolic.
struct FixedGeometry {
  int64_t batch = 0;
  int64_t height = 0;
  int64_t width = 0;
};

/// The static extents of `model`'s first input (all 0 when its rank is not 4 or unknown).
FixedGeometry fixed_geometry(const Inferencer& model);

/// Runs a model that has one input (det, cls, rec) on `input`, fed under the model's input name.
/// Errors: those of Inferencer::run.
Expected<std::vector<Tensor>> run_single_input(const Inferencer& model, Tensor input);

/// Builds the [rows, 3, 48, width] input of `crops[order[begin..end)]` (rows >= end − begin;
/// rows beyond the crops stay 0, for models with a static batch): each crop resized to height
/// 48 with width ceil(48 × w / h) capped at `width` (Lanczos when enlarging, area averaging
/// when shrinking; PaddleOCR uses bilinear for both), scaled to [−1, 1] ((x / 255 − 0.5) / 0.5)
/// and right-padded with 0. Errors: kOutOfMemory.
Expected<Tensor> line_batch_input(const std::vector<cv::Mat>& crops, const std::vector<size_t>& order, size_t begin,
                                  size_t end, int width, int64_t rows);

/// Indices of `crops` sorted by aspect ratio (width / height), ascending, so that batches
/// hold crops of similar width (PaddleOCR sorts the same way before batching).
std::vector<size_t> order_by_aspect_ratio(const std::vector<cv::Mat>& crops);

/// Runs the angle classifier over `crops` in batches of `batch` (the model's static batch size
/// when it has one; its static width replaces kClsWidth), on at most the first kClsMaxAspect : 1
/// of each crop, and returns, per crop, the probability of its "180" class (the crop is upside down), in [0, 1].
/// Errors: from the classifier's run, or kInvalidModel when its output is not [n, 2].
Expected<std::vector<float>> classify_180(const Inferencer& cls, const std::vector<cv::Mat>& crops, int batch);

/// Recognizes every crop: batches of `batch` crops of similar aspect ratio, each batch
/// `48 × max(320 / 48, widest ratio in the batch)` wide (a model with a static batch or width
/// gets exactly those; wider crops are squeezed to the width), then CTC greedy decoding with
/// `table` and `space_threshold` (ctc_greedy_decode). Returns one line per crop, in the
/// crops' order. Errors: from the recognizer's run, or kInvalidModel when its output is not
/// [n, T, table.size()].
Expected<std::vector<CtcLine>> recognize(const Inferencer& rec, const std::vector<cv::Mat>& crops, int batch,
                                         const std::vector<std::string>& table, float space_threshold);

/// A piece of a text line cut by split_line().
struct LinePiece {
  cv::Mat crop;                  ///< 48 pixels high
  bool word_gap_before = false;  ///< the cut before it ran through a gap at least kWordGap wide
};

/// Blank columns (at 48 pixels high) from which a cut counts as a gap between words.
inline constexpr int kWordGap = 10;

/// Cuts a line crop that needs more than `width` pixels at 48 high into pieces no wider than
/// `width`, for recognizers with a static width (instead of squeezing the line). The crop is
/// resized to 48 high (as line_batch_input does) and binarized (Otsu; the class of most pixels
/// in the top and bottom rows is the background); each cut goes through the middle of the longest run of ink-free
/// columns (at most one ink pixel) in the second half of the piece's reach, the later one on ties; where there is none,
/// the piece is cut at `width`. A crop that fits is one piece. `width` must be ≥ 2.
std::vector<LinePiece> split_line(const cv::Mat& crop, int width);

/// Recognizes every crop as recognize() does, each with the recognizer of `recs` that suits its
/// width: the one of smallest static input width W with W ≥ ceil(48 × crop width / crop height)
/// (a recognizer without a static width holds any crop). A crop wider than every static width
/// is cut by split_line() to the widest, its pieces read there and their texts joined (with a
/// space across a word gap between two ASCII characters); its score is the pieces' mean.
/// Results come in the crops' order. Errors: those of recognize().
Expected<std::vector<CtcLine>> recognize_by_width(const std::vector<const Inferencer*>& recs,
                                                  const std::vector<cv::Mat>& crops, int batch,
                                                  const std::vector<std::string>& table, float space_threshold);

}  // namespace edgemm::ocr
