#pragma once
// Helpers shared by the int8 tests (quant_int8_test.cc, quant_int8_chain_test.cc): raw-byte
// initializers for ModelBuilder graphs and one run of a saved model with passes on or off.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgemm/inferencer.h"
#include "model_builder.h"

namespace edgemm::testutil {

/// Adds initializer `name` of ONNX `type` and `dims` holding `bytes` as raw data.
inline onnx::TensorProto* raw_initializer(testing::ModelBuilder& b, const std::string& name, int type,
                                          const std::vector<int64_t>& dims, const std::string& bytes) {
  auto* t = b.model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(bytes);
  return t;
}

/// The outputs of the model at `path` (input "x"), 2 threads, with the load-time passes on or
/// off (`optimize`); `profile`, when given, receives the per-node profile. Fails the test on
/// errors (and returns no outputs).
inline std::vector<Tensor> run_model(const std::string& path, bool optimize, const Tensor& x,
                                     std::vector<NodeProfile>* profile = nullptr) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = 2;
  config.optimize = optimize;
  auto inferencer = Inferencer::create(config);
  EXPECT_TRUE(inferencer.has_value()) << inferencer.status().message();
  if (!inferencer.has_value()) return {};
  auto run = (*inferencer)->run_profiled({{"x", x}});
  EXPECT_TRUE(run.has_value()) << run.status().message();
  if (!run.has_value()) return {};
  if (profile != nullptr) *profile = run->nodes;
  return run->outputs;
}

}  // namespace edgemm::testutil
