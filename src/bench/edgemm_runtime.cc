#include <chrono>

#include "bench/runtimes.h"
#include "edgemm/inferencer.h"

namespace edgemm::bench {

nlohmann::json placement_counts(const Inferencer& inferencer) {
  int on_backend = 0;
  for (const NodePlacement& p : inferencer.placement()) on_backend += p.backend == inferencer.backend() ? 1 : 0;
  const int nodes = static_cast<int>(inferencer.placement().size());
  return {{"nodes", nodes}, {"on_backend", on_backend}, {"fallback_nodes", nodes - on_backend}};
}

namespace {

class EdgemmRuntime : public BenchRuntime {
 public:
  explicit EdgemmRuntime(const RuntimeSetup& setup) : setup_(setup) {}

  std::string name() const override { return "edgemm"; }
  std::string version() const override { return EDGEMM_VERSION; }
  nlohmann::json settings() const override {
    nlohmann::json fixed = nlohmann::json::object();
    for (const auto& [name, shape] : setup_.fixed_shapes) fixed[name] = shape;
    const EdgemmBackend& b = setup_.edgemm_backend;
    nlohmann::json settings = {{"threads", setup_.threads}, {"optimize", true},   {"fixed_input_shapes", fixed},
                               {"backend", b.backend},      {"device", b.device}, {"precision", b.precision}};
    if (!b.plugin_path.empty()) settings["plugin"] = b.plugin_path;
    if (inferencer_) {
      settings["placement"] = placement_counts(*inferencer_);
      const MemoryReport memory = inferencer_->memory_report();
      settings["memory"] = {{"weight_bytes", memory.weight_bytes},
                            {"packed_weight_bytes", memory.packed_weight_bytes},
                            {"arena_bytes", memory.planned_peak_bytes}};
    }
    return settings;
  }

  Expected<double> load() override {
    InferencerConfig config;
    config.model_path = setup_.model_path;
    config.threads = setup_.threads;
    config.fixed_input_shapes = setup_.fixed_shapes;
    config.backend = setup_.edgemm_backend.backend;
    config.device = setup_.edgemm_backend.device;
    config.precision = setup_.edgemm_backend.precision;
    config.plugin_path = setup_.edgemm_backend.plugin_path;
    const auto start = std::chrono::steady_clock::now();
    EDGEMM_ASSIGN_OR_RETURN(inferencer_, Inferencer::create(config));
    return ms_since(start);
  }

  Expected<std::vector<double>> run(int iters) override {
    std::vector<double> times;
    for (int i = 0; i < iters; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto outputs = inferencer_->run(setup_.inputs);
      if (!outputs) return outputs.status();
      times.push_back(ms_since(start));
    }
    return times;
  }

 private:
  RuntimeSetup setup_;
  std::unique_ptr<Inferencer> inferencer_;
};

}  // namespace

std::unique_ptr<BenchRuntime> make_edgemm_runtime(const RuntimeSetup& setup) {
  return std::make_unique<EdgemmRuntime>(setup);
}

}  // namespace edgemm::bench
