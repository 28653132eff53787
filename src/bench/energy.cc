#include "bench/energy.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace edgemm::bench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kNoCounter = "not measured (no counter)";
constexpr size_t kMaxCommandOutput = 4096;  // bytes of the power command's stdout kept

std::string_view trim(std::string_view s) {
  const char* space = " \t\r\n";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(space) + 1 - begin);
}

// strerror() that is safe on the sampling thread.
std::string error_text(int error) { return std::generic_category().message(error); }

// Reads a small sysfs attribute into `text`; returns 0 or the errno of the failure.
int read_attribute(const fs::path& path, std::string* text) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  text->clear();
  char buffer[256];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return error;
    }
    if (n == 0) break;
    text->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return 0;
}

// A sysfs attribute holding one unsigned integer (µJ, µW).
Expected<uint64_t> read_uint(const fs::path& path) {
  std::string text;
  if (int error = read_attribute(path, &text)) {
    return make_error(StatusCode::kIo, "cannot read " + path.string() + ": " + error_text(error));
  }
  std::string_view digits = trim(text);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return make_error(StatusCode::kIo, path.string() + " holds '" + std::string(digits) + "', not an unsigned integer");
  }
  return value;
}

// The trimmed text of an optional attribute (a name or label); empty when absent or unreadable.
std::string read_label(const fs::path& path) {
  std::string text;
  return read_attribute(path, &text) == 0 ? std::string(trim(text)) : std::string();
}

// The non-empty parts separated by spaces.
std::string joined(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (!part.empty()) out += (out.empty() ? "" : " ") + part;
  }
  return out;
}

// Matches `<prefix><N><suffix>` with N a non-empty run of digits, e.g. "power1_input".
bool match_indexed(std::string_view name, std::string_view prefix, std::string_view suffix, int* index) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) {
    return false;
  }
  std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *index);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// The entries of `dir` named `<prefix><N><suffix>`, by increasing N; none when `dir` is absent.
std::vector<fs::path> indexed_entries(const fs::path& dir, std::string_view prefix, std::string_view suffix) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    int index = 0;
    if (match_indexed(entry.path().filename().string(), prefix, suffix, &index))
      found.emplace_back(index, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [index, path] : found) paths.push_back(std::move(path));
  return paths;
}

// A cumulative energy counter in µJ: a powercap zone's energy_uj or a hwmon energy*_input.
struct Counter {
  fs::path path;
  uint64_t max_uj = 0;  // the counter restarts at 0 after this value; 0 when it never wraps
};

// Energy between two readings of `counter`, µJ; one wrap past max_energy_range_uj is undone.
Expected<uint64_t> counter_delta(const Counter& counter, uint64_t begin, uint64_t end) {
  if (end >= begin) return end - begin;
  if (counter.max_uj >= begin) return counter.max_uj - begin + end;
  return make_error(StatusCode::kIo, counter.path.string() + " went back from " + std::to_string(begin) + " to " +
                                         std::to_string(end) + " µJ");
}

// One power reading, time-stamped in the middle of the read.
struct Sample {
  Clock::time_point time;
  double watts = 0;
};

Expected<Sample> take_sample(const std::function<Expected<double>()>& read_watts) {
  Clock::time_point before = Clock::now();
  EDGEMM_ASSIGN_OR_RETURN(double watts, read_watts());
  return Sample{before + (Clock::now() - before) / 2, watts};
}

// Trapezoid rule between two samples, joules.
double trapezoid(const Sample& a, const Sample& b) {
  return 0.5 * (a.watts + b.watts) * std::chrono::duration<double>(b.time - a.time).count();
}

// Command output for an error message: trimmed, cut at 200 characters, in quotes.
std::string quoted_output(const std::string& out) {
  std::string shown(trim(out));
  if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
  return "'" + shown + "'";
}

// Runs `command` with /bin/sh -c in its own process group and parses its stdout as watts. The
// group is killed when the command (or a child holding its stdout) outlives `timeout`.
Expected<double> run_power_command(const std::string& command, std::chrono::milliseconds timeout) {
  const std::string named = "power command '" + command + "'";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(StatusCode::kIo, "cannot create a pipe for the " + named + ": " + error_text(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, "/bin/sh", &actions, &attributes, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(fds[1]);
  if (spawn_error != 0) {
    ::close(fds[0]);
    return make_error(StatusCode::kIo, "cannot start /bin/sh for the " + named + ": " + error_text(spawn_error));
  }

  const Clock::time_point deadline = Clock::now() + timeout;
  auto ms_left = [&] { return std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count(); };
  std::string out;
  bool timed_out = false;
  for (;;) {  // stdout until end of file
    pollfd readable{fds[0], POLLIN, 0};
    int ready = ms_left() > 0 ? ::poll(&readable, 1, static_cast<int>(ms_left())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      break;
    }
    char buffer[512];
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(std::min(static_cast<size_t>(n), kMaxCommandOutput - out.size())));
  }
  ::close(fds[0]);
  int wait_status = 0;
  while (!timed_out) {  // the exit, which follows end of file unless the command closed its stdout early
    pid_t reaped = ::waitpid(pid, &wait_status, WNOHANG);
    if (reaped == pid) break;
    if (reaped < 0 && errno != EINTR) {
      return make_error(StatusCode::kIo, "cannot wait for the " + named + ": " + error_text(errno));
    }
    timed_out = ms_left() <= 0;
    if (!timed_out) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (timed_out) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return make_error(StatusCode::kIo, "the " + named + " did not finish within " + std::to_string(timeout.count()) +
                                           " ms and was killed (stdout so far: " + quoted_output(out) + ")");
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    std::string how = WIFEXITED(wait_status) ? "exited with status " + std::to_string(WEXITSTATUS(wait_status))
                                             : "was killed by signal " + std::to_string(WTERMSIG(wait_status));
    return make_error(StatusCode::kIo, "the " + named + " " + how + " (stdout: " + quoted_output(out) + ")");
  }
  std::string_view text = trim(out);
  double watts = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), watts);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(watts) || watts < 0) {
    return make_error(StatusCode::kIo, "the " + named + " printed " + quoted_output(out) +
                                           ", not a power in watts (one finite non-negative number)");
  }
  return watts;
}

// What open() found: counters read at start and stop, or a power sampled every `period`.
struct Source {
  std::string name;
  std::vector<Counter> counters;
  std::function<Expected<double>()> read_watts;
  std::chrono::milliseconds period{0};
};

// Keeps the first reason why a source that exists cannot be read.
void note_unreadable(std::string* reason, std::string why) {
  if (reason->empty()) *reason = "not measured: " + std::move(why);
}

// powercap RAPL: the top-level intel-rapl:N zones summed, or the psys zone alone.
std::optional<Source> find_powercap(const fs::path& sysfs, std::string* reason) {
  std::vector<fs::path> zones;
  for (fs::path& zone : indexed_entries(sysfs / "class/powercap", "intel-rapl:", "")) {
    std::error_code ec;
    if (fs::exists(zone / "energy_uj", ec)) zones.push_back(std::move(zone));
  }
  auto psys =
      std::find_if(zones.begin(), zones.end(), [](const fs::path& z) { return read_label(z / "name") == "psys"; });
  if (psys != zones.end()) zones = {*psys};
  if (zones.empty()) return std::nullopt;
  Source source{"powercap:", {}, {}, {}};
  for (size_t i = 0; i < zones.size(); ++i) {
    const std::string id = zones[i].filename().string();
    std::string text;
    if (int error = read_attribute(zones[i] / "energy_uj", &text)) {
      note_unreadable(reason, error == EACCES || error == EPERM
                                  ? "powercap present but energy_uj not readable (root only since Linux 5.10)"
                                  : "powercap present but " + id + "/energy_uj not readable: " + error_text(error));
      return std::nullopt;
    }
    Expected<uint64_t> max_uj = read_uint(zones[i] / "max_energy_range_uj");
    if (!max_uj) {
      note_unreadable(reason, "powercap zone " + id + " has no usable range: " + max_uj.status().message());
      return std::nullopt;
    }
    source.counters.push_back({zones[i] / "energy_uj", *max_uj});
    source.name += (i == 0 ? " " : " + ") + joined({id, read_label(zones[i] / "name")});
  }
  return source;
}

// hwmon: the first readable `<kind><N><suffix>` sensor, by device number then sensor number.
// Returns the file and "hwmon1 ina226 power1_input (label)".
std::optional<std::pair<fs::path, std::string>> find_hwmon_sensor(const fs::path& sysfs, std::string_view kind,
                                                                  std::string_view suffix, std::string* reason) {
  for (const fs::path& device : indexed_entries(sysfs / "class/hwmon", "hwmon", "")) {
    for (const fs::path& sensor : indexed_entries(device, kind, suffix)) {
      Expected<uint64_t> value = read_uint(sensor);
      if (!value) {
        note_unreadable(reason, "hwmon present but " + value.status().message());
        continue;
      }
      std::string file = sensor.filename().string();
      std::string label = read_label(device / (file.substr(0, file.size() - suffix.size()) + "_label"));
      std::string name = joined({device.filename().string(), read_label(device / "name"), file});
      return std::make_pair(sensor, label.empty() ? name : name + " (" + label + ")");
    }
  }
  return std::nullopt;
}

// The first source by priority: command, powercap, hwmon energy, hwmon power. `reason` gets why
// an existing counter was skipped.
std::optional<Source> find_source(const EnergyOptions& options, std::string* reason) {
  if (!options.power_command.empty()) {
    auto run = [command = options.power_command, timeout = options.command_timeout] {
      return run_power_command(command, timeout);
    };
    return Source{"command: " + options.power_command, {}, run, options.command_sample_period};
  }
  const fs::path sysfs = options.sysfs_root;
  if (std::optional<Source> rapl = find_powercap(sysfs, reason)) return rapl;
  if (auto energy = find_hwmon_sensor(sysfs, "energy", "_input", reason)) {
    return Source{energy->second, {{energy->first, 0}}, {}, {}};
  }
  for (std::string_view suffix : {"_input", "_average"}) {
    if (auto power = find_hwmon_sensor(sysfs, "power", suffix, reason)) {
      auto read = [path = power->first]() -> Expected<double> {
        EDGEMM_ASSIGN_OR_RETURN(uint64_t microwatts, read_uint(path));
        return static_cast<double>(microwatts) * 1e-6;
      };
      return Source{power->second, {}, read, options.sysfs_sample_period};
    }
  }
  return std::nullopt;
}

}  // namespace

struct EnergyMeter::State {
  std::optional<Source> source;  // none when unavailable
  std::string reason;            // why unavailable

  // The measurement in progress.
  bool started = false;
  std::vector<uint64_t> start_uj;  // per counter
  std::thread sampler;
  std::mutex mutex;  // guards the fields below while the sampler runs
  std::condition_variable wake;
  bool stopping = false;
  Sample last;
  double joules = 0;
  Status error;
  Clock::time_point first_reading;  // time of start()'s reading
  double seconds = 0;               // span of the latest completed measurement

  // Sampling thread: a sample every period, added to `joules`, until stopping or the first error.
  void sample_loop() {
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, source->period, [this] { return stopping; })) {
      lock.unlock();
      Expected<Sample> sample = take_sample(source->read_watts);
      lock.lock();
      if (!sample) {
        error = sample.status();
        return;
      }
      joules += trapezoid(last, *sample);
      last = *sample;
    }
  }

  void join_sampler() {
    if (!sampler.joinable()) return;
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    wake.notify_one();
    sampler.join();
  }
};

Expected<std::unique_ptr<EnergyMeter>> EnergyMeter::open(const EnergyOptions& options) {
  using std::chrono::milliseconds;
  for (auto [name, value] : {std::pair{"sysfs_sample_period", options.sysfs_sample_period},
                             std::pair{"command_sample_period", options.command_sample_period},
                             std::pair{"command_timeout", options.command_timeout}}) {
    if (value <= milliseconds(0)) {
      return make_error(StatusCode::kInvalidArgument, std::string("energy option ") + name + " must be positive, got " +
                                                          std::to_string(value.count()) + " ms");
    }
  }
  auto state = std::make_unique<State>();
  state->source = find_source(options, &state->reason);
  if (state->source) {
    state->reason.clear();
  } else if (state->reason.empty()) {
    state->reason = kNoCounter;
  }
  return std::unique_ptr<EnergyMeter>(new EnergyMeter(std::move(state)));
}

EnergyMeter::EnergyMeter(std::unique_ptr<State> state) : state_(std::move(state)) {}

EnergyMeter::~EnergyMeter() { state_->join_sampler(); }

bool EnergyMeter::available() const { return state_->source.has_value(); }

const std::string& EnergyMeter::source() const {
  static const std::string kNone = "none";
  return state_->source ? state_->source->name : kNone;
}

const std::string& EnergyMeter::unavailable_reason() const { return state_->reason; }

double EnergyMeter::last_seconds() const { return state_->seconds; }

Status EnergyMeter::start() {
  State& s = *state_;
  if (!s.source) return make_error(StatusCode::kUnsupported, "energy cannot be measured: " + s.reason);
  if (s.started) return make_error(StatusCode::kInvalidArgument, "EnergyMeter::start() called twice without stop()");
  if (s.source->read_watts) {
    EDGEMM_ASSIGN_OR_RETURN(s.last, take_sample(s.source->read_watts));
    s.first_reading = s.last.time;
    s.joules = 0;
    s.error = Status::ok();
    s.stopping = false;
    s.sampler = std::thread(&State::sample_loop, &s);
  } else {
    s.start_uj.clear();
    for (const Counter& counter : s.source->counters) {
      EDGEMM_ASSIGN_OR_RETURN(uint64_t uj, read_uint(counter.path));
      s.start_uj.push_back(uj);
    }
    s.first_reading = Clock::now();
  }
  s.started = true;
  return Status::ok();
}

Expected<double> EnergyMeter::stop() {
  State& s = *state_;
  if (!s.started) return make_error(StatusCode::kInvalidArgument, "EnergyMeter::stop() called without start()");
  s.started = false;
  if (s.source->read_watts) {
    s.join_sampler();
    EDGEMM_RETURN_IF_ERROR(s.error);
    EDGEMM_ASSIGN_OR_RETURN(Sample final_sample, take_sample(s.source->read_watts));
    s.seconds = std::chrono::duration<double>(final_sample.time - s.first_reading).count();
    return s.joules + trapezoid(s.last, final_sample);
  }
  uint64_t total_uj = 0;
  for (size_t i = 0; i < s.source->counters.size(); ++i) {
    const Counter& counter = s.source->counters[i];
    EDGEMM_ASSIGN_OR_RETURN(uint64_t end_uj, read_uint(counter.path));
    EDGEMM_ASSIGN_OR_RETURN(uint64_t delta_uj, counter_delta(counter, s.start_uj[i], end_uj));
    total_uj += delta_uj;
  }
  s.seconds = std::chrono::duration<double>(Clock::now() - s.first_reading).count();
  return static_cast<double>(total_uj) * 1e-6;
}

}  // namespace edgemm::bench
