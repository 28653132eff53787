#pragma once
/// \file server.h
/// `edgemm serve`: an OpenAI-compatible HTTP server over the OCR, CLIP and VLM pipelines
/// (docs/serve.md), on cpp-httplib. It binds first, then loads each package once (GET /health
/// answers 503 until then), serves until SIGINT or SIGTERM, then stops accepting connections and
/// finishes the requests in flight.

#include <cstdint>
#include <string>

#include "edgemm/status.h"

namespace edgemm::cli::serve {

/// The command's options (defaults as `edgemm serve --help` states them).
struct ServeOptions {
  std::string host = "127.0.0.1";                         ///< address to bind (loopback by default)
  int port = 8080;                                        ///< 0 = any free port (printed when listening)
  std::string ocr_dir;                                    ///< PP-OCR models folder, or empty
  std::string clip_dir;                                   ///< CLIP package, or empty
  std::string vlm_dir;                                    ///< VLM package, or empty
  std::string vlm_decoder = "decoder_model_merged.onnx";  ///< decoder file in the VLM's onnx/
  std::string api_key;                ///< when set, every /v1 request needs "Authorization: Bearer KEY"
  int threads = 0;                    ///< intra-op threads of each model run (0 = all cores)
  int parallel = 1;                   ///< runs at once per model (the VLM: always 1)
  int queue = 8;                      ///< requests waiting per model before 429
  double timeout_s = 300;             ///< per request: queue wait plus generation, seconds
  int64_t max_body_bytes = 32 << 20;  ///< larger bodies get 413
  bool json = false;                  ///< lifecycle lines on stdout as JSON
};

/// Runs the server until a signal. Errors: kIo when the address cannot be bound, those of the
/// pipelines' load (the server then stops without serving).
Status run_server(const ServeOptions& options);

}  // namespace edgemm::cli::serve
