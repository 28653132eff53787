#pragma once
/// \file recipe.h
/// Converter recipes for deployment folders (platforms/recipes/<target>/, docs/platform-recipes.md):
/// recipe.json names the template files to fill in and the calibration data format the vendor
/// tool expects; templates hold `{{placeholder}}`s from a fixed set (kRecipePlaceholders).

#include <map>
#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::targets {

/// The placeholders a template may use (anything else is refused when it is rendered).
inline const std::vector<std::string> kRecipePlaceholders = {
    "model_file",  "model_stem",     "input_name",  "input_shape",   "input_shape_list", "input_height",
    "input_width", "input_channels", "mean_values", "std_values",    "scale_values",     "calib_list",
    "calib_dir",   "calib_count",    "quantize",    "quantize_flag", "rgb2bgr",          "input_color"};

/// How the vendor tool wants calibration samples.
struct CalibrationFormat {
  /// "image_list" (the list names image files, the tool preprocesses), "raw_float32" / "raw_uint8"
  /// (headerless preprocessed tensors), "npy" (preprocessed .npy), or "none".
  std::string format = "none";
  std::string layout;  ///< "NCHW" or "NHWC" for preprocessed formats
  /// Channel order of the samples: "RGB", "BGR" (empty: RGB), or "model" (the order the model
  /// was trained on, `convert --bgr`; the converter is told the same order).
  std::string color;
  bool required = false;  ///< the converter always quantizes: --calib images are needed
  std::string list_file;  ///< written in the folder when non-empty
  std::string dir;        ///< folder of the samples inside the deployment folder
};

/// One template to fill in.
struct RecipeTemplate {
  std::string template_file;  ///< path of the template (absolute after load_recipe)
  std::string output;         ///< file name in the deployment folder
  std::string run;            ///< the command the user runs, for the README
};

/// A target's recipe folder.
struct Recipe {
  std::string target;
  std::vector<RecipeTemplate> templates;
  CalibrationFormat calibration;
  std::vector<std::string> sources, unknown;
};

/// Reads `dir`/recipe.json. Errors: kIo when missing; kInvalidModel naming the file and key for
/// a malformed one (unknown calibration format or layout, no templates, a template path outside
/// `dir` or that does not exist, an output name with a path separator, two files of the folder with the same name).
Expected<Recipe> load_recipe(const std::string& dir);

/// `text` with every `{{name}}` replaced by values[name]. Errors: kInvalidModel naming
/// `what` and the placeholder when it is not in kRecipePlaceholders or has no value, or a
/// `{{` is not closed.
Expected<std::string> render_template(const std::string& text, const std::map<std::string, std::string>& values,
                                      const std::string& what);

}  // namespace edgemm::targets
