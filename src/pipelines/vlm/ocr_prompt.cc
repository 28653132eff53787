// OCR+VQA: recognized lines put before the question (vlm.h ocr_grounded_question).

#include <cmath>

#include "edgemm/pipelines/vlm.h"

namespace edgemm::vlm {

std::string ocr_grounded_question(const ocr::OcrResult& ocr, const std::string& question) {
  if (ocr.lines.empty()) return "Text in the image (OCR): none.\n\nQuestion: " + question;
  std::string text = "Text in the image (OCR, reading order, [x, y] = top-left corner in pixels):\n";
  for (const ocr::OcrLine& line : ocr.lines) {
    const ocr::Point& corner = line.polygon[0];
    text += "[" + std::to_string(std::lround(corner.x)) + ", " + std::to_string(std::lround(corner.y)) + "] " +
            line.text + "\n";
  }
  return text + "\nQuestion: " + question;
}

}  // namespace edgemm::vlm
