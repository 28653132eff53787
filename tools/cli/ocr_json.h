#pragma once
/// \file ocr_json.h
/// The OCR predictions file: what `edgemm ocr --json` prints, what the Guten OCR peer script
/// (tools/reference/guten_ocr.js) writes, and what `edgemm eval ocr --predictions` reads.
/// Schema: docs/ocr.md ("JSON output").

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgemm/pipelines/ocr.h"
#include "edgemm/status.h"

namespace edgemm::cli {

/// One image's entry: {"file", "width", "height", "lines": [{"polygon": [[x,y]×4], "text",
/// "score", "box_score", "rotated_180"}], "timings_ms": {"decode", "det", "post", "cls", "rec", "total"}}.
nlohmann::json ocr_image_json(const std::string& file, const ocr::OcrResult& result);

/// The whole document's header: tool, version, backend, threads, models (file names and folder).
nlohmann::json ocr_document_json(const ocr::OcrOptions& options);

/// One image's predictions read back from a predictions file.
struct PredictedImage {
  std::string file;
  ocr::OcrResult result;  ///< lines (polygon, text, score) and whatever timings the file gives
  std::string error;      ///< non-empty when the tool failed on this image (its message)
};

/// A whole predictions file.
struct OcrPredictions {
  std::string tool;  ///< "edgemm", "guten-ocr", ... ("unknown" when absent)
  std::vector<PredictedImage> images;
};

/// Reads a predictions file (edgemm's or the peer's). Errors: kIo, kInvalidArgument naming the
/// image and the malformed field, a file listed twice, or no images at all.
Expected<OcrPredictions> read_ocr_predictions(const std::string& path);

}  // namespace edgemm::cli
