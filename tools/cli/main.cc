/// `edgemm`: one command line for inspecting, running and (later) converting, quantizing,
/// benchmarking and serving models. Each subcommand lives in its own cmd_*.cc file.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/status.h"
#include "output_folder.h"

namespace {

/// The subcommands CLI11 has parsed, e.g. "eval ocr"; empty when none was reached.
std::string parsed_command(const CLI::App& app) {
  std::string name;
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    name += (name.empty() ? "" : " ") + sub->get_name();
  }
  return name;
}

/// Ends every command's --help with the exit codes (edgemm::exit_code, docs/cli.md).
void add_exit_codes_footer(CLI::App& app) {
  app.footer(
      "Exit codes: 0 ok, 1 a check the command makes failed (convert's verification above --tolerance, "
      "images eval ocr could not read), 2 invalid argument, 3 invalid model, 4 unsupported, 5 out of memory, "
      "6 I/O error, 7 internal error.");
  for (CLI::App* sub : app.get_subcommands({})) add_exit_codes_footer(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"edgemm: deploy multimodal models on edge devices (ONNX in, one runtime, many backends)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "edgemm " EDGEMM_VERSION);
  edgemm::cli::set_invocation(argc, argv);
  edgemm::cli::install_interrupt_cleanup();
  int exit_code = 0;
  edgemm::cli::add_inspect_command(app, exit_code);
  edgemm::cli::add_run_command(app, exit_code);
  edgemm::cli::add_profile_command(app, exit_code);
  edgemm::cli::add_ocr_command(app, exit_code);
  edgemm::cli::add_retrieve_command(app, exit_code);
  edgemm::cli::add_eval_command(app, exit_code);
  edgemm::cli::add_bench_command(app, exit_code);
  edgemm::cli::add_convert_command(app, exit_code);
  edgemm::cli::add_quantize_command(app, exit_code);
  edgemm::cli::add_tokenize_command(app, exit_code);
  edgemm::cli::add_chat_template_command(app, exit_code);
  edgemm::cli::add_prune_command(app, exit_code);
  edgemm::cli::add_vqa_command(app, exit_code);
  edgemm::cli::add_chat_command(app, exit_code);
  edgemm::cli::add_serve_command(app, exit_code);
  add_exit_codes_footer(app);
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::cerr << "edgemm: unknown command '" << argv[1] << "' (commands: " << names << ")\n";
    return edgemm::exit_code(edgemm::Status(edgemm::StatusCode::kInvalidArgument, "unknown command"));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every usage error is an invalid argument (exit 2),
    // reported like the commands' own errors, and as a JSON error when --json was asked for.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const edgemm::Status status(edgemm::StatusCode::kInvalidArgument,
                                std::string(e.what()) + " (run with --help for more information)");
    const bool json = std::find(argv + 1, argv + argc, std::string("--json")) != argv + argc;
    return edgemm::cli::report_error(parsed_command(app), status, json);
  }
  return exit_code;
}
