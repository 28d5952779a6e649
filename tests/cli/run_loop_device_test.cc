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

namespace run_loop_device_test {

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
    // Partitions added with partx outlive the loop device unless removed first.
    if (!device_.empty()) Shell("partx -d " + device_ + "; losetup -d " + device_);
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

}  // namespace run_loop_device_test

namespace run_loop_device_test {

// The guard that --allow-destructive cannot override: devices in use.
class RunDeviceGuardTest : public RunLoopDeviceTest {
 protected:
  void TearDown() override {
    if (!mount_dir_.empty()) {
      Shell("umount " + mount_dir_);
      std::filesystem::remove(mount_dir_);
    }
    if (!device_.empty()) Shell("swapoff " + device_);
    RunLoopDeviceTest::TearDown();
  }
  // Mounts `dev` on a fresh directory; "" on success, else why not.
  std::string Mount(const std::string& dev) {
    mount_dir_ = "/tmp/iotail-guard-mnt." + std::to_string(getpid());
    std::filesystem::create_directories(mount_dir_);
    const Result r = Shell("mount " + dev + " " + mount_dir_);
    if (r.status != 0) {
      std::filesystem::remove(mount_dir_);
      mount_dir_.clear();
      return "mount not permitted here: " + r.output;
    }
    return "";
  }
  Result WriteRun(const std::string& dev, const std::string& extra) {
    return Shell(std::string(IOTAIL_BINARY) + " run --filename=" + dev +
                 " --rw=write --size=1m --bs=64k --live_format=none " + extra);
  }
  std::string mount_dir_;
};

TEST_F(RunDeviceGuardTest, MountedDeviceIsRefusedEvenWithAllowDestructive) {
  if (Shell("mkfs.ext4 -q -F " + device_).status != 0) GTEST_SKIP() << "mkfs.ext4 failed";
  if (const std::string why = Mount(device_); !why.empty()) GTEST_SKIP() << why;
  const Result r = WriteRun(device_, "--allow-destructive");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("is mounted on " + mount_dir_), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("does not override"), std::string::npos) << r.output;
  // Reading a mounted device is harmless and allowed.
  EXPECT_EQ(Shell(std::string(IOTAIL_BINARY) + " run --filename=" + device_ +
                  " --rw=read --size=1m --live_format=none")
                .status,
            0);
}

TEST_F(RunDeviceGuardTest, SwapSignatureNeedsTheFlagAndActiveSwapIsRefused) {
  if (Shell("mkswap " + device_).status != 0) GTEST_SKIP() << "mkswap failed";
  const Result signature = WriteRun(device_, "");
  EXPECT_EQ(signature.status, 2) << signature.output;
  EXPECT_NE(signature.output.find("swap"), std::string::npos) << signature.output;
  EXPECT_NE(signature.output.find("--allow-destructive"), std::string::npos) << signature.output;
  const Result swapon = Shell("swapon " + device_);
  if (swapon.status != 0) GTEST_SKIP() << "swapon not permitted here: " << swapon.output;
  const Result active = WriteRun(device_, "--allow-destructive");
  EXPECT_EQ(active.status, 2) << active.output;
  EXPECT_NE(active.output.find("active swap area"), std::string::npos) << active.output;
}

TEST_F(RunDeviceGuardTest, DiskWhosePartitionIsMountedIsRefused) {
  if (Shell("command -v sfdisk").status != 0) GTEST_SKIP() << "sfdisk not installed (fdisk)";
  // A GPT with two partitions, the device re-read with partitions (loopNp1, loopNp2).
  ASSERT_EQ(Shell("printf 'label: gpt\\n,16M\\n,\\n' | sfdisk -q " + device_).status, 0);
  Shell("partx -u " + device_ + " || blockdev --rereadpt " + device_);
  const std::string part = device_ + "p1";
  if (!std::filesystem::exists(part)) GTEST_SKIP() << "no partition devices for " << device_;
  // The partition table alone is a signature that needs the flag.
  const Result table = WriteRun(device_, "");
  EXPECT_EQ(table.status, 2) << table.output;
  EXPECT_NE(table.output.find("gpt"), std::string::npos) << table.output;
  if (Shell("mkfs.ext4 -q -F " + part).status != 0) GTEST_SKIP() << "mkfs.ext4 failed";
  if (const std::string why = Mount(part); !why.empty()) GTEST_SKIP() << why;
  const Result r = WriteRun(device_, "--allow-destructive");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("its partition"), std::string::npos) << r.output;
}

TEST_F(RunDeviceGuardTest, DeviceIsClaimedExclusivelyWhileWritten) {
  // A write run on the blank device holds it with O_EXCL: mkfs (which opens O_EXCL) fails.
  const std::string bin = IOTAIL_BINARY;
  const Result r = Shell("(" + bin + " run --filename=" + device_ +
                         " --rw=randwrite --runtime=1500ms --time_based --live_format=none "
                         ">/dev/null & sleep 0.5; mkfs.ext4 -q -F " +
                         device_ + " && echo MKFS-SUCCEEDED; wait $!; echo RUN-STATUS=$?)");
  EXPECT_EQ(r.output.find("MKFS-SUCCEEDED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("RUN-STATUS=0"), std::string::npos) << r.output;
}

TEST_F(RunDeviceGuardTest, LvmPhysicalVolumeNeedsTheFlag) {
  if (Shell("command -v pvcreate").status != 0) GTEST_SKIP() << "pvcreate not installed (lvm2)";
  // Only this loop device is visible to LVM, and it does not wait for udev (none in containers).
  const std::string config = "--config 'devices { filter=[\"a|^" + device_ +
                             "$|\",\"r|.*|\"] } activation { udev_sync=0 udev_rules=0 }'";
  const Result pv = Shell("pvcreate -y " + config + " " + device_);
  if (pv.status != 0) GTEST_SKIP() << "pvcreate failed here: " << pv.output;
  const Result r = WriteRun(device_, "");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("LVM2_member"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--allow-destructive"), std::string::npos) << r.output;
  EXPECT_EQ(WriteRun(device_, "--allow-destructive").status, 0);
}

TEST_F(RunDeviceGuardTest, RaidMemberNeedsTheFlag) {
  if (Shell("command -v mdadm").status != 0) GTEST_SKIP() << "mdadm not installed";
  if (!std::filesystem::exists("/proc/mdstat")) {
    GTEST_SKIP() << "the kernel has no md driver (no /proc/mdstat): mdadm cannot create an array";
  }
  const std::string md = "/dev/md/iotail-test-" + std::to_string(getpid());
  const Result create =
      Shell("mdadm --create " + md + " --run --level=1 --raid-devices=2 --metadata=1.2 " + device_ +
            " missing");
  if (create.status != 0) GTEST_SKIP() << "mdadm --create failed here: " << create.output;
  // While the array runs the member is held by md: refused even with the flag.
  const Result held = WriteRun(device_, "--allow-destructive");
  EXPECT_EQ(held.status, 2) << held.output;
  Shell("mdadm --stop " + md);
  const Result r = WriteRun(device_, "");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("linux_raid_member"), std::string::npos) << r.output;
}

// fio's ioscheduler: the device's scheduler is switched before the job (and stays); one the queue
// does not offer is an error naming it. Only the test's own loop device is touched.
TEST_F(RunLoopDeviceTest, IoschedulerSwitchesTheDevicesScheduler) {
  const std::string queue =
      "/sys/block/" + device_.substr(device_.rfind('/') + 1) + "/queue/scheduler";
  const std::string offered = Shell("cat " + queue).output;
  if (offered.find("mq-deadline") == std::string::npos) {
    GTEST_SKIP() << "no mq-deadline for loop devices here: " << offered;
  }
  const std::string run = std::string(IOTAIL_BINARY) +
                          " run --live_format=none --filename=" + device_ +
                          " --rw=read --size=1m --ioscheduler=";
  for (const std::string name : {"mq-deadline", "none"}) {
    const Result r = Shell(run + name);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(Shell("cat " + queue).output.find("[" + name + "]"), std::string::npos) << name;
  }
  const Result bad = Shell(run + "nosuch");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("--ioscheduler: loop"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("no scheduler 'nosuch'"), std::string::npos) << bad.output;
}

TEST_F(RunLoopDeviceTest, TrimsDiscardTheDeviceAsFio) {
  // 1 MiB of random then sequential 64 KiB discards (BLKDISCARD), counted as fio counts them.
  const std::string job = " --filename=" + device_ + " --size=1m --bs=64k --output-format=json";
  for (const std::string rw : {"randtrim", "trim"}) {
    SCOPED_TRACE(rw);
    const auto ours = iotail::testing::Capture(std::string(IOTAIL_BINARY) +
                                               " run --name=t --live_format=none --rw=" + rw + job);
    ASSERT_EQ(ours.status, 0) << ours.out;
    const std::string trim = ours.out.substr(ours.out.find("\"trim\""));
    EXPECT_NE(trim.find("\"io_bytes\": 1048576"), std::string::npos) << trim.substr(0, 200);
    EXPECT_NE(trim.find("\"total_ios\": 16"), std::string::npos) << trim.substr(0, 200);
    if (Shell("command -v fio").status != 0) continue;
    const auto fio = iotail::testing::Capture("fio --name=t --ioengine=psync --rw=" + rw + job);
    ASSERT_EQ(fio.status, 0) << fio.out;
    const std::string theirs = fio.out.substr(fio.out.find("\"trim\""));
    EXPECT_NE(theirs.find("\"io_bytes\" : 1048576"), std::string::npos) << theirs.substr(0, 200);
    EXPECT_NE(theirs.find("\"total_ios\" : 16"), std::string::npos) << theirs.substr(0, 200);
  }
}

// zonemode=zbd on a block device that is not zoned: fio's emulated zones, as on a file. A
// sequential writer of 3 zones and a reader of the whole device, in two groups: the reader reads
// only what was written, in both tools.
TEST_F(RunLoopDeviceTest, ZbdEmulatesZonesOnANonZonedDeviceAsFio) {
  const std::string zones = " --filename=" + device_ +
                            " --zonemode=zbd --zonesize=1m --bs=64k --direct=1 --ioengine=psync ";
  const std::string args =
      "--name=w" + zones + "--rw=write --size=3z --name=r --stonewall" + zones + "--rw=read";
  for (const std::string tool : {"iotail", "fio"}) {
    SCOPED_TRACE(tool);
    if (tool == "fio" && Shell("command -v fio").status != 0) GTEST_SKIP() << "no fio";
    const std::string bin =
        tool == "fio" ? "fio" : std::string(IOTAIL_BINARY) + " run --live_format=none";
    const Result r = Shell(bin + " " + args);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("issued rwts: total=0,48,0,0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("issued rwts: total=48,0,0,0"), std::string::npos) << r.output;
  }
}

}  // namespace run_loop_device_test
