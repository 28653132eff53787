#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "edgemm/tools/targets.h"

namespace edgemm::targets {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Status bad(const std::string& path, const std::string& message) {
  return Status(StatusCode::kInvalidModel, path + ": " + message);
}

Expected<std::string> optional_string(const Json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return bad(path, std::string("'") + key + "' must be a string or null");
  return it->get<std::string>();
}

Expected<std::vector<std::string>> string_list(const Json& j, const char* key, const std::string& path) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_array()) return bad(path, std::string("'") + key + "' must be a list of strings");
  for (const Json& v : *it) {
    if (!v.is_string()) return bad(path, std::string("'") + key + "' must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Expected<CalibrationFormat> parse_calibration(const Json& j, const std::string& path) {
  CalibrationFormat c;
  if (!j.is_object()) return bad(path, "'calibration' must be an object");
  EDGEMM_ASSIGN_OR_RETURN(c.format, optional_string(j, "format", path));
  EDGEMM_ASSIGN_OR_RETURN(c.layout, optional_string(j, "layout", path));
  EDGEMM_ASSIGN_OR_RETURN(c.color, optional_string(j, "color", path));
  EDGEMM_ASSIGN_OR_RETURN(c.list_file, optional_string(j, "list_file", path));
  EDGEMM_ASSIGN_OR_RETURN(c.dir, optional_string(j, "dir", path));
  const std::vector<std::string> formats = {"image_list", "raw_float32", "raw_uint8", "npy", "none"};
  if (std::find(formats.begin(), formats.end(), c.format) == formats.end()) {
    return bad(path, "calibration format '" + c.format + "' (expected image_list, raw_float32, raw_uint8, npy, none)");
  }
  const bool preprocessed = c.format != "image_list" && c.format != "none";
  if (preprocessed && c.layout != "NCHW" && c.layout != "NHWC") {
    return bad(path, "calibration format '" + c.format + "' needs layout NCHW or NHWC");
  }
  if (auto required = j.find("required"); required != j.end()) {
    if (!required->is_boolean()) return bad(path, "calibration 'required' must be true or false");
    c.required = required->get<bool>();
  }
  if (!c.color.empty() && c.color != "RGB" && c.color != "BGR" && c.color != "model")
    return bad(path, "calibration color must be RGB, BGR or model");
  if (c.format != "none" && c.dir.empty()) return bad(path, "calibration format '" + c.format + "' needs 'dir'");
  for (const std::string* name : {&c.list_file, &c.dir}) {
    if (name->find('/') != std::string::npos || *name == "..") return bad(path, "'" + *name + "' must be a plain name");
  }
  return c;
}

}  // namespace

Expected<Recipe> load_recipe(const std::string& dir) {
  const std::string path = (fs::path(dir) / "recipe.json").string();
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIo, "cannot read the recipe '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad(path, "not a JSON object");
  Recipe r;
  EDGEMM_ASSIGN_OR_RETURN(r.target, optional_string(j, "target", path));
  auto templates = j.find("templates");
  if (templates == j.end() || !templates->is_array()) return bad(path, "'templates' must be a list");
  for (const Json& t : *templates) {
    if (!t.is_object()) return bad(path, "each template must be an object");
    RecipeTemplate rt;
    EDGEMM_ASSIGN_OR_RETURN(std::string file, optional_string(t, "template", path));
    EDGEMM_ASSIGN_OR_RETURN(rt.output, optional_string(t, "output", path));
    EDGEMM_ASSIGN_OR_RETURN(rt.run, optional_string(t, "run", path));
    rt.template_file = (fs::path(dir) / file).string();
    if (file.empty() || fs::path(file).is_absolute() || file.find("..") != std::string::npos) {
      return bad(path, "template '" + file + "' must be a file name inside " + dir);
    }
    if (!fs::is_regular_file(rt.template_file)) {
      return bad(path, "template '" + file + "' does not exist in " + dir);
    }
    if (rt.output.empty() || rt.output.find('/') != std::string::npos || rt.output == "..") {
      return bad(path, "template output '" + rt.output + "' must be a plain file name");
    }
    r.templates.push_back(std::move(rt));
  }
  auto calibration = j.find("calibration");
  if (calibration != j.end()) {
    EDGEMM_ASSIGN_OR_RETURN(r.calibration, parse_calibration(*calibration, path));
  }
  EDGEMM_ASSIGN_OR_RETURN(r.sources, string_list(j, "sources", path));
  EDGEMM_ASSIGN_OR_RETURN(r.unknown, string_list(j, "unknown", path));
  if (r.templates.empty()) return bad(path, "'templates' lists no template");
  std::vector<std::string> names = {"model.onnx", "model.int8.onnx", "README.md", "report.json"};
  for (const std::string* n : {&r.calibration.list_file, &r.calibration.dir}) {
    if (!n->empty()) names.push_back(*n);
  }
  for (const RecipeTemplate& t : r.templates) names.push_back(t.output);
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    return bad(path, "'" + *twice +
                         "' would be written twice in the folder (template outputs, the calibration "
                         "list and folder, and model.onnx, model.int8.onnx, README.md, report.json must differ)");
  }
  return r;
}

Expected<std::string> render_template(const std::string& text, const std::map<std::string, std::string>& values,
                                      const std::string& what) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) return bad(what, "'{{' without '}}'");
    const std::string name = text.substr(open + 2, close - open - 2);
    if (std::find(kRecipePlaceholders.begin(), kRecipePlaceholders.end(), name) == kRecipePlaceholders.end()) {
      return bad(what, "unknown placeholder {{" + name + "}}");
    }
    auto it = values.find(name);
    if (it == values.end()) return bad(what, "no value for placeholder {{" + name + "}}");
    out += text.substr(pos, open - pos) + it->second;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

}  // namespace edgemm::targets
