// `iotail run` on a loop device backed by /dev/shm (root only): direct reads work, writing over a
// filesystem signature is refused unless --allow-destructive. The device is always detached and
// its backing file removed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli_test_util.h"

namespace {

struct Result {
  int status;
  std::string output;
};

// Runs a shell command with stderr merged into the output.
Result Shell(const std::string& cmd) {
  const auto r = iotail::testing::Capture(cmd + " 2>&1");
  return {r.status, r.out};
}

class RunLoopDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for losetup";
    backing_ = "/dev/shm/iotail-loop-test." + std::to_string(getpid());
    if (Shell("truncate -s 64M " + backing_).status != 0) GTEST_SKIP() << "no /dev/shm";
    const Result r = Shell("losetup --find --show --direct-io=on " + backing_);
    if (r.status != 0) GTEST_SKIP() << "losetup not permitted: " << r.output;
    device_ = r.output.substr(0, r.output.find('\n'));
  }
  void TearDown() override {
    if (!device_.empty()) Shell("losetup -d " + device_);
    if (!backing_.empty()) std::filesystem::remove(backing_);
  }
  std::string backing_, device_;
};

TEST_F(RunLoopDeviceTest, DirectReadsThenRefusesToWriteOverExt4) {
  const std::string bin = IOTAIL_BINARY;
  const Result read = Shell(bin + " run --filename=" + device_ +
                            " --rw=randread --direct=1 --iodepth=16 --runtime=500ms --time_based");
  ASSERT_EQ(read.status, 0) << read.output;
  EXPECT_NE(read.output.find("read: IOPS="), std::string::npos) << read.output;

  // A blank device may be written.
  const Result blank =
      Shell(bin + " run --ioengine=psync --filename=" + device_ + " --rw=write --size=1m --bs=64k");
  ASSERT_EQ(blank.status, 0) << blank.output;

  if (Shell("mkfs.ext4 -q -F " + device_).status != 0) GTEST_SKIP() << "mkfs.ext4 failed";
  const Result refused = Shell(bin + " run --filename=" + device_ +
                               " --rw=randwrite --direct=1 --runtime=200ms --time_based");
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("refusing to write"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("ext4"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--allow-destructive"), std::string::npos) << refused.output;

  // Reading the same device stays allowed; --allow-destructive lets the write run.
  EXPECT_EQ(Shell(bin + " run --filename=" + device_ + " --rw=read --size=1m").status, 0);
  const Result forced = Shell(bin + " run --filename=" + device_ +
                              " --rw=randwrite --size=1m --allow-destructive --runtime=200ms "
                              "--time_based");
  EXPECT_EQ(forced.status, 0) << forced.output;
}

TEST_F(RunLoopDeviceTest, RefusesAGptSignatureFoundInTheFirstSectors) {
  // "EFI PART" at LBA 1 (byte 512), written by hand.
  ASSERT_EQ(
      Shell("printf 'EFI PART' | dd of=" + device_ + " bs=1 seek=512 conv=notrunc status=none")
          .status,
      0);
  Shell("blockdev --flushbufs " + device_);
  const Result refused = Shell(std::string(IOTAIL_BINARY) + " run --filename=" + device_ +
                               " --rw=write --size=1m --ioengine=psync");
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("refusing to write"), std::string::npos) << refused.output;
}

}  // namespace
