// `edgemm serve`: an OpenAI-compatible HTTP server for OCR, embeddings and VLM chat, like
// llama.cpp's llama-server (docs/serve.md; the server is in serve/).
#include "cli_common.h"
#include "commands.h"
#include "serve/server.h"

namespace edgemm::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<serve::ServeOptions>();
  auto max_body_mb = std::make_shared<double>(32);
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the OCR, CLIP and VLM packages over HTTP with OpenAI's API (/v1/chat/completions, /v1/embeddings, "
      "/v1/models) and /v1/ocr, /health, /metrics; until SIGINT or SIGTERM, then finish the requests in flight");
  cmd->add_option("--host", options->host, "address to listen on (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", options->port, "port (default 8080; 0 = any free port, printed when listening)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--ocr", options->ocr_dir, "PP-OCR models folder to serve on /v1/ocr (e.g. models/ppocrv4)");
  cmd->add_option("--clip", options->clip_dir, "CLIP package to serve on /v1/embeddings");
  cmd->add_option("--vlm", options->vlm_dir,
                  "VLM package (SmolVLM / Idefics3 layout) to serve on /v1/chat/completions");
  cmd->add_option("--decoder", options->vlm_decoder,
                  "decoder file in the VLM package's onnx/ folder (default decoder_model_merged.onnx)");
  cmd->add_option("--api-key", options->api_key,
                  "require 'Authorization: Bearer KEY' on every request but /health and the page");
  cmd->add_option("-t,--threads", options->threads, "intra-op threads of each model run (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--parallel", options->parallel,
                  "requests that run at once on the OCR and CLIP models (default 1; the VLM runs one at a time)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--queue", options->queue, "requests that may wait per model; more get 429 (default 8)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--timeout", options->timeout_s,
                  "seconds a request may take, waiting included (default 300); a generation stops there")
      ->check(finite_range(0.1, 86400));
  cmd->add_option("--max-body-mb", *max_body_mb, "largest request body in MiB; larger get 413 (default 32)")
      ->check(finite_range(0.001, 4096));
  cmd->add_flag("--json", options->json, "print the lifecycle (listening, ready, stopped) as JSON lines");
  cmd->callback([cmd, options, max_body_mb, &exit_code] {
    options->max_body_bytes = static_cast<int64_t>(*max_body_mb * 1024 * 1024);
    if (cmd->count("--api-key") > 0 && options->api_key.empty()) {
      // `--api-key "$UNSET"` would otherwise serve without a key.
      exit_code = report_error(
          "serve", Status(StatusCode::kInvalidArgument, "--api-key is empty: give a key, or leave the option out"),
          options->json);
      return;
    }
    const Status status = serve::run_server(*options);
    if (!status.is_ok()) exit_code = report_error("serve", status, options->json);
  });
}

}  // namespace edgemm::cli
