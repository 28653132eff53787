/// \file conformance_runner.cc
/// `edgemm_conformance`: runs the ONNX backend test data (libonnx-testdata: node,
/// pytorch-converted, pytorch-operator, simple) through edgemm's Inferencer and reports
/// pass / fail / unsupported / error / crash / timeout per test, per suite and per op.
///
/// Tests run in forked children with a wall-clock limit per test (fork_pool.h: SIGKILL on
/// timeout; --batch tests per child), so a crash or hang cannot stop the run. The data layout and the
/// positional input/output convention follow onnx/backend/test/runner/__init__.py.
///
/// Gate (exit status 1): a test whose ops are all in the supported-ops list does not pass, or
/// any test anywhere crashes or times out. Exit status 2: bad options or unreadable lists.

#include <onnx/onnx_pb.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compare.h"
#include "edgemm/inferencer.h"
#include "fork_pool.h"
#include "ir/onnx_import.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace edgemm::conformance {
namespace {

enum class Outcome { kPass, kFail, kUnsupported, kError, kCrash, kTimeout, kSkip };
constexpr Outcome kAllOutcomes[] = {Outcome::kPass,  Outcome::kFail,    Outcome::kUnsupported,
                                    Outcome::kError, Outcome::kCrash,   Outcome::kTimeout,
                                    Outcome::kSkip};

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kUnsupported: return "unsupported";
    case Outcome::kError: return "error";
    case Outcome::kCrash: return "crash";
    case Outcome::kTimeout: return "timeout";
    case Outcome::kSkip: return "skip";
  }
  return "?";
}

bool parse_outcome(const std::string& s, Outcome* o) {
  for (Outcome c : kAllOutcomes) {
    if (s == outcome_name(c)) {
      *o = c;
      return true;
    }
  }
  return false;
}

struct Options {
  std::string data_dir = "/usr/include/onnx/backend/test/data";
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter;
  std::string json_path;
  std::string supported_path;
  std::string skip_path;
  int jobs = 1;
  int batch = 1;
  int threads = 1;
  double timeout_s = 10.0;
  int64_t memory_limit_mb = 4096;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  bool optimize = true;
  bool fixed_shapes = false;
  int repeat = 1;
  bool verbose = false;
};

/// A graph input or output as declared in model.onnx.
struct DeclaredValue {
  std::string name;
  std::string kind;  ///< "tensor", "sequence", "optional", "map", "sparse_tensor" or "unknown"
};

struct TestCase {
  std::string suite, name, dir;
  std::vector<std::string> ops;  ///< sorted, unique; non-default domains as "domain:Op"
  std::vector<DeclaredValue> inputs, outputs;  ///< graph inputs exclude initializers
  std::string parse_error;  ///< set when model.onnx could not be parsed here
  std::string skip_reason;
  bool gated = false;  ///< every op is in the supported list

  std::string id() const { return suite + "/" + name; }
};

struct TestResult {
  Outcome outcome = Outcome::kError;
  std::string message;
  double ms = 0.0;
};

// ---------------------------------------------------------------------------------------------
// Discovery

std::string type_kind(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return "tensor";
  if (t.has_sequence_type()) return "sequence";
  if (t.has_optional_type()) return "optional";
  if (t.has_map_type()) return "map";
  if (t.has_sparse_tensor_type()) return "sparse_tensor";
  return "unknown";
}

void collect_ops(const onnx::GraphProto& g, std::set<std::string>* ops) {
  for (const auto& node : g.node()) {
    const std::string& d = node.domain();
    ops->insert(d.empty() || d == "ai.onnx" ? node.op_type() : d + ":" + node.op_type());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) collect_ops(attr.g(), ops);
      for (const auto& sub : attr.graphs()) collect_ops(sub, ops);
    }
  }
}

void describe_model(TestCase* tc) {
  std::ifstream in(tc->dir + "/model.onnx", std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) {
    tc->parse_error = "model.onnx could not be parsed as an ONNX ModelProto";
    return;
  }
  std::set<std::string> ops;
  collect_ops(model.graph(), &ops);
  tc->ops.assign(ops.begin(), ops.end());
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  for (const auto& vi : model.graph().input()) {
    if (!initializers.count(vi.name())) tc->inputs.push_back({vi.name(), type_kind(vi.type())});
  }
  for (const auto& vi : model.graph().output()) tc->outputs.push_back({vi.name(), type_kind(vi.type())});
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// Reads "one entry a line, # comments" lists. Returns false when the file is unreadable.
bool read_list(const std::string& path, std::vector<std::string>* lines) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line.substr(0, line.find('#')));
    if (!line.empty()) lines->push_back(line);
  }
  return true;
}

/// skip.txt: "suite/test_name  reason" — the reason is mandatory.
bool read_skip_list(const std::string& path, std::map<std::string, std::string>* skips) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find_first_of(" \t");
    const std::string reason = sp == std::string::npos ? "" : trim(line.substr(sp));
    if (reason.empty()) {
      std::fprintf(stderr, "%s:%d: skipped test '%s' has no reason\n", path.c_str(), line_no, line.c_str());
      return false;
    }
    (*skips)[line.substr(0, sp)] = reason;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Child: run one test in this process

TestResult from_status(const std::string& stage, const Status& s) {
  TestResult r;
  r.outcome = s.code() == StatusCode::kUnsupported ? Outcome::kUnsupported : Outcome::kError;
  r.message = stage + ": " + s.to_string();
  return r;
}

/// numpy has no bfloat16, so ONNX 1.12 stores bfloat16 test tensors as uint16 with the same
/// bits (onnx/backend/test/case/node/cast.py); reinterpret them when the model declares
/// bfloat16.
Expected<Tensor> as_declared(Tensor t, DataType declared) {
  if (t.dtype() != DataType::kUInt16 || declared != DataType::kBFloat16) return t;
  EDGEMM_ASSIGN_OR_RETURN(Tensor b, Tensor::create(DataType::kBFloat16, t.shape()));
  std::memcpy(b.raw_data(), t.raw_data(), t.byte_size());
  return b;
}

TestResult run_test(const TestCase& tc, const Options& opt) {
  std::vector<fs::path> data_sets;
  for (const auto& e : fs::directory_iterator(tc.dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) data_sets.push_back(e.path());
  }
  std::sort(data_sets.begin(), data_sets.end());
  if (data_sets.empty()) return {Outcome::kError, "runner: no test_data_set_* folder", 0};

  InferencerConfig config;
  config.model_path = tc.dir + "/model.onnx";
  config.threads = opt.threads;
  config.optimize = opt.optimize;
  if (opt.fixed_shapes && data_sets.size() == 1) {
    // Pin every input to its test shape so shape-dependent subgraphs fold at load.
    for (size_t k = 0; k < tc.inputs.size(); ++k) {
      const fs::path p = data_sets[0] / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      auto t = ir::read_tensor_proto_file(p.string());
      if (t) config.fixed_input_shapes[tc.inputs[k].name] = t->shape();
    }
  }
  auto created = Inferencer::create(config);
  if (!created) return from_status("load", created.status());
  const Inferencer& inf = **created;
  if (!tc.parse_error.empty()) return {Outcome::kError, "runner: " + tc.parse_error + ", yet it loaded", 0};
  for (const auto* list : {&tc.inputs, &tc.outputs}) {
    for (const DeclaredValue& v : *list) {
      if (v.kind != "tensor") {
        return {Outcome::kUnsupported,
                "runner: graph " + std::string(list == &tc.inputs ? "input" : "output") + " '" + v.name +
                    "' is a " + v.kind + "; the edgemm API passes tensors only",
                0};
      }
    }
  }
  for (const fs::path& ds : data_sets) {
    const std::string where = data_sets.size() > 1 ? ds.filename().string() + ": " : "";
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (size_t k = 0;; ++k) {
      const fs::path p = ds / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      if (k >= inf.inputs().size()) {
        return {Outcome::kError,
                where + "runner: " + p.filename().string() + " has no matching model input (the Inferencer declares " +
                    std::to_string(inf.inputs().size()) + ")",
                0};
      }
      auto t = ir::read_tensor_proto_file(p.string());
      if (!t) return from_status(where + "reading " + p.filename().string(), t.status());
      auto in = as_declared(std::move(*t), inf.inputs()[k].dtype);
      if (!in) return from_status(where + "runner", in.status());
      inputs.emplace_back(inf.inputs()[k].name, std::move(*in));
    }
    std::vector<Tensor> expected;
    for (size_t k = 0;; ++k) {
      const fs::path p = ds / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      auto t = ir::read_tensor_proto_file(p.string());
      if (!t) return from_status(where + "reading " + p.filename().string(), t.status());
      const DataType declared = k < inf.outputs().size() ? inf.outputs()[k].dtype : DataType::kUndefined;
      auto out = as_declared(std::move(*t), declared);
      if (!out) return from_status(where + "runner", out.status());
      expected.push_back(std::move(*out));
    }
    for (int rep = 0; rep < opt.repeat; ++rep) {
      const std::string at = where + (rep > 0 ? "repeat " + std::to_string(rep + 1) + ": " : "");
      auto got = inf.run(inputs);
      if (!got) return from_status(at + "run", got.status());
      if (got->size() != expected.size()) {
        return {Outcome::kError,
                at + "run returned " + std::to_string(got->size()) + " outputs, the test data has " +
                    std::to_string(expected.size()),
                0};
      }
      for (size_t k = 0; k < expected.size(); ++k) {
        const std::string name = k < inf.outputs().size() ? inf.outputs()[k].name : "#" + std::to_string(k);
        CompareResult c = compare_tensors((*got)[k], expected[k], opt.rtol, opt.atol);
        if (!c.ok) return {Outcome::kFail, at + "output '" + name + "' " + c.message, 0};
      }
    }
  }
  return {Outcome::kPass, "", 0};
}

/// The child's side: runs one test and reports it as "<outcome> <message>".
std::string run_and_report(const TestCase& tc, const Options& opt) {
  const TestResult r = run_test(tc, opt);
  std::string msg = r.message;
  for (size_t at; (at = msg.find(tc.dir + "/")) != std::string::npos;) msg.erase(at, tc.dir.size() + 1);
  return std::string(outcome_name(r.outcome)) + " " + msg.substr(0, 3000);
}

/// The parent's side: what a test's child reported, or how it ended.
TestResult to_test_result(const ItemResult& item) {
  TestResult r;
  r.ms = item.ms;
  switch (item.end) {
    case ItemEnd::kReported:
    case ItemEnd::kLeaked: {
      const size_t space = item.text.find(' ');
      if (!parse_outcome(item.text.substr(0, space), &r.outcome)) {
        r.outcome = Outcome::kCrash;
        r.message = "runner: unreadable report '" + item.text + "'";
        return r;
      }
      r.message = space == std::string::npos ? "" : item.text.substr(space + 1);
      if (item.end == ItemEnd::kLeaked) {
        r.message = std::string("LeakSanitizer found leaks (test result was ") + outcome_name(r.outcome) +
                    "); output: ..." + item.output;
        r.outcome = Outcome::kCrash;
      }
      return r;
    }
    case ItemEnd::kCrashed:
      r.outcome = Outcome::kCrash;
      break;
    case ItemEnd::kTimedOut:
      r.outcome = Outcome::kTimeout;
      break;
    case ItemEnd::kNotRun:
      r.outcome = Outcome::kError;
      break;
  }
  r.message = item.text;
  return r;
}

/// Runs every non-skipped test in forked children (fork_pool.h); results are indexed like `tests`.
std::vector<TestResult> run_all(const std::vector<TestCase>& tests, const Options& opt) {
  std::vector<TestResult> results(tests.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < tests.size(); ++i) {
    if (!tests[i].skip_reason.empty()) results[i] = {Outcome::kSkip, tests[i].skip_reason, 0};
    else todo.push_back(i);
  }
  ForkPoolOptions pool;
  pool.jobs = opt.jobs;
  pool.batch = opt.batch;
  pool.timeout_s = opt.timeout_s;
  pool.memory_limit_mb = opt.memory_limit_mb;
  size_t done = 0;
  run_in_children(
      todo, pool, [&](size_t i) { return run_and_report(tests[i], opt); },
      [&](size_t i, const ItemResult& item) {
        results[i] = to_test_result(item);
        ++done;
        if (opt.verbose) {
          std::printf("[%zu/%zu] %-11s %s (%.0f ms)\n", done, todo.size(), outcome_name(results[i].outcome),
                      tests[i].id().c_str(), results[i].ms);
          std::fflush(stdout);
        }
      });
  return results;
}

// ---------------------------------------------------------------------------------------------
// Reporting

using Counts = std::map<Outcome, int>;

nlohmann::ordered_json counts_json(const Counts& c) {
  nlohmann::ordered_json j;
  int total = 0;
  for (Outcome o : kAllOutcomes) {
    const auto it = c.find(o);
    j[outcome_name(o)] = it == c.end() ? 0 : it->second;
    total += j[outcome_name(o)].get<int>();
  }
  j["total"] = total;
  return j;
}

int count_of(const Counts& c, Outcome o) {
  const auto it = c.find(o);
  return it == c.end() ? 0 : it->second;
}

void print_counts_row(const std::string& label, const Counts& c) {
  int total = 0;
  for (Outcome o : kAllOutcomes) total += count_of(c, o);
  std::printf("%-18s %6d %6d %6d %12d %6d %6d %8d %6d\n", label.c_str(), total, count_of(c, Outcome::kPass),
              count_of(c, Outcome::kFail), count_of(c, Outcome::kUnsupported), count_of(c, Outcome::kError),
              count_of(c, Outcome::kCrash), count_of(c, Outcome::kTimeout), count_of(c, Outcome::kSkip));
}

/// Ops that could be in the supported list without breaking the gate: greedily, ops with the
/// highest share of passing tests first; an op is kept when every non-skipped test whose ops
/// are all kept passes. Ops that pass no test are never proposed.
std::vector<std::string> claimable_ops(const std::vector<TestCase>& tests, const std::vector<TestResult>& results) {
  std::map<std::string, int> pass, run;  // op -> passing / run (non-skipped) tests containing it
  for (size_t i = 0; i < tests.size(); ++i) {
    if (results[i].outcome == Outcome::kSkip) continue;
    for (const auto& op : tests[i].ops) {
      pass[op] += results[i].outcome == Outcome::kPass ? 1 : 0;
      run[op] += 1;
    }
  }
  std::vector<std::string> order;
  for (const auto& [op, n] : pass) {
    if (n > 0) order.push_back(op);  // an op that never passes is never claimable
  }
  // Highest pass ratio first, so an op shared with a failing test is kept over the op that fails.
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return int64_t{pass[a]} * run[b] > int64_t{pass[b]} * run[a];
  });
  std::set<std::string> claimed;
  for (const std::string& op : order) {
    claimed.insert(op);
    bool ok = true;
    for (size_t i = 0; i < tests.size() && ok; ++i) {
      const auto& t = tests[i];
      if (results[i].outcome == Outcome::kPass || results[i].outcome == Outcome::kSkip) continue;
      if (std::find(t.ops.begin(), t.ops.end(), op) == t.ops.end()) continue;
      ok = !std::all_of(t.ops.begin(), t.ops.end(), [&](const std::string& o) { return claimed.count(o) > 0; });
    }
    if (!ok) claimed.erase(op);
  }
  return {claimed.begin(), claimed.end()};
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace
}  // namespace edgemm::conformance

int main(int argc, char** argv) {
  using namespace edgemm::conformance;
  Options opt;
  CLI::App app{"edgemm_conformance: run the ONNX backend test data through edgemm's Inferencer"};
  app.option_defaults()->always_capture_default();
  app.add_option("--data-dir", opt.data_dir, "root of the backend test data (holds node/, simple/, ...)");
  app.add_option("--suite", opt.suites, "suite(s) to run: node, pytorch-converted, pytorch-operator, simple")
      ->delimiter(',');
  app.add_option("--filter", opt.filter, "only tests whose 'suite/name' matches this regex (search)");
  app.add_option("--json", opt.json_path, "write per-test results, totals per suite and per-op summary here");
  app.add_option("--jobs", opt.jobs, "tests run in parallel (one child process each)")->check(CLI::Range(1, 64));
  app.add_option("--batch", opt.batch,
                 "tests per child process, one after another (a crash or timeout is charged to the test "
                 "running; the rest of the batch runs again in a new child)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", opt.threads, "intra-op threads of each Inferencer")->check(CLI::Range(1, 256));
  app.add_option("--supported-ops", opt.supported_path,
                 "ops we claim (one a line, # comments): a test using only these ops must pass");
  app.add_option("--skip", opt.skip_path, "tests not run: 'suite/test_name reason' a line");
  app.add_option("--timeout", opt.timeout_s, "seconds per test before the child is killed")->check(CLI::PositiveNumber);
  app.add_option("--memory-limit-mb", opt.memory_limit_mb, "address-space limit per child (0 = none; off under ASan)");
  app.add_option("--rtol", opt.rtol, "relative tolerance");
  app.add_option("--atol", opt.atol, "absolute tolerance");
  app.add_flag("!--no-optimize", opt.optimize, "load without graph passes (constant folding, DCE), to isolate pass bugs");
  app.add_flag("--fixed-shapes", opt.fixed_shapes,
               "pin each input to its test shape at load (InferencerConfig::fixed_input_shapes)");
  app.add_option("--repeat", opt.repeat, "runs of each data set on one Inferencer (checks reuse of planned buffers)")
      ->check(CLI::Range(1, 100));
  app.add_flag("-v,--verbose", opt.verbose, "print every test as it finishes");
  CLI11_PARSE(app, argc, argv);

  std::set<std::string> supported;
  if (!opt.supported_path.empty()) {
    std::vector<std::string> lines;
    if (!read_list(opt.supported_path, &lines)) {
      std::fprintf(stderr, "cannot read supported-ops list '%s'\n", opt.supported_path.c_str());
      return 2;
    }
    supported.insert(lines.begin(), lines.end());
  }
  std::map<std::string, std::string> skips;
  if (!opt.skip_path.empty() && !read_skip_list(opt.skip_path, &skips)) {
    std::fprintf(stderr, "cannot read skip list '%s'\n", opt.skip_path.c_str());
    return 2;
  }
  std::regex filter;
  try {
    filter = std::regex(opt.filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "bad --filter regex '%s': %s\n", opt.filter.c_str(), e.what());
    return 2;
  }

  // Discover tests.
  std::vector<TestCase> tests;
  for (const std::string& suite : opt.suites) {
    const fs::path root = fs::path(opt.data_dir) / suite;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      std::fprintf(stderr, "suite folder '%s' does not exist (see --data-dir, --suite)\n", root.c_str());
      return 2;
    }
    std::vector<TestCase> found;
    for (const auto& e : fs::directory_iterator(root)) {
      if (!fs::exists(e.path() / "model.onnx")) continue;
      TestCase tc;
      tc.suite = suite;
      tc.name = e.path().filename().string();
      tc.dir = e.path().string();
      if (!opt.filter.empty() && !std::regex_search(tc.id(), filter)) continue;
      describe_model(&tc);
      if (auto it = skips.find(tc.id()); it != skips.end()) tc.skip_reason = it->second;
      tc.gated = !supported.empty() && std::all_of(tc.ops.begin(), tc.ops.end(),
                                                    [&](const std::string& op) { return supported.count(op) > 0; });
      found.push_back(std::move(tc));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (auto& tc : found) tests.push_back(std::move(tc));
  }

  const auto t0 = Clock::now();
  const std::vector<TestResult> results = run_all(tests, opt);
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // Aggregate.
  std::map<std::string, Counts> per_suite;
  Counts total;
  std::map<std::string, Counts> per_op;
  std::vector<std::string> violations;
  for (size_t i = 0; i < tests.size(); ++i) {
    const Outcome o = results[i].outcome;
    per_suite[tests[i].suite][o]++;
    total[o]++;
    for (const auto& op : tests[i].ops) per_op[op][o]++;
    const bool bad_gated = tests[i].gated && o != Outcome::kPass && o != Outcome::kSkip;
    if (bad_gated || o == Outcome::kCrash || o == Outcome::kTimeout) {
      violations.push_back(tests[i].id() + " (" + outcome_name(o) + (bad_gated ? ", supported ops" : "") + ")");
    }
  }

  // Text report: one line per non-pass test, then totals.
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestResult& r = results[i];
    if (r.outcome == Outcome::kPass) continue;
    std::printf("%-11s %s [%s]%s: %s\n", outcome_name(r.outcome), tests[i].id().c_str(),
                join(tests[i].ops, ",").c_str(),
                tests[i].gated && r.outcome != Outcome::kSkip ? " SUPPORTED" : "", r.message.c_str());
  }
  std::printf("\n%-18s %6s %6s %6s %12s %6s %6s %8s %6s\n", "suite", "total", "pass", "fail", "unsupported", "error",
              "crash", "timeout", "skip");
  for (const auto& suite : opt.suites) {
    if (per_suite.count(suite)) print_counts_row(suite, per_suite[suite]);
  }
  print_counts_row("all", total);
  std::printf("elapsed %.1f s (jobs %d, threads %d, timeout %.0f s)\n", elapsed_s, opt.jobs, opt.threads,
              opt.timeout_s);

  const std::vector<std::string> claimable = claimable_ops(tests, results);
  std::vector<std::string> unlisted, unknown;
  for (const auto& op : claimable) {
    if (!supported.count(op)) unlisted.push_back(op);
  }
  for (const auto& op : supported) {
    if (!per_op.count(op)) unknown.push_back(op);
  }
  if (!supported.empty()) {
    if (!unlisted.empty()) std::printf("passing ops not in the supported list: %s\n", join(unlisted, " ").c_str());
    if (!unknown.empty() && opt.filter.empty() && opt.suites == Options().suites) {
      std::printf("supported ops used by no test run here: %s\n", join(unknown, " ").c_str());
    }
  }
  if (violations.empty()) {
    std::printf("gate: OK (%zu tests use only supported ops; no crash or timeout)\n",
                static_cast<size_t>(std::count_if(tests.begin(), tests.end(), [](const auto& t) { return t.gated; })));
  } else {
    std::printf("gate: FAILED, %zu tests: %s\n", violations.size(), join(violations, ", ").c_str());
  }

  if (!opt.json_path.empty()) {
    nlohmann::ordered_json j;
    j["command"] = [&] {
      std::vector<std::string> args(argv, argv + argc);
      return join(args, " ");
    }();
    j["data_dir"] = opt.data_dir;
    j["rtol"] = opt.rtol;
    j["atol"] = opt.atol;
    j["jobs"] = opt.jobs;
    j["threads"] = opt.threads;
    j["timeout_s"] = opt.timeout_s;
    j["elapsed_s"] = elapsed_s;
    j["gate_ok"] = violations.empty();
    j["gate_violations"] = violations;
    for (const auto& suite : opt.suites) {
      if (per_suite.count(suite)) j["suites"][suite] = counts_json(per_suite[suite]);
    }
    j["totals"] = counts_json(total);
    for (const auto& [op, c] : per_op) {
      auto oj = counts_json(c);
      oj["supported"] = supported.count(op) > 0;
      oj["all_pass"] = count_of(c, Outcome::kPass) + count_of(c, Outcome::kSkip) == oj["total"].get<int>();
      j["ops"][op] = oj;
    }
    j["claimable_ops"] = claimable;
    j["tests"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < tests.size(); ++i) {
      nlohmann::ordered_json t;
      t["suite"] = tests[i].suite;
      t["name"] = tests[i].name;
      t["result"] = outcome_name(results[i].outcome);
      t["message"] = results[i].message;
      t["ops"] = tests[i].ops;
      t["supported"] = tests[i].gated;
      t["ms"] = std::round(results[i].ms * 10) / 10;
      j["tests"].push_back(t);
    }
    std::ofstream out(opt.json_path);
    out << j.dump(1) << "\n";
    if (!out) {
      std::fprintf(stderr, "cannot write '%s'\n", opt.json_path.c_str());
      return 2;
    }
  }
  return violations.empty() ? 0 : 1;
}
