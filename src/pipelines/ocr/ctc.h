#pragma once
/// \file ctc.h
/// Character dictionary and greedy CTC decoding of a text-recognition model's output, as in
/// PaddleOCR's CTCLabelDecode (ppocr/postprocess/rec_postprocess.py, classes
/// BaseRecLabelDecode and CTCLabelDecode). CTC itself: Graves et al., "Connectionist Temporal
/// Classification", ICML 2006.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::ocr {

/// Reads a character dictionary (UTF-8, one character a line, e.g. PP-OCR's ppocr_keys_v1.txt)
/// and returns the class table of a CTC recognizer: entry 0 is the blank (empty string),
/// entries 1..N are the file's lines in order, and the last entry is " " (PaddleOCR's
/// `use_space_char=True`, the PP-OCRv4 setting). For ppocr_keys_v1.txt (6623 lines) that is
/// 6625 entries, the last dim of the PP-OCRv4 rec output.
/// Each line loses its terminator ("\n" or "\r\n"; the last line may have none), as
/// BaseRecLabelDecode.__init__ does with `strip("\n").strip("\r\n")`, and must then be exactly
/// one Unicode code point (the real file's lines are 1 to 4 UTF-8 bytes, one of them U+3000
/// IDEOGRAPHIC SPACE, which is kept as is). A blank line would create a second blank class, so
/// it is refused.
/// Errors: kIo when the file cannot be opened or read; kInvalidArgument for an empty file, or
/// a line that is not valid UTF-8 or not exactly one code point (the message gives the
/// 1-based line number).
Expected<std::vector<std::string>> load_ctc_dictionary(const std::string& path);

/// Text and confidence of one recognized line.
struct CtcLine {
  std::string text;  ///< UTF-8, concatenation of the emitted classes' strings
  float score = 0;   ///< mean probability of the emitted time steps, in [0, 1]; 0 when none
};

/// Greedy (best-path) CTC decoding of one line, exactly as PaddleOCR's CTCLabelDecode with
/// `is_remove_duplicate=True` (BaseRecLabelDecode.decode):
///  1. at each time step take the argmax class (the first one on ties, like numpy.argmax) and
///     its probability;
///  2. keep step t when its class differs from step t-1's (`text_index[1:] != text_index[:-1]`;
///     step 0 is always a candidate) and is not the blank 0. So "aa" collapses to "a", while
///     "a", blank, "a" gives "aa"; a run of repeats contributes the probability of its first
///     step;
///  3. text = the kept classes' strings concatenated; score = mean of the kept steps'
///     probabilities, or 0 when no step is kept (PaddleOCR: `if len(conf_list) == 0:
///     conf_list = [0]`).
/// `probs` is float32 [steps, classes], row-major, one softmax distribution a row (the
/// PP-OCRv4 rec output ends in a softmax); values are expected to be finite.
/// `table` is the class table from load_ctc_dictionary().
/// `space_threshold` below 1 adds one step to PaddleOCR's: a space is put between two kept
/// one-byte (ASCII) characters when, on a blank step between them, the space class (the
/// table's last entry, " ") has at least this probability. PP-OCRv4's Chinese recognizer
/// often leaves the blank on top where English words are spaced; OcrOptions::space_threshold
/// and docs/ocr.md give the measurement. At 1 (the default) decoding is PaddleOCR's.
/// Errors: kInvalidArgument when `table` is empty, `classes != table.size()` (the message
/// names both) or `steps < 0`.
Expected<CtcLine> ctc_greedy_decode(const float* probs, int64_t steps, int64_t classes,
                                    const std::vector<std::string>& table, float space_threshold = 1.0f);

/// Decodes line `batch` of a float32 [N, T, C] rec output (as ctc_greedy_decode() above on
/// the [T, C] slice `batch`).
/// Errors: kInvalidArgument when `probs` is not float32 of rank 3, `batch` is outside
/// [0, N), or C != table.size().
Expected<CtcLine> ctc_greedy_decode(const Tensor& probs, int64_t batch, const std::vector<std::string>& table,
                                    float space_threshold = 1.0f);

}  // namespace edgemm::ocr
