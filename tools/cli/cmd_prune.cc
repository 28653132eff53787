/// \file cmd_prune.cc
/// `edgemm prune MODEL -o OUT --tokens-after-layer K --keep-ratio R [--rule ...]`: writes a copy
/// of a vision transformer whose layers after K run on the class token and the highest-scoring
/// patch tokens (passes/token_pruning.h; docs/clip.md).

#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "passes/token_pruning.h"

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
};

Status prune_command(const PruneArgs& args) {
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, {args.model}));
  EDGEMM_ASSIGN_OR_RETURN(ir::Model model, ir::import_onnx_file(args.model));
  const passes::TokenPruningOptions options{args.after_layer, args.keep_ratio, args.rule, args.tokens};
  EDGEMM_ASSIGN_OR_RETURN(passes::TokenPruningReport report, passes::prune_visual_tokens(model, options));
  EDGEMM_RETURN_IF_ERROR(ir::export_onnx_file(model, args.output));
  nlohmann::json j;
  j["model"] = args.model;
  j["output"] = args.output;
  j["tokens"] = {{"after_layer", args.after_layer},
                 {"keep_ratio", args.keep_ratio},
                 {"rule", args.rule},
                 {"layers", report.layers},
                 {"hidden", report.hidden},
                 {"attention", report.attention},
                 {"tokens", report.tokens},
                 {"kept_tokens", report.kept_tokens},
                 {"reshapes_rewritten", report.reshapes_rewritten}};
  if (args.json) {
    std::cout << json_text(j) << std::endl;
    return Status::ok();
  }
  std::cout << "pruned " << args.model << " → " << args.output << "\n"
            << "  " << report.layers << " encoder layers; after layer " << args.after_layer << " (value '"
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
      "prune", "Write a vision transformer that drops patch tokens after an encoder layer (visual token pruning)");
  cmd->add_option("model", args->model, "ONNX vision transformer (e.g. a CLIP package's onnx/vision_model.onnx)")
      ->required();
  cmd->add_option("-o,--output", args->output, "pruned ONNX model to write")->required();
  cmd->add_option("--tokens-after-layer", args->after_layer,
                  "0-based encoder layer after which tokens are dropped (layers 0..K see every token)")
      ->required()
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--keep-ratio", args->keep_ratio, "share of patch tokens kept, in (0, 1] (default 0.5)")
      ->check(finite_range(0, 1));
  cmd->add_option("--rule", args->rule,
                  "token score: cls_attention (layer K's attention from the class token) or mean_abs (mean |hidden|)")
      ->check(CLI::IsMember({"cls_attention", "mean_abs"}));
  cmd->add_option("--tokens", args->tokens,
                  "token count (1 + patches) for graphs whose Reshapes hard-code it, when edgemm cannot tell it")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 30));
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->callback([args, &exit_code] {
    Status status = prune_command(*args);
    if (!status.is_ok()) exit_code = report_error("prune", status, args->json);
  });
}

}  // namespace edgemm::cli
