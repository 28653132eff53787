/// `edgemm bench MODEL | --pipeline ocr --set DIR`: the options of edgemm::bench::run_benchmark
/// (edgemm/tools/bench.h) from the command line, progress on stderr, the report on stdout and
/// in files. docs/benchmarks.md.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/backends.h"
#include "edgemm/tools/bench.h"

namespace edgemm::cli {

namespace {

struct BenchArgs {
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  std::vector<int> threads = {1};
  int warmup = -1;  ///< -1: 2 for models, one pass over the set for pipelines
  int iters = 0;
  double seconds = 0;
  int blocks = 5;
  uint32_t seed = 1;
  std::vector<std::string> compare;
  std::string sweep;
  std::string pipeline;
  std::string set;
  std::string models;
  bool no_cls = false;
  std::string power_cmd;
  std::string reference_dir;
  double timeout = 600;
  bool json = false;
  std::string markdown;
  std::string report;   ///< HTML report file
  BackendArgs backend;  ///< the backend of edgemm's runtime (the model, or the pipeline's models)
};

/// edgemm first, then each peer once. Models take ort (onnxruntime) and opencv; pipelines guten.
Expected<std::vector<std::string>> runtime_list(const BenchArgs& args) {
  const bool pipeline = !args.pipeline.empty();
  const std::vector<std::string> peers =
      pipeline ? std::vector<std::string>{"guten-ocr"} : std::vector<std::string>{"onnxruntime", "opencv"};
  std::vector<std::string> names = {"edgemm"};
  for (const auto& c : args.compare) {
    const std::string name = bench::canonical_runtime_name(c);
    if (std::find(peers.begin(), peers.end(), name) == peers.end()) {
      return make_error(StatusCode::kInvalidArgument,
                        "--compare: '" + c + "' is not a peer for " +
                            (pipeline ? "pipelines (peers: guten)" : "models (peers: ort, opencv)"));
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string reference_dir(const BenchArgs& args) {
  return args.reference_dir.empty() ? default_repo_dir("EDGEMM_REFERENCE_DIR", "tools/reference") : args.reference_dir;
}

/// The benchmark's options from the command line's.
Expected<bench::BenchOptions> bench_options(const BenchArgs& args, const std::vector<std::string>& runtimes) {
  bench::BenchOptions options;
  options.model = args.model;
  EDGEMM_ASSIGN_OR_RETURN(options.shapes, parse_named_shapes(args.shapes));
  for (const auto& spec : args.inputs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    options.npy_inputs[kv.first] = kv.second;
  }
  options.seed = args.seed;
  options.sweep = args.sweep;
  options.pipeline = args.pipeline;
  options.set_dir = args.set;
  if (!args.pipeline.empty()) options.models_dir = args.models.empty() ? default_ocr_models_dir() : args.models;
  options.use_cls = !args.no_cls;
  options.threads = args.threads;
  options.runtimes = runtimes;
  options.edgemm.backend = args.backend.backend;
  options.edgemm.device = args.backend.device;
  options.edgemm.precision = args.backend.precision;
  options.edgemm.plugin_path = args.backend.plugin;
  options.warmup = args.warmup;
  options.iters = args.iters;
  options.seconds = args.seconds;
  options.blocks = args.blocks;
  options.power_command = args.power_cmd;
  options.reference_dir = reference_dir(args);
  options.timeout_s = args.timeout;
  options.command = invocation();
  return options;
}

/// Models: 2 warm-up and 20 timed runs. Pipelines: one pass over the set to warm up (cold run
/// included), then one timed pass, so every recognition batch shape is seen before timing.
/// Options of the other mode are refused rather than ignored.
Status resolve_defaults(BenchArgs& args) {
  for (size_t i = 0; i < args.threads.size(); ++i) {
    const bool all_cores = args.threads[i] == 0;
    args.threads[i] = resolve_threads(args.threads[i]);
    if (std::count(args.threads.begin(), args.threads.begin() + i, args.threads[i])) {
      return make_error(StatusCode::kInvalidArgument,
                        "--threads lists " + std::to_string(args.threads[i]) + " twice" +
                            (all_cores ? " (0 = all " + std::to_string(args.threads[i]) + " cores)" : ""));
    }
  }
  if (!std::isfinite(args.seconds)) {
    return make_error(StatusCode::kInvalidArgument, "--seconds must be a finite number of seconds");
  }
  if (args.pipeline.empty() && (!args.set.empty() || !args.models.empty() || args.no_cls)) {
    return make_error(StatusCode::kInvalidArgument, "--set, --models and --no-cls apply to --pipeline ocr");
  }
  if (!args.pipeline.empty() && (!args.shapes.empty() || !args.inputs.empty() || !args.sweep.empty())) {
    return make_error(StatusCode::kInvalidArgument, "--shape, --input and --sweep apply to models, not --pipeline");
  }
  if (args.pipeline.empty()) {
    if (args.iters == 0 && args.seconds == 0) args.iters = 20;
    if (args.warmup < 0) args.warmup = 2;
    return Status::ok();
  }
  if (args.set.empty()) return make_error(StatusCode::kInvalidArgument, "--pipeline ocr needs --set DIR");
  EDGEMM_ASSIGN_OR_RETURN(std::vector<std::string> images, bench::list_images(args.set));
  const int n = static_cast<int>(images.size());
  if (args.iters == 0 && args.seconds == 0) args.iters = n;
  if (args.warmup < 0) args.warmup = n - 1;
  return Status::ok();
}

/// Output files are checked before anything is measured, so a bad path fails in seconds, not
/// after the benchmark, and never overwrites the model.
Status check_outputs(const BenchArgs& args) {
  for (const std::string* path : {&args.markdown, &args.report}) {
    if (!path->empty()) EDGEMM_RETURN_IF_ERROR(check_output_path(*path, {args.model}));
  }
  return Status::ok();
}

/// A backend, device or precision the edgemm runtime cannot use fails before anything is
/// measured (the same check Inferencer::create makes).
Status check_backend(const BenchArgs& args) {
  InferencerConfig config;
  args.backend.apply(config);
  return check_runtime_options(config);
}

/// Measures and writes the report; returns the exit code (non-zero when edgemm itself failed,
/// after the report with the failure has been written).
Expected<int> bench_command(const BenchArgs& args) {
  if (args.pipeline.empty() == args.model.empty()) {
    return make_error(StatusCode::kInvalidArgument, "give either MODEL or --pipeline ocr --set DIR");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<std::string> runtimes, runtime_list(args));
  EDGEMM_RETURN_IF_ERROR(check_backend(args));
  EDGEMM_RETURN_IF_ERROR(check_outputs(args));
  EDGEMM_ASSIGN_OR_RETURN(bench::BenchOptions options, bench_options(args, runtimes));
  ProgressBar bar("bench", 100);
  std::string point_text;
  options.progress = [&](int done, int total) {
    bar.update(static_cast<size_t>(100.0 * done / std::max(total, 1)), point_text);
  };
  options.on_point = [&](int index, int count, const std::string& what) {
    point_text = "point " + std::to_string(index + 1) + "/" + std::to_string(count) + ": " + what;
    bar.update(0, point_text);
  };
  EDGEMM_ASSIGN_OR_RETURN(bench::BenchResult result, bench::run_benchmark(options));
  if (!args.markdown.empty()) EDGEMM_RETURN_IF_ERROR(write_text_file(args.markdown, result.markdown));
  if (!args.report.empty()) EDGEMM_RETURN_IF_ERROR(write_text_file(args.report, result.html));
  std::cout << (args.json ? result.json + "\n" : result.markdown) << std::flush;
  if (!std::cout) return make_error(StatusCode::kIo, "cannot write the report to standard output");
  if (!result.edgemm_status.is_ok()) {
    std::cerr << "edgemm bench: error: " << result.edgemm_status.message() << "\n";
    return exit_code(result.edgemm_status);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure latency, memory and energy of a model or pipeline, side by side with ONNX Runtime and OpenCV");
  cmd->add_option("model", args->model, "ONNX model file (or use --pipeline)");
  cmd->add_option("-s,--shape", args->shapes, "input shape name=1,3,640,640 (also pinned in edgemm at load)");
  cmd->add_option("-i,--input", args->inputs, "input from a file, name=file.npy (default: seeded synthetic data)");
  cmd->add_option("-t,--threads", args->threads, "intra-op thread counts, e.g. 1,2 (one point each; 0 = all cores)")
      ->delimiter(',')
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--warmup", args->warmup,
                  "untimed runs after the cold run (default 2; pipelines: the rest of one pass)")
      ->check(CLI::Range(0, 100000));
  auto* iters = cmd->add_option("--iters", args->iters, "timed runs per runtime (default 20; pipelines: one pass)")
                    ->check(CLI::Range(1, 1000000));
  cmd->add_option("--seconds", args->seconds, "instead of --iters: timed runs filling S seconds per runtime")
      ->check(CLI::Range(0.001, 86400.0))
      ->excludes(iters);
  cmd->add_option("--blocks", args->blocks, "alternating blocks the timed runs are split into (default 5)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--seed", args->seed, "seed of the synthetic inputs (default 1)");
  cmd->add_option("--compare", args->compare,
                  "peers measured in the same run: ort, opencv (models); guten (--pipeline ocr)")
      ->delimiter(',');
  cmd->add_option("--sweep", args->sweep, "one point per value: size=320,640 | height=... | width=... | batch=1,2,4");
  cmd->add_option("--pipeline", args->pipeline, "benchmark a pipeline instead of a model: ocr")
      ->check(CLI::IsMember({"ocr"}));
  cmd->add_option("--set", args->set, "pipeline input: a folder of images (e.g. data/ocr_set)");
  cmd->add_option("--models", args->models, "OCR model folder (default: models/ppocrv4)");
  cmd->add_flag("--no-cls", args->no_cls, "OCR without the angle classifier");
  cmd->add_option("--power-cmd", args->power_cmd, "shell command printing the power in watts, sampled for energy");
  cmd->add_option("--reference-dir", args->reference_dir, "folder of ort_server.js (default: tools/reference)");
  cmd->add_option("--timeout", args->timeout, "longest wait in seconds for a peer's load or block (default 600)")
      ->check(CLI::Range(1.0, 86400.0));
  args->backend.add_to(cmd);
  cmd->add_flag("--json", args->json, "print the JSON report (schema edgemm.bench/1)");
  cmd->add_option("--markdown", args->markdown, "also write the Markdown report to this file");
  cmd->add_option("--report", args->report,
                  "also write a self-contained HTML report with charts (latency distributions, ratio to edgemm, "
                  "scaling over --sweep or --threads) to this file, e.g. out.html");
  cmd->callback([args, &exit_code] {
    BenchArgs resolved = *args;
    Status status = resolve_defaults(resolved);
    if (!status.is_ok()) {
      exit_code = report_error("bench", status, args->json);
      return;
    }
    Expected<int> code = bench_command(resolved);
    exit_code = code ? *code : report_error("bench", code.status(), args->json);
  });
}

}  // namespace edgemm::cli
