#include "edgemm/memory_limit.h"

#include <sys/resource.h>
#include <sys/sysinfo.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

namespace edgemm {

namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

/// "8G", "512M", "1048576": bytes, or -1 when `text` is not a size.
int64_t parse_size(const std::string& text) {
  if (text.empty()) return -1;
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return -1;
  }
  double scale = 1;
  if (used + 1 == text.size()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        scale = 1024.0;
        break;
      case 'M':
      case 'm':
        scale = 1024.0 * 1024;
        break;
      case 'G':
      case 'g':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 'T':
      case 't':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return -1;
    }
  } else if (used != text.size()) {
    return -1;
  }
  const double bytes = value * scale;
  if (!(bytes > 0) || bytes >= 9.2e18) return -1;
  return static_cast<int64_t>(bytes);
}

int64_t rlimit_bytes(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnlimited;
  return limit.rlim_cur > static_cast<rlim_t>(kUnlimited) ? kUnlimited : static_cast<int64_t>(limit.rlim_cur);
}

int64_t cgroup_bytes() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return kUnlimited;
  const int64_t bytes = parse_size(text);
  return bytes > 0 ? bytes : kUnlimited;
}

}  // namespace

MemoryLimit process_memory_limit() {
  if (const char* env = std::getenv("EDGEMM_MAX_MEMORY"); env != nullptr) {
    const int64_t bytes = parse_size(env);
    if (bytes > 0) return {bytes, "EDGEMM_MAX_MEMORY"};
  }
  MemoryLimit limit{kUnlimited, "no limit found"};
  struct sysinfo info {};
  if (sysinfo(&info) == 0) {
    const double total = (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
    limit = {total >= 9.2e18 ? kUnlimited : static_cast<int64_t>(total), "physical memory + swap"};
  }
  const auto lower = [&limit](int64_t bytes, const char* source) {
    if (bytes < limit.bytes) limit = {bytes, source};
  };
  lower(rlimit_bytes(RLIMIT_AS), "ulimit -v");
  lower(rlimit_bytes(RLIMIT_DATA), "ulimit -d");
  lower(cgroup_bytes(), "cgroup memory.max");
  return limit;
}

std::string bytes_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  }
  return text;
}

}  // namespace edgemm
