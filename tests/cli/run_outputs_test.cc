// `iotail run` loses nothing and destroys nothing through its outputs and its setup: outputs are
// checked before the run, never devices or symlinks, and appear whole; a full filesystem stops the
// log, not the run; a killed run keeps every closed interval; sizes that cannot be are refused
// and laying out a file can be interrupted and leaves the file as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

namespace run_outputs_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class RunOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_outputs");
    target_ = (dir_ / "target").string();
    std::ofstream(target_).close();
    fs::resize_file(target_, 4 << 20);
  }
  void TearDown() override {
    if (!mounted_.empty()) iotail::testing::Capture("umount " + mounted_ + " 2>&1");
    fs::remove_all(dir_);
  }
  iotail::testing::CommandResult Run(const std::string& args) {
    return iotail::testing::RunIotail("run --filename=" + target_ + " --live_format=none " + args,
                                      dir_);
  }
  fs::path dir_;
  std::string target_;
  std::string mounted_;
};

TEST_F(RunOutputsTest, SummaryPathIsCheckedBeforeTheRun) {
  const auto start = Clock::now();
  const auto r =
      Run("--runtime=20s --time_based --output=" + (dir_ / "no/such/dir/s.json").string());
  // Refused at once (a 20 s run did not happen first), naming the option and the path.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no/such/dir/s.json"), std::string::npos) << r.err;
}

TEST_F(RunOutputsTest, OutputsAreNeverDevicesOrSymlinks) {
  // A device (a character device here: the rule is "regular files only").
  auto r = Run("--runtime=100ms --time_based --output=/dev/null");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  // A symlink planted where a log goes: the file it points to stays untouched.
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir_ / "p_clat_hist.1.log");
  r = Run("--runtime=100ms --time_based --write_hist_log=" + (dir_ / "p").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  std::ifstream in(victim);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "precious");
}

TEST_F(RunOutputsTest, SummaryFileAppearsWholeAndAlone) {
  const fs::path out = dir_ / "s.json";
  const auto r = Run("--runtime=200ms --time_based --output-format=json --output=" + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"iotail_aggregate\""), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(RunOutputsTest, FullFilesystemStopsTheLogNotTheRun) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  const auto m =
      iotail::testing::Capture("mount -t tmpfs -o size=64k tmpfs " + small.string() + " 2>&1");
  if (m.status != 0) GTEST_SKIP() << "mount not permitted here: " << m.out;
  mounted_ = small.string();
  const auto r = Run("--runtime=1500ms --time_based --log_hist_msec=100 --write_hist_log=" +
                     (small / "p").string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(iotail::testing::ContainsAll(r.err, {"No space left on device", "the run goes on"}));
  // The summary is printed all the same, for the whole run.
  // "read: IOPS=..., BW=...(...KiB/1500msec)": the runtime in ms as fio prints it.
  EXPECT_TRUE(iotail::testing::ContainsAll(r.out, {"read: IOPS=", "/150"}));
}

TEST_F(RunOutputsTest, SigkillLosesAtMostTheOpenInterval) {
  const fs::path prefix = dir_ / "k";
  const auto r = iotail::testing::Capture(
      "cd " + dir_.string() + " && (" + IOTAIL_BINARY + " run --filename=" + target_ +
      " --live_format=none --runtime=20s --time_based --log_hist_msec=100 --write_hist_log=" +
      prefix.string() + " >/dev/null 2>&1 & pid=$!; sleep 1.2; kill -9 $pid; wait $pid; true)");
  std::ifstream in(prefix.string() + "_clat_hist.1.log");
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    size_t fields = 1;
    for (size_t at = line.find(", "); at != std::string::npos; at = line.find(", ", at + 2)) {
      ++fields;
    }
    EXPECT_EQ(fields, 1859u) << "line " << lines << " is torn";
  }
  EXPECT_FALSE(in.bad());
  // About 11 intervals closed in 1.2 s; allow for a slow start on a loaded machine.
  EXPECT_GE(lines, 5);
}

TEST_F(RunOutputsTest, ImpossibleSizesAreUsageErrors) {
  for (const std::string bad :
       {"--size=99999999999999999999", "--offset=8m --size=18446744073705357312",
        "--runtime=99999999999h --time_based"}) {
    SCOPED_TRACE(bad);
    const auto r = Run(bad);
    EXPECT_EQ(r.status, 2) << r.err;
  }
  // Larger than the filesystem can hold: refused before anything is written.
  const auto r = Run("--size=99999999999999999");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("free"), std::string::npos) << r.err;
  EXPECT_EQ(fs::file_size(target_), 4u << 20);
}

TEST_F(RunOutputsTest, LayoutStopsOnSigtermAndLeavesNothing) {
  const fs::path big = dir_ / "big";
  const auto r = iotail::testing::Capture(
      "(" + std::string(IOTAIL_BINARY) +
      " run --live_format=none --rw=read --size=4g --filename=" + big.string() +
      " 2>&1 & pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; "
      "echo STATUS=$?)");
  EXPECT_NE(r.out.find("STATUS=143"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(big));
}

TEST_F(RunOutputsTest, ThreadsThatCannotBeCreatedFailTheRunCleanly) {
  // 400 MB of address space cannot hold 200 thread stacks of 8 MiB: thread creation fails part
  // way. The run must end with a clear error and exit 1, not std::terminate (134).
  const auto r = iotail::testing::Capture("cd " + dir_.string() + " && (ulimit -v 400000; " +
                                          IOTAIL_BINARY + " run --filename=" + target_ +
                                          " --numjobs=200 --ioengine=psync --runtime=1s "
                                          "--time_based --live_format=none 2>&1)");
  if (r.status == 0) GTEST_SKIP() << "all 200 threads started under ulimit -v here";
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("cannot start worker thread"), std::string::npos) << r.out;
}

TEST_F(RunOutputsTest, FilenameTakesFiosColonEscape) {
  const fs::path colon = dir_ / "a:b";
  const auto r = iotail::testing::RunIotail(
      "run --live_format=none --size=1m --rw=read --filename='" + (dir_ / "a\\:b").string() + "'",
      dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(colon));
}

}  // namespace run_outputs_test
