#include "bench/report.h"

namespace edgemm::bench {

namespace {

using nlohmann::json;

json stats_json(const LatencyStats& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p90", s.p90},
          {"p99", s.p99},     {"min", s.min},   {"max", s.max},       {"stddev", s.stddev}};
}

LatencyStats stats_from(const json& j) {
  LatencyStats s;
  s.count = j.at("count").get<int>();
  s.mean = j.at("mean").get<double>();
  s.median = j.at("median").get<double>();
  s.p90 = j.at("p90").get<double>();
  s.p99 = j.at("p99").get<double>();
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  s.stddev = j.at("stddev").get<double>();
  return s;
}

json machine_json(const MachineInfo& m) {
  return {{"cpu", m.cpu},
          {"arch", m.arch},
          {"logical_cpus", m.logical_cpus},
          {"isa", m.isa},
          {"memory_bytes", m.memory_bytes},
          {"os", m.os},
          {"kernel", m.kernel},
          {"load_average_1m", m.load_average_1m}};
}

MachineInfo machine_from(const json& j) {
  MachineInfo m;
  m.cpu = j.at("cpu").get<std::string>();
  m.arch = j.at("arch").get<std::string>();
  m.logical_cpus = j.at("logical_cpus").get<int>();
  m.isa = j.at("isa").get<std::vector<std::string>>();
  m.memory_bytes = j.at("memory_bytes").get<int64_t>();
  m.os = j.at("os").get<std::string>();
  m.kernel = j.at("kernel").get<std::string>();
  m.load_average_1m = j.at("load_average_1m").get<double>();
  return m;
}

/// Inverse of status_code_name(); names it does not produce read as kInternal.
StatusCode status_code_from_name(const std::string& name) {
  for (StatusCode c : {StatusCode::kInvalidArgument, StatusCode::kInvalidModel, StatusCode::kUnsupported,
                       StatusCode::kOutOfMemory, StatusCode::kIo, StatusCode::kInternal}) {
    if (name == status_code_name(c)) return c;
  }
  return StatusCode::kInternal;
}

json runtime_json(const RuntimeResult& r) {
  json j = {{"name", r.name}, {"version", r.version}, {"settings", r.settings}};
  if (!r.ok()) {
    j["error"] = r.error;
    j["failed_stage"] = r.failed_stage;
    j["failed_code"] = status_code_name(r.failed_code);
    return j;
  }
  j["load_ms"] = r.load_ms;
  j["cold_ms"] = r.cold_ms;
  j["latency_ms"] = stats_json(r.latency);
  j["times_ms"] = r.times_ms;
  j["runs_per_s"] = r.runs_per_s;
  j["items_per_s"] = r.items_per_s;
  j["gflops"] = r.gflops;
  j["edgemm_speedup"] = r.edgemm_speedup;
  j["memory"] = {{"rss_before_load_bytes", r.memory.rss_before_load},
                 {"peak_rss_bytes", r.memory.peak_rss},
                 {"steady_rss_bytes", r.memory.steady_rss},
                 {"peak_added_bytes", r.memory.peak_added()},
                 {"steady_added_bytes", r.memory.steady_added()}};
  j["energy"] = r.energy
                    ? json{{"joules_per_run", r.energy->joules_per_run}, {"average_watts", r.energy->average_watts}}
                    : json(nullptr);
  if (!r.energy_error.empty()) j["energy_error"] = r.energy_error;
  if (!r.stage_median_ms.empty()) {
    j["stages"] = json::array();
    for (const auto& [stage, ms] : r.stage_median_ms) j["stages"].push_back({{"stage", stage}, {"median_ms", ms}});
  }
  return j;
}

RuntimeResult runtime_from(const json& j) {
  RuntimeResult r;
  r.name = j.at("name").get<std::string>();
  r.version = j.at("version").get<std::string>();
  r.settings = j.at("settings");
  if (j.contains("error")) {
    r.error = j.at("error").get<std::string>();
    r.failed_stage = j.at("failed_stage").get<std::string>();
    r.failed_code = status_code_from_name(j.at("failed_code").get<std::string>());
    return r;
  }
  r.load_ms = j.at("load_ms").get<double>();
  r.cold_ms = j.at("cold_ms").get<double>();
  r.latency = stats_from(j.at("latency_ms"));
  r.times_ms = j.at("times_ms").get<std::vector<double>>();
  r.runs_per_s = j.at("runs_per_s").get<double>();
  r.items_per_s = j.at("items_per_s").get<double>();
  r.gflops = j.at("gflops").get<double>();
  r.edgemm_speedup = j.at("edgemm_speedup").get<double>();
  const json& m = j.at("memory");
  r.memory.rss_before_load = m.at("rss_before_load_bytes").get<int64_t>();
  r.memory.peak_rss = m.at("peak_rss_bytes").get<int64_t>();
  r.memory.steady_rss = m.at("steady_rss_bytes").get<int64_t>();
  if (!j.at("energy").is_null()) {
    r.energy =
        RuntimeEnergy{j["energy"].at("joules_per_run").get<double>(), j["energy"].at("average_watts").get<double>()};
  }
  r.energy_error = j.value("energy_error", "");
  if (j.contains("stages")) {
    for (const auto& s : j["stages"]) {
      r.stage_median_ms.emplace_back(s.at("stage").get<std::string>(), s.at("median_ms").get<double>());
    }
  }
  return r;
}

json point_json(const BenchPoint& p) {
  json runtimes = json::array();
  for (const auto& r : p.runtimes) runtimes.push_back(runtime_json(r));
  json j = {
      {"threads", p.threads}, {"inputs", p.inputs}, {"batch", p.batch}, {"flops", p.flops}, {"runtimes", runtimes}};
  if (!p.sweep_key.empty()) j["sweep"] = {{"key", p.sweep_key}, {"value", p.sweep_value}};
  return j;
}

BenchPoint point_from(const json& j) {
  BenchPoint p;
  p.threads = j.at("threads").get<int>();
  p.inputs = j.at("inputs").get<std::string>();
  p.batch = j.at("batch").get<int64_t>();
  p.flops = j.at("flops").get<int64_t>();
  if (j.contains("sweep")) {
    p.sweep_key = j["sweep"].at("key").get<std::string>();
    p.sweep_value = j["sweep"].at("value").get<int64_t>();
  }
  for (const auto& r : j.at("runtimes")) p.runtimes.push_back(runtime_from(r));
  return p;
}

json settings_json(const BenchSettings& s) {
  return {{"warmup", s.warmup}, {"iters", s.iters}, {"seconds", s.seconds},
          {"blocks", s.blocks}, {"seed", s.seed},   {"runtimes", s.runtimes}};
}

BenchSettings settings_from(const json& j) {
  BenchSettings s;
  s.warmup = j.at("warmup").get<int>();
  s.iters = j.at("iters").get<int>();
  s.seconds = j.at("seconds").get<double>();
  s.blocks = j.at("blocks").get<int>();
  s.seed = j.at("seed").get<uint32_t>();
  s.runtimes = j.at("runtimes").get<std::vector<std::string>>();
  return s;
}

}  // namespace

json to_json(const BenchReport& r) {
  json points = json::array();
  for (const auto& p : r.points) points.push_back(point_json(p));
  return {{"schema", r.schema},
          {"edgemm_version", r.edgemm_version},
          {"created", r.created},
          {"kind", r.kind},
          {"subject", r.subject},
          {"command", r.command},
          {"machine", machine_json(r.machine)},
          {"load_average_end", r.load_average_end},
          {"settings", settings_json(r.settings)},
          {"energy", {{"source", r.energy_source}, {"note", r.energy_note}}},
          {"points", points}};
}

Expected<BenchReport> report_from_json(const json& j) {
  try {
    BenchReport r;
    r.schema = j.at("schema").get<std::string>();
    if (r.schema != kBenchSchema) {
      return make_error(StatusCode::kInvalidArgument,
                        "the report's schema is '" + r.schema + "', expected '" + kBenchSchema + "'");
    }
    r.edgemm_version = j.at("edgemm_version").get<std::string>();
    r.created = j.at("created").get<std::string>();
    r.kind = j.at("kind").get<std::string>();
    r.subject = j.at("subject").get<std::string>();
    r.command = j.at("command").get<std::string>();
    r.machine = machine_from(j.at("machine"));
    r.load_average_end = j.at("load_average_end").get<double>();
    r.settings = settings_from(j.at("settings"));
    r.energy_source = j.at("energy").at("source").get<std::string>();
    r.energy_note = j.at("energy").at("note").get<std::string>();
    for (const auto& p : j.at("points")) r.points.push_back(point_from(p));
    return r;
  } catch (const json::exception& e) {
    return make_error(StatusCode::kInvalidArgument, std::string("not a valid edgemm bench report: ") + e.what());
  }
}

void finish_point(BenchPoint& point) {
  double edgemm_median = 0;
  for (auto& r : point.runtimes) {
    if (!r.ok()) continue;
    r.latency = summarize(r.times_ms);
    r.runs_per_s = r.latency.mean > 0 ? 1000.0 / r.latency.mean : 0;
    r.items_per_s = r.runs_per_s * static_cast<double>(point.batch);
    r.gflops =
        point.flops > 0 && r.latency.median > 0 ? static_cast<double>(point.flops) / (r.latency.median * 1e6) : 0;
    if (r.name == "edgemm") edgemm_median = r.latency.median;
  }
  for (auto& r : point.runtimes) {
    if (r.ok()) r.edgemm_speedup = edgemm_median > 0 ? r.latency.median / edgemm_median : 0;
  }
}

}  // namespace edgemm::bench
