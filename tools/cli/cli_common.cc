#include "cli_common.h"

#include <omp.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "edgemm/atomic_file.h"

namespace edgemm::cli {

Expected<std::pair<std::string, std::string>> split_assignment(const std::string& text, const std::string& what) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return make_error(StatusCode::kInvalidArgument, what + " '" + text + "' should look like name=value");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Expected<std::pair<std::string, Shape>> parse_named_shape(const std::string& text) {
  EDGEMM_ASSIGN_OR_RETURN(auto kv, split_assignment(text, "shape"));
  Shape shape;
  size_t pos = 0;
  const std::string& dims = kv.second;
  while (pos <= dims.size()) {
    size_t comma = dims.find(',', pos);
    if (comma == std::string::npos) comma = dims.size();
    const std::string item = dims.substr(pos, comma - pos);
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || value < 0) {
      return make_error(StatusCode::kInvalidArgument,
                        "shape '" + text + "': '" + item + "' is not a non-negative integer");
    }
    shape.push_back(value);
    pos = comma + 1;
  }
  return std::make_pair(kv.first, shape);
}

Expected<std::map<std::string, Shape>> parse_named_shapes(const std::vector<std::string>& texts,
                                                          const std::string& option) {
  std::map<std::string, Shape> shapes;
  for (const auto& t : texts) {
    EDGEMM_ASSIGN_OR_RETURN(auto named, parse_named_shape(t));
    if (!shapes.emplace(named.first, named.second).second) {
      return make_error(StatusCode::kInvalidArgument, option + " is given twice for '" + named.first + "'");
    }
  }
  return shapes;
}

int resolve_threads(int threads) { return threads > 0 ? threads : omp_get_num_procs(); }

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json error_json(const Status& status) {
  return {{"code", status_code_name(status.code())}, {"message", status.message()}};
}

int report_error(const std::string& command, const Status& status, bool json) {
  if (json) std::cout << json_text({{"error", error_json(status)}}) << std::endl;
  std::cerr << "edgemm" << (command.empty() ? "" : " " + command) << ": error: " << status.to_string() << std::endl;
  return exit_code(status);
}

std::string dims_text(const std::vector<Dim>& dims, bool rank_known) {
  return rank_known ? dims_to_string(dims) : "(unknown rank)";
}

nlohmann::json value_info_json(const ValueInfo& info) {
  nlohmann::json shape = nlohmann::json::array();
  for (const auto& d : info.shape) {
    if (d.is_static())
      shape.push_back(d.value);
    else
      shape.push_back(d.symbol.empty() ? "?" : d.symbol);
  }
  return {{"name", info.name},
          {"dtype", dtype_name(info.dtype)},
          {"shape", info.rank_known ? shape : nlohmann::json(nullptr)}};
}

namespace {

template <typename T>
double element_as_double(const Tensor& t, int64_t i) {
  return static_cast<double>(t.data<T>()[i]);
}

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return element_as_double<float>(t, i);
    case DataType::kFloat64:
      return element_as_double<double>(t, i);
    case DataType::kFloat16:
      return half_to_float(t.data<uint16_t>()[i]);
    case DataType::kInt8:
      return element_as_double<int8_t>(t, i);
    case DataType::kUInt8:
    case DataType::kBool:
      return element_as_double<uint8_t>(t, i);
    case DataType::kInt16:
      return element_as_double<int16_t>(t, i);
    case DataType::kUInt16:
      return element_as_double<uint16_t>(t, i);
    case DataType::kInt32:
      return element_as_double<int32_t>(t, i);
    case DataType::kUInt32:
      return element_as_double<uint32_t>(t, i);
    case DataType::kInt64:
      return element_as_double<int64_t>(t, i);
    case DataType::kUInt64:
      return element_as_double<uint64_t>(t, i);
    case DataType::kBFloat16:
      return bfloat16_to_float(t.data<uint16_t>()[i]);
    default:
      return 0;
  }
}

}  // namespace

TensorStats tensor_stats(const Tensor& t, double threshold) {
  TensorStats s;
  s.count = t.element_count();
  if (s.count == 0) return s;
  s.min = s.max = element(t, 0);
  double sum = 0, sum_sq = 0;
  int64_t above = 0;
  for (int64_t i = 0; i < s.count; ++i) {
    const double v = element(t, i);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    sum_sq += v * v;
    above += v > threshold;
  }
  s.mean = sum / s.count;
  s.stddev = std::sqrt(std::max(0.0, sum_sq / s.count - s.mean * s.mean));
  s.share_above = static_cast<double>(above) / s.count;
  return s;
}

std::string npy_file_name(const std::string& value_name) {
  std::string name = value_name;
  for (char& c : name) {
    if (c == '/' || c == ':') c = '_';
  }
  return name + ".npy";
}

Status check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) return make_error(StatusCode::kInvalidArgument, "an output file name is empty");
  if (path == "-") {
    return make_error(StatusCode::kInvalidArgument, "this output cannot go to standard output ('-'): give a file name");
  }
  std::error_code ec;
  for (const auto& input : inputs) {
    if (!input.empty() && fs::exists(path, ec) && fs::equivalent(path, input, ec)) {
      return make_error(StatusCode::kInvalidArgument, "refusing to write the output to '" + path + "': it is an input");
    }
  }
  const bool existed = fs::exists(path, ec);
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return make_error(StatusCode::kIo, "cannot write '" + path + "': " + std::strerror(errno));
  std::fclose(f);
  if (!existed) fs::remove(path, ec);
  return Status::ok();
}

Status write_text_file(const std::string& path, const std::string& text) { return write_file_atomically(path, text); }

int64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(size);
}

namespace {
std::string& invocation_text() {
  static std::string text;
  return text;
}
}  // namespace

void set_invocation(int argc, char** argv) {
  std::string& text = invocation_text();
  text.clear();
  for (int i = 0; i < argc; ++i) {
    std::string arg = i == 0 ? "edgemm" : argv[i];
    if (arg.empty() || arg.find_first_of(" \t'\"$\\") != std::string::npos) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    text += (i ? " " : "") + arg;
  }
}

const std::string& invocation() { return invocation_text(); }

std::string default_repo_dir(const char* env_var, const std::string& relative) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') candidates.emplace_back(env);
  candidates.emplace_back(relative);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path().parent_path().parent_path() / relative);
    candidates.push_back(exe.parent_path().parent_path() / "share" / "edgemm" / relative);
  }
  for (const fs::path& dir : candidates) {
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  return candidates.front().string();
}

std::string default_ocr_models_dir() { return default_repo_dir("EDGEMM_MODELS_DIR", "models/ppocrv4"); }

ProgressBar::ProgressBar(std::string label, size_t total)
    : label_(std::move(label)), total_(total), enabled_(total > 1 && isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::clear() {
  if (enabled_) std::cerr << "\r\033[K" << std::flush;
}

void ProgressBar::update(size_t done, const std::string& current) {
  if (!enabled_) return;
  constexpr size_t kWidth = 30;
  const size_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
  std::string name = current.size() > 40 ? "..." + current.substr(current.size() - 37) : current;
  std::cerr << "\r\033[K" << label_ << " [" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
            << done << "/" << total_ << " " << name << std::flush;
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double value = 0;
        try {
          value = std::stod(text);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (!(value >= lo && value <= hi)) {
          return "'" + text + "' is not in [" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
        }
        return std::string();
      },
      "NUMBER in [" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]");
}

void BackendArgs::add_to(CLI::App* cmd) {
  cmd->add_option("--backend", backend,
                  "backend: native (edgemm's CPU kernels), opencv (OpenCV DNN) or plugin (--plugin); nodes it "
                  "cannot run fall back to native, with a warning")
      ->capture_default_str();
  cmd->add_option("--device", device, "device of the backend")->capture_default_str();
  cmd->add_option("--precision", precision,
                  "precision the backend runs in; native: fp32, bf16 (bfloat16 MatMul products with float32 "
                  "sums on CPUs with AVX512_BF16) or fp16 (half-precision Conv and MatMul on Arm CPUs with FP16 "
                  "arithmetic); docs/backends.md")
      ->capture_default_str();
  cmd->add_option("--plugin", plugin, "vendor plugin library for --backend plugin (edgemm/plugin_abi.h)");
}

void BackendArgs::apply(InferencerConfig& config) const {
  config.backend = backend;
  config.device = device;
  config.precision = precision;
  config.plugin_path = plugin;
}

nlohmann::json placement_json(const Inferencer& inferencer) {
  nlohmann::json nodes = nlohmann::json::array();
  int fallbacks = 0;
  for (const NodePlacement& p : inferencer.placement()) {
    nodes.push_back({{"node", p.node}, {"op_type", p.op_type}, {"backend", p.backend}, {"reason", p.reason}});
    if (p.backend != inferencer.backend()) ++fallbacks;
  }
  return {{"backend", inferencer.backend()}, {"nodes", nodes}, {"fallback_nodes", fallbacks}};
}

nlohmann::json placement_summary_json(const Inferencer& inferencer) {
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const NodePlacement& p : inferencer.placement()) {
    if (p.backend != inferencer.backend()) {
      fallbacks.push_back({{"node", p.node}, {"op_type", p.op_type}, {"reason", p.reason}});
    }
  }
  return {{"backend", inferencer.backend()},
          {"nodes", inferencer.placement().size()},
          {"fallback_nodes", fallbacks.size()},
          {"fallbacks", fallbacks}};
}

}  // namespace edgemm::cli
