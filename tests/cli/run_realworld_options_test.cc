// What job files from other projects than fio use (collected from public repositories: SPDK,
// pbench, fio-plot, weka and others), each with fio 3.33's meaning, against fio on the same job
// where fio can run it: fio's other separators between a per-direction option's values
// (bs=4k-512k, bs=4k:8k), io_limit (io_size), a size of "100%%", disk_util=0, clocksource,
// trim_verify_zero, verify_state_save=0, iodepth_low, serialize_overlap, verify on a job that only
// trims, the job's section named in the errors of what its options mean together, and fio's
// random offsets aligned per direction (bs=4k,64k), the rule iotail's offsets follow, and
// per_job_logs=0's shared log files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_realworld_options_test {

using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using iotail::testing::Job;
using iotail::testing::Jobs;
using json = nlohmann::json;
namespace fs = std::filesystem;

using RealWorldOptionsTest = FioSemanticsTest;

TEST_F(RealWorldOptionsTest, ColonAndDashSeparateReadsAndWritesAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // SPDK's blocksize=4k-512k: 4k reads, 512k writes (not a range): 8 writes of 512 KiB.
  ExpectSameCounts("--name=w --filename=f --size=4m --rw=write --bs=4k-512k");
  ExpectSameCounts("--name=r --filename=f --size=1m --rw=read --bs=8k:64k");
  ExpectSameCounts("--name=m --filename=f --size=1m --rw=write --bs=8k:64k,16k");
  const auto [fio, ours] = Both("--name=w --filename=f --size=4m --rw=write --bs=4k-512k");
  ASSERT_EQ(ours.size(), 1u);
  EXPECT_EQ(ours[0].writes, 8u);
  // blockalign and the rates take them too.
  EXPECT_EQ(
      Run("iotail", "--name=r --filename=f --size=1m --rw=randread --ba=4k:4k --parse-only").status,
      0);
  EXPECT_EQ(
      Run("iotail", "--name=r --filename=f --size=1m --rw=randrw --rate=1m:2m --parse-only").status,
      0);
}

TEST_F(RealWorldOptionsTest, FiosRandomOffsetsAlignToEachDirectionsOwnBlockSize) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // The rule iotail's IoPattern follows (tests/engine/io_pattern_test.cc,
  // EachDirectionsRandomOffsetsAreMultiplesOfItsOwnSmallestSizeAsFio), held to fio 3.33 here:
  // with bs=4k,64k fio's writes start on 64 KiB boundaries (blockalign defaults to each
  // direction's smallest size), its reads on 4 KiB ones. fio's offsets are read from its
  // completion latency log with log_offset=1 (time, value, direction, size, offset); iotail's
  // logs are windowed, without offsets.
  const auto r = Run("fio",
                     "--name=m --filename=f --size=8m --rw=randrw --bs=4k,64k "
                     "--ioengine=psync --write_lat_log=m --log_offset=1");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream log(dir_ / "fio" / "m_clat.1.log");
  ASSERT_TRUE(log) << "no m_clat.1.log";
  uint64_t writes = 0, reads = 0, reads_off_64k = 0;
  std::string line;
  while (std::getline(log, line)) {
    const std::vector<std::string> f = iotail::testing::SplitOn(line, ", ");
    ASSERT_GE(f.size(), 5u) << line;
    const uint64_t offset = std::stoull(f[4]);
    if (f[2] == "1") {
      EXPECT_EQ(f[3], "65536") << line;
      EXPECT_EQ(offset % 65536, 0u) << line;
      ++writes;
    } else {
      EXPECT_EQ(offset % 4096, 0u) << line;
      reads_off_64k += offset % 65536 != 0;
      ++reads;
    }
  }
  EXPECT_GT(writes, 20u);
  EXPECT_GT(reads_off_64k, reads / 2);
}

TEST_F(RealWorldOptionsTest, PerJobLogsZeroAppendsEveryCloneToOneFileAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // p3-appliances' per_job_logs=0: one h_clat_hist.log (no .N), each clone's log one block after
  // the other, its times counted from that clone's start; a second job with the same prefix
  // appends its own. Each block is found where the times go back.
  const std::string args =
      "--filename=f --size=1m --rw=randread --rate_iops=40 --runtime=1 --time_based "
      "--log_hist_msec=250 --write_hist_log=h --per_job_logs=0 --name=a --numjobs=2 "
      "--name=b --stonewall";
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    const auto r = Run(tool, args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / tool / "h_clat_hist.1.log"));
    std::ifstream log(dir_ / tool / "h_clat_hist.log");
    ASSERT_TRUE(log) << "no h_clat_hist.log";
    int blocks = 0;
    int64_t last = -1;
    std::string line;
    while (std::getline(log, line)) {
      const int64_t t = std::stoll(line.substr(0, line.find(',')));
      if (t < last || last < 0) ++blocks;
      last = t;
    }
    EXPECT_EQ(blocks, 3);
  }
  // Nothing of the staging is left.
  for (const auto& e : fs::directory_iterator(dir_ / "iotail")) {
    EXPECT_EQ(e.path().filename().string().find("staged"), std::string::npos) << e.path();
  }
  // A log with no line (slat with psync, which has no submission latency): fio leaves an empty
  // l_slat.log beside l_clat.log and l_lat.log; so must iotail, without an error.
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    const auto r = Run(tool,
                       "--name=s --filename=f --size=1m --rw=read --numjobs=2 --per_job_logs=0 "
                       "--write_lat_log=l");
    ASSERT_EQ(r.status, 0) << r.err;
    std::set<std::string> logs;
    for (const auto& e : fs::directory_iterator(dir_ / tool)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("l")) logs.insert(name);
    }
    EXPECT_EQ(logs, (std::set<std::string>{"l_clat.log", "l_lat.log", "l_slat.log"}));
    EXPECT_EQ(fs::file_size(dir_ / tool / "l_slat.log"), 0u);
  }
}

// per_job_logs=0's shared file is appended to only as a regular file (issue 38): a planted link
// to a victim is refused and said (exit 1), and the victim keeps its bytes.
TEST_F(RealWorldOptionsTest, PerJobLogsZeroNeverAppendsThroughALink) {
  const fs::path victim = dir_ / "victim";
  { std::ofstream(victim) << "precious"; }
  fs::create_directories(dir_ / "iotail");
  fs::create_symlink(victim, dir_ / "iotail" / "h_clat_hist.log");
  const auto r = Run("iotail",
                     "--name=a --ioengine=null --size=1m --rw=randread --number_ios=100 "
                     "--write_hist_log=h --per_job_logs=0");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(iotail::testing::ReadFile(victim), "precious");
}

TEST_F(RealWorldOptionsTest, IoLimitAndDoublePercentAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // io_limit is fio's other name for io_size: three passes over 1 MiB.
  ExpectSameCounts("--name=w --filename=f --size=1m --io_limit=3m --rw=write --bs=64k");
  // fio-plot's size=100%% (for Python's configparser): fio reads 100%, so does iotail.
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    const auto r = Run(tool, "--name=w --filename=f --size=50%% --rw=write --bs=64k",
                       "rm -f f && truncate -s 4m f && ");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<Job> jobs = Jobs(r.out);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].write_bytes, 2u << 20);
  }
}

TEST_F(RealWorldOptionsTest, DiskUtilZeroLeavesTheJobsDisksOutAsFio) {
  auto disks = [&](const std::string& tool, const std::string& extra) {
    const auto r = Run(tool, "--name=w --filename=f --size=256k --rw=write " + extra);
    EXPECT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out.substr(r.out.find('{')));
    return j.contains("disk_util") ? j["disk_util"].size() : size_t{0};
  };
  const size_t ours = disks("iotail", "");
  if (ours == 0) GTEST_SKIP() << "the scratch directory is on no disk that reports statistics";
  EXPECT_EQ(disks("iotail", "--disk_util=0"), 0u);
  if (!HaveFio()) return;
  EXPECT_EQ(disks("fio", ""), ours);
  EXPECT_EQ(disks("fio", "--disk_util=0"), 0u);
}

TEST_F(RealWorldOptionsTest, OptionsThatChangeNothingHereAreAcceptedAndTheirLimitsNamed) {
  const std::string job = "--name=w --filename=f --size=256k --rw=write ";
  for (const std::string extra :
       {"--clocksource=gettimeofday", "--clocksource=cpu", "--trim_verify_zero=1",
        "--verify=md5 --verify_state_save=0", "--ioengine=libaio --iodepth=16 --iodepth_low=4"}) {
    SCOPED_TRACE(extra);
    const auto r = Run("iotail", job + extra);
    EXPECT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(Jobs(r.out).size(), 1u);
    EXPECT_EQ(Jobs(r.out)[0].write_bytes, 256u << 10);
  }
  auto refused = [&](const std::string& extra, const std::string& why) {
    const auto r = Run("iotail", job + extra);
    EXPECT_EQ(r.status, 2) << extra;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  };
  refused("--clocksource=sundial", "--clocksource");
  refused("--verify=md5 --verify_state_save=1", "--verify_state_save=1: iotail saves no");
  refused("--ioengine=libaio --iodepth=16 --iodepth_low=4 --rate=1m",
          "--iodepth_low: not with --rate");
}

TEST_F(RealWorldOptionsTest, IodepthLowDrainsAFullQueueAsFio) {
  // SPDK's iodepth_low: once 16 are in flight, the queue drains to 2, then refills one I/O per
  // completion (depths 3 to 16): fio's IO depths 2: 1/14, 4: 4/14, 8: 8/14, 16: 1/14. Without
  // it, each completion is replaced at once (fio's iodepth_batch_complete_max): nearly all at 16.
  auto levels = [&](const std::string& tool, const std::string& extra) {
    const auto r = Run(tool,
                       "--name=d --filename=f --size=16m --rw=randread --bs=4k --ioengine=libaio "
                       "--direct=1 --iodepth=16 --runtime=1 --time_based " +
                           extra,
                       "truncate -s 16m f && ");
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out.substr(r.out.find('{')))["jobs"][0]["iodepth_level"];
  };
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const json low = levels(tool, "--iodepth_low=2");
    EXPECT_NEAR(low["2"].get<double>(), 100.0 / 14, 1.0) << low;
    EXPECT_NEAR(low["4"].get<double>(), 400.0 / 14, 1.0) << low;
    EXPECT_NEAR(low["8"].get<double>(), 800.0 / 14, 1.0) << low;
    const json full = levels(tool, "");
    EXPECT_GT(full["16"].get<double>(), 95.0) << full;
  }
}

TEST_F(RealWorldOptionsTest, SerializeOverlapKeepsOverlappingWritesApartAsFio) {
  // SPDK's integrity job: random writes without a random map over 16 blocks at depth 32. Without
  // serialize_overlap the queue holds 32 (blocks twice over); with it, at most one I/O per block
  // is in flight: fio's IO depths never reach 16, most at 4-7 (about 54% in both tools).
  auto levels = [&](const std::string& tool, const std::string& serialize) {
    const auto r = Run(tool,
                       "--name=s --filename=f --size=64k --rw=randwrite --norandommap --bs=4k "
                       "--ioengine=libaio --direct=1 --iodepth=32 --runtime=1 --time_based "
                       "--serialize_overlap=" +
                           serialize,
                       "truncate -s 64k f && ");
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out.substr(r.out.find('{')))["jobs"][0]["iodepth_level"];
  };
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const json apart = levels(tool, "1");
    EXPECT_EQ(apart["16"].get<double>(), 0.0) << apart;
    EXPECT_EQ(apart["32"].get<double>(), 0.0) << apart;
    EXPECT_GT(apart["4"].get<double>(), 40.0) << apart;
    EXPECT_GT(levels(tool, "0")["32"].get<double>(), 95.0);
  }
}

TEST_F(RealWorldOptionsTest, VerifyOnAJobThatOnlyTrimsChecksNothingAsFio) {
  // SPDK's trim jobs inherit verify=md5 from their [global]: fio trims and verifies nothing (it
  // wrote nothing). fio 3.33 trims only block devices: iotail alone here, on a file.
  const auto r = Run("iotail",
                     "--name=t --filename=f --size=256k --rw=trim --bs=4k --verify=md5 "
                     "--verify_backlog=1024 --trim_verify_zero=1",
                     "truncate -s 256k f && ");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["jobs"][0]["trim"]["total_ios"].get<uint64_t>(), 64u);
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 0u);
  // With writes, still refused.
  EXPECT_EQ(Run("iotail", "--name=t --filename=f --size=256k --rw=trimwrite --verify=md5").status,
            2);
}

TEST_F(RealWorldOptionsTest, WhatAJobsOptionsMeanTogetherIsNamedByItsSection) {
  // pbench's log_avg_msec=1000 with log_hist_msec=10000: the error names the job and its section.
  const std::filesystem::path file = dir_ / "pbench.fio";
  std::ofstream(file) << "[global]\nfilename=f\nsize=256k\n\n[first]\nrw=write\n\n[second]\n"
                         "rw=read\nwrite_hist_log=h\nlog_hist_msec=10000\nlog_avg_msec=1000\n";
  const auto r = Run("iotail", file.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(file.string() + ":8: job 'second': --log_avg_msec: 1000 differs"),
            std::string::npos)
      << r.err;
}

}  // namespace run_realworld_options_test
