#include "edgemm/process_memory.h"

#include <fstream>
#include <sstream>

namespace edgemm {

namespace {

std::string proc_path(pid_t pid, const char* file) {
  return "/proc/" + (pid == 0 ? std::string("self") : std::to_string(pid)) + "/" + file;
}

/// Value in bytes of a "Key:   123 kB" line, or -1.
int64_t field_bytes(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t value = -1;
    std::string unit;
    if (!(fields >> value >> unit) || unit != "kB" || value < 0) return -1;
    return value * 1024;
  }
  return -1;
}

}  // namespace

Expected<ProcessMemory> parse_proc_status(const std::string& text) {
  ProcessMemory m;
  m.rss_bytes = field_bytes(text, "VmRSS");
  m.peak_rss_bytes = field_bytes(text, "VmHWM");
  if (m.rss_bytes < 0 || m.peak_rss_bytes < 0) {
    return make_error(StatusCode::kInvalidArgument, "no valid VmRSS and VmHWM lines in the process status text");
  }
  return m;
}

Expected<ProcessMemory> read_process_memory(pid_t pid) {
  const std::string path = proc_path(pid, "status");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return make_error(StatusCode::kIo, "cannot read " + path);
  return parse_proc_status(text.str());
}

Status reset_peak_rss(pid_t pid) {
  const std::string path = proc_path(pid, "clear_refs");
  std::ofstream out(path);
  out << "5";
  out.flush();
  if (!out) return make_error(StatusCode::kIo, "cannot reset the peak RSS through " + path);
  return Status::ok();
}

}  // namespace edgemm
