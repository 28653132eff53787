/// \file quantize.cc
/// The quantization schemes of `edgemm quantize` (see quantize.h).

#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "passes/graph_view.h"
#include "quant/speed_check.h"

namespace edgemm::quant {

Status prepare_for_quantization(ir::Model& model, const std::map<std::string, Shape>& probe,
                                convert::ConvertReport& report) {
  convert::ConvertOptions options;
  options.rank_probe_shapes = probe;
  options.simplify = true;
  options.target_opset = std::max<int64_t>(13, model.opset(""));
  return convert::convert_model(model, options, report);
}

namespace {

// "no node can be quantized: Conv ×3 (depthwise ...), MatMul ×1 (...)"
std::string nothing_to_quantize(const QuantPlan& plan, const Int8Options& options) {
  std::map<std::string, int> reasons;
  for (const SkippedNode& s : plan.skipped) ++reasons[s.op_type + ": " + s.reason];
  std::string text = "the model has no node edgemm can quantize to int8 (op types:";
  for (const auto& op : options.op_types) text += " " + op;
  text += ")";
  for (const auto& [reason, n] : reasons) text += "; " + std::to_string(n) + "× " + reason;
  return text;
}

// The first feed of the first sample the source can feed (empty when none can).
Feed first_feed(const std::vector<CalibrationSample>& samples, const FeedSource& source) {
  for (const CalibrationSample& s : samples) {
    Expected<std::vector<Feed>> feeds = source(s);
    if (feeds && !feeds->empty()) return feeds->front();
  }
  return {};
}

}  // namespace

Status quantize_int8(ir::Model& model, const std::vector<CalibrationSample>& samples, const FeedSource& source,
                     const Int8QuantizeOptions& options, Int8Report& report) {
  if (!(options.percentile > 50.0 && options.percentile <= 100.0)) {
    return make_error(StatusCode::kInvalidArgument,
                      "percentile must be in (50, 100], got " + std::to_string(options.percentile));
  }
  const Feed probe = first_feed(samples, source);
  std::map<std::string, Shape> probe_shapes;
  for (const auto& [name, t] : probe) probe_shapes[name] = t.shape();
  EDGEMM_RETURN_IF_ERROR(prepare_for_quantization(model, probe_shapes, report.prepare));
  report.plan = plan_int8(model.graph, options.qdq);
  if (report.plan.targets.empty()) {
    return make_error(StatusCode::kInvalidArgument, nothing_to_quantize(report.plan, options.qdq));
  }
  const std::vector<std::string> activations = report.plan.activations();
  EDGEMM_ASSIGN_OR_RETURN(CalibrationResult calibration,
                          calibrate(model, activations, samples, source, options.calibrate));
  for (const auto& [name, h] : calibration.histograms) {
    report.observed[name] = {h.min(), h.max()};
    report.ranges[name] = choose_range(h, options.method, options.percentile);
    report.non_finite_values += h.non_finite();
  }
  report.samples_used = calibration.samples_used;
  report.samples_skipped = calibration.samples_skipped;
  report.skipped_samples = calibration.skipped;
  report.runs = calibration.runs;
  report.calibration_seconds = calibration.seconds;
  if (options.speed_check && !probe.empty()) {
    ir::Model all_int8 = model;
    EDGEMM_RETURN_IF_ERROR(insert_qdq(all_int8, report.plan, report.ranges, options.qdq));
    EDGEMM_ASSIGN_OR_RETURN(report.timings, time_targets(model, all_int8, report.plan, probe, options.calibrate.threads,
                                                         options.speed_runs));
    keep_faster_targets(report.plan, report.timings);
    if (report.plan.targets.empty()) {
      return make_error(StatusCode::kInvalidArgument,
                        "no node is faster in int8 than in float on this CPU (see the timings with --json); "
                        "--no-speed-check quantizes them anyway (e.g. for an NPU)");
    }
  }
  return insert_qdq(model, report.plan, report.ranges, options.qdq);
}

Expected<int> store_weights_fp16(ir::Model& model, int64_t min_elements) {
  convert::ConvertOptions simplify;  // Constant nodes (how Paddle2ONNX stores weights) become initializers
  simplify.simplify = true;
  convert::ConvertReport ignored;
  EDGEMM_RETURN_IF_ERROR(convert::convert_model(model, simplify, ignored));
  ir::Graph& graph = model.graph;
  std::vector<std::string> names;
  for (const auto& [name, t] : graph.initializers) {
    if (t.dtype() == DataType::kFloat32 && t.element_count() >= min_elements) names.push_back(name);
  }
  if (names.empty()) {
    return make_error(StatusCode::kInvalidArgument, "the model has no float32 weights of at least " +
                                                        std::to_string(min_elements) + " elements to store as float16");
  }
  std::unordered_set<std::string> used;
  for (const auto& [name, t] : graph.initializers) used.insert(name);
  for (const auto& n : graph.nodes) used.insert(n.outputs.begin(), n.outputs.end());
  for (const auto& v : graph.inputs) used.insert(v.name);
  for (const std::string& name : names) {
    const Tensor& w = graph.initializers.at(name);
    EDGEMM_ASSIGN_OR_RETURN(Tensor half, Tensor::create(DataType::kFloat16, w.shape()));
    const float* src = w.data<float>();
    uint16_t* dst = half.data<uint16_t>();
    for (int64_t i = 0; i < w.element_count(); ++i) {
      constexpr float kHalfMax = 65504.0f;
      dst[i] = float_to_half(std::clamp(src[i], -kHalfMax, kHalfMax));
    }
    std::string stored = name + "_fp16";
    for (int i = 1; used.count(stored) != 0; ++i) stored = name + "_fp16_" + std::to_string(i);
    used.insert(stored);
    graph.initializers.erase(name);
    graph.initializers[stored] = std::move(half);
    ir::Node cast;
    cast.op_type = "Cast";
    cast.name = name + "_Cast";
    cast.inputs = {stored};
    cast.outputs = {name};
    ir::Attribute to;
    to.kind = ir::Attribute::Kind::kInt;
    to.i = static_cast<int64_t>(DataType::kFloat32);
    cast.attributes["to"] = to;
    graph.nodes.insert(graph.nodes.begin(), std::move(cast));
  }
  return static_cast<int>(names.size());
}

}  // namespace edgemm::quant
