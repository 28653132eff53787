#pragma once
/// \file model_profile.h
/// Per-node and per-op-type profiles of a model: profiled runs (Inferencer::run_profiled)
/// aggregated into a ProfileReport, written as JSON (schema "edgemm.profile/1"), Markdown or an
/// HTML page. `edgemm profile` is its front end; the library is edgemm::bench (tool-side,
/// docs/sdk.md).
///
/// Only main-graph nodes (depth 0) are aggregated: a subgraph's nodes run inside their
/// If/Loop/Scan node, whose time already includes them (they are in the Chrome trace).

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tools/bench_inputs.h"
#include "edgemm/inferencer.h"

namespace edgemm::bench {

/// Identifies a ProfileReport JSON document ("schema" key); bumped on incompatible changes.
inline constexpr const char* kProfileSchema = "edgemm.profile/1";

/// One profiled run: wall time around Inferencer::run_profiled and its node executions.
struct ProfiledSample {
  double wall_us = 0;              ///< whole run() call, microseconds
  std::vector<NodeProfile> nodes;  ///< as run_profiled returns them
};

/// Runs `warmup` untimed runs (the first of an input shape records its memory plan and is
/// slower), then `iterations` profiled runs. Errors: those of Inferencer::run;
/// kInvalidArgument when `warmup` < 0 or `iterations` < 1.
Expected<std::vector<ProfiledSample>> collect_profiles(const Inferencer& inferencer, const NamedTensors& inputs,
                                                       int warmup, int iterations);

/// Index of the sample whose wall time is the median (the lower middle one for an even count):
/// the "representative run" whose trace `edgemm profile --trace` writes. Requires samples.
size_t median_sample(const std::vector<ProfiledSample>& samples);

/// One main-graph node over all runs. Times in microseconds.
struct NodeStats {
  int index = 0;                     ///< position in execution order (0-based, main graph)
  std::string node;                  ///< ONNX node name (may be empty)
  std::string op_type;               ///< ONNX op, e.g. "Conv"
  std::string kernel;                ///< kernel that ran it
  std::vector<Shape> output_shapes;  ///< computed output shapes
  double median_us = 0;              ///< median of its duration over the runs
  double share_percent = 0;          ///< median_us / ProfileReport::node_sum_us × 100
  int64_t flops = 0;                 ///< see NodeProfile::flops
  double gflops_per_s = 0;           ///< flops / median_us / 1e3; 0 when median_us is 0
  int64_t bytes = 0;                 ///< see NodeProfile::bytes
  bool operator==(const NodeStats&) const = default;
};

/// All main-graph nodes of one op type. Times in microseconds.
struct OpTypeStats {
  std::string op_type;
  int count = 0;             ///< nodes of this type
  double time_us = 0;        ///< sum of their median times
  double share_percent = 0;  ///< time_us / ProfileReport::node_sum_us × 100
  int64_t flops = 0;         ///< sum over the nodes
  double gflops_per_s = 0;   ///< flops / time_us / 1e3; 0 when time_us is 0
  int64_t bytes = 0;         ///< sum over the nodes
  bool operator==(const OpTypeStats&) const = default;
};

/// Aggregate of N profiled runs of one model on one input set. Times in microseconds.
/// `overhead_us` = median_wall_us − node_sum_us is the time not attributed to any node's
/// median: framework work outside the kernels (input checks, plan lookup, arena hand-out,
/// dispatch and profiling between nodes) plus, on a busy machine, stalls that hit a different
/// node in each run (a sum of medians is not the median of sums, so it can also be negative).
struct ProfileReport {
  std::string model;                  ///< model path, as given
  std::string inputs;                 ///< describe_inputs() of the inputs used
  int threads = 0;                    ///< intra-op threads
  int warmup = 0;                     ///< untimed runs before the profiled ones
  int iterations = 0;                 ///< profiled runs aggregated
  double median_wall_us = 0;          ///< median wall time of a whole run
  double node_sum_us = 0;             ///< sum of the node medians
  double overhead_us = 0;             ///< median_wall_us − node_sum_us
  int64_t flops = 0;                  ///< sum of node FLOPs
  double gflops_per_s = 0;            ///< flops / median_wall_us / 1e3 (achieved, whole run)
  int64_t bytes = 0;                  ///< sum of node bytes
  std::vector<NodeStats> nodes;       ///< execution order
  std::vector<OpTypeStats> op_types;  ///< by time, longest first (ties by name)
  bool operator==(const ProfileReport&) const = default;
};

/// Aggregates samples: per node (matched by execution position) the median duration over the
/// runs, shares of the sum of medians, FLOPs and bytes (from the first run), then per op type
/// totals. Leaves model, inputs, threads and warmup empty for the caller.
/// Errors: kInvalidArgument when `samples` is empty or the runs' main-graph node sequences
/// differ (names or op types).
Expected<ProfileReport> aggregate_profiles(const std::vector<ProfiledSample>& samples);

/// JSON text of a report, indented by 2: {"schema": "edgemm.profile/1", model, inputs, threads,
/// warmup, iterations, median_wall_us, node_sum_us, overhead_us, flops, gflops_per_s, bytes,
/// nodes: [{index, node, op_type, kernel, output_shapes: [[dims]], median_us, share_percent,
/// flops, gflops_per_s, bytes}], op_types: [{op_type, count, time_us, share_percent, flops,
/// gflops_per_s, bytes}]}. Doubles are written in shortest round-trip form; invalid UTF-8 in
/// names is replaced (U+FFFD).
std::string profile_report_json(const ProfileReport& report);

/// Table cells, header row first, shared by the Markdown writer and the CLI's text output.
using TextTable = std::vector<std::vector<std::string>>;

/// Nodes by median time, longest first (ties in execution order), at most `top` rows (0 = all):
/// #, node, op type, kernel, output shapes, median ms, share %, GFLOP, GFLOP/s, MB.
TextTable node_table(const ProfileReport& report, size_t top);

/// Op types as in report.op_types: op type, nodes, time ms, share %, GFLOP, GFLOP/s, MB.
TextTable op_type_table(const ProfileReport& report);

/// Markdown: a summary list, the node table (top `top` by time, 0 = all) and the op-type table.
std::string profile_report_markdown(const ProfileReport& report, size_t top = 0);

/// The report as a self-contained HTML page (`edgemm profile --report out.html`): the summary,
/// charts of the per-op-type breakdown (time share, achieved GFLOP/s) and of the slowest nodes,
/// then the op-type and node tables. Every string from the report (model path, node names) is
/// escaped.
std::string profile_to_html(const ProfileReport& report);

}  // namespace edgemm::bench
