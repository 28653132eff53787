// Token sampling (src/pipelines/vlm/sampling.h) on tiny vocabularies with hand-computed kept
// sets and probabilities.
#include "pipelines/vlm/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace sampling_test {  // named for the file: unity batches merge anonymous namespaces

using edgemm::StatusCode;
using edgemm::vlm::SamplingOptions;

/// Logits whose softmax at temperature 1 is {0.5, 0.2, 0.2, 0.1} (ids 1 and 2 tie).
std::vector<float> four_token_logits() { return {std::log(0.5f), std::log(0.2f), std::log(0.2f), std::log(0.1f)}; }

SamplingOptions sampling(float temperature, int top_k, float top_p, uint64_t seed = 0) {
  SamplingOptions o;
  o.do_sample = true;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.seed = seed;
  return o;
}

void expect_distribution(const std::vector<float>& logits, const SamplingOptions& o,
                         const std::vector<std::pair<int32_t, double>>& expected) {
  const auto dist = edgemm::vlm::sampling_distribution(logits, o);
  ASSERT_EQ(dist.size(), expected.size());
  for (size_t i = 0; i < dist.size(); ++i) {
    EXPECT_EQ(dist[i].id, expected[i].first) << i;
    EXPECT_NEAR(dist[i].probability, expected[i].second, 1e-6) << i;
  }
}

TEST(Sampling, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f};
  const std::vector<int32_t> context = {0, 1, 1};  // id 1 twice: penalized once
  ASSERT_TRUE(edgemm::vlm::apply_repetition_penalty(logits, context, 2.0f).is_ok());
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 0.5f}));
  const std::vector<int32_t> bad = {4};
  EXPECT_EQ(edgemm::vlm::apply_repetition_penalty(logits, bad, 2.0f).code(), StatusCode::kInvalidArgument);
}

TEST(Sampling, GreedyIsArgmaxWithLowestIdOnTies) {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f};
  auto greedy = edgemm::vlm::Sampler::create(SamplingOptions{});
  ASSERT_TRUE(greedy);
  EXPECT_EQ(*greedy->next(logits, {}), 1);
  // The repetition penalty applies before greedy: 3 / 4 < 2.
  SamplingOptions penalized;
  penalized.repetition_penalty = 4.0f;
  auto p = edgemm::vlm::Sampler::create(penalized);
  const std::vector<int32_t> context = {1, 2};
  EXPECT_EQ(*p->next(logits, context), 3);
}

TEST(Sampling, TemperatureZeroAndTopKOneAreArgmax) {
  const std::vector<float> logits = {0.1f, -1.0f, 2.5f, 2.4f, 0.0f};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    auto t0 = edgemm::vlm::Sampler::create(sampling(0.0f, 0, 1.0f, seed));
    auto k1 = edgemm::vlm::Sampler::create(sampling(1.5f, 1, 1.0f, seed));
    EXPECT_EQ(*t0->next(logits, {}), 2);
    EXPECT_EQ(*k1->next(logits, {}), 2);
  }
}

TEST(Sampling, TopKKeepsTiesWithTheKthLogit) {
  const auto logits = four_token_logits();
  expect_distribution(logits, sampling(1.0f, 1, 1.0f), {{0, 1.0}});
  // k = 2: the 2nd largest logit is log 0.2, shared by ids 1 and 2, so both stay: 0.5 / 0.9, ...
  expect_distribution(logits, sampling(1.0f, 2, 1.0f), {{0, 0.5 / 0.9}, {1, 0.2 / 0.9}, {2, 0.2 / 0.9}});
  expect_distribution(logits, sampling(1.0f, 0, 1.0f), {{0, 0.5}, {1, 0.2}, {2, 0.2}, {3, 0.1}});
}

TEST(Sampling, TopPKeepsTheSmallestSetReachingP) {
  const auto logits = four_token_logits();
  expect_distribution(logits, sampling(1.0f, 0, 0.45f), {{0, 1.0}});  // 0.5 >= 0.45 alone
  // 0.5 < 0.65 so the next (id 1 before id 2 on the tie) joins; 0.7 >= 0.65 stops.
  expect_distribution(logits, sampling(1.0f, 0, 0.65f), {{0, 5.0 / 7}, {1, 2.0 / 7}});
  expect_distribution(logits, sampling(1.0f, 0, 0.85f), {{0, 0.5 / 0.9}, {1, 0.2 / 0.9}, {2, 0.2 / 0.9}});
  expect_distribution(logits, sampling(1.0f, 0, 1e-6f), {{0, 1.0}});  // at least one token
}

TEST(Sampling, TemperatureScalesLogits) {
  // T = 2: p_i proportional to sqrt(q_i) for q = {0.5, 0.2, 0.2, 0.1}.
  const double s = std::sqrt(0.5) + 2 * std::sqrt(0.2) + std::sqrt(0.1);
  expect_distribution(
      four_token_logits(), sampling(2.0f, 0, 1.0f),
      {{0, std::sqrt(0.5) / s}, {1, std::sqrt(0.2) / s}, {2, std::sqrt(0.2) / s}, {3, std::sqrt(0.1) / s}});
  // Top-k 2 then top-p 0.5 at T = 2: ids {0, 1, 2} with masses sqrt(.5), sqrt(.2), sqrt(.2) over
  // their sum = {0.4415, 0.2792, 0.2792}; id 0 (0.4415 < 0.5) lets id 1 in, then 0.7208 >= 0.5 stops.
  const double s2 = std::sqrt(0.5) + std::sqrt(0.2);
  expect_distribution(four_token_logits(), sampling(2.0f, 2, 0.5f),
                      {{0, std::sqrt(0.5) / s2}, {1, std::sqrt(0.2) / s2}});
}

TEST(Sampling, SameSeedSameSequenceAndFrequencies) {
  const auto logits = four_token_logits();
  auto draw = [&](uint64_t seed, int n) {
    auto s = edgemm::vlm::Sampler::create(sampling(1.0f, 0, 1.0f, seed));
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) out.push_back(*s->next(logits, {}));
    return out;
  };
  EXPECT_EQ(draw(7, 64), draw(7, 64));
  EXPECT_NE(draw(7, 64), draw(8, 64));
  const auto many = draw(123, 20000);
  std::vector<double> freq(4, 0.0);
  for (int32_t id : many) freq[static_cast<size_t>(id)] += 1.0 / many.size();
  const double expected[] = {0.5, 0.2, 0.2, 0.1};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(freq[i], expected[i], 0.015) << i;
}

TEST(Sampling, InvalidOptionsAndInputsAreClearErrors) {
  auto err = [](SamplingOptions o) { return edgemm::vlm::Sampler::create(o).status(); };
  SamplingOptions o;
  o.temperature = -0.5f;
  EXPECT_NE(err(o).message().find("temperature"), std::string::npos);
  o = {};
  o.top_p = 0.0f;
  EXPECT_NE(err(o).message().find("top_p"), std::string::npos);
  o.top_p = 1.5f;
  EXPECT_EQ(err(o).code(), StatusCode::kInvalidArgument);
  o = {};
  o.top_k = -1;
  EXPECT_NE(err(o).message().find("top_k"), std::string::npos);
  o = {};
  o.repetition_penalty = 0.0f;
  EXPECT_NE(err(o).message().find("repetition_penalty"), std::string::npos);
  o = {};
  o.temperature = std::nanf("");
  EXPECT_EQ(err(o).code(), StatusCode::kInvalidArgument);

  auto s = edgemm::vlm::Sampler::create(SamplingOptions{});
  EXPECT_EQ(s->next({}, {}).status().code(), StatusCode::kInvalidArgument);
  const std::vector<float> nan_logits = {0.0f, std::nanf("")};
  EXPECT_NE(s->next(nan_logits, {}).status().message().find("NaN"), std::string::npos);
  const std::vector<float> inf_logits = {-INFINITY, -INFINITY};
  EXPECT_EQ(s->next(inf_logits, {}).status().code(), StatusCode::kInvalidArgument);
  const std::vector<float> logits = {0.0f, 1.0f};
  const std::vector<int32_t> context = {2};
  EXPECT_NE(s->next(logits, context).status().message().find("context id 2"), std::string::npos);
}

}  // namespace sampling_test
