#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "edgemm/memory_check.h"
#include "output_folder.h"

namespace edgemm::cli {

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  std::string profile;
  int threads = 0;
  int repeat = 1;
  int warmup = 0;
  double above = 0.5;
  bool json = false;
  BackendArgs backend;
};

Expected<std::vector<std::pair<std::string, Tensor>>> load_inputs(const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const auto& spec : specs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(kv.second));
    inputs.emplace_back(kv.first, std::move(t));
  }
  return inputs;
}

/// What the reported time is: " (median of N runs)", and whether the first run after load, with
/// its one-time setup (memory planning, weight packing), is among the timed ones.
std::string timing_note(int repeat, int warmup) {
  if (warmup > 0) return repeat > 1 ? " (median of " + std::to_string(repeat) + " runs)" : "";
  if (repeat > 1) {
    return " (median of " + std::to_string(repeat) +
           " runs; the first, right after load, includes one-time setup: --warmup 1 leaves it out)";
  }
  return " (one run, the first after load: it includes one-time setup such as memory planning; --warmup 1 times a "
         "warm run)";
}

Status run_command(const RunArgs& args) {
  InferencerConfig config;
  config.model_path = args.model;
  config.threads = args.threads;
  config.profile_path = args.profile;
  args.backend.apply(config);
  EDGEMM_ASSIGN_OR_RETURN(config.fixed_input_shapes, parse_named_shapes(args.shapes));
  std::vector<std::string> input_files = {args.model};
  for (const auto& spec : args.inputs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    input_files.push_back(kv.second);
  }
  if (!args.profile.empty()) EDGEMM_RETURN_IF_ERROR(check_output_path(args.profile, input_files));
  std::optional<OutputFolder> output_dir;
  if (!args.output_dir.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(output_dir, OutputFolder::claim(args.output_dir, input_files));
  }
  EDGEMM_ASSIGN_OR_RETURN(auto inputs, load_inputs(args.inputs));
  std::map<std::string, Shape> shapes = config.fixed_input_shapes;
  for (const auto& [name, t] : inputs) shapes.emplace(name, t.shape());
  EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(args.model, shapes));
  EDGEMM_ASSIGN_OR_RETURN(auto inferencer, Inferencer::create(config));
  std::vector<Tensor> outputs;
  for (int r = 0; r < args.warmup; ++r) {
    EDGEMM_ASSIGN_OR_RETURN(outputs, inferencer->run(inputs));
  }
  std::vector<double> times_ms;
  for (int r = 0; r < std::max(1, args.repeat); ++r) {
    const auto start = std::chrono::steady_clock::now();
    EDGEMM_ASSIGN_OR_RETURN(outputs, inferencer->run(inputs));
    times_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median_ms = sorted[sorted.size() / 2];
  if (output_dir) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto path = output_dir->staging() / npy_file_name(inferencer->outputs()[i].name);
      EDGEMM_RETURN_IF_ERROR(write_npy(path.string(), outputs[i]));
    }
    EDGEMM_RETURN_IF_ERROR(output_dir->commit());
  }
  const MemoryReport mem = inferencer->memory_report();
  nlohmann::json j;
  j["model"] = args.model;
  j["median_ms"] = median_ms;
  j["min_ms"] = sorted.front();
  j["times_ms"] = times_ms;
  j["warmup"] = args.warmup;
  j["first_run_timed"] = args.warmup == 0;
  j["threads"] = resolve_threads(args.threads);
  j["planned_peak_bytes"] = mem.planned_peak_bytes;
  j["unplanned_bytes"] = mem.unplanned_bytes;
  j["weight_bytes"] = mem.weight_bytes;
  j["packed_weight_bytes"] = mem.packed_weight_bytes;
  j["placement"] = placement_json(*inferencer);
  j["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorStats s = tensor_stats(outputs[i], args.above);
    j["outputs"].push_back({{"name", inferencer->outputs()[i].name},
                            {"dtype", dtype_name(outputs[i].dtype())},
                            {"shape", outputs[i].shape()},
                            {"min", s.min},
                            {"max", s.max},
                            {"mean", s.mean},
                            {"std", s.stddev},
                            {"share_above", s.share_above},
                            {"threshold", args.above}});
  }
  if (args.json) {
    std::cout << json_text(j) << std::endl;
    return Status::ok();
  }
  std::cout << std::fixed << std::setprecision(2) << "ran " << args.model << " in " << median_ms << " ms"
            << timing_note(args.repeat, args.warmup) << ", planned activation memory "
            << mem.planned_peak_bytes / 1048576.0 << " MiB (without reuse " << mem.unplanned_bytes / 1048576.0
            << " MiB); weights " << mem.weight_bytes / 1048576.0 << " MiB, packed by the kernels "
            << mem.packed_weight_bytes / 1048576.0 << " MiB\n";
  if (inferencer->backend() != "native") {
    const int fallbacks = j["placement"]["fallback_nodes"].get<int>();
    std::cout << "backend " << inferencer->backend() << ": " << inferencer->placement().size() - fallbacks << " of "
              << inferencer->placement().size() << " nodes (" << fallbacks << " on native)\n";
  }
  for (const auto& o : j["outputs"]) {
    std::cout << "  " << o["name"].get<std::string>() << " " << o["dtype"].get<std::string>() << " "
              << shape_to_string(o["shape"].get<Shape>()) << std::setprecision(4) << "  min " << o["min"].get<double>()
              << "  max " << o["max"].get<double>() << "  mean " << o["mean"].get<double>() << "  above " << args.above
              << ": " << std::setprecision(2) << 100.0 * o["share_above"].get<double>() << "%\n";
  }
  if (!args.output_dir.empty()) std::cout << "outputs written to " << args.output_dir << "\n";
  if (!args.profile.empty()) std::cout << "profile written to " << args.profile << " (chrome://tracing)\n";
  return Status::ok();
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on .npy inputs and summarize or save its outputs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-i,--input", args->inputs, "input as name=file.npy (repeat for each input)");
  cmd->add_option("-s,--shape", args->shapes, "pin a symbolic input shape at load, name=1,3,640,640");
  cmd->add_option("-o,--output-dir", args->output_dir, "write each output to DIR/<name>.npy");
  cmd->add_option("-t,--threads", args->threads, "intra-op threads (0 = all cores)")->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--repeat", args->repeat, "timed runs; the median is reported")->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", args->warmup, "untimed runs before the timed ones")->check(CLI::Range(0, 1000000));
  cmd->add_option("--above", args->above, "summary: share of output elements above this value")
      ->check(finite_range(-1e30, 1e30));
  cmd->add_option("--profile", args->profile, "write a per-node Chrome trace JSON to this file");
  args->backend.add_to(cmd);
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->callback([args, &exit_code] {
    Status status = run_command(*args);
    if (!status.is_ok()) exit_code = report_error("run", status, args->json);
  });
}

}  // namespace edgemm::cli
