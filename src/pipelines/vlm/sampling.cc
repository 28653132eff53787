// Token sampling: transformers' generation logits processors and warpers (see sampling.h).
#include "pipelines/vlm/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace edgemm::vlm {
namespace {

Status invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

/// Ids whose logit is >= the k-th largest (all ids when k is 0 or >= vocab).
std::vector<int32_t> top_k_ids(std::span<const float> logits, int k) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  if (k == 0 || static_cast<size_t>(k) >= logits.size()) return ids;
  std::vector<float> sorted(logits.begin(), logits.end());
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<float>());
  const float kth = sorted[static_cast<size_t>(k - 1)];
  std::erase_if(ids, [&](int32_t id) { return logits[static_cast<size_t>(id)] < kth; });
  return ids;
}

/// Softmax of logits / temperature over `ids`, in the order of `ids`.
std::vector<TokenProbability> softmax(std::span<const float> logits, const std::vector<int32_t>& ids,
                                      double temperature) {
  double max_logit = -std::numeric_limits<double>::infinity();
  for (int32_t id : ids) max_logit = std::max(max_logit, static_cast<double>(logits[static_cast<size_t>(id)]));
  std::vector<TokenProbability> out;
  double sum = 0;
  for (int32_t id : ids) {
    const double p = std::exp((static_cast<double>(logits[static_cast<size_t>(id)]) - max_logit) / temperature);
    out.push_back({id, p});
    sum += p;
  }
  for (auto& t : out) t.probability /= sum;
  return out;
}

/// Keeps the most probable tokens while the mass before each is < top_p (ties: lowest id first).
void apply_top_p(std::vector<TokenProbability>& dist, double top_p) {
  std::stable_sort(dist.begin(), dist.end(),
                   [](const auto& a, const auto& b) { return a.probability > b.probability; });
  double before = 0;
  size_t keep = 0;
  while (keep < dist.size() && (keep == 0 || before < top_p)) before += dist[keep++].probability;
  dist.resize(keep);
  double sum = 0;
  for (const auto& t : dist) sum += t.probability;
  for (auto& t : dist) t.probability /= sum;
  std::sort(dist.begin(), dist.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
}

}  // namespace

Status validate(const SamplingOptions& o) {
  if (!(o.temperature >= 0)) return invalid("sampling: temperature must be >= 0, got " + std::to_string(o.temperature));
  if (o.top_k < 0) return invalid("sampling: top_k must be >= 0 (0 disables it), got " + std::to_string(o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1))
    return invalid("sampling: top_p must be in (0, 1] (1 disables it), got " + std::to_string(o.top_p));
  if (!(o.repetition_penalty > 0))
    return invalid("sampling: repetition_penalty must be > 0 (1 disables it), got " +
                   std::to_string(o.repetition_penalty));
  return Status::ok();
}

bool is_greedy(const SamplingOptions& o) { return !o.do_sample || o.temperature == 0; }

Status apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> context, float penalty) {
  const auto vocab = static_cast<int64_t>(logits.size());
  for (int32_t id : context)
    if (id < 0 || id >= vocab)
      return invalid("sampling: context id " + std::to_string(id) + " is outside the vocabulary [0, " +
                     std::to_string(vocab) + ")");
  if (penalty == 1.0f) return Status::ok();
  std::vector<int32_t> ids(context.begin(), context.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int32_t id : ids) {
    float& x = logits[static_cast<size_t>(id)];
    x = x < 0 ? x * penalty : x / penalty;
  }
  return Status::ok();
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::vector<TokenProbability> sampling_distribution(std::span<const float> logits, const SamplingOptions& options) {
  std::vector<TokenProbability> dist = softmax(logits, top_k_ids(logits, options.top_k), options.temperature);
  if (options.top_p < 1.0f) apply_top_p(dist, options.top_p);
  return dist;
}

Expected<Sampler> Sampler::create(const SamplingOptions& options) {
  EDGEMM_RETURN_IF_ERROR(validate(options));
  return Sampler(options);
}

Expected<int32_t> Sampler::next(std::span<const float> logits, std::span<const int32_t> context) {
  if (logits.empty()) return invalid("sampling: the logits are empty");
  bool finite = false;
  for (float x : logits) {
    if (std::isnan(x)) return invalid("sampling: the logits contain NaN");
    finite = finite || std::isfinite(x);
  }
  if (!finite) return invalid("sampling: no logit is finite");
  scratch_.assign(logits.begin(), logits.end());
  EDGEMM_RETURN_IF_ERROR(apply_repetition_penalty(scratch_, context, options_.repetition_penalty));
  if (is_greedy(options_)) return argmax(scratch_);
  const std::vector<TokenProbability> dist = sampling_distribution(scratch_, options_);
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  double cumulative = 0;
  for (const auto& t : dist) {
    cumulative += t.probability;
    if (u < cumulative) return t.id;
  }
  return dist.back().id;  // u within rounding of 1
}

}  // namespace edgemm::vlm
