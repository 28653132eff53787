#pragma once
// Helpers for the `edgemm convert` library tests: convert a saved ModelBuilder model, write the
// result, and compare both files' outputs through edgemm's engine (passes off, so the rewrite
// itself is what is compared).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "convert/convert.h"
#include "convert/onnx_checks.h"
#include "edgemm/inferencer.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

namespace edgemm::testutil {

/// The result of converting one model file.
struct Converted {
  Status status;
  ir::Model model;
  convert::ConvertReport report;
  std::string path;  ///< where the converted model was written (when status is ok)
};

/// Imports `path`, converts it with `options` and writes `<path>.converted.onnx`.
inline Converted convert_file(const std::string& path, const convert::ConvertOptions& options) {
  Converted c;
  auto model = ir::import_onnx_file(path);
  if (!model) {
    c.status = model.status();
    return c;
  }
  c.model = std::move(model).value();
  c.status = convert::convert_model(c.model, options, c.report);
  if (!c.status.is_ok()) return c;
  c.path = path + ".converted.onnx";
  c.status = ir::export_onnx_file(c.model, c.path);
  return c;
}

/// Outputs of the model at `path` on `inputs` (edgemm, graph passes off, one thread).
inline std::vector<Tensor> run_model(const std::string& path,
                                     const std::vector<std::pair<std::string, Tensor>>& inputs) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = 1;
  config.optimize = false;
  auto inferencer = Inferencer::create(config);
  EXPECT_TRUE(inferencer.has_value()) << inferencer.status().message();
  if (!inferencer) return {};
  auto outputs = (*inferencer)->run(inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().message();
  return outputs ? *outputs : std::vector<Tensor>{};
}

/// Largest absolute difference between the float32 outputs of two models on `inputs`
/// (infinite when the output counts or shapes differ).
inline double max_output_diff(const std::string& a, const std::string& b,
                              const std::vector<std::pair<std::string, Tensor>>& inputs) {
  const auto want = run_model(a, inputs);
  const auto got = run_model(b, inputs);
  if (want.empty() || want.size() != got.size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(want[k].shape(), got[k].shape()) << "output " << k;
    if (want[k].shape() != got[k].shape()) return INFINITY;
    for (int64_t i = 0; i < want[k].element_count(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(want[k].data<float>()[i] - got[k].data<float>()[i])));
    }
  }
  return worst;
}

/// Number of nodes of `op_type` in the graph.
inline int op_count(const ir::Model& model, const std::string& op_type) {
  int n = 0;
  for (const auto& node : model.graph.nodes) n += node.op_type == op_type;
  return n;
}

}  // namespace edgemm::testutil
