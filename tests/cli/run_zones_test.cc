// fio's zonemode=strided (zonesize, zonerange, zoneskip) in `iotail run`, against fio 3.33 on the
// same jobs: writes into a file of zeros show which blocks each tool touched. Sequential zones
// must touch the same blocks; random ones the same number in each zone and none outside the
// zones. zonemode=zbd has tests of its own (run_zbd_test.cc); here, what it refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_zones_test {

namespace fs = std::filesystem;
using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;

constexpr uint64_t kFile = 1 << 20;
constexpr uint64_t kBlock = 4096;

class ZonesTest : public FioSemanticsTest {
 protected:
  // Runs `tool` on a 1 MiB file of zeros with ARGS; which 4 KiB blocks it wrote (not all zero).
  std::vector<bool> Written(const std::string& tool, const std::string& args) {
    const fs::path d = dir_ / tool;
    fs::create_directories(d);
    { std::ofstream create(d / "f"); }
    fs::resize_file(d / "f", kFile);
    const auto r = Run(tool, "--name=z --filename=f --bs=4k --ioengine=psync " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::ifstream in(d / "f", std::ios::binary);
    std::vector<bool> written(kFile / kBlock, false);
    std::vector<char> block(kBlock);
    for (size_t b = 0; b < written.size() && in.read(block.data(), kBlock); ++b) {
      for (char c : block) {
        if (c != 0) {
          written[b] = true;
          break;
        }
      }
    }
    fs::remove(d / "f");
    return written;
  }
  static std::vector<int> PerZone(const std::vector<bool>& written, uint64_t zone) {
    std::vector<int> counts(kFile / zone, 0);
    for (size_t b = 0; b < written.size(); ++b) counts[b * kBlock / zone] += written[b];
    return counts;
  }
};

TEST_F(ZonesTest, SequentialZonesTouchTheBlocksFioTouches) {
  const std::string args =
      "--rw=write --size=256k --zonemode=strided --zonesize=64k --zoneskip=192k";
  const std::vector<bool> ours = Written("iotail", args);
  // 64 KiB at 0, 256 KiB, 512 KiB and 768 KiB.
  const std::vector<int> per = PerZone(ours, 256 << 10);
  EXPECT_EQ(per, (std::vector<int>{16, 16, 16, 16}));
  for (size_t b = 0; b < ours.size(); ++b) {
    EXPECT_EQ(ours[b], (b * kBlock) % (256 << 10) < (64 << 10)) << "block " << b;
  }
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  EXPECT_EQ(Written("fio", args), ours);
}

TEST_F(ZonesTest, ZonesWrapAndZonesizeBeyondTheRangeRepeatsTheZone) {
  // 128 KiB per 32 KiB zone: each zone written four times over (only 32 KiB of blocks), zones
  // 32 KiB + 224 KiB apart, wrapping past 1 MiB.
  const std::string args =
      "--rw=write --size=768k --zonemode=strided --zonesize=128k --zonerange=32k --zoneskip=224k";
  const std::vector<bool> ours = Written("iotail", args);
  EXPECT_EQ(PerZone(ours, 256 << 10), (std::vector<int>{8, 8, 8, 8}));
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  EXPECT_EQ(Written("fio", args), ours);
}

TEST_F(ZonesTest, RandomZonesStayInTheirZones) {
  const std::string args =
      "--rw=randwrite --size=256k --zonemode=strided --zonesize=64k --zonerange=128k "
      "--zoneskip=128k";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const std::vector<bool> w = Written(tool, args);
    // 64 KiB (16 blocks, every one once: the random map) in the first 128 KiB of each 256 KiB.
    EXPECT_EQ(PerZone(w, 128 << 10), (std::vector<int>{16, 0, 16, 0, 16, 0, 16, 0}));
  }
}

TEST_F(ZonesTest, ZonesizeWithoutStridedIsRefusedAsFio) {
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    const auto r = Run(tool, "--name=z --ioengine=null --size=1m --zonesize=64k");
    EXPECT_NE(r.status, 0) << tool;
    EXPECT_NE(r.err.find("zonesize"), std::string::npos) << tool << ": " << r.err;
  }
}

TEST_F(ZonesTest, ZbdOnTheNullEngineIsRefusedByName) {
  const auto r = Run("iotail", "--name=z --ioengine=null --size=1m --zonemode=zbd --zonesize=256k");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--ioengine=nbd/null (zones are emulated on files and block devices) with "
                       "--zonemode=zbd: not supported yet"),
            std::string::npos)
      << r.err;
}

}  // namespace run_zones_test
