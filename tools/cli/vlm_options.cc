#include "vlm_options.h"

#include "cli_common.h"

namespace edgemm::cli {

Expected<vlm::VlmModel> VlmArgs::load() const {
  vlm::VlmOptions options;
  options.threads = threads;
  options.decoder_file = decoder_file;
  options.bind_kv_cache = !no_kv_binding;
  return vlm::VlmModel::load(model, options);
}

vlm::GenerateOptions VlmArgs::generate_options() const {
  vlm::GenerateOptions gen;
  gen.max_new_tokens = max_new_tokens;
  gen.sampling.do_sample = temperature > 0;
  gen.sampling.temperature = temperature;
  gen.sampling.top_k = top_k;
  gen.sampling.top_p = top_p;
  gen.sampling.repetition_penalty = repetition_penalty;
  gen.sampling.seed = seed;
  return gen;
}

void add_vlm_options(CLI::App* cmd, VlmArgs& args) {
  cmd->add_option("--model", args.model, "model package folder (config.json, onnx/vision_encoder.onnx, ...)")
      ->required();
  cmd->add_option("-t,--threads", args.threads, "intra-op threads (0 = all cores)")->check(CLI::Range(0, 256));
  cmd->add_option("--decoder", args.decoder_file,
                  "decoder file in the package's onnx/ folder (default decoder_model_merged.onnx)");
  cmd->add_flag("--no-kv-binding", args.no_kv_binding,
                "run the decoder as published (its Concat copies the whole KV cache every step)");
  cmd->add_option("--max-new-tokens", args.max_new_tokens, "stop after this many new tokens (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temperature", args.temperature, "sampling temperature; 0 = greedy (default)")
      ->check(finite_range(0, 100));
  cmd->add_option("--top-k", args.top_k, "keep the k most likely tokens when sampling (default 50; 0 = all)")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--top-p", args.top_p, "nucleus sampling: keep the smallest set with this probability (default 1)")
      ->check(finite_range(1e-6, 1));
  cmd->add_option("--repetition-penalty", args.repetition_penalty, "CTRL repetition penalty (default 1 = none)")
      ->check(finite_range(1e-3, 100));
  cmd->add_option("--seed", args.seed, "seed of the sampler (default 0): same seed, same answer");
}

nlohmann::json timings_json(const vlm::GenerateTimings& t, double ocr_ms) {
  const double decode_steps = static_cast<double>(std::max<int64_t>(t.new_tokens - 1, 0));
  const int64_t prefilled = t.prompt_tokens - t.cached_prompt_tokens;
  return {{"ocr_ms", ocr_ms},
          {"preprocess_ms", t.preprocess_ms},
          {"vision_encoder_ms", t.vision_ms},
          {"prefill_ms", t.prefill_ms},
          {"decode_ms", t.decode_ms},
          {"time_to_first_token_ms", t.first_token_ms},
          {"prompt_tokens", t.prompt_tokens},
          {"cached_prompt_tokens", t.cached_prompt_tokens},
          {"new_tokens", t.new_tokens},
          {"prefill_tokens_per_s", t.prefill_ms > 0 ? prefilled / (t.prefill_ms / 1000.0) : 0.0},
          {"decode_tokens_per_s", t.decode_ms > 0 ? decode_steps / (t.decode_ms / 1000.0) : 0.0},
          {"kv_bytes_copied_last_step", t.kv_bytes_copied_last_step}};
}

}  // namespace edgemm::cli
