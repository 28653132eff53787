#include "ocr_options.h"

#include "cli_common.h"

namespace edgemm::cli {

ocr::OcrOptions OcrPipelineArgs::resolved() const {
  ocr::OcrOptions out = options;
  out.models_dir = models.empty() ? default_ocr_models_dir() : models;
  out.use_cls = !no_cls;
  out.detect_orientation = !no_orientation;
  out.score_mode = score_mode == "slow" ? ocr::ScoreMode::kSlow : ocr::ScoreMode::kFast;
  out.optimize = !no_optimize;
  out.backend = backend.backend;
  out.plugin_path = backend.plugin;
  out.device = backend.device;
  out.precision = backend.precision;
  return out;
}

void add_ocr_pipeline_options(CLI::App* cmd, OcrPipelineArgs& args) {
  cmd->add_flag("--no-cls", args.no_cls, "skip the 0°/180° angle classifier (and with it --no-orientation)");
  cmd->add_flag("--no-orientation", args.no_orientation,
                "do not look for images turned by 90°, 180° or 270° (lines are still turned one by one)");
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
  // One file per occurrence, so that the images after it stay positional arguments.
  cmd->add_option("--rec-bucket", args.options.files.rec_buckets,
                  "another recognizer file in --models with a static width (edgemm convert --fix-shape "
                  "x=1,3,48,W); each line goes to the narrowest one that holds it (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--det-threshold", args.options.det_threshold, "DB binarization threshold")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--box-threshold", args.options.box_threshold, "drop boxes scoring below this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--unclip-ratio", args.options.unclip_ratio, "box expansion: distance = area × ratio / perimeter")
      ->check(CLI::Range(0.01, 10.0))
      ->capture_default_str();
  cmd->add_option("--score-mode", args.score_mode, "box score: fast (inside the box) or slow (inside the contour)")
      ->check(CLI::IsMember({"fast", "slow"}))
      ->capture_default_str();
  cmd->add_option("--cls-threshold", args.options.cls_threshold,
                  "also read a line turned 180° when the classifier says so with more than this probability")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--space-threshold", args.options.space_threshold,
                  "put a space between two ASCII characters when the recognizer gives it this probability on a "
                  "step between them (1: PaddleOCR's argmax decoding)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--rec-threshold", args.options.rec_score_threshold, "drop lines whose confidence is below this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  args.backend.add_to(cmd);
}

}  // namespace edgemm::cli
