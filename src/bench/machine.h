#pragma once
/// \file machine.h
/// A description of the machine a benchmark ran on, for reports: CPU, cores, ISA extensions,
/// memory, OS and load, read from /proc, /etc/os-release and uname(2).

#include <cstdint>
#include <string>
#include <vector>

namespace edgemm::bench {

/// What a report says about the machine.
struct MachineInfo {
  std::string cpu;               ///< "AMD EPYC 7B13" (cpuinfo "model name", or the aarch64 "CPU part")
  std::string arch;              ///< uname machine: "x86_64", "aarch64"
  int logical_cpus = 0;          ///< online hardware threads
  std::vector<std::string> isa;  ///< SIMD extensions that matter for inference, e.g. {"avx2","fma"}
  int64_t memory_bytes = 0;      ///< MemTotal
  std::string os;                ///< /etc/os-release PRETTY_NAME
  std::string kernel;            ///< uname release
  double load_average_1m = 0;    ///< /proc/loadavg, first field, when the description was taken
};

/// Describes this machine; fields that cannot be read stay empty or zero.
MachineInfo describe_machine();

/// SIMD extensions named in a /proc/cpuinfo "flags" (x86) or "Features" (arm) line, kept from a
/// fixed list (sse4_2, avx, avx2, fma, f16c, avx512f, avx512bw, avx512_vnni, avx_vnni,
/// amx_tile, asimd, asimdhp, asimddp, i8mm, bf16, sve), in that order.
std::vector<std::string> isa_from_cpuinfo(const std::string& cpuinfo_text);

/// The current 1-minute load average (0 when /proc/loadavg is unreadable).
double load_average_1m();

}  // namespace edgemm::bench
