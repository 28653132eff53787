#pragma once
// Helpers shared by the graph-pass tests: run a saved model with and without passes on the same
// seeded inputs and compare every output; import and optimize a model to look at its nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"
#include "ir/onnx_import.h"
#include "passes/passes.h"

namespace edgemm::testutil {

/// `n` seeded values uniform in [lo, hi).
inline std::vector<float> seeded_values(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

/// A float32 tensor of `shape` filled with seeded values uniform in [lo, hi).
inline Tensor seeded_f32(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto t = Tensor::create(DataType::kFloat32, shape);
  EXPECT_TRUE(t.has_value());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  float* p = t->data<float>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = u(rng);
  return *t;
}

/// Runs the model at `path` with graph passes off (the reference) and on, on `inputs`, and
/// returns the largest |optimized - reference| over all outputs (relative to max(1, |ref|)).
/// Fails the test when either run fails or output shapes differ.
inline double optimized_vs_original(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    int threads = 1) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = threads;
  config.optimize = false;
  auto original = Inferencer::create(config);
  EXPECT_TRUE(original.has_value()) << original.status().message();
  config.optimize = true;
  auto optimized = Inferencer::create(config);
  EXPECT_TRUE(optimized.has_value()) << optimized.status().message();
  if (!original.has_value() || !optimized.has_value()) return INFINITY;
  auto want = (*original)->run(inputs);
  auto got = (*optimized)->run(inputs);
  EXPECT_TRUE(want.has_value()) << want.status().message();
  EXPECT_TRUE(got.has_value()) << got.status().message();
  if (!want.has_value() || !got.has_value() || want->size() != got->size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < want->size(); ++k) {
    const Tensor& a = (*want)[k];
    const Tensor& b = (*got)[k];
    EXPECT_EQ(a.shape(), b.shape()) << "output " << k;
    if (a.shape() != b.shape() || a.dtype() != DataType::kFloat32) return INFINITY;
    for (int64_t i = 0; i < a.element_count(); ++i) {
      const double ref = a.data<float>()[i];
      const double diff = std::fabs(static_cast<double>(b.data<float>()[i]) - ref);
      worst = std::max(worst, std::isnan(diff) ? INFINITY : diff / std::max(1.0, std::fabs(ref)));
    }
  }
  return worst;
}

/// The model at `path` after passes::optimize (the test fails on import errors). Chain
/// layouts are off unless asked for, so that tests of other passes see their own rewrites.
inline ir::Model optimized_model(const std::string& path, passes::PassReport* report = nullptr,
                                 passes::PassOptions options = passes::PassOptions{ir::ActivationLayout::kNchw}) {
  auto model = ir::import_onnx_file(path);
  EXPECT_TRUE(model.has_value()) << model.status().message();
  if (!model.has_value()) return {};
  passes::PassReport local;
  passes::optimize(*model, report != nullptr ? *report : local, options);
  return std::move(model).value();
}

/// Number of nodes of `op_type` (in `domain`) in the graph.
inline int count_ops(const ir::Graph& graph, const std::string& op_type, const std::string& domain = "") {
  return static_cast<int>(std::count_if(graph.nodes.begin(), graph.nodes.end(),
                                        [&](const ir::Node& n) { return n.op_type == op_type && n.domain == domain; }));
}

}  // namespace edgemm::testutil
