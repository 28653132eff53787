/// edgemm.quantize and edgemm.convert: the model tools of `edgemm quantize` and `edgemm convert`
/// (edgemm/tools/quantize.h, edgemm/tools/convert.h) for Python, with calibration data given as
/// numpy feeds or a folder of .npy files.

#include <pybind11/stl.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bindings.h"
#include "common.h"
#include "edgemm/cpu.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/convert.h"
#include "edgemm/tools/quantize.h"

namespace edgemm::python {
namespace {

namespace fs = std::filesystem;

/// Refuses an output path that is the model (or one of its external data files): the model
/// would be overwritten while it is still needed.
void check_output(const std::string& model, const std::string& output) {
  std::error_code ec;
  if (output.empty()) throw_status(make_error(StatusCode::kInvalidArgument, "the output path is empty"));
  if (fs::exists(output, ec) && fs::equivalent(model, output, ec)) {
    throw_status(make_error(StatusCode::kInvalidArgument, "the output '" + output + "' is the model itself"));
  }
}

int64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

py::dict convert_report(const convert::ConvertReport& r) {
  py::dict d;
  d["source_opset"] = r.source_opset;
  d["target_opset"] = r.target_opset;
  d["nodes_before"] = r.nodes_before;
  d["nodes_after"] = r.nodes_after;
  d["folded_nodes"] = r.folded_nodes;
  d["removed_nodes"] = r.removed_nodes;
  d["rewrites"] = r.rewrites;
  d["ops_before"] = r.ops_before;
  d["ops_after"] = r.ops_after;
  return d;
}

/// Loads the model, releasing the GIL.
OnnxModel load_model(const std::string& path) {
  Expected<OnnxModel> model = make_error(StatusCode::kInternal, "not loaded");
  {
    py::gil_scoped_release release;
    model = OnnxModel::load(path);
  }
  return take(std::move(model));
}

void save_model(const OnnxModel& model, const std::string& path) {
  Status saved;
  {
    py::gil_scoped_release release;
    saved = model.save(path);
  }
  check(saved);
}

/// Rewrites `model_path` to standard ops at `opset` (0 keeps it), `fixed_shapes` pinned and, with
/// `simplify`, shape arithmetic folded; writes `output_path` whole or not at all.
py::dict convert(const py::object& model_path, const py::object& output_path, int64_t opset,
                 const std::map<std::string, Shape>& fixed_shapes, bool simplify) {
  const std::string model = path_string(model_path), output = path_string(output_path);
  check_output(model, output);
  if (opset != 0) check(convert::check_target_opset(opset));
  OnnxModel onnx = load_model(model);
  convert::ConvertOptions options;
  options.fixed_shapes = fixed_shapes;
  options.simplify = simplify;
  options.target_opset = opset;
  check(convert::validate_fixed_shapes(onnx, fixed_shapes, "fix_shape"));
  Expected<convert::ConvertReport> report = make_error(StatusCode::kInternal, "not run");
  {
    py::gil_scoped_release release;
    report = convert::convert_model(onnx, options);
  }
  py::dict d = convert_report(take(std::move(report)));
  save_model(onnx, output);
  d["output"] = output;
  return d;
}

/// Calibration samples and the source that feeds them: numpy feeds (a list of {input: array},
/// owned copies) or a folder / manifest of .npy files for a one-input model.
struct Calibration {
  std::vector<quant::CalibrationSample> samples;
  quant::FeedSource source;
};

Calibration feeds_calibration(const py::list& feeds, const OnnxModel& model) {
  auto owned = std::make_shared<std::vector<quant::Feed>>();
  std::set<std::string> inputs;
  std::string listed;
  for (const auto& input : model.inputs()) {
    inputs.insert(input.name);
    listed += (listed.empty() ? "'" : ", '") + input.name + "'";
  }
  Calibration c;
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (!py::isinstance<py::dict>(feeds[i])) {
      throw_status(make_error(StatusCode::kInvalidArgument,
                              "calibration item " + std::to_string(i) + " must be a dict {input name: numpy array}"));
    }
    quant::Feed feed;
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(feeds[i])) {
      const std::string name = py::str(key);
      if (inputs.count(name) == 0) {
        throw_status(
            make_error(StatusCode::kInvalidArgument, "calibration item " + std::to_string(i) + " feeds input '" + name +
                                                         "', which the model does not have (inputs: " + listed + ")"));
      }
      const InputTensor t = to_tensor(value, "calibration item " + std::to_string(i) + " input '" + name + "'");
      feed.emplace_back(name, take(t.tensor.clone()));
    }
    owned->push_back(std::move(feed));
    c.samples.push_back({std::to_string(i), "default"});
  }
  c.source = [owned](const quant::CalibrationSample& s) -> Expected<std::vector<quant::Feed>> {
    return std::vector<quant::Feed>{(*owned)[std::stoul(s.path)]};
  };
  return c;
}

Calibration npy_calibration(const std::string& set, const std::string& model_path, const OnnxModel& model, int count,
                            uint64_t seed) {
  Calibration c;
  c.source = take(quant::npy_feed_source(model_path, model));
  const std::vector<quant::CalibrationSample> all = take(quant::load_calibration_set(set));
  quant::SamplingOptions sampling;
  sampling.count = count;
  sampling.seed = seed;
  quant::SamplingReport report;
  c.samples = take(quant::stratified_sample(all, sampling, report));
  for (const quant::CalibrationSample& s : c.samples) {
    std::error_code ec;
    if (!fs::is_regular_file(s.path, ec)) {
      throw_status(make_error(StatusCode::kIo, "cannot read calibration file '" + s.path + "'"));
    }
    if (fs::path(s.path).extension() != ".npy") {
      throw_status(make_error(StatusCode::kInvalidArgument,
                              "calibration file '" + s.path + "' is not .npy (images need `edgemm quantize --stage`)"));
    }
  }
  return c;
}

Calibration calibration(const py::object& data, const std::string& model_path, const OnnxModel& model, int count,
                        uint64_t seed) {
  if (data.is_none()) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            "this scheme needs calibration data: a list of {input: array} or a folder of .npy files"));
  }
  if (is_path(data)) return npy_calibration(path_string(data), model_path, model, count, seed);
  return feeds_calibration(py::list(data), model);
}

py::dict int8_report(const quant::Int8Report& r) {
  py::list quantized, skipped;
  for (const auto& t : r.plan.targets) quantized.append(py::make_tuple(t.name, t.op_type));
  for (const auto& s : r.plan.skipped) skipped.append(py::make_tuple(s.node, s.reason));
  py::dict d;
  d["quantized"] = quantized;
  d["skipped"] = skipped;
  d["samples_used"] = r.samples_used;
  d["samples_skipped"] = r.samples_skipped;
  d["runs"] = r.runs;
  d["float_nodes"] = r.mixed.float_nodes;
  d["predicted_sqnr_db"] = r.predicted.sqnr_db;
  return d;
}

/// Quantizes `model_path` with `scheme` (int8, mixed, int4-weight, fp16) into `output_path`.
/// `options` holds the keyword arguments edgemm.quantize documents.
py::dict quantize(const py::object& model_path, const py::object& output_path, const std::string& scheme,
                  const py::object& calibration_data, const py::dict& options) {
  const std::string model = path_string(model_path), output = path_string(output_path);
  check_output(model, output);
  auto get = [&options](const char* key, auto fallback) {
    using T = decltype(fallback);
    return options.contains(key) && !options[key].is_none() ? option_cast<T>(options[key], key, "a valid value")
                                                            : fallback;
  };
  const int threads = get("threads", 0);
  const int count = get("samples", 256);
  if (count < 1 || count > 1000000) {
    throw_status(
        make_error(StatusCode::kInvalidArgument, "samples must be in [1, 1000000], got " + std::to_string(count)));
  }
  const auto seed = get("seed", uint64_t{0});
  py::dict d;
  d["scheme"] = scheme;
  OnnxModel onnx = load_model(model);
  if (scheme == "fp16") {
    Expected<int> converted = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      converted = quant::store_weights_fp16(onnx);
    }
    d["weights_converted"] = take(std::move(converted));
  } else if (scheme == "int4-weight") {
    quant::Int4Options o;
    o.block_size = get("block_size", int64_t{32});
    o.accuracy_level = get("accuracy_level", int64_t{0});
    const auto exclude = get("exclude_nodes", std::vector<std::string>{});
    o.exclude_nodes.insert(exclude.begin(), exclude.end());
    o.awq = get("awq", false);
    o.calibrate.threads = threads;
    Calibration c;
    if (o.awq) c = calibration(calibration_data, model, onnx, count, seed);
    Expected<quant::Int4Report> report = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      report = quant::quantize_int4_weights(onnx, o, c.samples, c.source);
    }
    const quant::Int4Report r = take(std::move(report));
    py::list skipped;
    for (const auto& s : r.skipped) skipped.append(py::make_tuple(s.node, s.reason));
    d["quantized"] = r.quantized;
    d["skipped"] = skipped;
  } else if (scheme == "int8" || scheme == "mixed") {
    quant::Int8QuantizeOptions o;
    o.method = take(quant::parse_method(get("method", std::string("mse"))));
    o.percentile = get("percentile", 99.99);
    o.qdq.per_channel = get("per_channel", true);
    const bool vnni = cpu_features().avx512_vnni;
    o.qdq.reduce_range = get("reduce_range", !vnni);
    o.qdq.quantize_depthwise = get("quantize_depthwise", vnni);
    o.qdq.symmetric_activations = get("activation_type", std::string("uint8")) == "int8";
    const auto ops = get("op_types", std::vector<std::string>{});
    if (!ops.empty()) o.qdq.op_types = std::set<std::string>(ops.begin(), ops.end());
    const auto exclude = get("exclude_nodes", std::vector<std::string>{});
    o.qdq.exclude_nodes.insert(exclude.begin(), exclude.end());
    o.speed_check = get("speed_check", true);
    o.calibrate.threads = threads;
    if (scheme == "mixed") {
      o.budget_db = get("budget_db", 30.0);
      if (!(o.budget_db > 0 && o.budget_db <= 1000)) {
        throw_status(make_error(StatusCode::kInvalidArgument,
                                "budget_db must be in (0, 1000] dB, got " + std::to_string(o.budget_db)));
      }
    }
    const Calibration c = calibration(calibration_data, model, onnx, count, seed);
    Expected<quant::Int8Report> report = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      report = quant::quantize_int8(onnx, c.samples, c.source, o);
    }
    d.attr("update")(int8_report(take(std::move(report))));
    d["weight_bits"] = o.qdq.reduce_range ? 7 : 8;
  } else {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            "scheme must be int8, mixed, int4-weight or fp16, got \"" + scheme + "\""));
  }
  save_model(onnx, output);
  d["output"] = output;
  d["bytes_before"] = file_bytes(model);
  d["bytes_after"] = file_bytes(output);
  return d;
}

}  // namespace

void bind_tools(py::module_& m) {
  m.def("_convert", &convert, py::arg("model"), py::arg("output"), py::arg("opset"), py::arg("fix_shape"),
        py::arg("simplify"));
  m.def("_quantize", &quantize, py::arg("model"), py::arg("output"), py::arg("scheme"), py::arg("calibration"),
        py::arg("options"));
}

}  // namespace edgemm::python
