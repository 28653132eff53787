// Calibration observers, quantization parameters, weight quantization and calibration sets
// (src/quant), against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "edgemm/tools/calibration.h"
#include "model_builder.h"
#include "quant/awq.h"
#include "quant/observer.h"
#include "quant/qdq.h"

namespace edgemm {
namespace quant_observer_test {  // named for the file: unity batches merge anonymous namespaces

using quant::CalibrationMethod;
using quant::TensorHistogram;

TEST(QuantHistogram, BinsHandComputed) {
  TensorHistogram h(4);
  const float v[] = {0, 1, 2, 3};
  h.add(v, 4);  // range [0, 3], width 0.75; 3 sits on the upper edge and goes to the last bin
  EXPECT_EQ(h.bins(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(h.lo(), 0.0);
  EXPECT_DOUBLE_EQ(h.bin_width(), 0.75);
}

TEST(QuantHistogram, GrowsByMergingBinPairs) {
  TensorHistogram h(4);
  const float a[] = {0, 1, 2, 3};
  h.add(a, 4);
  const float up[] = {7};
  h.add(up, 1);  // [0, 6] → {2, 2, 0, 0}, [0, 12] → {4, 0, 0, 0}, then 7 → bin 2
  EXPECT_EQ(h.bins(), (std::vector<int64_t>{4, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(h.bin_width(), 3.0);
  const float down[] = {-5};
  h.add(down, 1);  // [-12, 12]: old bins i → (4 + i) / 2 = {2, 2, 3, 3}; -5 → bin 1
  EXPECT_EQ(h.bins(), (std::vector<int64_t>{0, 1, 4, 1}));
  EXPECT_DOUBLE_EQ(h.lo(), -12.0);
  EXPECT_EQ(h.min(), -5.0f);
  EXPECT_EQ(h.max(), 7.0f);
  EXPECT_EQ(h.count(), 6);
}

TEST(QuantHistogram, NonFiniteValuesAreCountedNotBinned) {
  TensorHistogram h(8);
  const float v[] = {1, NAN, 2, INFINITY, -INFINITY};
  h.add(v, 5);
  EXPECT_EQ(h.count(), 2);
  EXPECT_EQ(h.non_finite(), 3);
  EXPECT_EQ(h.max(), 2.0f);
}

TEST(QuantHistogram, SavedHistogramsReadBackExactly) {
  TensorHistogram a(4), b(6);
  for (std::vector<float> v : {std::vector<float>{0, 1, 2, 3}, {7}, {-5}, {NAN}}) {
    a.add(v.data(), static_cast<int64_t>(v.size()));  // grown as in GrowsByMergingBinPairs, plus a NaN
  }
  const float vb[] = {0.1f, 0.2f};
  b.add(vb, 2);
  const std::string path = (testing::temp_dir("histograms") / "h.json").string();
  ASSERT_TRUE(quant::write_histograms(path, {{"a", a}, {"b", b}}).is_ok());
  auto read = quant::read_histograms(path);
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  ASSERT_EQ(read->size(), 2u);
  const TensorHistogram& ra = read->at("a");
  EXPECT_EQ(ra.bins(), (std::vector<int64_t>{0, 1, 4, 1}));
  EXPECT_DOUBLE_EQ(ra.lo(), -12.0);
  EXPECT_DOUBLE_EQ(ra.bin_width(), 6.0);
  EXPECT_EQ(ra.min(), -5.0f);
  EXPECT_EQ(ra.max(), 7.0f);
  EXPECT_EQ(ra.count(), 6);
  EXPECT_EQ(ra.non_finite(), 1);
  const TensorHistogram& rb = read->at("b");
  EXPECT_EQ(rb.bins(), b.bins());
  EXPECT_EQ(rb.lo(), b.lo());  // doubles and floats round-trip bit for bit
  EXPECT_EQ(rb.bin_width(), b.bin_width());
  EXPECT_EQ(rb.max(), 0.2f);
  // A restored histogram keeps growing like the original.
  TensorHistogram grown = ra;
  const float more[] = {20};
  grown.add(more, 1);
  a.add(more, 1);
  EXPECT_EQ(grown.bins(), a.bins());
}

TEST(QuantHistogram, RestoreRefusesInconsistentState) {
  EXPECT_FALSE(TensorHistogram::restore({1, 1, 1}, 0, 1, 0, 2, 0).has_value());  // odd bin count
  EXPECT_FALSE(TensorHistogram::restore({1, 1}, 0, 1, 0, 3, 0).has_value());     // max beyond the bins
  EXPECT_FALSE(TensorHistogram::restore({1, 1}, 0, 0, 0, 0, 0).has_value());     // zero width with values
  EXPECT_FALSE(TensorHistogram::restore({1, -1}, 0, 1, 0, 1, 0).has_value());    // negative count
  EXPECT_TRUE(TensorHistogram::restore({0, 0}, 0, 0, 0, 0, 3).has_value());      // only non-finite values
  const auto dir = testing::temp_dir("histograms_bad");
  std::ofstream(dir / "not.json") << R"({"format": "something else", "tensors": {}})";
  auto bad = quant::read_histograms((dir / "not.json").string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir / "short.json") << R"({"format": "edgemm-histograms", "version": 1, "tensors": {"x": {"lo": 0}}})";
  bad = quant::read_histograms((dir / "short.json").string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("'x'"), std::string::npos);
  EXPECT_EQ(quant::read_histograms((dir / "missing.json").string()).status().code(), StatusCode::kIo);
}

TEST(QuantRange, MinMaxAndPercentileHandComputed) {
  TensorHistogram h(100);
  std::vector<float> v(100);
  for (int i = 0; i < 100; ++i) v[i] = static_cast<float>(i);
  h.add(v.data(), 100);  // width 0.99: value i in bin i
  const quant::Range mm = quant::choose_range(h, CalibrationMethod::kMinMax);
  EXPECT_EQ(mm.lo, 0.0f);
  EXPECT_EQ(mm.hi, 99.0f);
  // 99th percentile: 99 values up to bin 98 → its upper edge 99 · 0.99; 1st: first bin past
  // one value is bin 1 → its lower edge 0.99.
  const quant::Range p = quant::choose_range(h, CalibrationMethod::kPercentile, 99.0);
  EXPECT_NEAR(p.lo, 0.99, 1e-4);
  EXPECT_NEAR(p.hi, 98.01, 1e-4);
}

// ReLU-like: 90 % of the values exactly 0, the rest exponential (mean 1, max ~9). The KL threshold
// keeps most of the tail (about 6 by a NumPy model of the same algorithm); with the zero spike
// counted it fell to 1.1 (128 levels) or 2.3 (256): NVIDIA's pytorch-quantization replaces the
// first bin by the second for that reason. uint8 activations get 256 levels, int8 ones 128.
TEST(QuantRange, EntropyIgnoresTheZeroSpike) {
  std::mt19937 rng(5);
  std::exponential_distribution<float> exponential(1.0f);
  std::vector<float> v(40000, 0.0f);
  for (size_t i = 0; i < v.size() / 10; ++i) v[i] = exponential(rng);
  TensorHistogram h;
  h.add(v.data(), static_cast<int64_t>(v.size()));
  for (const bool symmetric : {false, true}) {
    const quant::Range e = quant::choose_range(h, CalibrationMethod::kEntropy, 99.99, symmetric);
    EXPECT_EQ(e.lo, 0.0f);
    EXPECT_GT(e.hi, 4.0f) << "symmetric " << symmetric;
    EXPECT_LT(e.hi, h.max()) << "symmetric " << symmetric;
  }
}

// Normal values plus a few far outliers: entropy clips them away; MSE keeps them, since clipping
// five values from 60 to a few units costs more squared error than the finer steps save.
TEST(QuantRange, EntropyAndMseClipOutliers) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(20000);
  for (float& x : v) x = normal(rng);
  for (int i = 0; i < 5; ++i) v[i] = 60.0f;
  TensorHistogram h;
  h.add(v.data(), static_cast<int64_t>(v.size()));
  const quant::Range e = quant::choose_range(h, CalibrationMethod::kEntropy);
  const quant::Range m = quant::choose_range(h, CalibrationMethod::kMse);
  EXPECT_GT(e.hi, 2.0f);
  EXPECT_LT(e.hi, 20.0f);
  EXPECT_LT(e.lo, -2.0f);
  EXPECT_GT(m.hi, 50.0f);
  EXPECT_EQ(quant::choose_range(h, CalibrationMethod::kMinMax).hi, 60.0f);
}

TEST(QuantParams, HandComputed) {
  const quant::QuantParams a = quant::asymmetric_uint8({-1.0f, 3.0f});
  EXPECT_FLOAT_EQ(a.scale, 4.0f / 255.0f);
  EXPECT_EQ(a.zero_point, 64);                                                // round(1 / (4 / 255)) = round(63.75)
  const quant::QuantParams positive = quant::asymmetric_uint8({1.0f, 3.0f});  // widened to [0, 3]
  EXPECT_FLOAT_EQ(positive.scale, 3.0f / 255.0f);
  EXPECT_EQ(positive.zero_point, 0);
  const quant::QuantParams zero = quant::asymmetric_uint8({0.0f, 0.0f});
  EXPECT_EQ(zero.scale, 1.0f);
  EXPECT_EQ(zero.zero_point, 0);
  const quant::QuantParams s = quant::symmetric_int8({-2.0f, 1.0f});
  EXPECT_FLOAT_EQ(s.scale, 2.0f / 127.0f);
  EXPECT_EQ(s.zero_point, 0);
  EXPECT_FLOAT_EQ(quant::symmetric_int8({-2.0f, 1.0f}, 64).scale, 2.0f / 64.0f);
}

TEST(QuantWeights, PerChannelSymmetricHandComputed) {
  // [2, 1, 1, 2]: channel 0 {1, -2} (scale 2/127), channel 1 {0.5, 0.25} (scale 0.5/127).
  const Tensor w = Tensor::from_floats({2, 1, 1, 2}, {1.0f, -2.0f, 0.5f, 0.25f});
  auto q = quant::quantize_weight(w, 0, 127);
  ASSERT_TRUE(q.has_value()) << q.status().message();
  EXPECT_FLOAT_EQ(q->scales.data<float>()[0], 2.0f / 127.0f);
  EXPECT_FLOAT_EQ(q->scales.data<float>()[1], 0.5f / 127.0f);
  const int8_t* v = q->values.data<int8_t>();
  EXPECT_EQ(v[0], 64);  // 63.5 rounds half to even
  EXPECT_EQ(v[1], -127);
  EXPECT_EQ(v[2], 127);
  EXPECT_EQ(v[3], 64);
  // MatMul weight [K, N] = [2, 2] per column (axis 1): columns {1, 0.5} and {-2, 0.25}.
  auto cols = quant::quantize_weight(Tensor::from_floats({2, 2}, {1.0f, -2.0f, 0.5f, 0.25f}), 1, 64);
  ASSERT_TRUE(cols.has_value());
  EXPECT_FLOAT_EQ(cols->scales.data<float>()[0], 1.0f / 64.0f);
  EXPECT_FLOAT_EQ(cols->scales.data<float>()[1], 2.0f / 64.0f);
  EXPECT_EQ(cols->values.data<int8_t>()[0], 64);
  EXPECT_EQ(cols->values.data<int8_t>()[1], -64);
  EXPECT_EQ(cols->values.data<int8_t>()[2], 32);
  EXPECT_EQ(cols->values.data<int8_t>()[3], 8);
  EXPECT_FALSE(quant::quantize_weight(Tensor::from_int64s({2}, {1, 2}), 0, 127).has_value());
}

void touch(const std::filesystem::path& p) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}

TEST(QuantCalibrationSet, DirectoryScenesAndManifest) {
  const auto dir = testing::temp_dir("calib_set");
  touch(dir / "top.png");
  touch(dir / "indoor" / "a.jpg");
  touch(dir / "indoor" / "b.JPEG");
  touch(dir / "outdoor" / "c.npy");
  touch(dir / "outdoor" / "notes.txt");
  auto set = quant::load_calibration_set(dir.string());
  ASSERT_TRUE(set.has_value()) << set.status().message();
  ASSERT_EQ(set->size(), 4u);
  EXPECT_EQ((*set)[0].scene, "indoor");
  EXPECT_EQ((*set)[2].scene, "outdoor");
  EXPECT_EQ((*set)[3].scene, "default");

  std::ofstream(dir / "m.json") << R"({"samples": [{"path": "indoor/a.jpg", "scene": "day"}, {"path": "/abs.png"}]})";
  auto manifest = quant::load_calibration_set((dir / "m.json").string());
  ASSERT_TRUE(manifest.has_value()) << manifest.status().message();
  EXPECT_EQ((*manifest)[0].path, "/abs.png");
  EXPECT_EQ((*manifest)[0].scene, "default");
  EXPECT_EQ((*manifest)[1].path, (dir / "indoor/a.jpg").string());
  EXPECT_EQ((*manifest)[1].scene, "day");

  std::ofstream(dir / "bad.json") << R"({"samples": [{"scene": "x"}]})";
  auto bad = quant::load_calibration_set((dir / "bad.json").string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("sample 0"), std::string::npos);
  std::filesystem::create_directories(dir / "empty");
  auto empty = quant::load_calibration_set((dir / "empty").string());
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.status().message().find("no samples"), std::string::npos);
  EXPECT_EQ(quant::load_calibration_set((dir / "missing").string()).status().code(), StatusCode::kIo);
  std::filesystem::remove_all(dir);
}

std::vector<quant::CalibrationSample> scenes(int indoor, int outdoor) {
  std::vector<quant::CalibrationSample> set;
  for (int i = 0; i < indoor; ++i) set.push_back({"in" + std::to_string(i), "indoor"});
  for (int i = 0; i < outdoor; ++i) set.push_back({"out" + std::to_string(i), "outdoor"});
  return set;
}

TEST(QuantCalibrationSet, StratifiedSamplingIsSeededAndWeighted) {
  const auto set = scenes(10, 30);
  quant::SamplingOptions o;
  o.count = 10;
  o.seed = 7;
  o.scene_weights = {{"indoor", 0.4}, {"outdoor", 0.6}};
  quant::SamplingReport r1, r2, r3;
  auto a = quant::stratified_sample(set, o, r1);
  auto b = quant::stratified_sample(set, o, r2);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(r1.drawn.at("indoor"), 4);
  EXPECT_EQ(r1.drawn.at("outdoor"), 6);
  ASSERT_EQ(a->size(), 10u);
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].path, (*b)[i].path);
  o.seed = 8;
  auto c = quant::stratified_sample(set, o, r3);
  bool differs = false;
  for (size_t i = 0; i < c->size(); ++i) differs = differs || (*c)[i].path != (*a)[i].path;
  EXPECT_TRUE(differs);
  EXPECT_TRUE(r1.warnings.empty());
}

TEST(QuantCalibrationSet, SamplingWarningsAndErrors) {
  const auto set = scenes(3, 5);
  quant::SamplingOptions o;
  o.count = 256;
  quant::SamplingReport r;
  auto all = quant::stratified_sample(set, o, r);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 8u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("has 8 samples, fewer than the 256"), std::string::npos);

  o.count = 4;
  o.scene_weights = {{"kitchen", 1.0}};
  auto unknown = quant::stratified_sample(set, o, r);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find("indoor (3), outdoor (5)"), std::string::npos);
  o.scene_weights = {{"indoor", -1.0}};
  EXPECT_FALSE(quant::stratified_sample(set, o, r).has_value());
  o.scene_weights = {{"indoor", 0.0}};
  EXPECT_FALSE(quant::stratified_sample(set, o, r).has_value());
  o.scene_weights.clear();
  o.count = 0;
  EXPECT_FALSE(quant::stratified_sample(set, o, r).has_value());

  auto weights = quant::parse_scene_weights("indoor=0.4,outdoor=0.6");
  ASSERT_TRUE(weights.has_value());
  EXPECT_DOUBLE_EQ(weights->at("outdoor"), 0.6);
  EXPECT_FALSE(quant::parse_scene_weights("indoor").has_value());
  EXPECT_FALSE(quant::parse_scene_weights("indoor=x").has_value());
  EXPECT_FALSE(quant::parse_scene_weights("=1").has_value());
}

TEST(QuantAwq, StatsHandComputed) {
  quant::ActivationStats stats(2, 2);
  stats.add(Tensor::from_floats({3, 2}, {1, -4, 3, 0, -2, 2}));
  stats.add(Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6}));  // last axis 3, not K: ignored
  EXPECT_EQ(stats.rows_seen(), 3);
  EXPECT_EQ(stats.rows_kept(), 2);
  EXPECT_EQ(stats.mean_abs(), (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(stats.rows(), (std::vector<float>{1, -4, 3, 0}));
}

// One input channel carries activations 100× the others: scaling its weights up before the
// 4-bit rounding lowers the product's error, so AWQ picks α > 0; with even activations the
// normalized scales stay 1 and nothing changes.
TEST(QuantAwq, ScalesTheChannelsThatCarryLargeActivations) {
  const int64_t k = 32, n = 8;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(k * n), x(64 * k);
  for (float& v : w) v = normal(rng);
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < k; ++c) x[r * k + c] = normal(rng) * (c == 5 ? 100.0f : 1.0f);
  }
  quant::ActivationStats skewed(k);
  skewed.add(Tensor::from_floats({64, k}, x));
  auto choice = quant::choose_awq_scales(skewed, Tensor::from_floats({k, n}, w), 32);
  ASSERT_TRUE(choice.has_value()) << choice.status().message();
  EXPECT_GT(choice->alpha, 0.0);
  EXPECT_LT(choice->error, choice->plain_error);
  EXPECT_GT(choice->scales[5], choice->scales[0]);

  quant::ActivationStats even(k);
  even.add(Tensor::from_floats({1, k}, std::vector<float>(k, 1.0f)));
  auto flat = quant::choose_awq_scales(even, Tensor::from_floats({k, n}, w), 32);
  ASSERT_TRUE(flat.has_value());
  EXPECT_DOUBLE_EQ(flat->error, flat->plain_error);
  for (float s : flat->scales) EXPECT_FLOAT_EQ(s, 1.0f);
}

}  // namespace quant_observer_test
}  // namespace edgemm
