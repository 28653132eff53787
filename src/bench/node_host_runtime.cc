#include "bench/node_host_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/child_process.h"
#include "edgemm/npy.h"

namespace edgemm::bench {

namespace {

namespace fs = std::filesystem;

/// Last characters of the host's stderr, to explain a failure.
std::string tail_of(const std::string& path, size_t max_chars = 600) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > max_chars ? "..." + s.substr(s.size() - max_chars) : s;
}

class NodeHostRuntime : public BenchRuntime {
 public:
  NodeHostRuntime(NodeHostSpec spec, std::string reference_dir, double timeout_s)
      : spec_(std::move(spec)), reference_dir_(std::move(reference_dir)), timeout_s_(timeout_s) {}
  ~NodeHostRuntime() override {
    if (child_.pid() > 0) (void)child_.write_line(R"({"op":"quit"})");
    child_.stop();
    std::error_code ec;
    if (!work_dir_.empty()) fs::remove_all(work_dir_, ec);
  }

  std::string name() const override { return spec_.runtime_name; }
  std::string version() const override { return version_; }
  nlohmann::json settings() const override {
    nlohmann::json s = spec_.settings;
    s["host"] = spec_.package + " in node " + node_version_;
    return s;
  }
  pid_t host_pid() const override { return child_.pid(); }

  Status prepare() override {
    const fs::path script = fs::path(reference_dir_) / spec_.script;
    if (!fs::exists(script) || !fs::exists(fs::path(reference_dir_) / "node_modules" / spec_.package)) {
      return make_error(StatusCode::kIo, "the " + spec_.runtime_name + " peer is not installed: '" + script.string() +
                                             "' or its node_modules/" + spec_.package +
                                             " is missing (scripts/setup.sh installs it; --reference-dir points "
                                             "elsewhere)");
    }
    char tmpl[] = "/tmp/edgemm-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return make_error(StatusCode::kIo, "cannot create a temporary folder in /tmp");
    work_dir_ = tmpl;
    stderr_path_ = (fs::path(work_dir_) / "host.stderr").string();
    EDGEMM_RETURN_IF_ERROR(child_.start({"node", script.string()}, stderr_path_));
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json ready, request(nullptr));
    version_ = ready.value("version", "unknown");
    node_version_ = ready.value("node", "");
    return Status::ok();
  }

  Expected<double> load() override {
    if (child_.pid() == 0) EDGEMM_RETURN_IF_ERROR(prepare());
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json req, spec_.load_request(work_dir_));
    req["op"] = "load";
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json reply, request(&req));
    if (!reply["load_ms"].is_number()) {
      return make_error(StatusCode::kIo,
                        spec_.runtime_name + " host sent no load time: " + reply.dump().substr(0, 200));
    }
    return reply["load_ms"].get<double>();
  }

  Expected<std::vector<double>> run(int iters) override {
    nlohmann::json req = {{"op", "run"}, {"iters", iters}};
    EDGEMM_ASSIGN_OR_RETURN(nlohmann::json reply, request(&req));
    const nlohmann::json& times = reply["times_ms"];
    if (!times.is_array() || times.size() != static_cast<size_t>(iters) ||
        !std::all_of(times.begin(), times.end(), [](const nlohmann::json& t) { return t.is_number(); })) {
      return make_error(StatusCode::kIo, spec_.runtime_name + " host did not send " + std::to_string(iters) +
                                             " run times: " + reply.dump().substr(0, 200));
    }
    return times.get<std::vector<double>>();
  }

 private:
  /// Sends `req` (nullptr: just read the start-up line) and returns the reply, or the host's
  /// error with the end of its stderr.
  Expected<nlohmann::json> request(const nlohmann::json* req) {
    if (req != nullptr) EDGEMM_RETURN_IF_ERROR(child_.write_line(req->dump()));
    auto line = child_.read_line(timeout_s_);
    if (!line) {
      const std::string err = tail_of(stderr_path_);
      return make_error(StatusCode::kIo, spec_.runtime_name + " host: " + line.status().message() +
                                             (err.empty() ? "" : "; its stderr: " + err));
    }
    nlohmann::json reply = nlohmann::json::parse(*line, nullptr, false);
    if (reply.is_discarded() || !reply.is_object()) {
      return make_error(StatusCode::kIo, spec_.runtime_name + " host sent an unexpected line: " + line->substr(0, 200));
    }
    if (!reply.value("ok", false)) {
      return make_error(StatusCode::kUnsupported,
                        spec_.runtime_name + ": " + reply.value("error", std::string("unknown error")));
    }
    return reply;
  }

  NodeHostSpec spec_;
  std::string reference_dir_;
  double timeout_s_;
  ChildProcess child_;
  std::string work_dir_;
  std::string stderr_path_;
  std::string version_ = "unknown";
  std::string node_version_;
};

}  // namespace

std::unique_ptr<BenchRuntime> make_node_host_runtime(NodeHostSpec spec, const std::string& reference_dir,
                                                     double timeout_s) {
  return std::make_unique<NodeHostRuntime>(std::move(spec), reference_dir, timeout_s);
}

std::unique_ptr<BenchRuntime> make_ort_runtime(const RuntimeSetup& setup) {
  NodeHostSpec spec;
  spec.runtime_name = "onnxruntime";
  spec.script = "ort_server.js";
  spec.package = "onnxruntime-node";
  spec.settings = {{"execution_provider", "cpu"},
                   {"graphOptimizationLevel", "all"},
                   {"intraOpNumThreads", setup.threads},
                   {"interOpNumThreads", 1},
                   {"executionMode", "sequential"}};
  spec.load_request = [setup](const std::string& work_dir) -> Expected<nlohmann::json> {
    nlohmann::json req = {{"model", fs::absolute(setup.model_path).string()},
                          {"threads", setup.threads},
                          {"inputs", nlohmann::json::object()}};
    for (const auto& [name, t] : setup.inputs) {
      const std::string file =
          (fs::path(work_dir) / ("input_" + std::to_string(req["inputs"].size()) + ".npy")).string();
      EDGEMM_RETURN_IF_ERROR(write_npy(file, t));
      req["inputs"][name] = file;
    }
    return req;
  };
  return make_node_host_runtime(std::move(spec), setup.reference_dir, setup.timeout_s);
}

}  // namespace edgemm::bench
