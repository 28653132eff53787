#include "ocr_options.h"

#include "cli_common.h"

namespace edgemm::cli {

ocr::OcrOptions OcrPipelineArgs::resolved() const {
  ocr::OcrOptions out = options;
  out.models_dir = models.empty() ? default_ocr_models_dir() : models;
  out.use_cls = !no_cls;
  out.optimize = !no_optimize;
  out.backend = backend.backend;
  out.plugin_path = backend.plugin;
  out.device = backend.device;
  out.precision = backend.precision;
  return out;
}

void add_ocr_pipeline_options(CLI::App* cmd, OcrPipelineArgs& args) {
  cmd->add_flag("--no-cls", args.no_cls, "skip the 0°/180° angle classifier");
  cmd->add_flag("--no-optimize", args.no_optimize,
                "run the models as the files are, without edgemm's graph passes (fusions, layouts)");
  cmd->add_option("-t,--threads", args.options.threads, "intra-op threads per model (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--det-limit-side", args.options.det_limit_side,
                  "limit the longer image side to this many pixels before detection")
      ->check(CLI::Range(32, 8192))
      ->capture_default_str();
  cmd->add_option("--models", args.models,
                  "folder with the PP-OCRv4 det/cls/rec models and ppocr_keys_v1.txt "
                  "(default: $EDGEMM_MODELS_DIR or models/ppocrv4)");
  args.backend.add_to(cmd);
}

}  // namespace edgemm::cli
