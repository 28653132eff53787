/// `edgemm convert MODEL -o OUT`: fixed shapes, simplification and opset conversion with
/// standard ONNX ops only (edgemm/tools/convert.h), then verification against the input model
/// (convert_verify.h). docs/convert.md describes the options and the rewrites.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "convert_target.h"
#include "convert_verify.h"
#include "edgemm/memory_check.h"
#include "edgemm/npy.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/convert.h"
#include "ocr_calibration.h"

namespace edgemm::cli {

namespace {

/// Exit code when the verification finds a difference above the tolerance (or an engine fails).
constexpr int kVerifyFailedExit = 1;

struct ConvertArgs {
  std::string model;
  std::string output;
  std::vector<std::string> fix_shapes;
  std::vector<std::string> verify_shapes;
  std::vector<std::string> inputs;
  bool simplify = false;
  int64_t opset = 0;
  bool no_verify = false;
  bool verify_opencv = false;
  double tolerance = 1e-4;
  uint32_t seed = 1;
  int threads = 1;
  std::string reference_dir;
  bool json = false;
  std::string target;
  bool target_given = false;
  std::string platforms;
  std::string calib;
  int calib_count = 64;
  bool calib_count_given = false;
  bool int8 = false;
  std::string int8_method = "mse";
  bool int8_method_given = false;
  bool bgr = false;
  std::vector<float> mean;  ///< empty: 0 (with std 1: the model takes raw 0-255 pixels)
  std::vector<float> std;
  std::string stage;  ///< --stage ocr-det|ocr-cls|ocr-rec
  std::string ocr_models;
};

void progress(const ConvertArgs& args, const std::string& step) {
  std::cerr << "edgemm convert: " << step << "..." << std::endl;
}

nlohmann::json report_json(const ConvertArgs& args, const convert::ConvertReport& r) {
  return {{"model", args.model},
          {"output", args.output},
          {"opset", {{"from", r.source_opset}, {"to", r.target_opset}}},
          {"nodes", {{"before", r.nodes_before}, {"after", r.nodes_after}}},
          {"folded_nodes", r.folded_nodes},
          {"removed_nodes", r.removed_nodes},
          {"rounds", r.rounds},
          {"rewrites", r.rewrites},
          {"ops_before", r.ops_before},
          {"ops_after", r.ops_after}};
}

std::string error_text(double err) {
  if (!std::isfinite(err)) return "inf";
  std::ostringstream s;
  s << std::scientific << std::setprecision(2) << err;
  return s.str();
}

void print_text(const convert::ConvertReport& r, const ConvertArgs& args, const VerifyReport* verify) {
  std::cout << "wrote " << args.output << ": opset " << r.source_opset << " → " << r.target_opset << ", "
            << r.nodes_before << " → " << r.nodes_after << " nodes (" << r.folded_nodes << " folded, "
            << r.removed_nodes << " removed)\n";
  for (const auto& [name, n] : r.rewrites) std::cout << "  " << name << ": " << n << "\n";
  if (verify == nullptr) return;
  std::cout << "verification (max abs error, tolerance " << error_text(verify->tolerance) << "):\n";
  for (const EngineCheck& c : verify->checks) {
    std::cout << "  " << std::left << std::setw(12) << c.engine << c.input_set << ", " << c.compared << ": ";
    if (!c.skipped.empty()) {
      std::cout << "skipped (" << c.skipped << ")\n";
      continue;
    }
    if (!c.failed.empty()) {
      std::cout << "FAILED (" << c.failed << ")\n";
      continue;
    }
    for (size_t i = 0; i < c.max_abs_error.size(); ++i) {
      std::cout << (i ? ", " : "") << c.max_abs_error[i].first << " " << error_text(c.max_abs_error[i].second);
    }
    std::cout << (c.worst() > verify->tolerance ? "  ABOVE TOLERANCE" : "") << "\n";
  }
  if (args.verify_opencv) {
    std::cout << "  OpenCV DNN on the input model: "
              << (verify->opencv_original.empty() ? "loads and runs" : verify->opencv_original) << "\n";
  }
}

Expected<VerifyOptions> verify_options(const ConvertArgs& args, const std::map<std::string, Shape>& fixed) {
  VerifyOptions options;
  EDGEMM_ASSIGN_OR_RETURN(options.shapes, parse_named_shapes(args.verify_shapes, "--verify-shape"));
  for (const auto& [name, shape] : fixed) options.shapes[name] = shape;
  for (const std::string& spec : args.inputs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(kv.second));
    options.given.emplace_back(kv.first, std::move(t));
  }
  options.seed = args.seed;
  options.tolerance = args.tolerance;
  options.opencv = args.verify_opencv;
  options.threads = resolve_threads(args.threads);
  options.reference_dir =
      args.reference_dir.empty() ? default_repo_dir("EDGEMM_REFERENCE_DIR", "tools/reference") : args.reference_dir;
  options.progress = [&args](const std::string& step) { progress(args, step); };
  return options;
}

/// The checks that failed, e.g. "opencv on random (seed 1): failed to run; edgemm on given: 3.1e-03
/// above 1.0e-04".
std::string failed_checks(const VerifyReport& report) {
  std::string text;
  for (const EngineCheck& c : report.checks) {
    std::string why;
    if (!c.failed.empty()) why = "failed to run";
    if (c.failed.empty() && c.skipped.empty() && c.worst() > report.tolerance) {
      why = error_text(c.worst()) + " above " + error_text(report.tolerance);
    }
    if (why.empty()) continue;
    text += (text.empty() ? "" : "; ") + c.engine + " on " + c.input_set + ": " + why;
  }
  return text;
}

/// `convert --target`: the deployment folder (convert_target.h).
Expected<int> convert_target_command(const ConvertArgs& args) {
  if (args.simplify || args.opset != 0 || args.verify_opencv) {
    return Status(StatusCode::kInvalidArgument,
                  "--target chooses the rewrites itself: drop --simplify, --opset and --verify-opencv");
  }
  const auto finite = [](float v) { return std::isfinite(v); };
  if (args.mean.size() != args.std.size() || !std::all_of(args.mean.begin(), args.mean.end(), finite) ||
      !std::all_of(args.std.begin(), args.std.end(), finite) ||
      std::any_of(args.std.begin(), args.std.end(), [](float v) { return !(v >= 1e-6f); })) {
    return Status(StatusCode::kInvalidArgument,
                  "--mean and --std go together, 3 finite values each (RGB, 0-255 units), --std values >= 1e-6");
  }
  TargetConvertArgs t;
  t.model = args.model;
  t.output_dir = args.output;
  t.target = args.target;
  t.platforms = args.platforms;
  EDGEMM_ASSIGN_OR_RETURN(t.fixed_shapes, parse_named_shapes(args.fix_shapes, "--fix-shape"));
  t.calib = args.calib;
  t.calib_count = args.calib_count;
  if (args.calib_count_given && args.calib.empty())
    return Status(StatusCode::kInvalidArgument, "--calib-count needs --calib");
  if (args.int8_method_given && !args.int8) return Status(StatusCode::kInvalidArgument, "--int8-method needs --int8");
  t.bgr = args.bgr;
  t.int8 = args.int8;
  t.int8_method = args.int8_method;
  t.threads = args.threads;
  t.ocr_models = args.ocr_models;
  if (!args.mean.empty()) {
    std::copy(args.mean.begin(), args.mean.end(), t.mean.begin());
    std::copy(args.std.begin(), args.std.end(), t.std.begin());
    t.normalization_given = true;
  }
  if (!args.ocr_models.empty() && args.stage.empty()) {
    return Status(StatusCode::kInvalidArgument, "--ocr-models needs --stage");
  }
  if (!args.stage.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(t.stage, ocr_stage(args.stage));
    if (t.normalization_given || args.bgr) {
      return Status(StatusCode::kInvalidArgument,
                    "--stage takes the input normalization and channel order from the OCR pipeline's own "
                    "preprocessing: drop --mean, --std and --bgr");
    }
    const StageNormalization n = ocr_stage_normalization(t.stage);  // B, G, R; t.mean/std are R, G, B
    t.mean = {n.mean_bgr[2], n.mean_bgr[1], n.mean_bgr[0]};
    t.std = {n.std_bgr[2], n.std_bgr[1], n.std_bgr[0]};
    t.bgr = true;
    t.normalization_given = true;
  }
  t.json = args.json;
  if (args.no_verify) return convert_for_target(t, nullptr);
  EDGEMM_ASSIGN_OR_RETURN(VerifyOptions verify, verify_options(args, t.fixed_shapes));
  return convert_for_target(t, &verify);
}

/// Converts and writes; returns the exit code (0, or kVerifyFailedExit) or an error.
Expected<int> convert_command(const ConvertArgs& args) {
  if (args.target_given && args.target.empty()) return Status(StatusCode::kInvalidArgument, "--target needs a name");
  if (!args.target.empty()) return convert_target_command(args);
  if (!args.calib.empty() || !args.mean.empty() || !args.std.empty() || !args.platforms.empty() || args.int8 ||
      args.bgr || !args.stage.empty() || !args.ocr_models.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--calib, --mean, --std, --bgr, --stage, --ocr-models, --int8 and --platforms need --target");
  }
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, {args.model}));
  convert::ConvertOptions options;
  EDGEMM_ASSIGN_OR_RETURN(options.fixed_shapes, parse_named_shapes(args.fix_shapes, "--fix-shape"));
  options.simplify = args.simplify;
  options.target_opset = args.opset;
  if (options.target_opset != 0) EDGEMM_RETURN_IF_ERROR(convert::check_target_opset(options.target_opset));
  progress(args, "reading " + args.model);
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::load(args.model));
  std::vector<std::string> read_files = model.external_data_files();  // -o must not replace any of them
  for (const auto& spec : args.inputs) {
    EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(spec, "--input"));
    read_files.push_back(kv.second);
  }
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, read_files));
  EDGEMM_RETURN_IF_ERROR(convert::validate_fixed_shapes(model, options.fixed_shapes));
  std::optional<VerifyOptions> verify;
  if (!args.no_verify) {
    EDGEMM_ASSIGN_OR_RETURN(verify, verify_options(args, options.fixed_shapes));
  }
  EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(args.model, verify ? verify->shapes : options.fixed_shapes));
  if (verify) EDGEMM_RETURN_IF_ERROR(check_verify_inputs(args.model, *verify));
  progress(args, "converting");
  EDGEMM_ASSIGN_OR_RETURN(const convert::ConvertReport report, convert::convert_model(model, options));
  EDGEMM_RETURN_IF_ERROR(model.save(args.output));
  std::optional<VerifyReport> checked;
  if (verify) {
    EDGEMM_ASSIGN_OR_RETURN(checked, verify_conversion(args.model, args.output, *verify));
  }
  if (args.json) {
    nlohmann::json j = report_json(args, report);
    j["verification"] = checked ? verify_json(*checked) : nlohmann::json(nullptr);
    std::cout << json_text(j) << std::endl;
  } else {
    print_text(report, args, checked ? &*checked : nullptr);
  }
  if (checked && !checked->passed) {
    std::cerr << "edgemm convert: error: verification failed (" << failed_checks(*checked)
              << "); see the verification above. " << args.output << " was kept for inspection." << std::endl;
    return kVerifyFailedExit;
  }
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Rewrite a model for stricter runtimes: fixed shapes, simplification, opset conversion (standard ops only)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output,
                  "converted model file (must differ from MODEL); with --target, the deployment folder")
      ->required();
  cmd->add_option("--fix-shape", args->fix_shapes,
                  "static input shape, name=1,3,640,640 (repeat per input); folds "
                  "what depends on it");
  cmd->add_flag("--simplify", args->simplify,
                "constant folding, dead nodes, Transpose/Reshape/Identity clean-up, "
                "BatchNormalization and affine folding into Conv, and the HardSwish, Clip and broadcast-constant "
                "forms OpenCV DNN reads (docs/convert.md)");
  cmd->add_option("--opset", args->opset, "target ai.onnx opset (7-17; default: keep)");
  cmd->add_flag("--no-verify", args->no_verify, "skip running both models to compare their outputs");
  cmd->add_option("--verify-shape", args->verify_shapes,
                  "input shape for the verification's random inputs when the "
                  "model's is symbolic and not fixed, name=dims");
  cmd->add_option("-i,--input", args->inputs, "also verify on this input, name=file.npy (repeatable)");
  cmd->add_option("--tolerance", args->tolerance, "largest absolute output difference accepted")
      ->check(finite_range(0, 1e30))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the random verification inputs")->capture_default_str();
  cmd->add_flag("--verify-opencv", args->verify_opencv, "also run the converted model with OpenCV DNN");
  cmd->add_option("-t,--threads", args->threads, "threads for edgemm and OpenCV in the verification (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--reference-dir", args->reference_dir, "folder of ort_run.js (default: tools/reference)");
  cmd->add_option(
      "--target", args->target,
      "write a deployment folder for this target's NPU converter (a profile in platforms/, e.g. rk3588): "
      "rewrites chosen from the profile, report, calibration samples, converter recipe (docs/platforms.md)");
  cmd->add_option("--platforms", args->platforms, "folder of the target profiles and recipes (default: platforms/)");
  cmd->add_option("--calib", args->calib, "--target: folder of calibration images for the converter's quantization");
  cmd->add_option("--stage", args->stage,
                  "--target --calib: the model is this PP-OCR stage (ocr-det, ocr-cls or ocr-rec): calibration "
                  "inputs are what the OCR pipeline feeds it (det letterboxed, cls/rec on line crops), with its "
                  "normalization and B,G,R order");
  cmd->add_option("--ocr-models", args->ocr_models,
                  "--stage: float PP-OCR models that run the other stages (default: models/ppocrv4)");
  cmd->add_option("--calib-count", args->calib_count, "--target: at most this many calibration images (name order)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_flag("--bgr", args->bgr,
                "--target: the model takes B,G,R channels (PaddleOCR, OpenCV-trained models); --mean/--std stay RGB");
  cmd->add_flag("--int8", args->int8,
                "--target: also write model.int8.onnx, int8 QDQ calibrated on the --calib images (edgemm's quantizer)");
  cmd->add_option("--int8-method", args->int8_method,
                  "--target --int8: activation ranges: minmax, percentile, entropy or mse")
      ->capture_default_str();
  cmd->add_option("--mean", args->mean,
                  "--target: the model's input mean per channel, RGB, 0-255 units (required with --calib, "
                  "unless --stage)")
      ->expected(3)
      ->delimiter(',');
  cmd->add_option("--std", args->std, "--target: the model's input std per channel, RGB, 0-255 units")
      ->expected(3)
      ->delimiter(',');
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->callback([args, cmd, &exit_code] {
    args->target_given = cmd->count("--target") > 0;
    args->calib_count_given = cmd->count("--calib-count") > 0;
    args->int8_method_given = cmd->count("--int8-method") > 0;
    auto result = convert_command(*args);
    exit_code = result ? *result : report_error("convert", result.status(), args->json);
  });
}

}  // namespace edgemm::cli
