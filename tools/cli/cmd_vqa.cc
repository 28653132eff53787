// `edgemm vqa`: answer a question about an image with a vision-language model package
// (docs/vlm.md), streaming the answer like llama.cpp's llama-mtmd-cli.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/vlm.h"

namespace edgemm::cli {

namespace {

struct VqaArgs {
  std::string model;
  std::string image;
  std::string question;
  bool raw_prompt = false;
  int max_new_tokens = 64;
  float temperature = 0;
  int top_k = 50;
  float top_p = 1;
  float repetition_penalty = 1;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false;
  bool stream = false;
  std::string decoder_file = "decoder_model_merged.onnx";
  bool no_kv_binding = false;
  bool ocr = false;
  std::string ocr_models;
};

nlohmann::json timings_json(const vlm::GenerateTimings& t, double ocr_ms) {
  const double decode_steps = static_cast<double>(std::max<int64_t>(t.new_tokens - 1, 0));
  return {{"ocr_ms", ocr_ms},
          {"preprocess_ms", t.preprocess_ms},
          {"vision_encoder_ms", t.vision_ms},
          {"prefill_ms", t.prefill_ms},
          {"decode_ms", t.decode_ms},
          {"time_to_first_token_ms", t.first_token_ms},
          {"prompt_tokens", t.prompt_tokens},
          {"new_tokens", t.new_tokens},
          {"prefill_tokens_per_s", t.prefill_ms > 0 ? t.prompt_tokens / (t.prefill_ms / 1000.0) : 0.0},
          {"decode_tokens_per_s", t.decode_ms > 0 ? decode_steps / (t.decode_ms / 1000.0) : 0.0},
          {"kv_bytes_copied_last_step", t.kv_bytes_copied_last_step}};
}

Status run_vqa(const VqaArgs& args) {
  vlm::VlmOptions options;
  options.threads = args.threads;
  options.decoder_file = args.decoder_file;
  options.bind_kv_cache = !args.no_kv_binding;
  EDGEMM_ASSIGN_OR_RETURN(vlm::VlmModel model, vlm::VlmModel::load(args.model, options));
  std::string question = args.question;
  nlohmann::json ocr_json = nullptr;
  double ocr_ms = 0;
  if (args.ocr) {
    ocr::OcrOptions ocr_options;
    ocr_options.models_dir = args.ocr_models.empty() ? default_ocr_models_dir() : args.ocr_models;
    ocr_options.threads = args.threads;
    EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<ocr::OcrPipeline> pipeline, ocr::OcrPipeline::create(ocr_options));
    EDGEMM_ASSIGN_OR_RETURN(ocr::OcrResult lines, pipeline->run_file(args.image));
    ocr_ms = lines.timings.total_ms;
    ocr_json = nlohmann::json::array();
    for (const ocr::OcrLine& line : lines.lines) {
      ocr_json.push_back({{"text", line.text}, {"x", line.polygon[0].x}, {"y", line.polygon[0].y}});
    }
    question = vlm::ocr_grounded_question(lines, args.question);
  }
  std::string prompt = question;
  if (!args.raw_prompt) {
    EDGEMM_ASSIGN_OR_RETURN(prompt, model.chat_prompt(question, 1));
  }
  vlm::GenerateOptions gen;
  gen.max_new_tokens = args.max_new_tokens;
  gen.sampling.do_sample = args.temperature > 0;
  gen.sampling.temperature = args.temperature;
  gen.sampling.top_k = args.top_k;
  gen.sampling.top_p = args.top_p;
  gen.sampling.repetition_penalty = args.repetition_penalty;
  gen.sampling.seed = args.seed;
  auto on_token = [&args](int64_t, const std::string& piece) {
    if (args.stream && !args.json) std::cout << piece << std::flush;
  };
  EDGEMM_ASSIGN_OR_RETURN(vlm::GenerateResult result, model.generate(prompt, {args.image}, gen, on_token));
  if (args.json) {
    std::cout << json_text({{"model", args.model},
                            {"image", args.image},
                            {"prompt", prompt},
                            {"answer", result.text},
                            {"ids", result.ids},
                            {"stop_reason", result.stop_reason},
                            {"kv_cache", model.kv_cache_mode()},
                            {"ocr_lines", ocr_json},
                            {"timings", timings_json(result.timings, ocr_ms)}})
              << std::endl;
  } else if (args.stream) {
    std::cout << std::endl;
  } else {
    std::cout << result.text << std::endl;
  }
  return Status::ok();
}

}  // namespace

void add_vqa_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<VqaArgs>();
  CLI::App* cmd = app.add_subcommand("vqa",
                                     "Answer a question about an image with a vision-language model package "
                                     "(Idefics3 / SmolVLM layout of transformers.js)");
  cmd->add_option("--model", args->model, "model package folder (config.json, onnx/vision_encoder.onnx, ...)")
      ->required();
  cmd->add_option("image", args->image, "image file")->required();
  cmd->add_option("question", args->question,
                  "the question (with --raw-prompt: the whole prompt, \"<image>\" "
                  "where the image goes)")
      ->required();
  cmd->add_flag("--raw-prompt", args->raw_prompt, "use the question text as the prompt, without the chat template");
  cmd->add_option("--max-new-tokens", args->max_new_tokens, "stop after this many new tokens (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temperature", args->temperature, "sampling temperature; 0 = greedy (default)")
      ->check(finite_range(0, 100));
  cmd->add_option("--top-k", args->top_k, "keep the k most likely tokens when sampling (default 50; 0 = all)")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--top-p", args->top_p, "nucleus sampling: keep the smallest set with this probability (default 1)")
      ->check(finite_range(1e-6, 1));
  cmd->add_option("--repetition-penalty", args->repetition_penalty, "CTRL repetition penalty (default 1 = none)")
      ->check(finite_range(1e-3, 100));
  cmd->add_option("--seed", args->seed, "seed of the sampler (default 0): same seed, same answer");
  cmd->add_option("-t,--threads", args->threads, "intra-op threads (0 = all cores)")->check(CLI::Range(0, 256));
  cmd->add_option("--decoder", args->decoder_file,
                  "decoder file in the package's onnx/ folder (default decoder_model_merged.onnx)");
  cmd->add_flag("--no-kv-binding", args->no_kv_binding,
                "run the decoder as published (its Concat copies the whole KV cache every step)");
  cmd->add_flag("--ocr", args->ocr,
                "OCR+VQA: read the image's text with PP-OCRv4 first and put the lines (reading order, with "
                "positions) before the question");
  cmd->add_option("--ocr-models", args->ocr_models, "PP-OCRv4 models folder for --ocr (default models/ppocrv4)");
  cmd->add_flag("--json", args->json, "print JSON: {answer, ids, stop_reason, timings}");
  cmd->add_flag("--stream", args->stream, "print tokens as they are generated");
  cmd->callback([args, &exit_code] {
    const Status status = run_vqa(*args);
    if (!status.is_ok()) exit_code = report_error("vqa", status, args->json);
  });
}

}  // namespace edgemm::cli
