#pragma once
/// \file endpoints.h
/// The handlers of `edgemm serve`'s model endpoints (docs/serve.md), one file each.

#include <httplib.h>

#include "state.h"

namespace edgemm::cli::serve {

/// POST /v1/chat/completions: OpenAI's chat completion on the VLM, streamed as server-sent events
/// with "stream": true (chat_endpoint.cc).
void handle_chat(const httplib::Request& req, httplib::Response& res, ServerState& state);

/// POST /v1/embeddings: CLIP embeddings of texts and images (embeddings_endpoint.cc).
void handle_embeddings(const httplib::Request& req, httplib::Response& res, ServerState& state);

/// POST /v1/ocr: PP-OCR on one image, answered as one image of `edgemm ocr --json`
/// (ocr_endpoint.cc).
void handle_ocr(const httplib::Request& req, httplib::Response& res, ServerState& state);

/// GET /: the page (tools/cli/serve/web/index.html, built into the binary) with OCR, chat about an
/// image and image retrieval for whichever models are loaded; public, like /health (page.cc).
void handle_page(const httplib::Request& req, httplib::Response& res, ServerState& state);

}  // namespace edgemm::cli::serve
