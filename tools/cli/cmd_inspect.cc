#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/backends.h"
#include "edgemm/cpu.h"
#include "edgemm/memory_check.h"
#include "edgemm/memory_limit.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/convert.h"
#include "edgemm/tools/inspect.h"
#include "edgemm/tools/targets.h"
#include "target_report.h"

namespace edgemm::cli {

namespace {

struct InspectArgs {
  std::string model;
  std::vector<std::string> shapes;
  bool json = false;
  bool optimized = false;
  std::string target;
  bool target_given = false;
  std::string platforms;
  BackendArgs backend;
};

/// The --shape values, checked against the model's declared inputs as convert checks
/// --fix-shape (known input, rank, every extent at least 1, no contradiction of a fixed dim).
Expected<std::map<std::string, Shape>> inspect_shapes(const InspectArgs& args) {
  EDGEMM_ASSIGN_OR_RETURN(auto shapes, parse_named_shapes(args.shapes));
  if (shapes.empty()) return shapes;
  OnnxLoadOptions options;
  options.run_checker = false;
  options.infer_shapes = false;
  EDGEMM_ASSIGN_OR_RETURN(const OnnxModel model, OnnxModel::load(args.model, options));
  EDGEMM_RETURN_IF_ERROR(convert::validate_fixed_shapes(model, shapes, "--shape"));
  return shapes;
}

/// JSON of a memory estimate with the limit it is compared with.
nlohmann::json memory_json(const MemoryEstimate& m) {
  const MemoryLimit limit = process_memory_limit();
  return {{"weight_bytes", m.weight_bytes}, {"input_bytes", m.input_bytes}, {"activation_bytes", m.activation_bytes},
          {"total_bytes", m.total()},       {"limit_bytes", limit.bytes},   {"limit_source", limit.source}};
}

void print_memory(const MemoryEstimate& m) {
  const MemoryLimit limit = process_memory_limit();
  std::cout << "  memory of one run: an estimated " << bytes_text(m.total()) << " (weights "
            << bytes_text(m.weight_bytes) << ", inputs " << bytes_text(m.input_bytes) << ", intermediate tensors "
            << bytes_text(m.activation_bytes) << " at their peak); this process may use " << bytes_text(limit.bytes)
            << " (" << limit.source << ")"
            << (m.total() > limit.bytes ? ": run, bench and profile refuse these shapes" : "") << "\n";
}

nlohmann::json pass_report_json(const passes::PassReport& r) {
  nlohmann::json j;
  j["nodes_before"] = r.nodes_before;
  j["nodes_after"] = r.nodes_after;
  j["folded_nodes"] = r.folded_nodes;
  j["removed_nodes"] = r.removed_nodes;
  j["rewritten_nodes"] = r.rewritten_nodes();
  j["patterns"] = nlohmann::json::object();
  for (const auto& [name, count] : r.patterns) j["patterns"][name] = count;
  return j;
}

/// `text` followed by spaces up to `width` terminal columns (UTF-8 code points, so "→" is one).
std::string padded(const std::string& text, size_t width) {
  size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80 ? 1 : 0;
  return text + std::string(columns < width ? width - columns : 1, ' ');
}

void print_pass_report(const passes::PassReport& r) {
  std::cout << "  kernels (this machine):\n";
  for (const std::string& line : kernel_selection()) std::cout << "    " << line << "\n";
  std::cout << "  passes: " << r.nodes_before << " -> " << r.nodes_after << " nodes (" << r.folded_nodes
            << " folded to constants, " << r.removed_nodes << " dead, " << r.rewritten_nodes()
            << " merged by rewrites)\n";
  std::cout << "  rewritten patterns:" << (r.patterns.empty() ? " none" : "") << "\n";
  for (const auto& [name, count] : r.patterns) {
    std::cout << "    " << padded(name, 32) << std::setw(4) << count << "\n";
  }
}

/// Placement on a backend other than native: created through Inferencer like a run would be.
Expected<nlohmann::json> backend_placement(const InspectArgs& args, const std::map<std::string, Shape>& shapes) {
  InferencerConfig config;
  config.model_path = args.model;
  args.backend.apply(config);
  config.fixed_input_shapes = shapes;
  EDGEMM_ASSIGN_OR_RETURN(auto inferencer, Inferencer::create(config));
  return placement_json(*inferencer);
}

void print_placement(const nlohmann::json& placement) {
  const std::string backend = placement["backend"].get<std::string>();
  const int total = static_cast<int>(placement["nodes"].size());
  const int fallbacks = placement["fallback_nodes"].get<int>();
  std::cout << "  placement: " << total - fallbacks << " of " << total
            << " nodes (the graph after the load-time standard-op passes) on " << backend << ", " << fallbacks
            << " on native\n";
  for (const auto& n : placement["nodes"]) {
    if (n["backend"] == backend) continue;
    std::cout << "    " << padded(n["op_type"].get<std::string>() + " '" + n["node"].get<std::string>() + "'", 40)
              << " native: " << n["reason"].get<std::string>() << "\n";
  }
}

/// `inspect --target`: the profile's per-node verdicts instead of the model summary.
Status inspect_target(const InspectArgs& args, const std::map<std::string, Shape>& shapes) {
  EDGEMM_ASSIGN_OR_RETURN(targets::PlatformProfile profile, load_platform(args.platforms, args.target));
  OnnxLoadOptions options;
  options.fixed_input_shapes = shapes;
  EDGEMM_ASSIGN_OR_RETURN(const OnnxModel model, OnnxModel::load(args.model, options));
  const targets::TargetReport report = targets::check_model(model, profile);
  if (args.json) {
    std::cout << json_text(target_report_json(report, profile, args.model)) << std::endl;
  } else {
    print_target_report(report, profile, args.model);
  }
  return Status::ok();
}

Status inspect_command(const InspectArgs& args) {
  if (args.target_given && args.target.empty()) return Status(StatusCode::kInvalidArgument, "--target needs a name");
  if (!args.platforms.empty() && args.target.empty()) {
    return Status(StatusCode::kInvalidArgument, "--platforms needs --target");
  }
  if (!args.target.empty() && (args.optimized || args.backend.backend != "native")) {
    return Status(StatusCode::kInvalidArgument, "--target cannot be combined with --optimized or --backend");
  }
  EDGEMM_ASSIGN_OR_RETURN(const auto shapes, inspect_shapes(args));
  if (!args.target.empty()) return inspect_target(args, shapes);
  if (args.optimized || args.backend.backend != "native") {  // these load or fold at those shapes
    EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(args.model, shapes));
  }
  nlohmann::json placement;
  if (args.backend.backend != "native") {
    EDGEMM_ASSIGN_OR_RETURN(placement, backend_placement(args, shapes));
  } else {
    InferencerConfig config;
    args.backend.apply(config);
    EDGEMM_RETURN_IF_ERROR(check_runtime_options(config));  // device and precision
  }
  passes::InspectOptions options;
  options.shapes = shapes;
  options.optimized = args.optimized;
  EDGEMM_ASSIGN_OR_RETURN(const passes::ModelSummary m, passes::inspect_model(args.model, options));
  nlohmann::json j;
  j["model"] = args.model;
  j["ir_version"] = m.ir_version;
  j["producer"] = m.producer_name;
  j["opsets"] = nlohmann::json::object();
  for (const auto& [domain, version] : m.opsets) j["opsets"][domain.empty() ? "ai.onnx" : domain] = version;
  j["inputs"] = nlohmann::json::array();
  for (const auto& v : m.inputs) j["inputs"].push_back(value_info_json(v));
  j["outputs"] = nlohmann::json::array();
  for (const auto& v : m.outputs) j["outputs"].push_back(value_info_json(v));
  j["nodes"] = m.nodes;
  if (args.optimized) {
    j["optimized"] = pass_report_json(*m.optimized);
    j["optimized"]["kernels"] = kernel_selection();
  }
  j["op_histogram"] = m.op_histogram;
  j["ops_without_kernel"] = m.ops_without_kernel;
  j["parameters"] = m.parameters;
  j["parameter_bytes"] = m.parameter_bytes;
  if (m.shapes_known) {
    j["flops"] = m.flops.total;
    j["flops_by_op"] = m.flops.by_op;
    j["flops_unknown_nodes"] = m.flops.unknown_nodes;
  } else {
    j["flops"] = nullptr;
  }
  j["memory"] = m.shapes_known ? memory_json(m.memory) : nlohmann::json(nullptr);
  if (!placement.is_null()) j["placement"] = placement;
  if (args.json) {
    std::cout << json_text(j) << std::endl;
    return Status::ok();
  }
  std::cout << args.model << "\n  ir_version " << m.ir_version << ", producer '" << m.producer_name << "', opsets:";
  for (const auto& [domain, version] : m.opsets)
    std::cout << " " << (domain.empty() ? "ai.onnx" : domain) << "=" << version;
  std::cout << "\n  inputs:\n";
  for (const auto& v : m.inputs)
    std::cout << "    " << v.name << " " << dtype_name(v.dtype) << " " << dims_text(v.shape, v.rank_known) << "\n";
  std::cout << "  outputs:\n";
  for (const auto& v : m.outputs)
    std::cout << "    " << v.name << " " << dtype_name(v.dtype) << " " << dims_text(v.shape, v.rank_known) << "\n";
  std::cout << "  nodes: " << m.nodes << "\n  parameters: " << m.parameters << " (" << std::fixed
            << std::setprecision(2) << m.parameter_bytes / 1048576.0 << " MiB)\n";
  if (args.optimized) print_pass_report(*m.optimized);
  if (!placement.is_null()) print_placement(placement);
  if (m.shapes_known) {
    std::cout << "  FLOPs: " << std::setprecision(3) << m.flops.total / 1e9 << " G";
    if (m.flops.unknown_nodes)
      std::cout << " (" << m.flops.unknown_nodes << " nodes without inferred shapes not counted)";
    std::cout << "\n";
  } else {
    std::cout << "  FLOPs: unknown (symbolic input dims; pass --shape name=1,3,640,640)\n";
  }
  if (m.shapes_known) print_memory(m.memory);
  std::vector<std::pair<std::string, int>> ops(m.op_histogram.begin(), m.op_histogram.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  const auto native = std::count_if(m.op_histogram.begin(), m.op_histogram.end(),
                                    [&m](const auto& entry) { return m.ops_without_kernel.count(entry.first) == 0; });
  std::cout << "  op histogram (" << native << " of " << m.op_histogram.size()
            << " ops run on edgemm's CPU kernels):\n";
  for (const auto& [op, count] : ops) {
    std::cout << "    " << padded(op, 32) << std::setw(4) << count;
    if (m.shapes_known && m.flops.by_op.count(op))
      std::cout << "  " << std::setprecision(3) << m.flops.by_op.at(op) / 1e9 << " GFLOP";
    if (m.ops_without_kernel.count(op)) std::cout << "  (no CPU kernel)";
    std::cout << "\n";
  }
  for (const auto& op : m.ops_without_kernel) {
    if (m.op_histogram.count(op) == 0) std::cout << "    " << padded(op, 36) << "  (in a subgraph; no CPU kernel)\n";
  }
  return Status::ok();
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's opsets, inputs/outputs, ops, parameters and FLOPs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-s,--shape", args->shapes, "pin a symbolic input shape, name=1,3,640,640 (for FLOPs)");
  cmd->add_flag("--optimized", args->optimized,
                "show the graph after the load-time passes (what edgemm runs) and what they rewrote");
  cmd->add_option("--target", args->target,
                  "target profile, a file stem in platforms/ (e.g. rk3588; an unknown name lists them): per node, "
                  "NPU-eligible or CPU fallback with the reason, partitions, crossing tensors, fixes");
  cmd->add_option("--platforms", args->platforms, "folder of the target profiles (default: platforms/)");
  cmd->add_flag("--json", args->json, "print a JSON report");
  args->backend.add_to(cmd);
  cmd->callback([args, cmd, &exit_code] {
    args->target_given = cmd->count("--target") > 0;
    Status status = inspect_command(*args);
    if (!status.is_ok()) exit_code = report_error("inspect", status, args->json);
  });
}

}  // namespace edgemm::cli
