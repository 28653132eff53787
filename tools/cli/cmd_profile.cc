#include <algorithm>
#include <cctype>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/inferencer.h"
#include "edgemm/memory_check.h"
#include "edgemm/tools/bench_inputs.h"
#include "edgemm/tools/model_profile.h"

namespace edgemm::cli {

namespace {

struct ProfileArgs {
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  int threads = 0;
  BackendArgs backend;
  int warmup = 2;
  int iterations = 10;
  int top = -1;  ///< -1: 20 rows in text, all in Markdown
  std::string trace;
  std::string markdown;
  std::string report;
  bool json = false;
};

Expected<std::map<std::string, std::string>> parse_npy_files(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> files;
  for (const auto& spec : specs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    files[kv.first] = kv.second;
  }
  return files;
}

/// True when every body cell of column `c` is a number (then it is right-aligned).
bool numeric_column(const bench::TextTable& table, size_t c) {
  for (size_t r = 1; r < table.size(); ++r) {
    const std::string& cell = table[r][c];
    if (cell.empty() || !(std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-')) return false;
  }
  return true;
}

/// Prints a table with padded columns: numbers right-aligned, text left-aligned.
void print_table(const bench::TextTable& table) {
  const size_t columns = table.front().size();
  std::vector<size_t> widths(columns, 0);
  std::vector<bool> numeric(columns);
  for (size_t c = 0; c < columns; ++c) {
    numeric[c] = numeric_column(table, c);
    for (const auto& row : table) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : table) {
    std::cout << " ";
    for (size_t c = 0; c < columns; ++c) {
      std::cout << " " << (numeric[c] ? std::right : std::left) << std::setw(static_cast<int>(widths[c])) << row[c];
    }
    std::cout << "\n";
  }
}

void print_text(const bench::ProfileReport& r, size_t top) {
  std::cout << std::fixed << std::setprecision(3) << "model: " << r.model << "\ninputs: " << r.inputs
            << "\nthreads: " << r.threads << ", warmup runs: " << r.warmup << ", profiled runs: " << r.iterations
            << "\nmedian wall time: " << r.median_wall_us / 1e3 << " ms; sum of node medians: " << r.node_sum_us / 1e3
            << " ms (outside the nodes: " << r.overhead_us / 1e3 << " ms)\nFLOPs: " << r.flops / 1e9 << " G, achieved "
            << std::setprecision(1) << r.gflops_per_s << " GFLOP/s; bytes moved: " << std::setprecision(2)
            << r.bytes / 1e6 << " MB\n\n";
  const size_t shown = std::min(top, r.nodes.size());
  std::cout << "nodes by median time (" << shown << " of " << r.nodes.size() << "):\n";
  print_table(bench::node_table(r, top));
  std::cout << "\nop types by time:\n";
  print_table(bench::op_type_table(r));
}

Status profile_command(const ProfileArgs& args) {
  for (const std::string* path : {&args.trace, &args.markdown, &args.report}) {
    if (!path->empty()) EDGEMM_RETURN_IF_ERROR(check_output_path(*path, {args.model}));
  }
  InferencerConfig config;
  config.model_path = args.model;
  config.threads = args.threads;
  args.backend.apply(config);
  bench::InputSpec spec;
  EDGEMM_ASSIGN_OR_RETURN(config.fixed_input_shapes, parse_named_shapes(args.shapes));
  spec.shapes = config.fixed_input_shapes;
  EDGEMM_ASSIGN_OR_RETURN(spec.npy_files, parse_npy_files(args.inputs));
  EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(args.model, spec.shapes));
  EDGEMM_ASSIGN_OR_RETURN(auto inferencer, Inferencer::create(config));
  EDGEMM_ASSIGN_OR_RETURN(bench::NamedTensors inputs, bench::make_inputs(inferencer->inputs(), spec));
  EDGEMM_ASSIGN_OR_RETURN(auto samples, bench::collect_profiles(*inferencer, inputs, args.warmup, args.iterations));
  EDGEMM_ASSIGN_OR_RETURN(bench::ProfileReport report, bench::aggregate_profiles(samples));
  report.model = args.model;
  report.inputs = bench::describe_inputs(inputs);
  report.threads = resolve_threads(args.threads);
  report.warmup = args.warmup;
  if (!args.trace.empty()) {
    const auto& nodes = samples[bench::median_sample(samples)].nodes;
    EDGEMM_RETURN_IF_ERROR(write_text_file(args.trace, chrome_trace_json(nodes)));
  }
  if (!args.markdown.empty()) {
    const size_t top = args.top > 0 ? static_cast<size_t>(args.top) : 0;
    EDGEMM_RETURN_IF_ERROR(write_text_file(args.markdown, bench::profile_report_markdown(report, top)));
  }
  if (!args.report.empty()) {
    EDGEMM_RETURN_IF_ERROR(write_text_file(args.report, bench::profile_to_html(report)));
  }
  if (args.json) {
    std::cout << bench::profile_report_json(report) << std::endl;
    return Status::ok();
  }
  print_text(report, args.top > 0 ? static_cast<size_t>(args.top) : 20);
  if (!args.trace.empty()) std::cout << "\ntrace of the median run written to " << args.trace << " (Perfetto)\n";
  if (!args.markdown.empty()) std::cout << "Markdown report written to " << args.markdown << "\n";
  if (!args.report.empty()) std::cout << "HTML report written to " << args.report << "\n";
  return Status::ok();
}

}  // namespace

void add_profile_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Time every node over several runs: per-node and per-op-type tables, FLOPs, bytes, Chrome trace");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-s,--shape", args->shapes, "input shape name=1,3,640,640 (needed for symbolic inputs)");
  cmd->add_option("-i,--input", args->inputs, "input as name=file.npy (default: seeded synthetic data)");
  cmd->add_option("-t,--threads", args->threads, "intra-op threads (0 = all cores)")->check(CLI::Range(0, kMaxThreads));
  args->backend.add_to(cmd);
  cmd->add_option("--warmup", args->warmup, "untimed runs first (default 2)")->check(CLI::Range(0, 1000000));
  cmd->add_option("--iters", args->iterations, "profiled runs; node times are medians (default 10)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--top", args->top, "node rows shown, longest first (default 20 in text, all in Markdown)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--trace", args->trace, "write a Chrome trace JSON of the median run to this file");
  cmd->add_option("--markdown", args->markdown, "write the report as Markdown to this file");
  cmd->add_option("--report", args->report, "write a self-contained HTML report with SVG charts to this file");
  cmd->add_flag("--json", args->json, "print the report as JSON (schema edgemm.profile/1)");
  cmd->callback([args, &exit_code] {
    Status status = profile_command(*args);
    if (!status.is_ok()) exit_code = report_error("profile", status, args->json);
  });
}

}  // namespace edgemm::cli
