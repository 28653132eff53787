#pragma once
/// \file model_bench.h
/// `edgemm bench MODEL`: one point per (sweep value, thread count); at each point every
/// runtime gets the same inputs, threads and iteration plan (compare.h).

#include <functional>
#include <string>
#include <vector>

#include "bench/compare.h"
#include "edgemm/tools/bench_inputs.h"
#include "bench/report.h"

namespace edgemm::bench {

/// A sweep over one input dimension: "size" sets both spatial axes (the last two) of every
/// rank-4 input, "height" the second-to-last, "width" the last axis of every input of rank ≥ 2,
/// "batch" axis 0 of every input.
struct Sweep {
  std::string key;              ///< "" (no sweep), "size", "height", "width" or "batch"
  std::vector<int64_t> values;  ///< each ≥ 1
};

/// Everything a model benchmark needs.
struct ModelBenchOptions {
  std::string model;
  InputSpec inputs;                ///< shapes given by --shape are also pinned in edgemm at load
  std::vector<int> threads = {1};  ///< one point per count
  Sweep sweep;
  std::vector<std::string> runtimes = {"edgemm"};  ///< canonical names, edgemm first
  EdgemmBackend edgemm_backend;                    ///< the backend the edgemm runtime runs on
  CompareOptions compare;
  std::string reference_dir;  ///< for the ONNX Runtime peer
  double timeout_s = 600;
  /// Called before each point with (index, count, description), for progress output.
  std::function<void(int, int, const std::string&)> on_point;
};

/// Parses "size=320,640,960" (key=values). Errors: kInvalidArgument naming the key or value.
Expected<Sweep> parse_sweep(const std::string& text);

/// The input spec of one sweep point: `base` with the swept axes of every affected input set
/// to `value`. Base shapes come from base.shapes or the declared shape (symbolic axes stay
/// unresolved and make_inputs() reports them). Errors: kInvalidArgument when no input has the
/// swept axis, or a swept input comes from a .npy file.
Expected<InputSpec> apply_sweep(const std::vector<ValueInfo>& declared, const InputSpec& base, const std::string& key,
                                int64_t value);

/// Runs the whole benchmark. Errors: the model cannot be imported (kIo, kInvalidModel), a
/// point's shapes cannot fit in memory (kOutOfMemory from check_shapes_fit_memory, checked
/// for every point before any is measured), or the inputs cannot be built (see make_inputs); a
/// runtime that fails is reported in its result.
Expected<std::vector<BenchPoint>> bench_model(const ModelBenchOptions& options);

}  // namespace edgemm::bench
