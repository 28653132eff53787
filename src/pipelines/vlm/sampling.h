#pragma once
/// \file sampling.h
/// Next-token selection for generation, as transformers' generate() does it (GenerationConfig
/// do_sample, temperature, top_k, top_p, repetition_penalty; LogitsProcessorList order:
/// repetition penalty, then temperature, top-k, top-p, then softmax and a multinomial draw):
///  - repetition penalty (RepetitionPenaltyLogitsProcessor, CTRL paper): every id present in
///    the context has its logit divided by the penalty when positive, multiplied when negative;
///    it applies to greedy decoding too;
///  - greedy (argmax) when do_sample is false or temperature is 0; ties go to the lowest id;
///  - temperature: logits / temperature;
///  - top-k (TopKLogitsWarper): keeps the tokens whose logit is >= the k-th largest, so tokens
///    tied with the k-th are all kept (k = 0 disables);
///  - top-p (TopPLogitsWarper): tokens sorted by probability (ties: lowest id first) are kept
///    while the probability mass before them is < top_p, so the smallest such set whose mass is
///    >= top_p, and at least one token (top_p = 1 disables);
///  - the draw: u = (the next std::mt19937_64 output >> 11) * 2^-53 (uniform in [0, 1), the
///    same on every platform), then the first kept token, in increasing id order, whose
///    cumulative probability exceeds u. One generator per Sampler, seeded with `seed`, so a
///    seed fixes the whole sequence of draws.

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "edgemm/pipelines/vlm.h"
#include "edgemm/status.h"

namespace edgemm::vlm {

/// Checks the options. Errors: kInvalidArgument naming the option and its value (negative or
/// NaN temperature, top_k < 0, top_p outside (0, 1], repetition_penalty <= 0 or NaN).
Status validate(const SamplingOptions& options);

/// True when `options` select greedy decoding (do_sample false or temperature 0).
bool is_greedy(const SamplingOptions& options);

/// Applies the repetition penalty in place to `logits` ([vocab] float) for every distinct id of
/// `context`. Errors: kInvalidArgument for an id outside [0, vocab).
Status apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> context, float penalty);

/// Index of the largest logit, the lowest on ties. `logits` must not be empty.
int32_t argmax(std::span<const float> logits);

/// One token id with its probability.
struct TokenProbability {
  int32_t id;
  double probability;
};

/// The distribution a sampling step draws from: temperature, top-k and top-p applied to
/// `logits` (already penalized), softmax over the kept tokens; sorted by id, probabilities sum
/// to 1. Requires validated options with temperature > 0 and at least one finite logit.
std::vector<TokenProbability> sampling_distribution(std::span<const float> logits, const SamplingOptions& options);

/// Chooses next tokens. Holds the random generator: not thread-safe; one per generation.
class Sampler {
 public:
  /// Errors: those of validate().
  static Expected<Sampler> create(const SamplingOptions& options);

  /// The next token for `logits` ([vocab] float, the last position's row) given `context`
  /// (every id so far: prompt and generated; used by the repetition penalty).
  /// Errors: kInvalidArgument for empty logits, a NaN logit, no finite logit, or a context id
  /// outside [0, vocab).
  Expected<int32_t> next(std::span<const float> logits, std::span<const int32_t> context);

  const SamplingOptions& options() const { return options_; }

 private:
  explicit Sampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}
  SamplingOptions options_;
  std::mt19937_64 rng_;
  std::vector<float> scratch_;  ///< penalized logits
};

}  // namespace edgemm::vlm
