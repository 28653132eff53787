#pragma once
/// \file state.h
/// What the endpoints of `edgemm serve` share: the options, the loaded models with their
/// admission control, the metrics, and whether the server is ready or draining.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admission.h"
#include "edgemm/pipelines/clip.h"
#include "edgemm/pipelines/ocr.h"
#include "edgemm/pipelines/vlm.h"
#include "metrics.h"
#include "runner.h"
#include "server.h"

namespace edgemm::cli::serve {

/// One kind of model the server can hold: its names and its admission control.
struct ServedModel {
  std::string kind;    ///< "ocr", "clip" or "vlm": the id GET /v1/models lists
  std::string folder;  ///< the package folder's name, also accepted as the request's "model"
  std::unique_ptr<Admission> admission;
  std::unique_ptr<Runner> runner;  ///< the threads its runs happen on (admission.h bounds them)
  /// True when a request's "model" names this one: its kind, its folder's name, or nothing.
  bool answers_to(const std::string& name) const { return name.empty() || name == kind || name == folder; }
};

/// The VLM and what its KV cache holds between requests.
struct ServedVlm : ServedModel {
  std::optional<vlm::VlmModel> model;
  /// Keys (hash and size of the bytes) of the images of the conversation in the KV cache, in
  /// order; a request whose images start with these continues it (VlmModel::extend), any other
  /// starts anew (VlmModel::generate), as does every request while it is unknown (none yet, or
  /// the last generation failed). Changed only while holding the admission lease.
  std::optional<std::vector<std::string>> image_keys;
};

struct ServerState {
  explicit ServerState(const ServeOptions& o) : options(o) {}

  const ServeOptions& options;
  std::optional<ServedModel> ocr_slot;
  std::unique_ptr<ocr::OcrPipeline> ocr;
  std::optional<ServedModel> clip_slot;
  std::optional<clip::ClipModel> clip;
  std::optional<ServedVlm> vlm;
  Metrics metrics;
  std::atomic<bool> ready{false};     ///< every model loaded
  std::atomic<bool> draining{false};  ///< a signal came: no new requests
};

}  // namespace edgemm::cli::serve
