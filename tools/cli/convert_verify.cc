#include "convert_verify.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <optional>
#include <random>
#include <sstream>

#include "cli_common.h"
#include "edgemm/inferencer.h"
#include "edgemm/npy.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/quantize.h"

extern char** environ;

namespace edgemm::cli {

namespace fs = std::filesystem;

namespace {

using Named = std::vector<std::pair<std::string, Tensor>>;

/// The declared inputs and output names of a model file (no checker, no inference).
struct ModelSignature {
  std::vector<ValueInfo> inputs;
  std::vector<std::string> outputs;
};

Expected<ModelSignature> read_signature(const std::string& path) {
  OnnxLoadOptions options;
  options.run_checker = false;
  options.infer_shapes = false;
  EDGEMM_ASSIGN_OR_RETURN(const OnnxModel model, OnnxModel::load(path, options));
  ModelSignature sig;
  sig.inputs = model.inputs();
  for (const ValueInfo& out : model.outputs()) sig.outputs.push_back(out.name);
  return sig;
}

Expected<Shape> input_shape(const ValueInfo& input, const std::map<std::string, Shape>& shapes) {
  if (auto it = shapes.find(input.name); it != shapes.end()) return it->second;
  Shape shape;
  for (const Dim& d : input.shape) shape.push_back(d.value);
  const bool is_static = input.rank_known && std::all_of(input.shape.begin(), input.shape.end(),
                                                         [](const Dim& d) { return d.is_static(); });
  if (!is_static) {
    return make_error(StatusCode::kInvalidArgument, "input '" + input.name + "' has symbolic dims " +
                                                        dims_text(input.shape, input.rank_known) +
                                                        ": give --fix-shape or --verify-shape " + input.name +
                                                        "=... for the verification (or --no-verify)");
  }
  return shape;
}

/// Seeded values: floats uniform in [-1, 1), integers and booleans zero.
Expected<Tensor> random_tensor(DataType dtype, const Shape& shape, uint32_t seed) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype == DataType::kUndefined ? DataType::kFloat32 : dtype, shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < t.element_count(); ++i) {
    if (t.dtype() == DataType::kFloat32)
      t.data<float>()[i] = static_cast<float>(uniform(rng));
    else if (t.dtype() == DataType::kFloat64)
      t.data<double>()[i] = uniform(rng);
  }
  if (t.dtype() != DataType::kFloat32 && t.dtype() != DataType::kFloat64 && t.byte_size() > 0) {
    std::memset(t.raw_data(), 0, t.byte_size());
  }
  return t;
}

Expected<Named> random_inputs(const ModelSignature& sig, const VerifyOptions& options) {
  Named feeds;
  uint32_t index = 0;
  for (const ValueInfo& input : sig.inputs) {
    EDGEMM_ASSIGN_OR_RETURN(Shape shape, input_shape(input, options.shapes));
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, random_tensor(input.dtype, shape, options.seed + index++));
    feeds.emplace_back(input.name, std::move(t));
  }
  return feeds;
}

Expected<Named> given_inputs(const ModelSignature& sig, const Named& random, const VerifyOptions& options) {
  Named feeds = random;
  for (const auto& [name, tensor] : options.given) {
    auto it = std::find_if(feeds.begin(), feeds.end(), [&](const auto& f) { return f.first == name; });
    if (it == feeds.end()) {
      return make_error(StatusCode::kInvalidArgument,
                        "--input names '" + name + "', which is not an input of the model");
    }
    if (auto shape = options.shapes.find(name); shape != options.shapes.end() && shape->second != tensor.shape()) {
      return make_error(StatusCode::kInvalidArgument,
                        "--input " + name + " has shape " + shape_to_string(tensor.shape()) +
                            " but the shape given for '" + name + "' is " + shape_to_string(shape->second));
    }
    it->second = tensor;
  }
  return feeds;
}

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data<float>()[i];
    case DataType::kFloat64:
      return t.data<double>()[i];
    case DataType::kInt64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kInt32:
      return t.data<int32_t>()[i];
    case DataType::kBool:
    case DataType::kUInt8:
      return t.data<uint8_t>()[i];
    case DataType::kInt8:
      return t.data<int8_t>()[i];
    default:
      return NAN;
  }
}

/// Largest |a - b|; infinite when shapes differ or only one side is NaN.
double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.element_count() != b.element_count()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = element(a, i), y = element(b, i);
    const double d =
        std::isnan(x) || std::isnan(y) ? (std::isnan(x) && std::isnan(y) ? 0 : INFINITY) : std::fabs(x - y);
    worst = std::max(worst, d);
  }
  return worst;
}

Expected<Named> run_edgemm(const std::string& path, const Named& feeds, int threads) {
  InferencerConfig config;
  config.model_path = path;
  config.threads = threads;
  for (const auto& [name, t] : feeds) config.fixed_input_shapes[name] = t.shape();
  EDGEMM_ASSIGN_OR_RETURN(auto inferencer, Inferencer::create(config));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, inferencer->run(feeds));
  Named named;
  for (size_t i = 0; i < outputs.size(); ++i) named.emplace_back(inferencer->outputs()[i].name, std::move(outputs[i]));
  return named;
}

/// Runs `argv` (PATH lookup) with stdout and stderr to `log`; returns the exit status, or -1
/// when it could not be started.
int run_process(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

/// A temporary folder removed when destroyed.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path =
        fs::temp_directory_path() / ("edgemm_convert_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// ONNX Runtime through node: tools/reference/ort_run.js writes each output as .npy.
Expected<Named> run_ort(const std::string& path, const Named& feeds, const std::vector<std::string>& outputs,
                        const std::string& reference_dir) {
  TempDir dir;
  std::vector<std::string> argv = {"node",
                                   (fs::path(reference_dir) / "ort_run.js").string(),
                                   path,
                                   "--output-dir",
                                   (dir.path / "out").string(),
                                   "--opt-level",
                                   "disabled"};
  for (const auto& [name, t] : feeds) {
    const std::string file = (dir.path / ("in_" + npy_file_name(name))).string();
    EDGEMM_RETURN_IF_ERROR(write_npy(file, t));
    argv.push_back("--input");
    argv.push_back(name + "=" + file);
  }
  const std::string log = (dir.path / "ort.log").string();
  const int status = run_process(argv, log);
  if (status != 0) {
    return make_error(StatusCode::kUnsupported,
                      "ONNX Runtime failed (exit " + std::to_string(status) + "): " + last_lines(log));
  }
  Named named;
  for (const std::string& name : outputs) {
    const fs::path file = dir.path / "out" / npy_file_name(name);
    if (!fs::exists(file)) {
      return make_error(StatusCode::kInternal, "ONNX Runtime wrote no output '" + name + "': " + last_lines(log));
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(file.string()));
    named.emplace_back(name, std::move(t));
  }
  return named;
}

/// OpenCV DNN (cv::dnn::readNetFromONNX, default backend and CPU target), float32 inputs.
Expected<Named> run_opencv(const std::string& path, const Named& feeds, const std::vector<std::string>& outputs,
                           int threads) {
  cv::setNumThreads(threads);
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  std::vector<cv::Mat> mats;
  try {
    cv::dnn::Net net = cv::dnn::readNetFromONNX(path);
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    for (const auto& [name, t] : feeds) {
      if (t.dtype() != DataType::kFloat32) {
        return make_error(StatusCode::kUnsupported, "input '" + name + "' is not float32");
      }
      const std::vector<int> dims(t.shape().begin(), t.shape().end());
      net.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F, const_cast<void*>(t.raw_data())).clone(),
                   name);
    }
    std::vector<cv::String> names(outputs.begin(), outputs.end());
    net.forward(mats, names);
  } catch (const cv::Exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return make_error(StatusCode::kUnsupported, "OpenCV DNN: " + what);
  }
  Named named;
  for (size_t i = 0; i < mats.size() && i < outputs.size(); ++i) {
    const cv::Mat m = mats[i].isContinuous() ? mats[i] : mats[i].clone();
    Shape shape(m.size.p, m.size.p + m.dims);
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat32, shape));
    std::memcpy(t.raw_data(), m.ptr<float>(), t.byte_size());
    named.emplace_back(outputs[i], std::move(t));
  }
  return named;
}

/// Compares outputs by name into `check`; an output missing on one side counts as infinite.
void compare(const Named& reference, const Named& got, EngineCheck& check) {
  for (const auto& [name, want] : reference) {
    auto it = std::find_if(got.begin(), got.end(), [&](const auto& g) { return g.first == name; });
    check.max_abs_error.emplace_back(name, it == got.end() ? INFINITY : max_abs_diff(want, it->second));
  }
}

/// Runs `run` on both models (original first) and records the comparison.
EngineCheck run_pair(const std::string& engine, const std::string& input_set,
                     const std::function<Expected<Named>(const std::string&)>& run, const std::string& original,
                     const std::string& converted) {
  EngineCheck check{engine, input_set, "converted vs original", {}, "", ""};
  auto want = run(original);
  if (!want) {
    check.failed = "original model: " + want.status().message();
    return check;
  }
  auto got = run(converted);
  if (!got) {
    check.failed = "converted model: " + got.status().message();
    return check;
  }
  compare(*want, *got, check);
  return check;
}

std::string ort_missing(const std::string& reference_dir) {
  if (!fs::exists(fs::path(reference_dir) / "ort_run.js")) return "no ort_run.js in '" + reference_dir + "'";
  if (!fs::exists(fs::path(reference_dir) / "node_modules" / "onnxruntime-node")) {
    return "onnxruntime-node is not installed under '" + reference_dir + "' (scripts/setup.sh installs it)";
  }
  if (run_process({"node", "--version"}, "/dev/null") != 0) return "node is not installed";
  return "";
}

}  // namespace

double EngineCheck::worst() const {
  double worst = 0;
  for (const auto& [name, err] : max_abs_error) worst = std::max(worst, err);
  return worst;
}

Status check_verify_inputs(const std::string& original, const VerifyOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(ModelSignature sig, read_signature(original));
  EDGEMM_ASSIGN_OR_RETURN(Named random, random_inputs(sig, options));
  return given_inputs(sig, random, options).status();
}

Expected<VerifyReport> verify_conversion(const std::string& original, const std::string& converted,
                                         const VerifyOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(ModelSignature sig, read_signature(original));
  std::vector<std::pair<std::string, Named>> sets;
  EDGEMM_ASSIGN_OR_RETURN(Named random, random_inputs(sig, options));
  if (!options.given.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(Named given, given_inputs(sig, random, options));
    sets.emplace_back("given", std::move(given));
  }
  sets.emplace(sets.begin(), "random (seed " + std::to_string(options.seed) + ")", std::move(random));
  auto progress = [&](const std::string& step) {
    if (options.progress) options.progress(step);
  };
  VerifyReport report;
  report.tolerance = options.tolerance;
  const std::string ort_skip = ort_missing(options.reference_dir);
  for (const auto& [set_name, feeds] : sets) {
    progress("verifying with edgemm on " + set_name + " inputs");
    report.checks.push_back(run_pair(
        "edgemm", set_name, [&](const std::string& p) { return run_edgemm(p, feeds, options.threads); }, original,
        converted));
    progress("verifying with ONNX Runtime on " + set_name + " inputs");
    if (ort_skip.empty()) {
      report.checks.push_back(run_pair(
          "onnxruntime", set_name,
          [&](const std::string& p) { return run_ort(p, feeds, sig.outputs, options.reference_dir); }, original,
          converted));
    } else {
      report.checks.push_back(EngineCheck{"onnxruntime", set_name, "converted vs original", {}, ort_skip, ""});
    }
    if (!options.opencv) continue;
    progress("verifying with OpenCV DNN on " + set_name + " inputs");
    EngineCheck check{"opencv", set_name, "converted vs edgemm original", {}, "", ""};
    auto want = run_edgemm(original, feeds, options.threads);
    auto got = run_opencv(converted, feeds, sig.outputs, options.threads);
    if (!want)
      check.failed = "edgemm on the original model: " + want.status().message();
    else if (!got)
      check.failed = got.status().message();
    else
      compare(*want, *got, check);
    if (report.opencv_original.empty() && set_name == sets.front().first) {
      auto before = run_opencv(original, feeds, sig.outputs, options.threads);
      report.opencv_original = before ? "" : before.status().message();
    }
    report.checks.push_back(std::move(check));
  }
  for (const EngineCheck& check : report.checks) {
    if (!check.failed.empty() || check.worst() > options.tolerance) report.passed = false;
  }
  return report;
}

namespace {

/// quant::output_error's SQNR of `quantized` against `reference`; NaN unless both are
/// float32 outputs of the same sizes, with at least one value.
double sqnr_db(const Named& reference, const Named& quantized) {
  if (reference.size() != quantized.size()) return NAN;
  std::vector<Tensor> want, got;
  int64_t values = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const Tensor& a = reference[i].second;
    const Tensor& b = quantized[i].second;
    if (a.dtype() != DataType::kFloat32 || b.dtype() != DataType::kFloat32 || a.element_count() != b.element_count())
      return NAN;
    values += a.element_count();
    want.push_back(a);
    got.push_back(b);
  }
  return values == 0 ? NAN : quant::output_error({want}, {got}).sqnr_db;
}

/// Share of `got`'s values within one step ((max − min) / 255 of each `reference` output).
double share_within_step(const Named& reference, const Named& got, double& max_abs) {
  int64_t within = 0, total = 0;
  max_abs = 0;
  for (size_t o = 0; o < reference.size() && o < got.size(); ++o) {
    const Tensor& a = reference[o].second;
    const Tensor& b = got[o].second;
    if (a.dtype() != DataType::kFloat32 || b.dtype() != DataType::kFloat32 || a.element_count() != b.element_count())
      return NAN;
    const float* x = a.data<float>();
    const float* y = b.data<float>();
    const auto [lo, hi] = std::minmax_element(x, x + a.element_count());
    const double step = a.element_count() ? (double(*hi) - *lo) / 255 : 0;
    for (int64_t i = 0; i < a.element_count(); ++i) {
      const double d = std::fabs(double(x[i]) - y[i]);
      max_abs = std::max(max_abs, d);
      within += d <= step;
    }
    total += a.element_count();
  }
  return total ? double(within) / total : NAN;
}

}  // namespace

Expected<Int8VerifyReport> verify_int8(const std::string& float_model, const std::string& int8_model,
                                       const std::vector<std::pair<std::string, Tensor>>& feeds,
                                       const VerifyOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(ModelSignature sig, read_signature(float_model));
  Int8VerifyReport report;
  std::optional<Named> edgemm_int8, ort_int8;
  const std::string ort_skip = ort_missing(options.reference_dir);
  for (const std::string engine : {"edgemm", "onnxruntime"}) {
    Int8EngineCheck check{engine, 0, "", ""};
    if (engine == "onnxruntime" && !ort_skip.empty()) {
      check.skipped = ort_skip;
      report.checks.push_back(check);
      continue;
    }
    if (options.progress) options.progress("measuring the int8 model's error with " + engine);
    const auto run = [&](const std::string& path) {
      return engine == "edgemm" ? run_edgemm(path, feeds, options.threads)
                                : run_ort(path, feeds, sig.outputs, options.reference_dir);
    };
    auto want = run(float_model);
    auto got = run(int8_model);
    if (!want || !got) {
      check.failed = !want ? "float model: " + want.status().message() : "int8 model: " + got.status().message();
    } else {
      check.sqnr_db = sqnr_db(*want, *got);
      (engine == "edgemm" ? edgemm_int8 : ort_int8) = std::move(*got);
    }
    report.checks.push_back(check);
  }
  if (edgemm_int8 && ort_int8) report.within_step = share_within_step(*ort_int8, *edgemm_int8, report.max_abs_error);
  return report;
}

nlohmann::json int8_verify_json(const Int8VerifyReport& report) {
  const auto number = [](double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf");
  };
  nlohmann::json checks = nlohmann::json::array();
  for (const Int8EngineCheck& c : report.checks) {
    nlohmann::json j = {{"engine", c.engine},
                        {"sqnr_db", c.skipped.empty() && c.failed.empty() ? number(c.sqnr_db) : nullptr}};
    if (!c.skipped.empty()) j["skipped"] = c.skipped;
    if (!c.failed.empty()) j["failed"] = c.failed;
    checks.push_back(j);
  }
  return {{"checks", checks},
          {"ort_agreement",
           {{"within_step", number(report.within_step)}, {"max_abs_error", number(report.max_abs_error)}}}};
}

nlohmann::json verify_json(const VerifyReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const EngineCheck& check : report.checks) {
    nlohmann::json outputs = nlohmann::json::object();
    for (const auto& [name, err] : check.max_abs_error)
      outputs[name] = std::isfinite(err) ? nlohmann::json(err) : nlohmann::json("inf");
    nlohmann::json j = {
        {"engine", check.engine}, {"input_set", check.input_set}, {"compared", check.compared}, {"outputs", outputs}};
    j["max_abs_error"] = check.max_abs_error.empty()    ? nlohmann::json(nullptr)
                         : std::isfinite(check.worst()) ? nlohmann::json(check.worst())
                                                        : nlohmann::json("inf");
    if (!check.skipped.empty()) j["skipped"] = check.skipped;
    if (!check.failed.empty()) j["failed"] = check.failed;
    checks.push_back(j);
  }
  nlohmann::json j = {{"tolerance", report.tolerance}, {"passed", report.passed}, {"checks", checks}};
  if (!report.opencv_original.empty()) j["opencv_original"] = report.opencv_original;
  return j;
}

}  // namespace edgemm::cli
