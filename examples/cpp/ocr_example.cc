// Reads the text of one image with the PP-OCRv4 pipeline of an installed edgemm.
// Usage: ocr_example MODELS_DIR IMAGE   (MODELS_DIR as fetched by edgemm-fetch-ppocr-models)
// Prints one line per text line: its score, then the text. Exit code 1 on any error.
#include <cstdio>

#include "edgemm/pipelines/ocr.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODELS_DIR IMAGE\n", argv[0]);
    return 1;
  }
  edgemm::ocr::OcrOptions options;
  options.models_dir = argv[1];
  options.threads = 1;
  auto pipeline = edgemm::ocr::OcrPipeline::create(options);
  if (!pipeline) {
    std::fprintf(stderr, "error: %s\n", pipeline.status().to_string().c_str());
    return 1;
  }
  auto result = (*pipeline)->run_file(argv[2]);
  if (!result) {
    std::fprintf(stderr, "error: %s\n", result.status().to_string().c_str());
    return 1;
  }
  for (const edgemm::ocr::OcrLine& line : result->lines) std::printf("%.3f %s\n", line.score, line.text.c_str());
  return 0;
}
