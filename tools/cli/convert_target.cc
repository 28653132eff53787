#include "convert_target.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "convert_calibration.h"
#include "edgemm/memory_check.h"
#include "edgemm/onnx_model.h"
#include "edgemm/tools/convert.h"
#include "edgemm/tools/quantize.h"
#include "edgemm/tools/targets.h"
#include "output_folder.h"
#include "target_report.h"

namespace edgemm::cli {

namespace {

namespace fs = std::filesystem;

/// Whether the run makes calibration inputs: --calib given, and samples to write or --int8.
bool calibrates(const TargetConvertArgs& args, const targets::Recipe& recipe) {
  return !args.calib.empty() && (recipe.calibration.format != "none" || args.int8);
}

/// What the int8 step wrote.
struct Int8Result {
  quant::Int8Report quantized;
  targets::TargetReport target;              ///< check_model on model.int8.onnx
  int images_skipped = 0;                    ///< undecodable --calib images passed over
  std::optional<Int8VerifyReport> verified;  ///< null with --no-verify
};

/// Quantizes the rewritten model (`converted`) to int8 QDQ for NPUs, which run int8 everywhere:
/// every eligible Conv/MatMul/Gemm (depthwise included, no CPU speed check), 8-bit per-channel
/// weights, calibrated on `source`'s inputs; writes model.int8.onnx, checks it against the
/// profile and measures its error on the first calibration input with edgemm and ONNX Runtime.
/// Errors: those of quant::quantize_int8, of the export and of the verification setup.
Expected<Int8Result> write_int8(const TargetConvertArgs& args, const targets::PlatformProfile& profile,
                                const CalibrationImages& chosen, const quant::FeedSource& source,
                                const std::string& converted, const fs::path& out, const VerifyOptions* verify) {
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::load(converted));
  std::vector<quant::CalibrationSample> samples;
  for (const fs::path& p : chosen.images) samples.push_back({p.string(), "default"});
  quant::Int8QuantizeOptions options;
  EDGEMM_ASSIGN_OR_RETURN(options.method, quant::parse_method(args.int8_method));
  options.speed_check = false;
  options.qdq.reduce_range = false;  // 7-bit weights are for x86 CPUs without VNNI, not NPUs
  options.qdq.quantize_depthwise = true;
  ProgressBar bar("calibrating int8", samples.size());
  options.calibrate.progress = [&bar, &samples](size_t done, size_t) {
    bar.update(done, done < samples.size() ? fs::path(samples[done].path).filename().string() : "");
  };
  Int8Result result;
  result.images_skipped = static_cast<int>(chosen.skipped.size());
  EDGEMM_ASSIGN_OR_RETURN(result.quantized, quant::quantize_int8(model, samples, source, options));
  bar.clear();
  const std::string path = (out / "model.int8.onnx").string();
  EDGEMM_RETURN_IF_ERROR(model.save(path));
  EDGEMM_ASSIGN_OR_RETURN(const OnnxModel reread, OnnxModel::load(path));
  result.target = targets::check_model(reread, profile);
  if (verify == nullptr) return result;
  for (const quant::CalibrationSample& sample : samples) {
    auto feeds = source(sample);
    if (!feeds || feeds->empty()) continue;  // undecodable or no text line: counted in the calibration report
    EDGEMM_ASSIGN_OR_RETURN(result.verified, verify_int8(converted, path, feeds->front(), *verify));
    break;
  }
  return result;
}

nlohmann::json int8_json(const Int8Result& r, const TargetConvertArgs& args, const targets::PlatformProfile& profile) {
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : r.quantized.plan.skipped) skipped.push_back({{"node", s.node}, {"reason", s.reason}});
  return {{"file", "model.int8.onnx"},
          {"method", args.int8_method},
          {"samples_used", r.quantized.samples_used},
          {"samples_skipped", r.quantized.samples_skipped + r.images_skipped},
          {"quantized_nodes", r.quantized.plan.targets.size()},
          {"float_nodes", skipped},
          {"target", target_report_json(r.target, profile, "model.int8.onnx")},
          {"verification", r.verified ? int8_verify_json(*r.verified) : nlohmann::json()}};
}

/// `v` with 3 significant digits ("1.2e-06", "0.416").
std::string number_text(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

std::string db_text(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v << " dB";
  return std::isfinite(v) ? s.str() : "inf";
}

/// The lowest SQNR an engine measured, or +inf when none ran.
double worst_sqnr(const Int8Result& r) {
  double worst = INFINITY;
  for (const Int8EngineCheck& c : r.verified ? r.verified->checks : std::vector<Int8EngineCheck>{}) {
    if (c.skipped.empty() && c.failed.empty()) worst = std::min(worst, c.sqnr_db);
  }
  return worst;
}

/// The README section on model.int8.onnx.
std::string int8_readme(const Int8Result& r, const TargetConvertArgs& args) {
  std::ostringstream s;
  s << "\n## model.int8.onnx (--int8)\n\n"
    << "Standard QDQ ONNX (QuantizeLinear / DequantizeLinear around " << r.quantized.plan.targets.size()
    << " Conv / MatMul / Gemm nodes; per-channel 8-bit weights, uint8 activations) with activation ranges from "
       "edgemm's `"
    << args.int8_method << "` calibration on " << r.quantized.samples_used
    << " of the --calib images, fed as the model takes them (see Calibration). The recipe above still converts "
       "model.onnx with the vendor's own quantizer; whether the vendor converter imports a pre-quantized QDQ model "
       "was not checked here. edgemm and ONNX Runtime run it on a CPU.\n\n"
    << placement_summary(r.target) << " (QuantizeLinear / DequantizeLinear count as nodes).\n";
  if (!r.quantized.plan.skipped.empty()) {
    s << "\nKept in float: " << r.quantized.plan.skipped.size()
      << " nodes (`report.json`, `int8.float_nodes`, gives each reason).\n";
  }
  if (!r.verified) return s.str() + "\nError not measured (--no-verify).\n";
  s << "\nError against model.onnx on the first calibration input, preprocessed as in Calibration (SQNR of all\n"
       "outputs). **In-sample**: that input also set the ranges, so this is a sanity check, not the model's\n"
       "accuracy; measure that on held-out data (e.g. `edgemm eval`).\n\n";
  for (const Int8EngineCheck& c : r.verified->checks) {
    s << "- " << c.engine << ": "
      << (!c.skipped.empty()  ? "skipped (" + c.skipped + ")"
          : !c.failed.empty() ? "FAILED (" + c.failed + ")"
                              : db_text(c.sqnr_db))
      << "\n";
  }
  if (std::isfinite(r.verified->within_step)) {
    s << "- edgemm vs ONNX Runtime on model.int8.onnx: " << 100 * r.verified->within_step
      << " % of output values within one output step (max abs difference " << r.verified->max_abs_error << ")\n";
  }
  if (worst_sqnr(r) < quant::kPoorSqnrDb) {
    s << "\n**Warning: the int8 outputs are far from float's** (below " << quant::kPoorSqnrDb
      << " dB). Check --mean/--std/--bgr (the calibration feeds must be what the model takes), try another "
         "--int8-method, or keep sensitive nodes in float with `edgemm quantize --scheme mixed`.\n";
  }
  return s.str();
}

std::string joined(const std::array<float, 3>& v, bool inverse) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << (inverse ? 1.0f / v[i] : v[i]);
  return s.str();
}

std::map<std::string, std::string> placeholder_values(const ValueInfo& input, const TargetConvertArgs& args,
                                                      const targets::CalibrationFormat& f, int calib_count) {
  std::string dims, list = "[";
  for (size_t i = 0; i < input.shape.size(); ++i) {
    dims += (i ? "," : "") + std::to_string(input.shape[i].value);
    list += (i ? ", " : "") + std::to_string(input.shape[i].value);
  }
  const auto g = input_geometry(input);
  const bool quantize = calib_count > 0;
  return {{"model_file", "model.onnx"},
          {"model_stem", "model"},
          {"input_name", input.name},
          {"input_shape", dims},
          {"input_shape_list", list + "]"},
          {"input_height", g ? std::to_string(g->height) : "0"},
          {"input_width", g ? std::to_string(g->width) : "0"},
          {"input_channels", g ? std::to_string(g->channels) : "0"},
          {"mean_values", joined(model_order(args.mean, args.bgr), false)},
          {"std_values", joined(model_order(args.std, args.bgr), false)},
          {"scale_values", joined(model_order(args.std, args.bgr), true)},
          {"calib_list", f.list_file},
          {"calib_dir", f.dir},
          {"calib_count", std::to_string(calib_count)},
          {"quantize", quantize ? "True" : "False"},
          {"quantize_flag", quantize ? "1" : "0"},
          {"rgb2bgr", args.bgr ? "True" : "False"},
          {"input_color", args.bgr ? "bgr" : "rgb"}};
}

Expected<std::string> read_template(const targets::RecipeTemplate& t) {
  std::ifstream in(t.template_file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Status(StatusCode::kIo, "cannot read the recipe template '" + t.template_file + "'");
  return text.str();
}

Expected<std::string> render(const targets::RecipeTemplate& t, const std::map<std::string, std::string>& values) {
  EDGEMM_ASSIGN_OR_RETURN(const std::string text, read_template(t));
  return targets::render_template(text, values, t.template_file);
}

std::string readme(const TargetConvertArgs& args, const targets::PlatformProfile& profile,
                   const targets::Recipe& recipe, const targets::ConversionPlan& plan,
                   const targets::TargetReport& before, const targets::TargetReport& after,
                   const CalibrationResult& calib, const std::optional<VerifyReport>& verified,
                   const std::vector<ValueInfo>& inputs) {
  std::ostringstream s;
  s << "# " << profile.title << ": deployment folder for " << fs::path(args.model).filename().string() << "\n\n"
    << "Written by `" << invocation() << "`. **No NPU or vendor tool was run here**: the verdicts below encode the\n"
    << "vendor documentation cited in `" << profile.path << "`; run the commands on a machine with the SDK.\n\n"
    << "## Rewrites applied to model.onnx\n\n";
  for (const std::string& step : plan.steps) s << "- " << step << "\n";
  s << "\n## NPU eligibility (edgemm inspect --target " << profile.name << ")\n\n"
    << "| | NPU-eligible nodes | CPU fallback nodes | support unknown | NPU / CPU / unknown partitions | "
       "NPU<->CPU tensors |\n|---|---|---|---|---|---|\n";
  for (const auto* r : {&before, &after}) {
    using targets::Placement;
    s << "| " << (r == &before ? "input model" : "model.onnx") << " | " << r->npu_nodes << " | " << r->cpu_nodes
      << " | " << r->unknown_nodes << " | " << r->partition_count(Placement::kNpu) << " / "
      << r->partition_count(Placement::kCpu) << " / " << r->partition_count(Placement::kUnknown) << " | "
      << r->crossing_count(true) << " |\n";
  }
  s << "\n\"Support unknown\": the documentation cited in the profile does not say whether the converter takes "
       "these nodes; they are counted neither as NPU nor as CPU.\n";
  s << "\nPer-node reasons: `report.json` (`after.nodes`).\n\n## Verification\n\n";
  if (!verified) s << "Skipped (--no-verify).\n";
  for (const EngineCheck& c : verified ? verified->checks : std::vector<EngineCheck>{}) {
    s << "- " << c.engine << ", " << c.input_set << ", " << c.compared << ": "
      << (!c.skipped.empty()  ? "skipped (" + c.skipped + ")"
          : !c.failed.empty() ? "FAILED (" + c.failed + ")"
          : c.worst() > verified->tolerance
              ? "FAILED: max abs error " + number_text(c.worst()) + " > tolerance " + number_text(verified->tolerance)
              : "max abs error " + number_text(c.worst()))
      << "\n";
  }
  s << "\n## Calibration\n\n"
    << "Input normalization in the recipe: mean " << joined(args.mean, false) << ", std " << joined(args.std, false)
    << " (R, G, B order, 0-255 units; the model takes " << (args.bgr ? "B, G, R" : "R, G, B") << ")"
    << (args.normalization_given ? ""
                                 : ": the defaults (raw pixels), as no --mean/--std was given; set them to the model's")
    << ".\n\n";
  if (calibrates(args, recipe)) {
    s << "Preprocessing of the calibration inputs: " << preprocessing_text(args, inputs.front()) << ".\n\n";
  }
  if (calib.written == 0) {
    s << (recipe.calibration.format == "none" ? "None: the " + recipe.target + " recipe takes no calibration files"
                                              : std::string("None written: no --calib given"))
      << "; the recipe builds without quantization.\n";
  } else {
    s << calib.written << " samples from " << calib.images << " images in `" << recipe.calibration.dir << "/` ("
      << recipe.calibration.format << (recipe.calibration.layout.empty() ? "" : ", " + recipe.calibration.layout)
      << ", " << sample_color(recipe.calibration, args.bgr)
      << (recipe.calibration.list_file.empty() ? "" : ", listed in `" + recipe.calibration.list_file + "`") << "), "
      << calib.skipped.size() << " images skipped" << (calib.skipped.empty() ? ".\n" : ":\n\n");
    for (const std::string& skipped : calib.skipped) s << "- " << skipped << "\n";
  }
  if (inputs.size() > 1) {
    s << "\n**The recipe configures only the first input, `" << inputs.front().name << "`**; this model has "
      << inputs.size() << " inputs: edit the generated scripts for the others.\n";
  }
  s << "\n## Run on the SDK machine\n\n```sh\n";
  for (const targets::RecipeTemplate& t : recipe.templates) s << t.run << "\n";
  s << "```\n\n## Sources\n\n";
  for (const std::string& src : recipe.sources) s << "- " << src << "\n";
  if (!recipe.unknown.empty()) s << "\nNot confirmed in the documentation:\n\n";
  for (const std::string& u : recipe.unknown) s << "- " << u << "\n";
  return s.str();
}

/// The checks of an image input that calibration samples feed: one input, 3 channels, batch 1,
/// and for samples edgemm preprocesses, the layout the recipe declares to the converter.
Status check_calibration_input(const std::vector<ValueInfo>& inputs, const ValueInfo& input,
                               const TargetConvertArgs& args, const targets::CalibrationFormat& f) {
  if (inputs.size() != 1) {
    return Status(StatusCode::kInvalidArgument, "calibration samples feed one image input; '" + args.model + "' has " +
                                                    std::to_string(inputs.size()) + " inputs");
  }
  EDGEMM_ASSIGN_OR_RETURN(const InputGeometry geometry, input_geometry(input));
  if (input.shape[0].value != 1) {
    return Status(StatusCode::kInvalidArgument, "calibration samples are single images; input '" + input.name +
                                                    "' has batch " + std::to_string(input.shape[0].value) +
                                                    ": fix it to 1 with --fix-shape");
  }
  const std::string layout = geometry.nchw ? "NCHW" : "NHWC";
  if (f.format != "image_list" && f.format != "none" && f.layout != layout) {
    return Status(StatusCode::kInvalidArgument,
                  "input '" + input.name + "' is " + layout + " " + dims_text(input.shape, true) +
                      " but the recipe writes " + f.layout + " samples and declares " + f.layout +
                      " to the converter: export the model with an " + f.layout + " input");
  }
  if (args.bgr && f.format == "raw_uint8" && f.color != "model") {
    return Status(StatusCode::kInvalidArgument,
                  "--bgr: this recipe's converter reads " + (f.color.empty() ? std::string("RGB") : f.color) +
                      " pixels and normalizes them itself; its channel order is set in the recipe, not by edgemm");
  }
  return Status::ok();
}

/// True when a template of `recipe` writes the input's shape or size into a script.
Expected<bool> templates_use_shape(const targets::Recipe& recipe) {
  for (const targets::RecipeTemplate& t : recipe.templates) {
    EDGEMM_ASSIGN_OR_RETURN(const std::string text, read_template(t));
    for (const char* p : {"{{input_shape", "{{input_height}}", "{{input_width}}", "{{input_channels}}"}) {
      if (text.find(p) != std::string::npos) return true;
    }
  }
  return false;
}

/// What the recipes need of the model, checked before anything is written: a first input whose
/// name the generated scripts can quote, a static shape when the scripts write it, an image input
/// when calibration images are given or the converter needs them, --int8 options that can run,
/// and templates that render.
Status check_recipe_inputs(const std::vector<ValueInfo>& inputs, const TargetConvertArgs& args,
                           const targets::Recipe& recipe) {
  if (inputs.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + args.model + "' has no graph inputs; the converter recipes feed its first input");
  }
  const std::string& name = inputs.front().name;
  const bool quotable = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == ':' || c == '/' || c == '-';
  });
  if (!quotable || name.front() == '-') {
    return Status(StatusCode::kInvalidArgument, "input name '" + name +
                                                    "' has characters the generated scripts would have to quote "
                                                    "(letters, digits and _ . : / - only, not starting with -): "
                                                    "rename the input");
  }
  ValueInfo input = inputs.front();
  if (auto fixed = args.fixed_shapes.find(name); fixed != args.fixed_shapes.end()) {
    input.shape.clear();
    for (int64_t d : fixed->second) input.shape.push_back(Dim{d, ""});
    input.rank_known = true;
  }
  const bool is_static = input.rank_known && std::all_of(input.shape.begin(), input.shape.end(),
                                                         [](const Dim& d) { return d.is_static(); });
  EDGEMM_ASSIGN_OR_RETURN(const bool scripts_use_shape, templates_use_shape(recipe));
  if (!is_static && scripts_use_shape) {
    return Status(StatusCode::kInvalidArgument,
                  "input '" + name + "' has dynamic dims " + dims_text(input.shape, input.rank_known) + "; the " +
                      recipe.target + " recipe writes the input shape: pass --fix-shape " + name + "=...");
  }
  if (recipe.calibration.required && args.calib.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "the " + recipe.target + " converter always quantizes: give calibration images with --calib DIR");
  }
  if (args.int8) {
    if (args.calib.empty())
      return Status(StatusCode::kInvalidArgument, "--int8 calibrates on --calib images: give --calib DIR");
    EDGEMM_RETURN_IF_ERROR(quant::parse_method(args.int8_method).status());
  }
  if (!args.stage.empty() && args.calib.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--stage makes the calibration samples from --calib images through the OCR pipeline: give --calib "
                  "DIR");
  }
  if (calibrates(args, recipe)) {
    EDGEMM_RETURN_IF_ERROR(check_calibration_input(inputs, input, args, recipe.calibration));
    if (!args.normalization_given) {
      return Status(StatusCode::kInvalidArgument,
                    "--calib: the calibration samples and the recipe need the model's input normalization: give "
                    "--mean and --std (R, G, B, 0-255 units; --mean 0,0,0 --std 1,1,1 for a model that takes raw "
                    "pixels, --bgr for a model that takes B, G, R), or --stage ocr-det|ocr-cls|ocr-rec for a PP-OCR "
                    "model (the OCR pipeline's own preprocessing)");
    }
  }
  for (const targets::RecipeTemplate& t : recipe.templates) {
    EDGEMM_RETURN_IF_ERROR(render(t, placeholder_values(input, args, recipe.calibration, 0)).status());
  }
  return Status::ok();
}

}  // namespace

/// Everything checked and chosen before the folder is written.
struct Prepared {
  OnnxModel model;
  targets::PlatformProfile profile;
  targets::Recipe recipe;
  targets::TargetReport before;
  targets::ConversionPlan plan;
  CalibrationImages chosen;  ///< empty without --calib
};

Expected<Prepared> prepare(const TargetConvertArgs& args, const VerifyOptions* verify) {
  EDGEMM_ASSIGN_OR_RETURN(targets::PlatformProfile profile, load_platform(args.platforms, args.target));
  const fs::path recipe_dir = fs::path(platforms_dir(args.platforms)) / "recipes" / args.target;
  EDGEMM_ASSIGN_OR_RETURN(targets::Recipe recipe, targets::load_recipe(recipe_dir.string()));
  if (recipe.target != profile.name) {
    return Status(StatusCode::kInvalidModel, recipe_dir.string() + "/recipe.json: 'target' is '" + recipe.target +
                                                 "', not '" + profile.name + "'");
  }
  EDGEMM_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::load(args.model));
  EDGEMM_RETURN_IF_ERROR(convert::validate_fixed_shapes(model, args.fixed_shapes));
  EDGEMM_RETURN_IF_ERROR(check_recipe_inputs(model.inputs(), args, recipe));
  targets::TargetReport before = targets::check_model(model, profile);
  EDGEMM_ASSIGN_OR_RETURN(targets::ConversionPlan plan,
                          targets::plan_conversion(model, profile, before, args.fixed_shapes));
  EDGEMM_RETURN_IF_ERROR(check_shapes_fit_memory(args.model, verify ? verify->shapes : args.fixed_shapes));
  if (verify) EDGEMM_RETURN_IF_ERROR(check_verify_inputs(args.model, *verify));
  CalibrationImages chosen;
  if (!args.calib.empty() && recipe.calibration.format == "none" && !args.int8) {
    std::cerr << "edgemm convert: warning: the " << recipe.target
              << " recipe takes no calibration files; --calib is used only with --int8" << std::endl;
  } else if (!args.calib.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(chosen, calibration_images(args.calib, args.calib_count));
  }
  return Prepared{std::move(model),  std::move(profile), std::move(recipe),
                  std::move(before), std::move(plan),    std::move(chosen)};
}

/// Writes the folder's files into `folder`'s staging folder, commits it, and prints the summary.
Expected<int> write_folder(const TargetConvertArgs& args, Prepared& p, const VerifyOptions* verify,
                           OutputFolder& folder) {
  const targets::PlatformProfile& profile = p.profile;
  const targets::Recipe& recipe = p.recipe;
  const targets::ConversionPlan& plan = p.plan;
  const targets::TargetReport& before = p.before;
  const fs::path out = folder.staging();      // the files go here until commit()
  const fs::path final_dir(args.output_dir);  // and paths in the report and messages name this
  const std::string converted = (out / "model.onnx").string();
  std::cerr << "edgemm convert: rewriting for " << profile.name << "..." << std::endl;
  EDGEMM_ASSIGN_OR_RETURN(const convert::ConvertReport creport, convert::convert_model(p.model, plan.options));
  EDGEMM_RETURN_IF_ERROR(p.model.save(converted));
  EDGEMM_ASSIGN_OR_RETURN(const OnnxModel written, OnnxModel::load(converted));
  const targets::TargetReport after = targets::check_model(written, profile);

  std::optional<VerifyReport> verified;
  if (verify) {
    EDGEMM_ASSIGN_OR_RETURN(verified, verify_conversion(args.model, converted, *verify));
  }
  const ValueInfo& input = written.inputs().front();
  InputGeometry geometry;
  quant::FeedSource source;
  if (calibrates(args, recipe)) {
    EDGEMM_ASSIGN_OR_RETURN(geometry, input_geometry(input));
    EDGEMM_ASSIGN_OR_RETURN(source, model_feed_source(args, geometry, input.name, converted));
    if (args.stage.empty()) {
      std::cerr << "edgemm convert: warning: calibration preprocessing " << preprocessing_text(args, input)
                << "; if the model's own preprocessing differs (letterbox, crop, padding) the calibration does not "
                   "see what inference sees (PP-OCR models: --stage ocr-det|ocr-cls|ocr-rec)"
                << std::endl;
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(CalibrationResult calib,
                          write_calibration(args, recipe.calibration, p.chosen, geometry, input, source, out));
  const auto values = placeholder_values(input, args, recipe.calibration, calib.written);
  targets::Recipe shown = recipe;  // the README quotes the recipe's notes filled in
  for (std::string& note : shown.unknown) {
    EDGEMM_ASSIGN_OR_RETURN(note, targets::render_template(note, values, "recipe.json 'unknown'"));
  }
  for (const targets::RecipeTemplate& t : recipe.templates) {
    EDGEMM_ASSIGN_OR_RETURN(std::string rendered, render(t, values));
    EDGEMM_RETURN_IF_ERROR(write_text_file((out / t.output).string(), rendered));
  }
  std::optional<Int8Result> int8;
  if (args.int8) {
    std::cerr << "edgemm convert: quantizing to int8 QDQ..." << std::endl;
    EDGEMM_ASSIGN_OR_RETURN(int8, write_int8(args, profile, p.chosen, source, converted, out, verify));
  }
  EDGEMM_RETURN_IF_ERROR(write_text_file((out / "README.md").string(), readme(args, profile, shown, plan, before, after,
                                                                              calib, verified, written.inputs()) +
                                                                           (int8 ? int8_readme(*int8, args) : "")));

  nlohmann::json j;
  j["schema"] = "edgemm.convert_target/2";
  j["model"] = args.model;
  j["output_dir"] = args.output_dir;
  j["target"] = profile.name;
  j["steps"] = plan.steps;
  j["convert"] = {{"opset", {{"from", creport.source_opset}, {"to", creport.target_opset}}},
                  {"nodes", {{"before", creport.nodes_before}, {"after", creport.nodes_after}}},
                  {"rewrites", creport.rewrites}};
  j["before"] = target_report_json(before, profile, args.model);
  j["after"] = target_report_json(after, profile, (final_dir / "model.onnx").string());
  j["verification"] = verified ? verify_json(*verified) : nlohmann::json();
  j["calibration"] = {
      {"format", recipe.calibration.format},
      {"color", recipe.calibration.format == "none" ? nlohmann::json()
                                                    : nlohmann::json(sample_color(recipe.calibration, args.bgr))},
      {"stage", args.stage.empty() ? nlohmann::json() : nlohmann::json("ocr-" + args.stage)},
      {"preprocessing", calibrates(args, recipe) ? nlohmann::json(preprocessing_text(args, input)) : nlohmann::json()},
      {"written", calib.written},
      {"images", calib.images},
      {"skipped", calib.skipped}};
  j["int8"] = int8 ? int8_json(*int8, args, profile) : nlohmann::json();
  j["files"] = nlohmann::json::array({"model.onnx", "README.md", "report.json"});
  if (int8) j["files"].push_back("model.int8.onnx");
  for (const targets::RecipeTemplate& t : recipe.templates) j["files"].push_back(t.output);
  j["npu_run"] = false;
  EDGEMM_RETURN_IF_ERROR(write_text_file((out / "report.json").string(), json_text(j) + "\n"));
  EDGEMM_RETURN_IF_ERROR(folder.commit());

  if (args.json) {
    std::cout << json_text(j) << std::endl;
  } else {
    std::cout << "wrote " << args.output_dir << " for " << profile.title << ":\n";
    for (const std::string& step : plan.steps) std::cout << "  " << step << "\n";
    std::cout << "  before: " << placement_summary(before) << "\n  after:  " << placement_summary(after) << "\n";
    if (recipe.calibration.format != "none") {
      std::cout << "  calibration samples: " << calib.written << " from " << calib.images << " images ("
                << calib.skipped.size() << " images skipped)\n";
    }
    if (verified) std::cout << "  verification: " << (verified->passed ? "passed" : "FAILED") << "\n";
    for (const EngineCheck& c : verified ? verified->checks : std::vector<EngineCheck>{}) {
      if (!c.skipped.empty()) std::cout << "    " << c.engine << " check skipped: " << c.skipped << "\n";
    }
    if (int8) {
      std::cout << "  model.int8.onnx: " << int8->quantized.plan.targets.size() << " nodes int8, calibrated on "
                << int8->quantized.samples_used << " images";
      for (const Int8EngineCheck& c : int8->verified ? int8->verified->checks : std::vector<Int8EngineCheck>{}) {
        if (c.skipped.empty() && c.failed.empty()) std::cout << ", " << c.engine << " SQNR " << db_text(c.sqnr_db);
      }
      std::cout << "\n";
    }
    std::cout << "  the vendor converter was not run here: see " << (final_dir / "README.md").string() << "\n";
  }
  if (int8 && worst_sqnr(*int8) < quant::kPoorSqnrDb) {
    std::cerr << "edgemm convert: warning: model.int8.onnx's outputs are far from float's (SQNR "
              << db_text(worst_sqnr(*int8)) << " < " << quant::kPoorSqnrDb
              << " dB): check --mean/--std/--bgr, or try another --int8-method" << std::endl;
  }
  if (verified && !verified->passed) {
    const bool ran = std::all_of(verified->checks.begin(), verified->checks.end(),
                                 [](const EngineCheck& c) { return c.failed.empty(); });
    std::cerr << "edgemm convert: error: "
              << (ran ? "the rewritten model differs from the original beyond the tolerance"
                      : "the verification could not run a model (see the failed checks)")
              << "; see " << (final_dir / "report.json").string() << std::endl;
    return 1;
  }
  return 0;
}

Expected<int> convert_for_target(const TargetConvertArgs& args, const VerifyOptions* verify) {
  EDGEMM_ASSIGN_OR_RETURN(Prepared prepared, prepare(args, verify));
  if (args.output_dir.empty()) return Status(StatusCode::kInvalidArgument, "-o needs a folder name");
  std::vector<std::string> inputs = prepared.model.external_data_files();
  inputs.push_back(args.model);
  for (const fs::path& image : prepared.chosen.images) inputs.push_back(image.string());
  EDGEMM_ASSIGN_OR_RETURN(OutputFolder folder, OutputFolder::claim(args.output_dir, inputs));
  return write_folder(args, prepared, verify, folder);  // an error leaves the previous folder as it was
}

}  // namespace edgemm::cli
