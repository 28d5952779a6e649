// What the live line counts down and the names of default files (issue 38's low list): "MB left"
// is the bytes the job will do (number_ios caps them; fill_device, which ends when the device is
// full, has no count to give), and a filename_format whose name is longer than a file name may be
// is refused naming the option, not left to fail with "File name too long".
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_progress_and_names_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::ScratchDirTest;
using nlohmann::json;

using RunProgressTest = ScratchDirTest;

// The live JSON lines on stderr.
std::vector<json> LiveLines(const std::string& err) {
  std::vector<json> lines;
  for (const std::string& line : iotail::testing::Lines(err)) {
    if (line.rfind("{\"elapsed_s\"", 0) != 0) continue;
    lines.push_back(json::parse(line, nullptr, false));
  }
  return lines;
}

TEST_F(RunProgressTest, NumberIosCapsTheBytesLeft) {
  // 40 writes of 4 KiB at 20 IOPS in a 64 MiB file: 160 KiB to do, not 64 MiB.
  const CommandResult r =
      Iotail("run --live_format=json --name=x --filename=" + (dir_ / "d").string() +
             " --size=64m --bs=4k --rw=write --number_ios=40 --rate_iops=20 --log_hist_msec=500 "
             "--output-format=terse");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<json> lines = LiveLines(r.err);
  ASSERT_GE(lines.size(), 2u) << r.err;
  for (const json& j : lines) {
    ASSERT_TRUE(j.contains("remaining_bytes")) << j.dump();
    EXPECT_LE(j["remaining_bytes"].get<uint64_t>(), 40u * 4096) << j.dump();
  }
  EXPECT_GT(lines.front()["done_pct"].get<double>(), 1.0) << lines.front().dump();  // was 0.0
}

// fill_device writes until the filesystem is full (an 8 MiB tmpfs: root only): no count of
// bytes left (it was 2^50 bytes, "1125899904.7 MB left").
TEST_F(RunProgressTest, FillDeviceHasNoBytesLeftToCount) {
  const fs::path mnt = dir_ / "fs";
  fs::create_directories(mnt);
  if (geteuid() != 0 || mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=8388608") != 0) {
    GTEST_SKIP() << "needs root to mount a tmpfs";
  }
  const CommandResult r = Iotail(
      "run --live_format=json --name=fill --ioengine=psync --filename=" + (mnt / "f").string() +
      " --rw=write --bs=64k --fill_device=1 --rate=4m --log_hist_msec=250 "
      "--output-format=terse");
  umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<json> lines = LiveLines(r.err);
  ASSERT_GE(lines.size(), 2u) << r.err;
  for (const json& j : lines) EXPECT_FALSE(j.contains("remaining_bytes")) << j.dump();
}

TEST_F(RunProgressTest, AFileNameFormatTooLongForAFileNameIsRefusedNamingIt) {
  const std::string format = std::string(300, 'n') + ".$jobnum";
  const CommandResult r = Iotail("run --live_format=none --name=x --directory=" + dir_.string() +
                                 " --size=1m --filename_format='" + format + "'");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--filename_format: the file name it gives, 'nnnn"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("is 302 bytes long, more than the 255 a file name may have"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("File name too long"), std::string::npos) << r.err;
  // A long job name without a format: the same, naming --name.
  const CommandResult named =
      Iotail("run --live_format=none --name=" + std::string(300, 'j') + " --size=1m --parse-only");
  EXPECT_EQ(named.status, 2) << named.err;
  EXPECT_NE(named.err.find("--name: the file name it gives"), std::string::npos) << named.err;
}

}  // namespace run_progress_and_names_test
