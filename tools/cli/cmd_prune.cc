/// \file cmd_prune.cc
/// `edgemm prune MODEL -o OUT [--tokens-after-layer K --keep-ratio R [--rule ...]]
/// [--heads L:h,... | --heads-keep-ratio R --calib FILES...]`: writes a copy of a transformer with
/// attention heads removed (edgemm/tools/prune.h, prune_heads.h) and/or, for a vision
/// transformer, whose layers after K run on the class token and the highest-scoring patch tokens
/// (edgemm/tools/prune.h). Both may be asked at once: heads go first. docs/clip.md.

#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/prune.h"
#include "prune_heads.h"

namespace edgemm::cli {
namespace {

struct PruneArgs {
  std::string model;
  std::string output;
  int after_layer = -1;
  float keep_ratio = 0.5f;
  std::string rule = "cls_attention";
  int64_t tokens = -1;
  bool json = false;
  HeadPruneArgs heads;
};

Status prune_command(const PruneArgs& args) {
  const bool tokens = args.after_layer >= 0;
  if (!tokens && !args.heads.requested()) {
    return make_error(StatusCode::kInvalidArgument,
                      "nothing to prune: give --tokens-after-layer K (visual tokens) and/or --heads L:h,... or "
                      "--heads-keep-ratio R --calib FILES (attention heads)");
  }
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, {args.model}));
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::load(args.model));
  nlohmann::json j;
  j["model"] = args.model;
  j["output"] = args.output;
  if (args.heads.requested()) {
    EDGEMM_ASSIGN_OR_RETURN(j["heads"], prune_heads(model, args.model, args.heads));
  }
  passes::TokenPruningReport report;
  if (tokens) {
    const passes::TokenPruningOptions options{args.after_layer, args.keep_ratio, args.rule, args.tokens};
    EDGEMM_ASSIGN_OR_RETURN(report, passes::prune_visual_tokens(model, options));
    j["tokens"] = {{"after_layer", args.after_layer},
                   {"keep_ratio", args.keep_ratio},
                   {"rule", args.rule},
                   {"layers", report.layers},
                   {"hidden", report.hidden},
                   {"attention", report.attention},
                   {"tokens", report.tokens},
                   {"kept_tokens", report.kept_tokens},
                   {"reshapes_rewritten", report.reshapes_rewritten}};
  }
  EDGEMM_RETURN_IF_ERROR(model.save(args.output));
  if (j.contains("heads")) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(args.output, ec);
    j["heads"]["file_bytes_after"] = ec ? int64_t{-1} : static_cast<int64_t>(size);
  }
  if (args.json) {
    std::cout << json_text(j) << std::endl;
    return Status::ok();
  }
  std::cout << "pruned " << args.model << " → " << args.output << "\n";
  if (j.contains("heads")) print_head_report(j["heads"]);
  if (!tokens) return Status::ok();
  std::cout << "  " << report.layers << " encoder layers; after layer " << args.after_layer << " (value '"
            << report.hidden << "') keep the class token and " << args.keep_ratio * 100 << " % of the patches by "
            << args.rule << "\n";
  if (report.tokens >= 0) {
    std::cout << "  tokens " << report.tokens << " → " << report.kept_tokens << "; " << report.reshapes_rewritten
              << " Reshape shapes that hard-code the token count rewritten\n";
  } else {
    std::cout << "  token count is dynamic in this graph (kept per image: class token + ceil(keep ratio × patches))\n";
  }
  std::cout << "  the file holds a com.edgemm TokenPrune node: edgemm runs it, other runtimes do not\n";
  return Status::ok();
}

}  // namespace

void add_prune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PruneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prune",
      "Write a transformer without some attention heads (head pruning) and/or a vision transformer that drops patch "
      "tokens after an encoder layer (visual token pruning)");
  cmd->add_option("model", args->model,
                  "ONNX transformer (e.g. a CLIP package's onnx/vision_model.onnx or onnx/text_model.onnx)")
      ->required();
  cmd->add_option("-o,--output", args->output, "pruned ONNX model to write")->required();
  CLI::Option* layer =
      cmd->add_option("--tokens-after-layer", args->after_layer,
                      "0-based encoder layer after which tokens are dropped (layers 0..K see every token)")
          ->check(CLI::Range(0, 10000));
  cmd->add_option("--keep-ratio", args->keep_ratio, "share of patch tokens kept, in (0, 1] (default 0.5)")
      ->check(finite_range(0, 1))
      ->needs(layer);
  cmd->add_option("--rule", args->rule,
                  "token score: cls_attention (layer K's attention from the class token) or mean_abs (mean |hidden|)")
      ->check(CLI::IsMember({"cls_attention", "mean_abs"}))
      ->needs(layer);
  cmd->add_option("--tokens", args->tokens,
                  "token count (1 + patches) for graphs whose Reshapes hard-code it, when edgemm cannot tell it")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 30))
      ->needs(layer);
  add_head_prune_options(cmd, args->heads);
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->callback([args, &exit_code] {
    Status status = prune_command(*args);
    if (!status.is_ok()) exit_code = report_error("prune", status, args->json);
  });
}

}  // namespace edgemm::cli
