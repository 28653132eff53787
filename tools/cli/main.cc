/// `edgemm`: one command line for inspecting, running and (later) converting, quantizing,
/// benchmarking and serving models. Each subcommand lives in its own cmd_*.cc file.

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"
#include "edgemm/status.h"

int main(int argc, char** argv) {
  CLI::App app{"edgemm: deploy multimodal models on edge devices (ONNX in, one runtime, many backends)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "edgemm 0.1.0");
  int exit_code = 0;
  edgemm::cli::add_inspect_command(app, exit_code);
  edgemm::cli::add_run_command(app, exit_code);
  edgemm::cli::add_ocr_command(app, exit_code);
  edgemm::cli::add_eval_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error is an invalid argument (exit 2).
    return app.exit(e) == 0 ? 0 : edgemm::exit_code(edgemm::Status(edgemm::StatusCode::kInvalidArgument, e.what()));
  }
  return exit_code;
}
