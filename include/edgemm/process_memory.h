#pragma once
/// \file process_memory.h
/// Resident memory of a process, read from Linux's /proc (proc(5)): VmRSS is the current
/// resident set, VmHWM its high-water mark, which /proc/PID/clear_refs can reset (Linux ≥ 4.0).

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "edgemm/status.h"

namespace edgemm {

/// Resident memory in bytes.
struct ProcessMemory {
  int64_t rss_bytes = 0;       ///< VmRSS: resident now
  int64_t peak_rss_bytes = 0;  ///< VmHWM: highest resident since start or the last reset
};

/// Parses the text of /proc/PID/status (lines "VmRSS:     1234 kB").
/// Errors: kInvalidArgument when VmRSS or VmHWM is missing or malformed.
Expected<ProcessMemory> parse_proc_status(const std::string& text);

/// Reads /proc/PID/status of `pid` (0 = this process).
/// Errors: kIo when the file cannot be read (e.g. the process has exited).
Expected<ProcessMemory> read_process_memory(pid_t pid = 0);

/// Resets the high-water mark of `pid` (0 = this process) to its current RSS by writing "5" to
/// /proc/PID/clear_refs. Errors: kIo (e.g. a kernel without it, or no permission).
Status reset_peak_rss(pid_t pid = 0);

}  // namespace edgemm
