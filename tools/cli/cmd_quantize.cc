/// `edgemm quantize MODEL -o OUT --scheme int8|fp16`: post-training quantization
/// (edgemm/tools/quantize.h). int8 calibrates on a data set: .npy files fed to the model's input,
/// or images fed through a pipeline stage's own preprocessing (--stage ocr-det|ocr-cls|ocr-rec:
/// the float OCR pipeline runs on each image and the stage's model inputs are recorded).
/// docs/quantize.md describes the options, the format and measured results.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

#include "edgemm/process_memory.h"
#include "cli_common.h"
#include "commands.h"
#include "edgemm/cpu.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/calibration.h"
#include "edgemm/tools/quantize.h"
#include "ocr_calibration.h"

namespace edgemm::cli {

namespace {

namespace fs = std::filesystem;

struct QuantizeArgs {
  std::string model;
  std::string output;
  std::string scheme = "int8";
  std::string calib;
  std::string stage;
  std::string ocr_models;
  std::string method = "mse";
  double percentile = 99.99;
  int samples = 256;
  uint64_t seed = 0;
  std::string scene_weights;
  bool per_tensor = false;
  bool full_range = false;
  bool reduce_range = false;
  bool quantize_depthwise = false;
  bool float_depthwise = false;
  std::string activation_type = "uint8";
  std::vector<std::string> op_types;
  std::vector<std::string> exclude_nodes;
  int threads = 0;
  bool no_speed_check = false;
  int64_t block_size = 32;
  int64_t accuracy_level = 4;  // int8 A: the int4 file at least as fast as int8 at decode (docs/quantize.md)
  bool int4_options_given = false;  // --block-size or --accuracy-level on the command line
  bool awq = false;
  double budget_db = 30;
  std::string plan;
  std::string save_plan;
  std::string histograms;
  std::string save_histograms;
  bool json = false;
};

/// Node names of a plan file {"float_nodes": ["name", ...]}.
Expected<std::vector<std::string>> read_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(StatusCode::kIo, "cannot read plan file '" + path + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("float_nodes") || !j["float_nodes"].is_array()) {
    return make_error(StatusCode::kInvalidArgument,
                      "plan file '" + path + "' is not JSON of the form {\"float_nodes\": [\"node name\", ...]}");
  }
  std::vector<std::string> nodes;
  for (const auto& n : j["float_nodes"]) {
    if (!n.is_string())
      return make_error(StatusCode::kInvalidArgument, "plan file '" + path + "': names must be strings");
    nodes.push_back(n.get<std::string>());
  }
  return nodes;
}

/// Feeds from images through the float OCR pipeline: the inputs it gives --stage's model.
Expected<quant::FeedSource> ocr_source(const QuantizeArgs& args, const OnnxModel& model) {
  OcrStageOptions options;
  EDGEMM_ASSIGN_OR_RETURN(options.stage, ocr_stage(args.stage));
  if (model.inputs().size() != 1) {
    return make_error(StatusCode::kInvalidArgument, "an OCR " + options.stage + " model has one input; this one has " +
                                                        std::to_string(model.inputs().size()));
  }
  options.models_dir = args.ocr_models;
  options.threads = args.threads;
  return ocr_stage_feeds(options, model.inputs()[0].name);
}

bool all_npy(const std::vector<quant::CalibrationSample>& samples) {
  for (const auto& s : samples) {
    if (fs::path(s.path).extension() != ".npy") return false;
  }
  return true;
}

Expected<quant::FeedSource> feed_source(const QuantizeArgs& args, const OnnxModel& model,
                                        const std::vector<quant::CalibrationSample>& samples) {
  if (!args.stage.empty()) return ocr_source(args, model);
  if (all_npy(samples)) return quant::npy_feed_source(args.model, model);
  return make_error(StatusCode::kInvalidArgument,
                    "the calibration set has images: say which model they feed with --stage ocr-det, ocr-cls or "
                    "ocr-rec (or give .npy model inputs)");
}

Expected<quant::Int8QuantizeOptions> int8_options(const QuantizeArgs& args) {
  quant::Int8QuantizeOptions o;
  EDGEMM_ASSIGN_OR_RETURN(o.method, quant::parse_method(args.method));
  o.percentile = args.percentile;
  o.qdq.per_channel = !args.per_tensor;
  if (args.full_range && args.reduce_range) {
    return make_error(StatusCode::kInvalidArgument, "--full-range and --reduce-range contradict each other");
  }
  // 7-bit weights only help CPUs whose u8s8 kernels sum pairs in int16 (no VNNI); where this CPU
  // multiplies 8-bit weights exactly, the halved weight resolution would only cost accuracy.
  o.qdq.reduce_range = args.reduce_range || (!args.full_range && !cpu_features().avx512_vnni);
  if (args.quantize_depthwise && args.float_depthwise) {
    return make_error(StatusCode::kInvalidArgument, "--quantize-depthwise and --float-depthwise contradict each other");
  }
  // int8 depthwise convolutions gain where oneDNN's VNNI kernels read and write the uint8 values
  // between int8 convolutions (passes::chain_int8); on AVX2 they are slower than float.
  o.qdq.quantize_depthwise = args.quantize_depthwise || (!args.float_depthwise && cpu_features().avx512_vnni);
  if (args.activation_type != "uint8" && args.activation_type != "int8") {
    return make_error(StatusCode::kInvalidArgument,
                      "--activation-type must be uint8 or int8, got '" + args.activation_type + "'");
  }
  o.qdq.symmetric_activations = args.activation_type == "int8";
  if (!args.op_types.empty()) {
    o.qdq.op_types.clear();
    for (const std::string& op : args.op_types) {
      if (op != "Conv" && op != "MatMul" && op != "Gemm") {
        return make_error(StatusCode::kInvalidArgument, "--op-types takes Conv, MatMul and Gemm, got '" + op + "'");
      }
      o.qdq.op_types.insert(op);
    }
  }
  o.qdq.exclude_nodes.insert(args.exclude_nodes.begin(), args.exclude_nodes.end());
  if (!args.plan.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(const auto plan, read_plan(args.plan));
    o.qdq.exclude_nodes.insert(plan.begin(), plan.end());
  }
  o.calibrate.threads = args.threads;
  o.speed_check = !args.no_speed_check;
  if (args.scheme == "mixed") {
    if (!(args.budget_db > 0)) {
      return make_error(StatusCode::kInvalidArgument, "--budget must be > 0 dB, got " + std::to_string(args.budget_db));
    }
    o.budget_db = args.budget_db;
  }
  return o;
}

double finite_db(double db) { return std::isfinite(db) ? db : 999.0; }

nlohmann::json int8_json(const quant::Int8Report& r, const quant::SamplingReport& sampling) {
  nlohmann::json quantized = nlohmann::json::array(), skipped = nlohmann::json::array(),
                 tensors = nlohmann::json::array();
  for (const auto& t : r.plan.targets) {
    quantized.push_back({{"node", t.name}, {"op_type", t.op_type}, {"activation", t.activation}, {"weight", t.weight}});
  }
  for (const auto& s : r.plan.skipped)
    skipped.push_back({{"node", s.node}, {"op_type", s.op_type}, {"reason", s.reason}});
  for (const auto& [name, range] : r.ranges) {
    const auto& seen = r.observed.at(name);
    tensors.push_back({{"name", name}, {"min", seen.lo}, {"max", seen.hi}, {"range", {range.lo, range.hi}}});
  }
  nlohmann::json timings = nlohmann::json::array();
  for (const auto& t : r.timings)
    timings.push_back({{"node", t.node}, {"float_ms", t.float_us / 1e3}, {"int8_ms", t.int8_us / 1e3}});
  return {
      {"quantized", quantized},
      {"skipped", skipped},
      {"speed_check", timings},
      {"tensors", tensors},
      {"calibration",
       {{"samples_used", r.samples_used},
        {"samples_skipped", r.samples_skipped},
        {"skipped_samples", r.skipped_samples},
        {"runs", r.runs},
        {"seconds", r.calibration_seconds},
        {"non_finite_values", r.non_finite_values},
        {"available_by_scene", sampling.available},
        {"drawn_by_scene", sampling.drawn},
        {"warnings", sampling.warnings}}},
      {"opset", {{"from", r.prepare.source_opset}, {"to", r.prepare.target_opset}}},
      {"predicted_error", r.measured_feeds == 0 ? nlohmann::json()
                                                : nlohmann::json{{"sqnr_db", finite_db(r.predicted.sqnr_db)},
                                                                 {"cosine", r.predicted.cosine},
                                                                 {"inputs", r.measured_feeds},
                                                                 {"poor", r.predicted.sqnr_db < quant::kPoorSqnrDb}}}};
}

void print_int8(const quant::Int8Report& r, const quant::SamplingReport& sampling) {
  std::map<std::string, int> by_op, skipped_by_reason;
  for (const auto& t : r.plan.targets) ++by_op[t.op_type];
  for (const auto& s : r.plan.skipped) ++skipped_by_reason[s.op_type + " " + s.reason.substr(0, s.reason.find(" ("))];
  std::cout << "quantized to int8:";
  for (const auto& [op, n] : by_op) std::cout << " " << op << " " << n;
  std::cout << " (" << r.ranges.size() << " activation tensors calibrated)\n";
  if (!r.timings.empty()) {
    double float_ms = 0, int8_ms = 0;
    for (const auto& t : r.timings) {
      const bool kept = t.int8_us < t.float_us;
      float_ms += t.float_us / 1e3;
      int8_ms += (kept ? t.int8_us : t.float_us) / 1e3;
    }
    std::cout << "speed check (edgemm, this CPU): the " << r.timings.size() << " timed nodes take " << std::fixed
              << std::setprecision(2) << float_ms << " ms in float, " << int8_ms << " ms as quantized\n";
  }
  for (const auto& [reason, n] : skipped_by_reason) std::cout << "  kept in float: " << n << "× " << reason << "\n";
  std::cout << "calibration: " << r.samples_used << " samples (" << r.runs << " runs) in " << std::fixed
            << std::setprecision(1) << r.calibration_seconds << " s";
  if (r.samples_skipped > 0) std::cout << ", " << r.samples_skipped << " skipped";
  std::cout << "; by scene:";
  for (const auto& [scene, n] : sampling.drawn) std::cout << " " << scene << " " << n;
  std::cout << "\n";
  for (const auto& s : r.skipped_samples) std::cout << "  skipped " << s << "\n";
  if (r.measured_feeds > 0) {
    std::cout << "predicted error: output SQNR " << std::setprecision(1) << finite_db(r.predicted.sqnr_db)
              << " dB, cosine " << std::setprecision(6) << r.predicted.cosine << " against float on "
              << r.measured_feeds << " calibration input(s) (in-sample)\n";
  }
}

/// Warns on stderr when the int8 model's outputs are far from float's.
void warn_if_poor(const quant::Int8Report& r, const std::string& method) {
  if (r.measured_feeds == 0 || r.predicted.sqnr_db >= quant::kPoorSqnrDb) return;
  std::cerr << "edgemm quantize: warning: the int8 outputs are far from float's (SQNR " << std::fixed
            << std::setprecision(1) << r.predicted.sqnr_db << " dB < " << quant::kPoorSqnrDb << " dB with --method "
            << method << "): try " << (method == "mse" ? "--method percentile" : "--method mse")
            << ", or --scheme mixed --budget DB to keep the most sensitive nodes in float\n";
}

/// The calibration samples --calib, --samples, --seed and --scene-weights select; warnings to stderr.
Expected<std::vector<quant::CalibrationSample>> draw_samples(const QuantizeArgs& args,
                                                             quant::SamplingReport* report = nullptr) {
  EDGEMM_ASSIGN_OR_RETURN(const auto set, quant::load_calibration_set(args.calib));
  quant::SamplingOptions sampling;
  sampling.count = args.samples;
  sampling.seed = args.seed;
  if (!args.scene_weights.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(sampling.scene_weights, quant::parse_scene_weights(args.scene_weights));
  }
  quant::SamplingReport local;
  quant::SamplingReport& drawn = report != nullptr ? *report : local;
  EDGEMM_ASSIGN_OR_RETURN(auto samples, quant::stratified_sample(set, sampling, drawn));
  for (const auto& w : drawn.warnings) std::cerr << "edgemm quantize: warning: " << w << std::endl;
  return samples;
}

nlohmann::json mixed_json(const quant::MixedPlan& m, double budget) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : m.layers) {
    layers.push_back({{"node", l.node},
                      {"op_type", l.op_type},
                      {"sqnr_db", finite_db(l.error.sqnr_db)},
                      {"cosine", l.error.cosine}});
  }
  return {{"budget_db", budget},
          {"sensitivity", layers},
          {"all_int8", {{"sqnr_db", finite_db(m.all_int8.sqnr_db)}, {"cosine", m.all_int8.cosine}}},
          {"final", {{"sqnr_db", finite_db(m.final_error.sqnr_db)}, {"cosine", m.final_error.cosine}}},
          {"float_nodes", m.float_nodes},
          {"budget_met", m.budget_met}};
}

void print_mixed(const quant::MixedPlan& m, double budget) {
  std::cout << "sensitivity (output SQNR against float with one node in int8, most sensitive first):\n";
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const auto& l = m.layers[i];
    const bool kept = std::find(m.float_nodes.begin(), m.float_nodes.end(), l.node) != m.float_nodes.end();
    std::cout << "  " << std::setw(3) << i + 1 << "  " << std::left << std::setw(28) << l.node << std::setw(8)
              << l.op_type << std::right << std::fixed << std::setprecision(1) << std::setw(7)
              << finite_db(l.error.sqnr_db) << " dB  cos " << std::setprecision(6) << l.error.cosine
              << (kept ? "  float" : "  int8") << "\n";
  }
  std::cout << std::setprecision(1) << "output SQNR: all int8 " << finite_db(m.all_int8.sqnr_db) << " dB; with "
            << m.float_nodes.size() << " node(s) in float " << finite_db(m.final_error.sqnr_db) << " dB (budget "
            << budget << " dB" << (m.budget_met ? ", met" : ", NOT met") << ")\n";
}

/// Whether --scheme calibrates and writes int8 QDQ (int8, mixed).
bool is_int8_scheme(const std::string& scheme) { return scheme == "int8" || scheme == "mixed"; }

/// The scheme and option combinations that make sense; errors name the conflict.
Status check_options(const QuantizeArgs& args) {
  const bool int8 = is_int8_scheme(args.scheme);
  if (!int8 && args.scheme != "fp16" && args.scheme != "int4-weight") {
    return make_error(StatusCode::kInvalidArgument,
                      "--scheme must be int8, mixed, int4-weight or fp16, got '" + args.scheme + "'");
  }
  const bool calibrated = int8 || args.awq;
  if (args.awq && args.scheme != "int4-weight") {
    return make_error(StatusCode::kInvalidArgument, "--awq applies to --scheme int4-weight");
  }
  if (args.int4_options_given && args.scheme != "int4-weight") {
    return make_error(StatusCode::kInvalidArgument,
                      "--block-size and --accuracy-level apply to --scheme int4-weight, not " + args.scheme);
  }
  if (!calibrated && !args.calib.empty()) {
    return make_error(StatusCode::kInvalidArgument, "--scheme " + args.scheme + " needs no calibration; drop --calib");
  }
  if (args.awq && args.calib.empty()) {
    return make_error(StatusCode::kInvalidArgument, "--awq needs a calibration set: --calib DIR|MANIFEST");
  }
  if (int8 && args.calib.empty()) {
    return make_error(StatusCode::kInvalidArgument,
                      "--scheme " + args.scheme + " needs a calibration set: --calib DIR|MANIFEST");
  }
  if ((!args.histograms.empty() || !args.save_histograms.empty()) && !int8) {
    return make_error(StatusCode::kInvalidArgument,
                      "--histograms and --save-histograms apply to --scheme int8 and mixed");
  }
  if (!args.save_plan.empty() && args.scheme != "mixed") {
    return make_error(StatusCode::kInvalidArgument, "--save-plan writes the plan of --scheme mixed");
  }
  return Status::ok();
}

/// --scheme int4-weight: MatMul weights to MatMulNBits (with --awq, calibrated scales).
Status run_int4(const QuantizeArgs& args, OnnxModel& model, nlohmann::json& j) {
  quant::Int4Options options;
  options.block_size = args.block_size;
  options.accuracy_level = args.accuracy_level;
  options.exclude_nodes.insert(args.exclude_nodes.begin(), args.exclude_nodes.end());
  options.awq = args.awq;
  options.calibrate.threads = args.threads;
  std::vector<quant::CalibrationSample> samples;
  quant::FeedSource source;
  if (args.awq) {
    EDGEMM_ASSIGN_OR_RETURN(samples, draw_samples(args));
    EDGEMM_ASSIGN_OR_RETURN(source, feed_source(args, model, samples));
  }
  EDGEMM_ASSIGN_OR_RETURN(const quant::Int4Report report,
                          quant::quantize_int4_weights(model, options, samples, source));
  nlohmann::json awq = nlohmann::json::array();
  for (const auto& a : report.awq) {
    awq.push_back({{"node", a.node}, {"alpha", a.alpha}, {"error", a.error}, {"plain_error", a.plain_error}});
  }
  j["awq"] = awq;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : report.skipped) skipped.push_back({{"node", s.node}, {"reason", s.reason}});
  j["int4"] = {{"block_size", args.block_size},
               {"accuracy_level", args.accuracy_level},
               {"quantized", report.quantized},
               {"skipped", skipped}};
  if (!args.json) {
    std::cout << "MatMul → MatMulNBits (int4, block " << args.block_size << ", accuracy_level " << args.accuracy_level
              << "): " << report.quantized.size() << "; kept in float: " << report.skipped.size() << "\n";
    for (const auto& s : report.skipped) std::cout << "  " << s.node << ": " << s.reason << "\n";
  }
  return Status::ok();
}

/// --scheme int8 / mixed: calibrate, choose, rewrite to QDQ.
Status run_int8(const QuantizeArgs& args, quant::Int8QuantizeOptions options, OnnxModel& model, nlohmann::json& j) {
  quant::SamplingReport drawn;
  EDGEMM_ASSIGN_OR_RETURN(const auto samples, draw_samples(args, &drawn));
  EDGEMM_ASSIGN_OR_RETURN(quant::FeedSource source, feed_source(args, model, samples));
  ProgressBar bar("calibrating", samples.size());
  options.calibrate.progress = [&bar, &samples](size_t done, size_t) {
    bar.update(done, done < samples.size() ? fs::path(samples[done].path).filename().string() : "");
  };
  std::map<std::string, quant::TensorHistogram> saved;
  if (!args.histograms.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(saved, quant::read_histograms(args.histograms));
    options.histograms = &saved;
  }
  EDGEMM_ASSIGN_OR_RETURN(const quant::Int8Report report, quant::quantize_int8(model, samples, source, options));
  bar.clear();
  if (!args.save_histograms.empty()) {
    EDGEMM_RETURN_IF_ERROR(quant::write_histograms(args.save_histograms, report.histograms));
  }
  if (!args.histograms.empty()) j["histograms"] = args.histograms;
  j["int8"] = int8_json(report, drawn);
  j["method"] = args.method;
  j["weight_bits"] = options.qdq.reduce_range ? 7 : 8;
  if (args.scheme == "mixed") j["mixed"] = mixed_json(report.mixed, args.budget_db);
  warn_if_poor(report, args.method);
  if (!args.json) {
    print_int8(report, drawn);
    std::cout << "weights: " << (options.qdq.reduce_range ? "7-bit [-64, 64]" : "8-bit [-127, 127]")
              << (args.full_range || args.reduce_range ? "" : " (chosen for this CPU: --full-range / --reduce-range)")
              << "\n";
  }
  if (!args.json && args.scheme == "mixed") print_mixed(report.mixed, args.budget_db);
  if (!args.save_plan.empty()) {
    EDGEMM_RETURN_IF_ERROR(
        write_text_file(args.save_plan, json_text({{"float_nodes", report.mixed.float_nodes}}) + "\n"));
  }
  return Status::ok();
}

Expected<int> quantize_command(const QuantizeArgs& args) {
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, {args.model}));
  EDGEMM_RETURN_IF_ERROR(check_options(args));
  // Flag errors come before the model is read and the calibration set is drawn.
  quant::Int8QuantizeOptions int8_opts;
  if (is_int8_scheme(args.scheme)) {
    EDGEMM_ASSIGN_OR_RETURN(int8_opts, int8_options(args));
  }
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::load(args.model));
  EDGEMM_RETURN_IF_ERROR(check_output_path(args.output, model.external_data_files()));
  nlohmann::json j = {{"model", args.model}, {"output", args.output}, {"scheme", args.scheme}};
  if (args.scheme == "fp16") {
    EDGEMM_ASSIGN_OR_RETURN(const int converted, quant::store_weights_fp16(model));
    j["weights_converted"] = converted;
    if (!args.json) std::cout << "stored " << converted << " float32 weights as float16\n";
  } else if (args.scheme == "int4-weight") {
    EDGEMM_RETURN_IF_ERROR(run_int4(args, model, j));
  } else {
    EDGEMM_RETURN_IF_ERROR(run_int8(args, std::move(int8_opts), model, j));
  }
  EDGEMM_RETURN_IF_ERROR(model.save(args.output));
  const int64_t before = file_bytes(args.model), after = file_bytes(args.output);
  const auto memory = read_process_memory();
  j["bytes"] = {{"before", before}, {"after", after}};
  j["peak_rss_bytes"] = memory ? memory->peak_rss_bytes : 0;
  if (args.json) {
    std::cout << json_text(j) << std::endl;
  } else {
    std::cout << "wrote " << args.output << ": " << std::fixed << std::setprecision(2) << before / 1048576.0
              << " MiB → " << after / 1048576.0 << " MiB; peak RSS "
              << (memory ? memory->peak_rss_bytes / 1048576.0 : 0.0) << " MiB\n";
  }
  return 0;
}

}  // namespace

void add_quantize_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "Post-training quantization: int8 QDQ with calibration, int4 weight-only MatMul, float16 weights");
  cmd->add_option("model", args->model, "float ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "quantized model file (must differ from MODEL)")->required();
  cmd->add_option("--scheme", args->scheme,
                  "int8 (QDQ: int8 weights, calibrated activations), mixed (int8 with the most sensitive nodes "
                  "in float, --budget), int4-weight (MatMul weights as com.microsoft MatMulNBits) or fp16 (weights)")
      ->capture_default_str();
  cmd->add_option("--calib", args->calib,
                  "calibration set: a folder of images or .npy inputs (subfolders name scenes) or a JSON "
                  "manifest {\"samples\": [{\"path\", \"scene\"}]}");
  cmd->add_option("--stage", args->stage,
                  "pipeline stage the model is, for image samples: ocr-det, ocr-cls or ocr-rec (the float OCR "
                  "pipeline makes the model's inputs)");
  cmd->add_option("--ocr-models", args->ocr_models,
                  "float PP-OCR models that make the stage's inputs (default: models/ppocrv4)");
  cmd->add_option("--method", args->method, "activation ranges: minmax, percentile, entropy or mse")
      ->capture_default_str();
  cmd->add_option("--percentile", args->percentile, "percentile for --method percentile, in (50, 100]")
      ->check(finite_range(50, 100))
      ->capture_default_str();
  cmd->add_option("--samples", args->samples, "calibration samples to draw")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the stratified draw")->capture_default_str();
  cmd->add_option("--scene-weights", args->scene_weights,
                  "share of each scene in the draw, e.g. indoor=0.4,outdoor=0.6 (default: by size)");
  cmd->add_flag("--per-tensor", args->per_tensor, "one weight scale per tensor instead of per output channel");
  cmd->add_flag("--full-range", args->full_range,
                "8-bit weights in [-127, 127] (the default on CPUs with AVX-512 VNNI)");
  cmd->add_flag("--reduce-range", args->reduce_range,
                "7-bit weights in [-64, 64] (the default on CPUs without AVX-512 VNNI, whose int16 pair sums "
                "saturate otherwise; use it for files meant for such CPUs)");
  cmd->add_flag("--quantize-depthwise", args->quantize_depthwise,
                "quantize depthwise Conv too (the default on CPUs with AVX-512 VNNI; slower than float on AVX2)");
  cmd->add_flag("--float-depthwise", args->float_depthwise,
                "keep depthwise Conv in float (the default on CPUs without AVX-512 VNNI)");
  cmd->add_option("--activation-type", args->activation_type, "uint8 (asymmetric) or int8 (symmetric)")
      ->capture_default_str();
  cmd->add_option("--budget", args->budget_db,
                  "mixed: output SQNR (dB, against float on calibration inputs) to reach by keeping the most "
                  "sensitive nodes in float")
      ->check(finite_range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--plan", args->plan, "JSON {\"float_nodes\": [...]}: nodes kept in float (e.g. a saved plan)");
  cmd->add_option("--save-plan", args->save_plan, "mixed: write the nodes it kept in float, for --plan");
  cmd->add_option("--save-histograms", args->save_histograms,
                  "int8/mixed: write the calibration histograms (JSON) for --histograms");
  cmd->add_option("--histograms", args->histograms,
                  "int8/mixed: ranges from these saved histograms of the same model instead of calibrating "
                  "(--calib still gives the speed check's and sensitivity analysis' inputs)");
  cmd->add_flag("--awq", args->awq,
                "int4-weight: activation-aware scales from --calib (a Mul by 1/s before each MatMulNBits that gains)");
  CLI::Option* block_size =
      cmd->add_option("--block-size", args->block_size, "int4-weight: K rows per scale (16, 32, 64 or 128)")
          ->capture_default_str();
  // Levels 1-3 (float32, float16, bfloat16 A in ONNX Runtime's contrib spec) compute as 0 in edgemm's
  // kernels (float32 A): only the two that differ are offered.
  CLI::Option* accuracy_level =
      cmd->add_option(
             "--accuracy-level", args->accuracy_level,
             "int4-weight: MatMulNBits accuracy_level, 0 or 4: 4 (default) lets edgemm and ONNX Runtime quantize A "
             "to int8 per block (about twice as fast for a few rows, at int8 activations' accuracy); 0 keeps A float32")
          ->check(CLI::IsMember({0, 4}))
          ->capture_default_str();
  cmd->add_flag("--no-speed-check", args->no_speed_check,
                "quantize every eligible node, also those edgemm runs slower in int8 than in float on this CPU "
                "(for NPUs and other runtimes)");
  cmd->add_option("--op-types", args->op_types, "ops to quantize (default Conv,MatMul,Gemm)")->delimiter(',');
  cmd->add_option("--exclude-nodes", args->exclude_nodes, "node names kept in float")->delimiter(',');
  cmd->add_option("-t,--threads", args->threads, "threads for calibration (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print a JSON report");
  cmd->callback([args, &exit_code, block_size, accuracy_level] {
    args->int4_options_given = block_size->count() > 0 || accuracy_level->count() > 0;
    auto result = quantize_command(*args);
    exit_code = result ? *result : report_error("quantize", result.status(), args->json);
  });
}

}  // namespace edgemm::cli
