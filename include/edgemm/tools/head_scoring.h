#pragma once
/// \file head_scoring.h
/// Scores the attention heads of a transformer on calibration data, and picks the heads to remove
/// for passes::prune_attention_heads (edgemm/tools/prune.h). The score of head h in layer l is
/// its output contribution: the L2 norm of what the head adds to the out projection's output,
/// ‖o_h · W_o[h·d:(h+1)·d, :]‖₂ (o_h [d] the head's attention output for one token), averaged
/// over every token of every run. Removing a head removes exactly that term from the layer's
/// output, so low scores mark heads whose removal changes the residual stream least (a cheap
/// stand-in for the gradient-based importance of Michel et al., "Are Sixteen Heads Really Better
/// than One?", NeurIPS 2019; the output norm follows Kobayashi et al., "Attention is Not Only a
/// Weight", EMNLP 2020). docs/clip.md "Attention-head pruning". Library edgemm::quant.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/prune.h"

namespace edgemm::quant {

/// Per-head scores of every attention layer.
struct HeadScores {
  std::vector<passes::AttentionLayer> layers;  ///< the layers found, in order
  /// scores[l][h]: mean over runs, batch items and tokens of the head's output contribution norm
  /// (same units as the hidden states).
  std::vector<std::vector<double>> scores;
  int samples_used = 0;     ///< samples that gave at least one run
  int samples_skipped = 0;  ///< samples whose FeedSource failed
  int64_t runs = 0;         ///< model runs (feeds)
  double seconds = 0;       ///< wall time of the scoring runs
};

/// Runs a copy of `model` (normalized as prune_attention_heads normalizes it, with every layer's
/// head outputs [B, H, T, d] added as graph outputs) on each feed of each sample (through
/// `source`, as calibration does) and accumulates the scores. `model` itself is not changed.
/// Errors: those of finding the attention layers (edgemm/tools/prune.h prune_attention_heads);
/// kInvalidArgument when every sample was skipped; kOutOfMemory from the source; kInvalidModel
/// when a head output's run-time shape is not [B, H, T, d] (naming the value).
Expected<HeadScores> score_heads(const OnnxModel& model, const std::vector<CalibrationSample>& samples,
                                 const FeedSource& source, const CalibrateOptions& options);

/// How select_heads() ranks.
enum class HeadRanking {
  kPerLayer,  ///< each layer keeps its own top max(1, ⌈keep_ratio · H⌉) heads
  kGlobal,    ///< all layers compete for ⌈keep_ratio · ΣH⌉ heads (at least one per layer)
};

/// The heads to remove: the lowest-scoring ones, so that the highest-scoring share `keep_ratio`
/// stays (⌈x⌉ computed as ceil(x − 1e-6), so 0.75 · 4 keeps 3). Ties keep the lower (layer, head)
/// first. Every layer keeps at least one head. Errors: kInvalidArgument for keep_ratio outside
/// (0, 1].
Expected<passes::HeadPruningOptions> select_heads(const HeadScores& scores, double keep_ratio, HeadRanking ranking);

}  // namespace edgemm::quant
