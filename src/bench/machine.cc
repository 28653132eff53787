#include "bench/machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

namespace edgemm::bench {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Value after the first ':' of the first line starting with `key`, trimmed.
std::string cpuinfo_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::string os_pretty_name() {
  std::istringstream in(read_text("/etc/os-release"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string value = line.substr(12);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

int64_t mem_total_bytes() {
  std::istringstream in(read_text("/proc/meminfo"));
  std::string key, unit;
  int64_t kb = 0;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

}  // namespace

std::vector<std::string> isa_from_cpuinfo(const std::string& cpuinfo_text) {
  static const char* kKnown[] = {"sse4_2",   "avx",         "avx2",        "fma",      "f16c",     "avx512f",
                                 "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "asimd",
                                 "asimdhp",  "asimddp",     "i8mm",        "bf16",     "sve"};
  std::string flags = cpuinfo_field(cpuinfo_text, "flags");
  if (flags.empty()) flags = cpuinfo_field(cpuinfo_text, "Features");
  std::set<std::string> present;
  std::istringstream words(flags);
  for (std::string w; words >> w;) present.insert(w);
  std::vector<std::string> isa;
  for (const char* name : kKnown) {
    if (present.count(name)) isa.emplace_back(name);
  }
  return isa;
}

double load_average_1m() {
  std::istringstream in(read_text("/proc/loadavg"));
  double load = 0;
  in >> load;
  return load;
}

MachineInfo describe_machine() {
  MachineInfo m;
  const std::string cpuinfo = read_text("/proc/cpuinfo");
  m.cpu = cpuinfo_field(cpuinfo, "model name");
  if (m.cpu.empty()) m.cpu = "CPU part " + cpuinfo_field(cpuinfo, "CPU part");
  m.isa = isa_from_cpuinfo(cpuinfo);
  m.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  m.memory_bytes = mem_total_bytes();
  m.os = os_pretty_name();
  utsname u{};
  if (uname(&u) == 0) {
    m.arch = u.machine;
    m.kernel = u.release;
  }
  m.load_average_1m = load_average_1m();
  return m;
}

}  // namespace edgemm::bench
