/// \file histogram_io.cc
/// Calibration histograms to and from JSON (write_histograms, read_histograms: edgemm/tools/calibration.h).

#include <fstream>
#include <nlohmann/json.hpp>

#include "edgemm/atomic_file.h"
#include "edgemm/tools/calibration.h"

namespace edgemm::quant {

namespace {

constexpr const char* kFormat = "edgemm-histograms";
constexpr int kVersion = 1;

}  // namespace

Status write_histograms(const std::string& path, const std::map<std::string, TensorHistogram>& histograms) {
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, h] : histograms) {
    tensors[name] = {{"lo", h.lo()},   {"bin_width", h.bin_width()},   {"min", h.min()},
                     {"max", h.max()}, {"non_finite", h.non_finite()}, {"bins", h.bins()}};
  }
  const nlohmann::json j = {{"format", kFormat}, {"version", kVersion}, {"tensors", tensors}};
  return write_file_atomically(path, j.dump() + "\n");
}

Expected<std::map<std::string, TensorHistogram>> read_histograms(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(StatusCode::kIo, "cannot read histograms file '" + path + "'");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const auto bad = [&path](const std::string& why) {
    return make_error(StatusCode::kInvalidArgument, "histograms file '" + path + "': " + why);
  };
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kFormat || !j.contains("tensors") ||
      !j["tensors"].is_object()) {
    return bad("not a file written by --save-histograms");
  }
  if (j.value("version", 0) != kVersion) return bad("unsupported version");
  std::map<std::string, TensorHistogram> histograms;
  for (const auto& [name, t] : j["tensors"].items()) {
    try {
      Expected<TensorHistogram> h = TensorHistogram::restore(
          t.at("bins").get<std::vector<int64_t>>(), t.at("lo").get<double>(), t.at("bin_width").get<double>(),
          t.at("min").get<float>(), t.at("max").get<float>(), t.at("non_finite").get<int64_t>());
      if (!h) return bad("tensor '" + name + "': " + h.status().message());
      histograms.emplace(name, std::move(*h));
    } catch (const nlohmann::json::exception&) {
      return bad("tensor '" + name + "' lacks lo, bin_width, min, max, non_finite or bins of the right types");
    }
  }
  return histograms;
}

}  // namespace edgemm::quant
