#pragma once
/// \file memory_limit.h
/// The most memory this process can hope to use, for refusing work that cannot fit before
/// anything is allocated (edgemm/memory_check.h, edgemm/model_estimates.h).

#include <cstdint>
#include <string>

namespace edgemm {

/// A byte count and where it comes from (process_memory_limit).
struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;  ///< e.g. "physical memory + swap", "ulimit -v", "cgroup memory.max"
};

/// The smallest of: physical memory + swap (sysinfo(2)), the address-space and data-segment
/// limits (RLIMIT_AS, `ulimit -v`; RLIMIT_DATA, `ulimit -d`) and the cgroup v2 memory limit
/// (/sys/fs/cgroup/memory.max). $EDGEMM_MAX_MEMORY (bytes, or with a K, M, G or T suffix,
/// powers of 1024) replaces them all when set to a valid size.
MemoryLimit process_memory_limit();

/// "512 KiB", "3.2 MiB", "38.4 GiB": a byte count for messages (powers of 1024, one decimal).
std::string bytes_text(int64_t bytes);

}  // namespace edgemm
