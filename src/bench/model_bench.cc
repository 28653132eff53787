#include "bench/model_bench.h"

#include <algorithm>
#include <sstream>

#include "edgemm/memory_check.h"
#include "ir/onnx_import.h"

namespace edgemm::bench {

namespace {

/// Base shape of `input`: given, else declared with symbolic axes as -1.
Shape base_shape(const ValueInfo& input, const InputSpec& spec) {
  auto given = spec.shapes.find(input.name);
  if (given != spec.shapes.end()) return given->second;
  Shape s;
  for (const Dim& d : input.shape) s.push_back(d.value);
  return s;
}

/// Sets the axes `key` sweeps in `shape`; false when the input has no such axis.
bool set_swept_axes(Shape& shape, const std::string& key, int64_t value) {
  const size_t rank = shape.size();
  if (key == "size" && rank == 4) {
    shape[2] = shape[3] = value;
  } else if (key == "height" && rank >= 2) {
    shape[rank - 2] = value;
  } else if (key == "width" && rank >= 2) {
    shape[rank - 1] = value;
  } else if (key == "batch" && rank >= 1) {
    shape[0] = value;
  } else {
    return false;
  }
  return true;
}

/// FLOPs of one run at these inputs, counted per node on a profiled edgemm run (ir::node_flops
/// on the actual shapes, main graph only; folded constants do not run and are not counted).
/// ONNX shape inference alone leaves many PP-OCRv4 rec nodes without shapes. 0 when edgemm
/// cannot run the model (its own result then says why).
int64_t count_point_flops(const RuntimeSetup& setup) {
  InferencerConfig config;
  config.model_path = setup.model_path;
  config.threads = 1;
  config.fixed_input_shapes = setup.fixed_shapes;
  auto inferencer = Inferencer::create(config);
  if (!inferencer) return 0;
  auto run = (*inferencer)->run_profiled(setup.inputs);
  if (!run) return 0;
  int64_t flops = 0;
  for (const NodeProfile& n : run->nodes) {
    if (n.depth == 0) flops += n.flops;
  }
  return flops;
}

Expected<BenchPoint> bench_point(const ModelBenchOptions& options, const std::vector<ValueInfo>& declared, int threads,
                                 const std::string& sweep_key, int64_t sweep_value) {
  InputSpec spec = options.inputs;
  if (!sweep_key.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(spec, apply_sweep(declared, options.inputs, sweep_key, sweep_value));
  }
  RuntimeSetup setup;
  setup.model_path = options.model;
  EDGEMM_ASSIGN_OR_RETURN(setup.inputs, make_inputs(declared, spec));
  setup.fixed_shapes = spec.shapes;
  setup.threads = threads;
  setup.reference_dir = options.reference_dir;
  setup.timeout_s = options.timeout_s;
  setup.edgemm_backend = options.edgemm_backend;

  BenchPoint point;
  point.threads = threads;
  point.sweep_key = sweep_key;
  point.sweep_value = sweep_value;
  point.inputs = describe_inputs(setup.inputs);
  point.batch = setup.inputs.empty() || setup.inputs[0].second.shape().empty() ? 1 : setup.inputs[0].second.shape()[0];
  point.flops = count_point_flops(setup);
  std::vector<std::unique_ptr<BenchRuntime>> runtimes;
  for (const auto& name : options.runtimes) {
    EDGEMM_ASSIGN_OR_RETURN(auto rt, make_runtime(name, setup));
    runtimes.push_back(std::move(rt));
  }
  point.runtimes = compare_runtimes(runtimes, options.compare);
  finish_point(point);
  return point;
}

}  // namespace

Expected<Sweep> parse_sweep(const std::string& text) {
  Sweep sweep;
  const size_t eq = text.find('=');
  sweep.key = text.substr(0, eq);
  if (sweep.key != "size" && sweep.key != "height" && sweep.key != "width" && sweep.key != "batch") {
    return make_error(StatusCode::kInvalidArgument,
                      "--sweep wants size=..., height=..., width=... or batch=...; got '" + text + "'");
  }
  std::istringstream in(eq == std::string::npos ? "" : text.substr(eq + 1));
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1 || v > (int64_t{1} << 20)) {
      return make_error(StatusCode::kInvalidArgument,
                        "--sweep " + sweep.key + ": '" + item + "' is not a whole number in [1, 1048576]");
    }
    if (std::find(sweep.values.begin(), sweep.values.end(), v) != sweep.values.end()) {
      return make_error(StatusCode::kInvalidArgument, "--sweep " + sweep.key + " lists " + item + " twice");
    }
    sweep.values.push_back(v);
  }
  if (sweep.values.empty()) {
    return make_error(StatusCode::kInvalidArgument, "--sweep " + sweep.key + " has no values, e.g. size=320,640");
  }
  return sweep;
}

Expected<InputSpec> apply_sweep(const std::vector<ValueInfo>& declared, const InputSpec& base, const std::string& key,
                                int64_t value) {
  InputSpec spec = base;
  bool any = false;
  for (const ValueInfo& input : declared) {
    Shape shape = base_shape(input, base);
    if (!set_swept_axes(shape, key, value)) continue;
    if (base.npy_files.count(input.name)) {
      return make_error(StatusCode::kInvalidArgument,
                        "input '" + input.name + "' comes from a .npy file, so --sweep " + key + " cannot resize it");
    }
    any = true;
    bool resolved = true;
    for (int64_t d : shape) resolved = resolved && d >= 0;
    if (resolved) spec.shapes[input.name] = shape;
  }
  if (!any) {
    return make_error(StatusCode::kInvalidArgument, "--sweep " + key + ": no model input has the axes it sets");
  }
  return spec;
}

Expected<std::vector<BenchPoint>> bench_model(const ModelBenchOptions& options) {
  ir::ImportOptions import;
  EDGEMM_ASSIGN_OR_RETURN(ir::Model model, ir::import_onnx_file(options.model, import));
  const std::vector<ValueInfo> declared = model.graph.inputs;
  std::vector<int64_t> sweep_values = options.sweep.values;
  if (options.sweep.key.empty()) sweep_values = {0};
  for (int64_t value : sweep_values) {  // every point's shapes, before anything is measured
    InputSpec spec = options.inputs;
    if (!options.sweep.key.empty()) {
      EDGEMM_ASSIGN_OR_RETURN(spec, apply_sweep(declared, options.inputs, options.sweep.key, value));
    }
    EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(options.model, spec.shapes));
  }
  const int count = static_cast<int>(sweep_values.size() * options.threads.size());
  std::vector<BenchPoint> points;
  for (int64_t value : sweep_values) {
    for (int threads : options.threads) {
      if (options.on_point) {
        std::string what = "threads " + std::to_string(threads);
        if (!options.sweep.key.empty()) what += ", " + options.sweep.key + " " + std::to_string(value);
        options.on_point(static_cast<int>(points.size()), count, what);
      }
      EDGEMM_ASSIGN_OR_RETURN(BenchPoint p, bench_point(options, declared, threads, options.sweep.key, value));
      points.push_back(std::move(p));
    }
  }
  return points;
}

}  // namespace edgemm::bench
