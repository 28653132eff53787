// `edgemm vqa`: answer a question about an image with a vision-language model package
// (docs/vlm.md), streaming the answer like llama.cpp's llama-mtmd-cli.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/vlm.h"
#include "vlm_options.h"

namespace edgemm::cli {

namespace {

struct VqaArgs {
  VlmArgs vlm;
  std::string image;
  std::string question;
  bool raw_prompt = false;
  bool json = false;
  bool stream = false;
  bool ocr = false;
  std::string ocr_models;
};

Status run_vqa(const VqaArgs& args) {
  if (args.question.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(args.raw_prompt ? "the prompt" : "the question") + " is empty: ask something");
  }
  EDGEMM_ASSIGN_OR_RETURN(vlm::VlmModel model, args.vlm.load());
  std::string question = args.question;
  nlohmann::json ocr_json = nullptr;
  double ocr_ms = 0;
  if (args.ocr) {
    ocr::OcrOptions ocr_options;
    ocr_options.models_dir = args.ocr_models.empty() ? default_ocr_models_dir() : args.ocr_models;
    ocr_options.threads = args.vlm.threads;
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
  const vlm::GenerateOptions gen = args.vlm.generate_options();
  auto on_token = [&args](int64_t, const std::string& piece) {
    if (args.stream && !args.json) std::cout << piece << std::flush;
  };
  EDGEMM_ASSIGN_OR_RETURN(vlm::GenerateResult result, model.generate(prompt, {args.image}, gen, on_token));
  if (args.json) {
    std::cout << json_text({{"model", args.vlm.model},
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
  add_vlm_options(cmd, args->vlm);
  cmd->add_option("image", args->image, "image file")->required();
  cmd->add_option("question", args->question,
                  "the question (with --raw-prompt: the whole prompt, \"<image>\" "
                  "where the image goes)")
      ->required();
  cmd->add_flag("--raw-prompt", args->raw_prompt, "use the question text as the prompt, without the chat template");
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
