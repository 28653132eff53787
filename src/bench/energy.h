#pragma once
/// \file energy.h
/// Energy consumed by a block of benchmark iterations, read from the counter the machine exposes:
/// a user-given power command, Linux powercap (RAPL), or a hwmon energy or power sensor. Where
/// there is none the meter says so ("not measured (no counter)") and never makes up a number.

#include <chrono>
#include <memory>
#include <string>

#include "edgemm/status.h"

namespace edgemm::bench {

/// Where and how often to read energy.
struct EnergyOptions {
  /// Root of sysfs; tests point it at a fake tree.
  std::string sysfs_root = "/sys";
  /// Shell command (run by /bin/sh -c) printing the current power in watts as one number on
  /// stdout; empty for none. When given it is the only source tried.
  std::string power_command;
  /// Sampling period of hwmon power sensors (power*_input, power*_average).
  std::chrono::milliseconds sysfs_sample_period{50};
  /// Sampling period of the power command.
  std::chrono::milliseconds command_sample_period{200};
  /// Longest one run of the power command may take; it is then killed and the measurement fails.
  std::chrono::milliseconds command_timeout{2000};
};

/// Measures the energy (joules) consumed between start() and stop(). The source is chosen once, by
/// open(), in this order:
///  1. `power_command` when given: sampled at start(), every `command_sample_period` on a
///     background thread, and at stop(); the samples are integrated with the trapezoid rule.
///  2. powercap RAPL (kernel Documentation/power/powercap/powercap.rst): the top-level zones
///     `<root>/class/powercap/intel-rapl:N` (the control type of Intel CPUs and, through the same
///     intel_rapl_msr driver, AMD and Hygon ones). Their `energy_uj` counters (µJ, wrapping after
///     `max_energy_range_uj`) are read at start() and stop() and summed; subzones such as
///     intel-rapl:0:0 are parts of their parent and are not added. A zone named "psys" covers the
///     whole platform and is used alone. intel-rapl-mmio zones repeat package-N and are ignored.
///  3. hwmon (kernel Documentation/hwmon/sysfs-interface.rst): the first `energy<N>_input`
///     (cumulative µJ) of `<root>/class/hwmon/hwmon*`, read at start() and stop().
///  4. hwmon: the first `power<N>_input`, else `power<N>_average` (µW; e.g. the INA226-style
///     sensors of RK3588 boards), sampled every `sysfs_sample_period` like the power command.
/// A counter that exists but cannot be read (energy_uj is root-only since Linux 5.10) is skipped;
/// if no source is left the meter is unavailable and unavailable_reason() says why.
/// Limits: a RAPL zone may wrap at most once between start() and stop() (at 100 W the 262 kJ
/// range common on Intel lasts 43 min); sampled sources miss changes shorter than their period.
/// Thread safety: one thread calls start()/stop(); the sampling thread is internal and is joined
/// by stop() and by the destructor.
class EnergyMeter {
 public:
  /// Finds the source for `options`. A machine without a counter gives an unavailable meter, not
  /// an error. Errors: kInvalidArgument when a period or the timeout is not positive.
  static Expected<std::unique_ptr<EnergyMeter>> open(const EnergyOptions& options);

  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  /// True when start()/stop() measure something.
  bool available() const;
  /// The counter read, e.g. "powercap: intel-rapl:0 package-0", "hwmon1 ina226 power1_input",
  /// "command: <cmd>"; "none" when unavailable.
  const std::string& source() const;
  /// Why nothing is measured, starting with "not measured", e.g. "not measured (no counter)";
  /// empty when available.
  const std::string& unavailable_reason() const;

  /// Takes the first reading and, for sampled sources, starts the sampling thread.
  /// Errors: kUnsupported when unavailable; kInvalidArgument when already started; kIo when the
  /// counter cannot be read or the power command fails, times out or prints something that is not
  /// a finite non-negative number (the message names the command and quotes its output).
  Status start();
  /// Takes the last reading and returns the joules consumed since start(). Ends the measurement
  /// even on error. Errors: kInvalidArgument when not started; kIo as for start(), also for a
  /// counter that went backwards (a hwmon one, or a RAPL one by more than a wrap explains).
  Expected<double> stop();
  /// Seconds between the first and the last reading of the latest successful stop(): the span
  /// its joules cover, a little longer than the code between start() and stop() when reading
  /// takes time (a power command). 0 before the first measurement.
  double last_seconds() const;

 private:
  struct State;
  explicit EnergyMeter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace edgemm::bench
