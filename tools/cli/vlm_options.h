#pragma once
/// \file vlm_options.h
/// The options `edgemm vqa` and `edgemm chat` share: the package, threads, decoder file, KV cache
/// binding and generation (max new tokens, sampling).

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "edgemm/pipelines/vlm.h"

namespace edgemm::cli {

/// Parsed values of the shared options.
struct VlmArgs {
  std::string model;
  int threads = 0;
  std::string decoder_file = "decoder_model_merged.onnx";
  bool no_kv_binding = false;
  int max_new_tokens = 64;
  float temperature = 0;
  int top_k = 50;
  float top_p = 1;
  float repetition_penalty = 1;
  uint64_t seed = 0;

  /// Loads the package with these options. Errors: those of vlm::VlmModel::load.
  Expected<vlm::VlmModel> load() const;
  /// Generation options: greedy at temperature 0, else sampling with top-k, top-p and the seed.
  vlm::GenerateOptions generate_options() const;
};

/// Registers --model, --threads, --decoder, --no-kv-binding, --max-new-tokens, --temperature,
/// --top-k, --top-p, --repetition-penalty and --seed on `cmd`, writing into `args`.
void add_vlm_options(CLI::App* cmd, VlmArgs& args);

/// The timings of one generation as JSON (milliseconds, tokens, tokens per second); `ocr_ms` is
/// the OCR stage of OCR+VQA (0 without it).
nlohmann::json timings_json(const vlm::GenerateTimings& t, double ocr_ms = 0);

}  // namespace edgemm::cli
