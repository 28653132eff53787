#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/child_process.h"
#include "bench/runtimes.h"
#include "core/npy.h"

namespace edgemm::bench {

namespace {

namespace fs = std::filesystem;

/// Last lines of the child's stderr, to explain a failure.
std::string tail_of(const std::string& path, size_t max_chars = 600) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > max_chars ? "..." + s.substr(s.size() - max_chars) : s;
}

class OrtRuntime : public BenchRuntime {
 public:
  explicit OrtRuntime(const RuntimeSetup& setup) : setup_(setup) {}
  ~OrtRuntime() override {
    if (child_.pid() > 0) (void)child_.write_line(R"({"op":"quit"})");
    child_.stop();
    std::error_code ec;
    if (!work_dir_.empty()) fs::remove_all(work_dir_, ec);
  }

  std::string name() const override { return "onnxruntime"; }
  std::string version() const override { return version_; }
  nlohmann::json settings() const override {
    return {{"host", "onnxruntime-node in node " + node_version_},
            {"execution_provider", "cpu"},
            {"graphOptimizationLevel", "all"},
            {"intraOpNumThreads", setup_.threads},
            {"interOpNumThreads", 1},
            {"executionMode", "sequential"}};
  }
  pid_t host_pid() const override { return child_.pid(); }

  Status prepare() override {
    const fs::path server = fs::path(setup_.reference_dir) / "ort_server.js";
    if (!fs::exists(server) || !fs::exists(fs::path(setup_.reference_dir) / "node_modules" / "onnxruntime-node")) {
      return make_error(StatusCode::kIo, "the ONNX Runtime peer is not installed: '" + server.string() +
                                             "' or its node_modules/onnxruntime-node is missing (scripts/setup.sh "
                                             "installs it; --reference-dir points elsewhere)");
    }
    char tmpl[] = "/tmp/edgemm-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return make_error(StatusCode::kIo, "cannot create a temporary folder in /tmp");
    work_dir_ = tmpl;
    stderr_path_ = (fs::path(work_dir_) / "ort_server.stderr").string();
    EDGEMM_RETURN_IF_ERROR(child_.start({"node", server.string()}, stderr_path_));
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json ready, request(nullptr));
    version_ = ready.value("version", "");
    node_version_ = ready.value("node", "");
    return Status::ok();
  }

  Expected<double> load() override {
    if (child_.pid() == 0) EDGEMM_RETURN_IF_ERROR(prepare());
    nlohmann::json req = {{"op", "load"},
                          {"model", fs::absolute(setup_.model_path).string()},
                          {"threads", setup_.threads},
                          {"inputs", nlohmann::json::object()}};
    for (const auto& [name, t] : setup_.inputs) {
      const std::string file =
          (fs::path(work_dir_) / ("input_" + std::to_string(req["inputs"].size()) + ".npy")).string();
      EDGEMM_RETURN_IF_ERROR(write_npy(file, t));
      req["inputs"][name] = file;
    }
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json reply, request(&req));
    return reply.value("load_ms", 0.0);
  }

  Expected<std::vector<double>> run(int iters) override {
    nlohmann::json req = {{"op", "run"}, {"iters", iters}};
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json reply, request(&req));
    return reply.at("times_ms").get<std::vector<double>>();
  }

 private:
  /// Sends `req` (nullptr: just read the start-up line) and returns the reply, or the host's
  /// error with its stderr.
  Expected<nlohmann::json> request(const nlohmann::json* req) {
    if (req != nullptr) EDGEMM_RETURN_IF_ERROR(child_.write_line(req->dump()));
    auto line = child_.read_line(setup_.timeout_s);
    if (!line) {
      const std::string err = tail_of(stderr_path_);
      return make_error(StatusCode::kIo,
                        "ONNX Runtime host: " + line.status().message() + (err.empty() ? "" : "; its stderr: " + err));
    }
    nlohmann::json reply = nlohmann::json::parse(*line, nullptr, false);
    if (reply.is_discarded() || !reply.is_object()) {
      return make_error(StatusCode::kIo, "ONNX Runtime host sent a line that is not JSON: " + line->substr(0, 200));
    }
    if (!reply.value("ok", false)) {
      return make_error(StatusCode::kUnsupported,
                        "ONNX Runtime: " + reply.value("error", std::string("unknown error")));
    }
    return reply;
  }

  RuntimeSetup setup_;
  ChildProcess child_;
  std::string work_dir_;
  std::string stderr_path_;
  std::string version_ = "unknown";
  std::string node_version_;
};

}  // namespace

std::unique_ptr<BenchRuntime> make_ort_runtime(const RuntimeSetup& setup) {
  return std::make_unique<OrtRuntime>(setup);
}

}  // namespace edgemm::bench
