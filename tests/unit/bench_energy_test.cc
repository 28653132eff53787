// Energy readers (src/bench/energy.h) on fake sysfs trees written by each test: powercap RAPL
// zones, hwmon energy and power sensors, and power commands. The expected joules come from the
// hand-written counter values (and, for sampled power, from the wall time bracketing start/stop).

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/energy.h"

namespace edgemm::bench {
namespace bench_energy_test {  // named for the file: unity batches merge anonymous namespaces

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A fresh, empty fake sysfs root per test.
class EnergyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("edgemm_energy_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `text` to root/relative, creating the folders.
  void write(const std::string& relative, const std::string& text) {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }

  // A powercap zone (or subzone) under class/powercap, as the kernel lists them there.
  void write_zone(const std::string& zone, const std::string& name, uint64_t energy_uj, uint64_t max_uj) {
    write("class/powercap/" + zone + "/name", name);
    write("class/powercap/" + zone + "/energy_uj", std::to_string(energy_uj));
    write("class/powercap/" + zone + "/max_energy_range_uj", std::to_string(max_uj));
  }

  std::unique_ptr<EnergyMeter> open(EnergyOptions options = {}) {
    options.sysfs_root = root_.string();
    Expected<std::unique_ptr<EnergyMeter>> meter = EnergyMeter::open(options);
    EXPECT_TRUE(meter.has_value()) << meter.status().to_string();
    return meter.has_value() ? std::move(*meter) : nullptr;
  }

  fs::path root_;
};

constexpr uint64_t kRange = 262143328850;  // a common max_energy_range_uj on Intel packages

// Seconds from a to b.
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Measures ~200 ms of a constant power of `watts`: the integral must lie between watts × the time
// inside start()..stop() and watts × the time around them.
void expect_constant_power(EnergyMeter& meter, double watts) {
  Clock::time_point outer_begin = Clock::now();
  ASSERT_TRUE(meter.start().is_ok());
  Clock::time_point inner_begin = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Clock::time_point inner_end = Clock::now();
  Expected<double> joules = meter.stop();
  Clock::time_point outer_end = Clock::now();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_GE(*joules, watts * seconds(inner_begin, inner_end) - 1e-9);
  EXPECT_LE(*joules, watts * seconds(outer_begin, outer_end) + 1e-9);
}

TEST_F(EnergyTest, NoCounterIsUnavailable) {
  auto meter = open();
  ASSERT_NE(meter, nullptr);
  EXPECT_FALSE(meter->available());
  EXPECT_EQ(meter->source(), "none");
  EXPECT_EQ(meter->unavailable_reason(), "not measured (no counter)");
  Status started = meter->start();
  EXPECT_EQ(started.code(), StatusCode::kUnsupported);
}

TEST_F(EnergyTest, RejectsNonPositivePeriods) {
  EnergyOptions options;
  options.sysfs_sample_period = std::chrono::milliseconds(0);
  EXPECT_EQ(EnergyMeter::open(options).status().code(), StatusCode::kInvalidArgument);
  options = {};
  options.command_timeout = std::chrono::milliseconds(-1);
  EXPECT_EQ(EnergyMeter::open(options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EnergyTest, PowercapSumsPackageZonesAndIgnoresSubzones) {
  write_zone("intel-rapl:0", "package-0", 1000000, kRange);
  write_zone("intel-rapl:0:0", "core", 500, kRange);
  write_zone("intel-rapl:1", "package-1", 2000000, kRange);
  write_zone("intel-rapl-mmio:0", "package-0", 7, kRange);      // the same package through MMIO
  fs::create_directories(root_ / "class/powercap/intel-rapl");  // the control type: no counter
  auto meter = open();
  ASSERT_TRUE(meter && meter->available()) << (meter ? meter->unavailable_reason() : "");
  EXPECT_EQ(meter->source(), "powercap: intel-rapl:0 package-0 + intel-rapl:1 package-1");
  EXPECT_EQ(meter->unavailable_reason(), "");
  ASSERT_TRUE(meter->start().is_ok());
  write_zone("intel-rapl:0", "package-0", 2500000, kRange);  // +1.5 J
  write_zone("intel-rapl:0:0", "core", 900500, kRange);      // +0.9 J, inside package-0
  write_zone("intel-rapl:1", "package-1", 4500000, kRange);  // +2.5 J
  write_zone("intel-rapl-mmio:0", "package-0", 5000007, kRange);
  Expected<double> joules = meter->stop();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_NEAR(*joules, 4.0, 1e-9);
}

TEST_F(EnergyTest, PowercapPrefersPsysAlone) {
  write_zone("intel-rapl:0", "package-0", 1000000, kRange);
  write_zone("intel-rapl:1", "psys", 7000000, kRange);
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->source(), "powercap: intel-rapl:1 psys");
  ASSERT_TRUE(meter->start().is_ok());
  write_zone("intel-rapl:0", "package-0", 2000000, kRange);  // +1 J, part of the platform
  write_zone("intel-rapl:1", "psys", 10000000, kRange);      // +3 J
  Expected<double> joules = meter->stop();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_NEAR(*joules, 3.0, 1e-9);
}

TEST_F(EnergyTest, PowercapWrapsAtMaxEnergyRange) {
  write_zone("intel-rapl:0", "package-0", 900000, 1000000);
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  ASSERT_TRUE(meter->start().is_ok());
  write_zone("intel-rapl:0", "package-0", 300000, 1000000);  // 0.1 J up to the range, 0.3 J after
  Expected<double> joules = meter->stop();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_NEAR(*joules, 0.4, 2e-6);  // ±1 µJ: whether the range's last value counts as a step
}

TEST_F(EnergyTest, PowercapRootOnlyEnergyIsUnavailableWithReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  write_zone("intel-rapl:0", "package-0", 1000000, kRange);
  fs::permissions(root_ / "class/powercap/intel-rapl:0/energy_uj", fs::perms::none);
  auto meter = open();
  ASSERT_NE(meter, nullptr);
  EXPECT_FALSE(meter->available());
  EXPECT_EQ(meter->source(), "none");
  EXPECT_EQ(meter->unavailable_reason(),
            "not measured: powercap present but energy_uj not readable (root only since Linux 5.10)");
}

// energy_uj as a folder: unreadable even for root, so this runs everywhere.
TEST_F(EnergyTest, PowercapUnreadableEnergyIsUnavailableWithReason) {
  write_zone("intel-rapl:1", "package-1", 1000000, kRange);
  fs::create_directories(root_ / "class/powercap/intel-rapl:0/energy_uj");
  write("class/powercap/intel-rapl:0/name", "package-0");
  auto meter = open();
  ASSERT_NE(meter, nullptr);
  EXPECT_FALSE(meter->available());
  EXPECT_NE(meter->unavailable_reason().find("powercap present but intel-rapl:0/energy_uj not readable"),
            std::string::npos)
      << meter->unavailable_reason();
}

TEST_F(EnergyTest, UnreadablePowercapFallsBackToHwmon) {
  fs::create_directories(root_ / "class/powercap/intel-rapl:0/energy_uj");
  write("class/hwmon/hwmon0/name", "ina226");
  write("class/hwmon/hwmon0/power1_input", "2000000");
  auto meter = open();
  ASSERT_TRUE(meter && meter->available()) << (meter ? meter->unavailable_reason() : "");
  EXPECT_EQ(meter->source(), "hwmon0 ina226 power1_input");
  EXPECT_EQ(meter->unavailable_reason(), "");
}

TEST_F(EnergyTest, HwmonEnergyPreferredOverPower) {
  write("class/hwmon/hwmon0/name", "acpitz");
  write("class/hwmon/hwmon0/temp1_input", "45000");
  write("class/hwmon/hwmon1/name", "ina226");
  write("class/hwmon/hwmon1/power1_input", "2000000");
  write("class/hwmon/hwmon2/name", "amd_energy");
  write("class/hwmon/hwmon2/energy1_label", "Esocket0");
  write("class/hwmon/hwmon2/energy1_input", "5000000");
  write("class/hwmon/hwmon2/energy2_input", "100");
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->source(), "hwmon2 amd_energy energy1_input (Esocket0)");
  ASSERT_TRUE(meter->start().is_ok());
  write("class/hwmon/hwmon2/energy1_input", "5750000");  // +0.75 J
  write("class/hwmon/hwmon2/energy2_input", "900000");
  Expected<double> joules = meter->stop();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_NEAR(*joules, 0.75, 1e-9);
}

TEST_F(EnergyTest, HwmonEnergyGoingBackIsAnError) {
  write("class/hwmon/hwmon0/energy1_input", "5000000");
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  ASSERT_TRUE(meter->start().is_ok());
  write("class/hwmon/hwmon0/energy1_input", "4000000");
  Expected<double> joules = meter->stop();
  ASSERT_FALSE(joules.has_value());
  EXPECT_NE(joules.status().message().find("went back from 5000000 to 4000000"), std::string::npos)
      << joules.status().to_string();
}

TEST_F(EnergyTest, HwmonPowerIsIntegrated) {
  write("class/hwmon/hwmon1/name", "ina226");
  write("class/hwmon/hwmon1/power1_label", "vdd_cpu_big");
  write("class/hwmon/hwmon1/power1_input", "2000000");  // 2 W
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->source(), "hwmon1 ina226 power1_input (vdd_cpu_big)");
  expect_constant_power(*meter, 2.0);
  expect_constant_power(*meter, 2.0);  // the bench measures one block after another
}

// 1 W for ~400 ms, then 9 W for ~100 ms: only samples taken between start and stop see the step
// (the two end samples alone would give 5 W × 0.5 s = 2.5 J instead of ~1.3 J). The tolerance
// allows a 100 ms gap between samples around the step on a busy machine.
TEST_F(EnergyTest, HwmonPowerIsSampledBetweenStartAndStop) {
  write("class/hwmon/hwmon0/power1_input", "1000000");
  EnergyOptions options;
  options.sysfs_sample_period = std::chrono::milliseconds(10);
  auto meter = open(options);
  ASSERT_TRUE(meter && meter->available());
  Clock::time_point begin = Clock::now();
  ASSERT_TRUE(meter->start().is_ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  write("power.tmp", "9000000");  // renamed into place so that no read sees a half-written file
  fs::rename(root_ / "power.tmp", root_ / "class/hwmon/hwmon0/power1_input");
  Clock::time_point step = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Expected<double> joules = meter->stop();
  Clock::time_point end = Clock::now();
  ASSERT_TRUE(joules.has_value()) << joules.status().to_string();
  EXPECT_NEAR(*joules, 1.0 * seconds(begin, step) + 9.0 * seconds(step, end), 0.4);
}

TEST_F(EnergyTest, HwmonPowerAverageWhenNoInput) {
  write("class/hwmon/hwmon0/name", "power_meter");
  write("class/hwmon/hwmon0/power1_average", "1500000");  // 1.5 W
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->source(), "hwmon0 power_meter power1_average");
  expect_constant_power(*meter, 1.5);
}

TEST_F(EnergyTest, PowerCommandIsIntegratedAndWins) {
  write_zone("intel-rapl:0", "package-0", 1000000, kRange);
  EnergyOptions options;
  options.power_command = "echo 3.5";
  options.command_sample_period = std::chrono::milliseconds(50);
  auto meter = open(options);
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->source(), "command: echo 3.5");
  expect_constant_power(*meter, 3.5);
}

TEST_F(EnergyTest, FailingPowerCommandIsAnError) {
  EnergyOptions options;
  options.power_command = "echo 1.0; exit 3";
  auto meter = open(options);
  ASSERT_TRUE(meter && meter->available());
  Status started = meter->start();
  EXPECT_EQ(started.code(), StatusCode::kIo);
  EXPECT_EQ(started.message(), "the power command 'echo 1.0; exit 3' exited with status 3 (stdout: '1.0')");
}

TEST_F(EnergyTest, PowerCommandPrintingGarbageIsAnError) {
  for (const char* printed : {"watts", "1.5 W", "-2", "nan", "inf", ""}) {
    EnergyOptions options;
    options.power_command = std::string("echo '") + printed + "'";
    auto meter = open(options);
    ASSERT_TRUE(meter && meter->available());
    Status started = meter->start();
    EXPECT_EQ(started.code(), StatusCode::kIo) << printed;
    EXPECT_EQ(started.message(), "the power command '" + options.power_command + "' printed '" + printed +
                                     "', not a power in watts (one finite non-negative number)");
  }
}

// The first sample (in start) is good, a later one is not: stop() reports the sampler's error.
TEST_F(EnergyTest, PowerCommandFailingWhileSamplingFailsStop) {
  const std::string flag = (root_ / "sampled_once").string();
  EnergyOptions options;
  options.power_command = "if [ -e " + flag + " ]; then echo oops; else touch " + flag + "; echo 1; fi";
  options.command_sample_period = std::chrono::milliseconds(20);
  auto meter = open(options);
  ASSERT_TRUE(meter && meter->available());
  ASSERT_TRUE(meter->start().is_ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Expected<double> joules = meter->stop();
  ASSERT_FALSE(joules.has_value());
  EXPECT_NE(joules.status().message().find("printed 'oops'"), std::string::npos) << joules.status().to_string();
}

TEST_F(EnergyTest, HangingPowerCommandTimesOut) {
  EnergyOptions options;
  options.power_command = "sleep 30 & echo 1; wait";  // prints, then never exits
  options.command_timeout = std::chrono::milliseconds(300);
  auto meter = open(options);
  ASSERT_TRUE(meter && meter->available());
  Clock::time_point begin = Clock::now();
  Status started = meter->start();
  EXPECT_LT(seconds(begin, Clock::now()), 10.0);  // killed, not waited for
  EXPECT_EQ(started.code(), StatusCode::kIo);
  EXPECT_EQ(started.message(), "the power command '" + options.power_command +
                                   "' did not finish within 300 ms and was killed (stdout so far: '1')");
}

TEST_F(EnergyTest, StopWithoutStartIsAnError) {
  write("class/hwmon/hwmon0/energy1_input", "5000000");
  auto meter = open();
  ASSERT_TRUE(meter && meter->available());
  EXPECT_EQ(meter->stop().status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(meter->start().is_ok());
  EXPECT_EQ(meter->start().code(), StatusCode::kInvalidArgument);
}

}  // namespace bench_energy_test
}  // namespace edgemm::bench
