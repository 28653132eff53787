/// run_benchmark (edgemm/tools/bench.h): the energy counter, the points of a model or pipeline
/// benchmark and the report around them.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>

#include "bench/energy.h"
#include "bench/model_bench.h"
#include "bench/pipeline_bench.h"
#include "bench/report_html.h"
#include "bench/report_markdown.h"
#include "edgemm/tools/bench.h"

namespace edgemm::bench {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// One start/stop before any model loads, so that a broken power command fails at once.
Status probe_energy(EnergyMeter& energy) {
  if (!energy.available()) return Status::ok();
  Status status = energy.start();
  if (status.is_ok()) status = energy.stop().status();
  if (status.is_ok()) return Status::ok();
  return make_error(StatusCode::kInvalidArgument, "energy counter " + energy.source() + ": " + status.message());
}

EdgemmBackend edgemm_backend(const RuntimeOptions& options) {
  return {options.backend, options.device, options.precision, options.plugin_path};
}

Expected<std::vector<BenchPoint>> measure(const BenchOptions& options, const CompareOptions& compare) {
  if (!options.pipeline.empty()) {
    PipelineBenchOptions pipeline;
    pipeline.pipeline = options.pipeline;
    pipeline.set_dir = options.set_dir;
    pipeline.models_dir = options.models_dir;
    pipeline.use_cls = options.use_cls;
    pipeline.edgemm_backend = edgemm_backend(options.edgemm);
    pipeline.threads = options.threads;
    pipeline.peers.assign(options.runtimes.begin() + 1, options.runtimes.end());
    pipeline.reference_dir = options.reference_dir;
    pipeline.timeout_s = options.timeout_s;
    pipeline.compare = compare;
    pipeline.on_point = options.on_point;
    return bench_pipeline(pipeline);
  }
  ModelBenchOptions model;
  model.model = options.model;
  model.inputs.shapes = options.shapes;
  model.inputs.npy_files = options.npy_inputs;
  model.inputs.seed = options.seed;
  model.threads = options.threads;
  if (!options.sweep.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(model.sweep, parse_sweep(options.sweep));
  }
  model.runtimes = options.runtimes;
  model.edgemm_backend = edgemm_backend(options.edgemm);
  model.compare = compare;
  model.reference_dir = options.reference_dir;
  model.timeout_s = options.timeout_s;
  model.on_point = options.on_point;
  return bench_model(model);
}

/// The counts and times of `options`, each named as its field.
Status check_options(const BenchOptions& options) {
  auto bad = [](const std::string& what) { return make_error(StatusCode::kInvalidArgument, "benchmark " + what); };
  if (options.runtimes.empty() || options.runtimes.front() != "edgemm")
    return bad("runtimes must start with \"edgemm\"");
  if (options.threads.empty()) return bad("threads lists no thread count");
  for (int t : options.threads) {
    if (t < 1) return bad("threads must each be at least 1, got " + std::to_string(t));
  }
  if (options.warmup < 0) return bad("warmup must be at least 0, got " + std::to_string(options.warmup));
  if (!(options.seconds >= 0) || !std::isfinite(options.seconds)) {
    return bad("seconds must be a finite number of seconds, at least 0");
  }
  if (options.seconds == 0 && options.iters < 1)
    return bad("iters must be at least 1, got " + std::to_string(options.iters));
  if (options.blocks < 1) return bad("blocks must be at least 1, got " + std::to_string(options.blocks));
  if (!(options.timeout_s > 0)) return bad("timeout_s must be above 0");
  return Status::ok();
}

/// edgemm's own first failure, or ok.
Status edgemm_status(const BenchReport& report) {
  for (const auto& p : report.points) {
    for (const auto& rt : p.runtimes) {
      if (rt.name == "edgemm" && !rt.ok()) {
        return Status(rt.failed_code, "edgemm could not " + rt.failed_stage + " at threads " +
                                          std::to_string(p.threads) + ": " + rt.error);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Expected<BenchResult> run_benchmark(const BenchOptions& options) {
  EDGEMM_RETURN_IF_ERROR(check_options(options));
  EnergyOptions energy_options;
  energy_options.power_command = options.power_command;
  EDGEMM_ASSIGN_OR_RETURN(auto energy, EnergyMeter::open(energy_options));
  EDGEMM_RETURN_IF_ERROR(probe_energy(*energy));

  BenchReport report;
  report.edgemm_version = EDGEMM_VERSION;
  report.created = utc_now();
  report.kind = options.pipeline.empty() ? "model" : "pipeline";
  report.subject = options.pipeline.empty() ? options.model : options.pipeline + " on " + options.set_dir;
  report.command = options.command;
  report.machine = describe_machine();
  const int blocks = options.seconds > 0 ? options.blocks : std::min(options.blocks, options.iters);
  report.settings = {options.warmup,  options.seconds > 0 ? 0 : options.iters, options.seconds, blocks, options.seed,
                     options.runtimes};
  report.energy_source = energy->available() ? energy->source() : "";
  report.energy_note =
      energy->available() ? "energy: measured with " + energy->source() : "energy: " + energy->unavailable_reason();

  CompareOptions compare;
  compare.warmup = options.warmup;
  compare.iters = options.iters;
  compare.seconds = options.seconds;
  compare.blocks = blocks;
  compare.energy = energy.get();
  compare.progress = options.progress;
  EDGEMM_ASSIGN_OR_RETURN(report.points, measure(options, compare));
  report.load_average_end = load_average_1m();

  BenchResult result;
  result.markdown = to_markdown(report);
  result.json = to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  result.html = to_html(report);
  result.edgemm_status = edgemm_status(report);
  return result;
}

}  // namespace edgemm::bench
