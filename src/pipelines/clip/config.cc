// config.json and preprocessor_config.json of a CLIP package (Hugging Face field names; defaults
// as transformers.js 4.3.1's ImageProcessor constructor, src/image_processors_utils.js).

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "edgemm/pipelines/clip.h"

namespace edgemm::clip {
namespace {

using Json = nlohmann::json;

Status invalid(const std::string& source, const std::string& field, const std::string& what) {
  return Status(StatusCode::kInvalidModel, source + ": field '" + field + "' " + what);
}

Expected<Json> parse_json(const std::string& text, const std::string& source) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(StatusCode::kInvalidModel, source + ": not valid JSON");
  if (!j.is_object()) return Status(StatusCode::kInvalidModel, source + ": expected a JSON object at the top level");
  return j;
}

Expected<bool> get_bool(const Json& j, const char* key, bool fallback, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return invalid(source, key, "must be true or false, got " + it->dump());
  return it->get<bool>();
}

/// A positive integer (JSON integer, or a float with an integral value such as 224.0).
Expected<int> positive_int(const Json& v, const std::string& field, const std::string& source) {
  if (!v.is_number()) return invalid(source, field, "must be a positive integer, got " + v.dump());
  const double d = v.get<double>();
  if (!(d >= 1 && d <= 1 << 20) || d != std::floor(d)) {
    return invalid(source, field, "must be a positive integer (at most 2^20), got " + v.dump());
  }
  return static_cast<int>(d);
}

Expected<double> get_number(const Json& j, const char* key, double fallback, const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return invalid(source, key, "must be a finite number, got " + it->dump());
  }
  return it->get<double>();
}

/// image_mean / image_std: a number or a list of 1 or 3 numbers.
Status get_triple(const Json& j, const char* key, const char* alt, std::array<double, 3>& out, bool is_std,
                  const std::string& source) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) it = j.find(alt);
  if (it == j.end() || it->is_null()) return Status::ok();
  std::vector<double> values;
  if (it->is_number()) {
    values.assign(3, it->get<double>());
  } else if (it->is_array() && (it->size() == 1 || it->size() == 3)) {
    for (const Json& v : *it) {
      if (!v.is_number()) return invalid(source, key, "must hold numbers, got " + it->dump());
      values.push_back(v.get<double>());
    }
    if (values.size() == 1) values.assign(3, values[0]);
  } else {
    return invalid(source, key, "must be a number or a list of 3 numbers (R, G, B), got " + it->dump());
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(values[c]) || (is_std && values[c] == 0)) {
      return invalid(source, key,
                     std::string(is_std ? "must be finite and non-zero" : "must be finite") + ", got " + it->dump());
    }
    out[c] = values[c];
  }
  return Status::ok();
}

/// `size` / `crop_size`: an integer, or an object with shortest_edge / longest_edge / height + width.
Status parse_size(const Json& v, const std::string& field, bool crop, ImageProcessorConfig& c,
                  const std::string& source) {
  if (v.is_number()) {
    auto n = positive_int(v, field, source);
    if (!n.has_value()) return n.status();
    if (crop) {
      c.crop_height = c.crop_width = *n;
    } else {
      c.shortest_edge = *n;  // Python transformers' CLIPImageProcessor: an int is the shortest edge
    }
    return Status::ok();
  }
  if (!v.is_object()) return invalid(source, field, "must be an integer or an object, got " + v.dump());
  int values[4] = {0, 0, 0, 0};
  const char* keys[4] = {"shortest_edge", "longest_edge", "height", "width"};
  for (int i = 0; i < 4; ++i) {
    auto it = v.find(keys[i]);
    if (it == v.end() || it->is_null()) continue;
    auto n = positive_int(*it, field + "." + keys[i], source);
    if (!n.has_value()) return n.status();
    values[i] = *n;
  }
  if ((values[2] == 0) != (values[3] == 0)) {
    return invalid(source, field, "has only one of 'height' and 'width': " + v.dump());
  }
  if (crop) {
    if (values[2] == 0) return invalid(source, field, "needs 'height' and 'width', got " + v.dump());
    c.crop_height = values[2];
    c.crop_width = values[3];
    return Status::ok();
  }
  c.shortest_edge = values[0];
  c.longest_edge = values[1];
  c.resize_height = values[2];
  c.resize_width = values[3];
  if (values[0] == 0 && values[1] == 0 && values[2] == 0) {
    return invalid(source, field, "has none of 'shortest_edge', 'longest_edge', 'height' + 'width': " + v.dump());
  }
  return Status::ok();
}

Expected<std::string> read_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(StatusCode::kIo, "cannot read '" + path + "': " +
                                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status(StatusCode::kIo, "cannot read '" + path + "'");
  return text.str();
}

}  // namespace

Expected<ImageProcessorConfig> ImageProcessorConfig::parse(const std::string& json_text, const std::string& source) {
  auto parsed = parse_json(json_text, source);
  if (!parsed.has_value()) return parsed.status();
  const Json& j = *parsed;
  ImageProcessorConfig c;
  for (auto [key, field, fallback] :
       {std::tuple{"do_convert_rgb", &c.do_convert_rgb, true}, std::tuple{"do_center_crop", &c.do_center_crop, false},
        std::tuple{"do_rescale", &c.do_rescale, true}, std::tuple{"do_normalize", &c.do_normalize, false}}) {
    auto v = get_bool(j, key, fallback, source);
    if (!v.has_value()) return v.status();
    *field = *v;
  }
  auto size = j.find("size");
  if (size == j.end() || size->is_null()) size = j.find("image_size");
  const bool has_size = size != j.end() && !size->is_null();
  auto do_resize = get_bool(j, "do_resize", has_size, source);
  if (!do_resize.has_value()) return do_resize.status();
  c.do_resize = *do_resize;
  if (has_size) EDGEMM_RETURN_IF_ERROR(parse_size(*size, size.key(), false, c, source));
  if (c.do_resize && !has_size) return invalid(source, "size", "is missing but do_resize is true");
  if (auto crop = j.find("crop_size"); crop != j.end() && !crop->is_null()) {
    EDGEMM_RETURN_IF_ERROR(parse_size(*crop, "crop_size", true, c, source));
  } else if (c.do_center_crop) {
    return invalid(source, "crop_size", "is missing but do_center_crop is true");
  }
  if (auto r = j.find("resample"); r != j.end() && !r->is_null()) {
    if (!r->is_number_integer()) return invalid(source, "resample", "must be an integer 0-5, got " + r->dump());
    switch (r->get<int64_t>()) {
      case 0:
        c.resample = Resample::kNearest;
        break;
      case 2:
      case 4:
      case 5:
        c.resample = Resample::kBilinear;
        break;
      case 3:
        c.resample = Resample::kBicubic;
        break;
      case 1:
        c.resample = Resample::kLanczos;
        break;
      default:
        return invalid(source, "resample", "must be an integer 0-5 (PIL's filters), got " + r->dump());
    }
  }
  auto factor = get_number(j, "rescale_factor", 1.0 / 255.0, source);
  if (!factor.has_value()) return factor.status();
  c.rescale_factor = *factor;
  EDGEMM_RETURN_IF_ERROR(get_triple(j, "image_mean", "mean", c.image_mean, false, source));
  EDGEMM_RETURN_IF_ERROR(get_triple(j, "image_std", "std", c.image_std, true, source));
  return c;
}

Expected<ImageProcessorConfig> ImageProcessorConfig::load(const std::string& path) {
  auto text = read_text(path);
  if (!text.has_value()) return text.status();
  return parse(*text, path);
}

std::array<int, 2> resize_output_size(const ImageProcessorConfig& c, int width, int height) {
  if (!c.do_resize) return {width, height};
  if (c.shortest_edge == 0 && c.longest_edge == 0) return {c.resize_width, c.resize_height};
  // transformers.js get_resize_output_image_size: both sides scaled by one factor, then
  // Math.floor(Number(x.toFixed(2))) ("to avoid floating point precision issues").
  const double short_factor = c.shortest_edge == 0 ? 1.0
                                                   : std::max(static_cast<double>(c.shortest_edge) / width,
                                                              static_cast<double>(c.shortest_edge) / height);
  const double w = width * short_factor, h = height * short_factor;
  const double long_factor = c.longest_edge == 0 ? 1.0 : std::min(c.longest_edge / w, c.longest_edge / h);
  auto round_down = [](double x) { return std::max(1, static_cast<int>(std::floor(std::round(x * 100.0) / 100.0))); };
  return {round_down(w * long_factor), round_down(h * long_factor)};
}

Expected<ClipConfig> ClipConfig::parse(const std::string& json_text, const std::string& source) {
  auto parsed = parse_json(json_text, source);
  if (!parsed.has_value()) return parsed.status();
  const Json& j = *parsed;
  ClipConfig c;
  if (auto it = j.find("_name_or_path"); it != j.end() && it->is_string()) c.model_id = it->get<std::string>();
  auto get_int = [&](const Json& obj, const char* key, const std::string& field, int& out) -> Status {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Status::ok();
    auto n = positive_int(*it, field, source);
    if (!n.has_value()) return n.status();
    out = *n;
    return Status::ok();
  };
  EDGEMM_RETURN_IF_ERROR(get_int(j, "projection_dim", "projection_dim", c.projection_dim));
  for (const char* sub : {"vision_config", "text_config"}) {
    auto it = j.find(sub);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object()) return invalid(source, sub, "must be an object, got " + it->dump());
    if (std::string(sub) == "vision_config") {
      EDGEMM_RETURN_IF_ERROR(get_int(*it, "image_size", "vision_config.image_size", c.image_size));
    } else {
      EDGEMM_RETURN_IF_ERROR(
          get_int(*it, "max_position_embeddings", "text_config.max_position_embeddings", c.max_position_embeddings));
      if (auto pad = it->find("pad_token_id"); pad != it->end() && pad->is_number_integer()) {
        c.pad_token_id = pad->get<int64_t>();
      }
    }
  }
  if (auto it = j.find("logit_scale_init_value"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || std::fabs(it->get<double>()) > 20) {
      return invalid(source, "logit_scale_init_value", "must be a finite number in [-20, 20], got " + it->dump());
    }
    c.logit_scale_init_value = it->get<double>();
  }
  return c;
}

}  // namespace edgemm::clip
