/// \file quantize.cc
/// The quantization schemes of `edgemm quantize` (see quantize.h).

#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "convert/rewrite_context.h"
#include "ir/onnx_model_access.h"
#include "kernels/cpu/matmul_nbits.h"
#include "passes/graph_view.h"
#include "passes/passes.h"
#include "quant/awq.h"
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

// The first feed of each of the first samples the source can feed, at most `count`.
std::vector<Feed> first_feeds(const std::vector<CalibrationSample>& samples, const FeedSource& source, size_t count) {
  std::vector<Feed> feeds;
  for (size_t i = 0; i < samples.size() && feeds.size() < count; ++i) {
    Expected<std::vector<Feed>> f = source(samples[i]);
    if (f && !f->empty()) feeds.push_back(f->front());
  }
  return feeds;
}

}  // namespace

Status quantize_int8(ir::Model& model, const std::vector<CalibrationSample>& samples, const FeedSource& source,
                     const Int8QuantizeOptions& options, Int8Report& report) {
  if (!(options.percentile > 50.0 && options.percentile <= 100.0)) {
    return make_error(StatusCode::kInvalidArgument,
                      "percentile must be in (50, 100], got " + std::to_string(options.percentile));
  }
  const std::vector<Feed> measured =
      first_feeds(samples, source, static_cast<size_t>(std::max(1, options.sensitivity_feeds)));
  const Feed probe = measured.empty() ? Feed{} : measured.front();
  std::map<std::string, Shape> probe_shapes;
  for (const auto& [name, t] : probe) probe_shapes[name] = t.shape();
  EDGEMM_RETURN_IF_ERROR(prepare_for_quantization(model, probe_shapes, report.prepare));
  report.plan = plan_int8(model.graph, options.qdq);
  if (report.plan.targets.empty()) {
    return make_error(StatusCode::kInvalidArgument, nothing_to_quantize(report.plan, options.qdq));
  }
  const std::vector<std::string> activations = report.plan.activations();
  CalibrationResult calibration;
  if (options.histograms != nullptr) {
    for (const std::string& name : activations) {
      auto it = options.histograms->find(name);
      if (it == options.histograms->end()) {
        return make_error(StatusCode::kInvalidArgument,
                          "the given histograms have none for '" + name +
                              "' (were they saved from another model or with other options?)");
      }
      calibration.histograms.emplace(name, it->second);
    }
  } else {
    EDGEMM_ASSIGN_OR_RETURN(calibration, calibrate(model, activations, samples, source, options.calibrate));
  }
  for (const auto& [name, h] : calibration.histograms) {
    if (h.count() == 0 && h.non_finite() > 0) {
      return make_error(StatusCode::kInvalidArgument,
                        "calibration saw only NaN or infinite values in '" + name + "' (" +
                            std::to_string(h.non_finite()) +
                            " of them): the calibration inputs, or the model on them, give no finite range to "
                            "quantize");
    }
    report.observed[name] = {h.min(), h.max()};
    report.ranges[name] = choose_range(h, options.method, options.percentile, options.qdq.symmetric_activations);
    report.non_finite_values += h.non_finite();
  }
  report.histograms = calibration.histograms;
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
  if (options.budget_db > 0 && !measured.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(report.mixed, plan_mixed_precision(model, report.plan, report.ranges, options.qdq, measured,
                                                               options.budget_db, options.calibrate.threads));
    keep_in_float(report.plan, report.mixed.float_nodes, "sensitive: kept in float for the error budget");
    if (report.plan.targets.empty()) {
      return make_error(StatusCode::kInvalidArgument,
                        "the error budget of " + std::to_string(options.budget_db) +
                            " dB leaves no node in int8 (the most sensitive alone measured " +
                            std::to_string(report.mixed.layers.front().error.sqnr_db) + " dB); lower --budget");
    }
  }
  if (!measured.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(report.predicted, measure_output_error(model, report.plan, report.ranges, options.qdq,
                                                                   measured, options.calibrate.threads));
    report.measured_feeds = static_cast<int>(measured.size());
  }
  return insert_qdq(model, report.plan, report.ranges, options.qdq);
}

namespace {

// Why MatMul `node` cannot become MatMulNBits ("" when it can).
std::string int4_refusal(const ir::Graph& graph, const ir::Node& node, const Int4Options& options) {
  if (options.exclude_nodes.count(node.name) != 0) return "excluded by the user";
  if (node.inputs.size() != 2 || passes::constant(graph, node.inputs[0]) != nullptr) {
    return "its first input is a constant";
  }
  const Tensor* b = passes::constant(graph, node.inputs[1]);
  if (b == nullptr || b->dtype() != DataType::kFloat32)
    return "its B is not a float32 constant (activation × activation)";
  if (b->rank() != 2) return "its B has rank " + std::to_string(b->rank()) + " (2 needed)";
  return "";
}

// `bytes` as a uint8 tensor of `shape`.
Expected<Tensor> uint8_tensor(const std::vector<uint8_t>& bytes, const Shape& shape) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kUInt8, shape));
  std::copy(bytes.begin(), bytes.end(), t.data<uint8_t>());
  return t;
}

// The activation statistics of the A input of every MatMul in `matmuls` (by A's name).
Expected<std::map<std::string, ActivationStats>> activation_stats(const ir::Model& model,
                                                                  const std::vector<size_t>& matmuls,
                                                                  const std::vector<CalibrationSample>& samples,
                                                                  const FeedSource& source, const Int4Options& options,
                                                                  Int4Report& report) {
  std::map<std::string, ActivationStats> stats;
  std::vector<std::string> values;
  for (size_t i : matmuls) {
    const ir::Node& node = model.graph.nodes[i];
    const int64_t k = model.graph.initializers.at(node.inputs[1]).dim(0);
    if (stats.emplace(node.inputs[0], ActivationStats(k)).second) values.push_back(node.inputs[0]);
  }
  EDGEMM_ASSIGN_OR_RETURN(CalibrationResult counts,
                          observe(model, values, samples, source, options.calibrate,
                                  [&](size_t i, const Tensor& t) { stats.at(values[i]).add(t); }));
  report.samples_used = counts.samples_used;
  return stats;
}

// MatMulNBits' B, scales and zero points, as initializers of the graph that holds them.
struct PackedWeight {
  int64_t k = 0, n = 0;
  std::string codes, scales, zero_points;
};

// Packs `weight` [k, n] into initializers of `holder` named after `base`.
Expected<PackedWeight> add_packed_weight(ir::Graph& holder, const std::string& base, const std::vector<float>& weight,
                                         int64_t k, int64_t n, int64_t block_size) {
  EDGEMM_ASSIGN_OR_RETURN(kernels::PackedNBits packed, kernels::pack_matmul_nbits(weight.data(), k, n, block_size));
  const kernels::MatMulNBitsShape& shape = packed.shape;
  EDGEMM_ASSIGN_OR_RETURN(Tensor codes, uint8_tensor(packed.b, {n, shape.k_blocks(), shape.blob_size()}));
  EDGEMM_ASSIGN_OR_RETURN(Tensor zero_points, uint8_tensor(packed.zero_points, {n, shape.zero_point_row_bytes()}));
  Tensor scales = Tensor::from_floats({n, shape.k_blocks()}, packed.scales);
  PackedWeight w;
  w.k = k;
  w.n = n;
  w.codes = passes::add_initializer(holder, base + "_int4", std::move(codes));
  w.scales = passes::add_initializer(holder, base + "_scales", std::move(scales));
  w.zero_points = passes::add_initializer(holder, base + "_zero_points", std::move(zero_points));
  return w;
}

// Turns MatMul `node` into MatMulNBits reading `a` and the packed weight `w`.
void make_matmul_nbits(ir::Node& node, const std::string& a, const PackedWeight& w, const Int4Options& options) {
  node.domain = "com.microsoft";
  node.op_type = "MatMulNBits";
  node.inputs = {a, w.codes, w.scales, w.zero_points};
  node.attributes = {{"K", convert::int_attribute(w.k)},
                     {"N", convert::int_attribute(w.n)},
                     {"bits", convert::int_attribute(4)},
                     {"block_size", convert::int_attribute(options.block_size)}};
  if (options.accuracy_level != 0) node.attributes["accuracy_level"] = convert::int_attribute(options.accuracy_level);
}

// Rewrites MatMul `node` (B a float32 [K, N] initializer) as MatMulNBits; with `awq` scales,
// reads A / s through a new Mul and packs diag(s) · B.
Status to_matmul_nbits(ir::Graph& graph, ir::Node& node, const Int4Options& options, const std::vector<float>* awq,
                       std::vector<ir::Node>& added) {
  const Tensor& b = graph.initializers.at(node.inputs[1]);
  const int64_t k = b.dim(0), n = b.dim(1);
  std::vector<float> weight(b.data<float>(), b.data<float>() + k * n);
  std::string a = node.inputs[0];
  if (awq != nullptr) {
    std::vector<float> inverse(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      inverse[i] = 1.0f / (*awq)[i];
      for (int64_t j = 0; j < n; ++j) weight[i * n + j] *= (*awq)[i];
    }
    const std::string inv =
        passes::add_initializer(graph, node.name + "_awq_inverse_scale", Tensor::from_floats({k}, inverse));
    ir::Node mul;
    mul.op_type = "Mul";
    mul.name = node.name + "_awq";
    mul.inputs = {a, inv};
    mul.outputs = {node.name + "_awq_input"};
    a = mul.outputs[0];
    added.push_back(std::move(mul));
  }
  EDGEMM_ASSIGN_OR_RETURN(PackedWeight w, add_packed_weight(graph, node.inputs[1], weight, k, n, options.block_size));
  make_matmul_nbits(node, a, w, options);
  return Status::ok();
}

// A MatMul inside a subgraph (an If branch, a Loop or Scan body) of a main-graph node.
struct BodyMatMul {
  ir::Graph* body = nullptr;
  size_t index = 0;
  std::string where;  // "<node>.<attribute>"
};

// The MatMuls of the main graph's subgraphs whose B is a float32 [K, N] initializer of the main
// graph that the subgraph does not hide: Optimum's merged decoders keep the weights shared by
// both If branches there. The others go to `skipped` with the reason.
std::vector<BodyMatMul> body_matmuls(ir::Graph& graph, const Int4Options& options, std::vector<SkippedNode>& skipped) {
  std::vector<BodyMatMul> found;
  for (ir::Node& outer : graph.nodes) {
    for (auto& [key, attr] : outer.attributes) {
      if (attr.kind != ir::Attribute::Kind::kGraph || !attr.g) continue;
      ir::Graph& body = *attr.g;
      std::unordered_set<std::string> local;  // names defined in the body hide the main graph's
      for (const auto& v : body.inputs) local.insert(v.name);
      for (const auto& [name, t] : body.initializers) local.insert(name);
      for (const auto& n : body.nodes) local.insert(n.outputs.begin(), n.outputs.end());
      const std::string where = outer.name + "." + key;
      for (size_t i = 0; i < body.nodes.size(); ++i) {
        const ir::Node& node = body.nodes[i];
        if (!node.domain.empty() || node.op_type != "MatMul") continue;
        std::string refusal;
        const Tensor* b = node.inputs.size() == 2 && local.count(node.inputs[1]) == 0
                              ? passes::constant(graph, node.inputs[1])
                              : nullptr;
        if (options.exclude_nodes.count(node.name) != 0) {
          refusal = "excluded by the user";
        } else if (b == nullptr || b->dtype() != DataType::kFloat32) {
          refusal = "its B is not a float32 initializer of the main graph";
        } else if (b->rank() != 2) {
          refusal = "its B has rank " + std::to_string(b->rank()) + " (2 needed)";
        } else if (options.awq) {
          refusal = "inside " + where + ": --awq measures main-graph activations only";
        }
        if (refusal.empty()) {
          found.push_back({&body, i, where});
        } else {
          skipped.push_back({node.describe() + " (in " + where + ")", node.op_type, refusal});
        }
      }
    }
  }
  return found;
}

}  // namespace

Status quantize_int4_weights(ir::Model& model, const Int4Options& options, Int4Report& report,
                             const std::vector<CalibrationSample>& samples, const FeedSource& source) {
  const int64_t bs = options.block_size;
  if (bs != 16 && bs != 32 && bs != 64 && bs != 128) {
    return make_error(StatusCode::kInvalidArgument, "block size must be 16, 32, 64 or 128, got " + std::to_string(bs));
  }
  if (options.accuracy_level < 0 || options.accuracy_level > 4) {
    return make_error(StatusCode::kInvalidArgument,
                      "accuracy level must be 0, 1, 2, 3 or 4, got " + std::to_string(options.accuracy_level));
  }
  convert::ConvertOptions simplify;  // the opset stays: MatMulNBits lives in its own domain
  simplify.simplify = true;
  EDGEMM_RETURN_IF_ERROR(convert::convert_model(model, simplify, report.prepare));
  ir::Graph& graph = model.graph;
  std::vector<size_t> matmuls;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (!node.domain.empty() || node.op_type != "MatMul") continue;
    const std::string refusal = int4_refusal(graph, node, options);
    if (refusal.empty()) {
      matmuls.push_back(i);
    } else {
      report.skipped.push_back({node.describe(), node.op_type, refusal});
    }
  }
  const std::vector<BodyMatMul> in_bodies = body_matmuls(graph, options, report.skipped);
  if (matmuls.empty() && in_bodies.empty()) {
    std::string reasons;
    for (const SkippedNode& s : report.skipped) reasons += "; " + s.node + ": " + s.reason;
    return make_error(StatusCode::kInvalidArgument,
                      "the model has no MatMul with a constant float32 [K, N] weight to store in int4" + reasons);
  }
  std::map<std::string, ActivationStats> stats;
  if (options.awq) {
    EDGEMM_ASSIGN_OR_RETURN(stats, activation_stats(model, matmuls, samples, source, options, report));
  }
  std::vector<ir::Node> added;
  for (size_t i : matmuls) {
    ir::Node& node = graph.nodes[i];
    std::optional<AwqChoice> choice;
    if (options.awq) {
      EDGEMM_ASSIGN_OR_RETURN(choice,
                              choose_awq_scales(stats.at(node.inputs[0]), graph.initializers.at(node.inputs[1]), bs));
      report.awq.push_back({node.name, choice->alpha, choice->error, choice->plain_error});
    }
    const bool scaled = choice && choice->alpha > 0;
    EDGEMM_RETURN_IF_ERROR(to_matmul_nbits(graph, node, options, scaled ? &choice->scales : nullptr, added));
    report.quantized.push_back(node.describe());
  }
  std::map<std::string, PackedWeight> packed;  // main-graph weight name -> packed once, shared by the bodies
  for (const BodyMatMul& m : in_bodies) {
    ir::Node& node = m.body->nodes[m.index];
    const std::string& b_name = node.inputs[1];
    auto it = packed.find(b_name);
    if (it == packed.end()) {
      const Tensor& b = graph.initializers.at(b_name);
      const int64_t k = b.dim(0), n = b.dim(1);
      const std::vector<float> weight(b.data<float>(), b.data<float>() + k * n);
      EDGEMM_ASSIGN_OR_RETURN(PackedWeight w, add_packed_weight(graph, b_name, weight, k, n, bs));
      it = packed.emplace(b_name, std::move(w)).first;
    }
    make_matmul_nbits(node, node.inputs[0], it->second, options);
    report.quantized.push_back(node.describe() + " (in " + m.where + ")");
  }
  for (ir::Node& n : added) graph.nodes.push_back(std::move(n));
  passes::sort_topologically(graph);
  model.opsets["com.microsoft"] = 1;
  passes::PassReport dead;
  passes::eliminate_dead_nodes(graph, dead);
  return Status::ok();
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
    cast.attributes["to"] = convert::int_attribute(static_cast<int64_t>(DataType::kFloat32));
    graph.nodes.insert(graph.nodes.begin(), std::move(cast));
  }
  return static_cast<int>(names.size());
}

Expected<Int8Report> quantize_int8(OnnxModel& model, const std::vector<CalibrationSample>& samples,
                                   const FeedSource& source, const Int8QuantizeOptions& options) {
  Int8Report report;
  EDGEMM_RETURN_IF_ERROR(quantize_int8(ir::model_of(model), samples, source, options, report));
  return report;
}

Expected<Int4Report> quantize_int4_weights(OnnxModel& model, const Int4Options& options,
                                           const std::vector<CalibrationSample>& samples, const FeedSource& source) {
  Int4Report report;
  EDGEMM_RETURN_IF_ERROR(quantize_int4_weights(ir::model_of(model), options, report, samples, source));
  return report;
}

Expected<int> store_weights_fp16(OnnxModel& model, int64_t min_elements) {
  return store_weights_fp16(ir::model_of(model), min_elements);
}

}  // namespace edgemm::quant
