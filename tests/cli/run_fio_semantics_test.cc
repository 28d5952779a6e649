// `iotail run` against fio 3.33 on the same jobs, for the rules that decide how much I/O a job does
// and where (issue 24): the page cache dropped on every wrap of a buffered time_based job
// (invalidate), fio's random map with mixed block sizes (every block once, exactly size bytes),
// the sequential rw=MODE:N gap (forwards and backwards), the null engine (no file), fio's rate_min
// check (after a settle period, over ratecycle, ending only the job that falls short), and the
// options number_ios, offset_increment, blockalign. Each test runs fio on a scratch file in its
// own directory when fio is installed (skips with the reason otherwise) and compares total_ios and
// io_bytes per direction, or checks iotail against fio's rule where the figures are timing-bound.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_fio_semantics_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using iotail::testing::Job;
using iotail::testing::Jobs;

// fio's loop_cache_invalidate: a buffered time_based job drops the region's page cache each time
// it wraps around it, so it keeps measuring the device; iotail dropped it once and then measured
// memory (1.51M I/Os in 5 s against fio's 60k on a 64 MiB file). The count is timing-bound: iotail
// must be within a factor of 3 of fio on the same 2 s job (the cached run is 10x faster or more).
TEST_F(FioSemanticsTest, BufferedTimeBasedRunDropsTheCacheOnEveryWrapAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string args =
      "--name=x --filename=f --size=64m --rw=randread --bs=4k --ioengine=libaio --iodepth=16 "
      "--runtime=2 --time_based";
  const auto [theirs, mine] = Both(args);
  ASSERT_EQ(theirs.size(), 1u);
  ASSERT_EQ(mine.size(), 1u);
  const double ratio = static_cast<double>(mine[0].reads) / static_cast<double>(theirs[0].reads);
  EXPECT_GT(ratio, 1.0 / 3) << "iotail " << mine[0] << "; fio " << theirs[0];
  EXPECT_LT(ratio, 3.0) << "iotail " << mine[0] << "; fio " << theirs[0];
  // With invalidate=0 the cache stays: iotail goes on past the first pass as fio does.
  const CommandResult cached = Run("iotail", args + " --invalidate=0");
  ASSERT_EQ(cached.status, 0) << cached.err;
  EXPECT_GT(Jobs(cached.out).at(0).reads, 16384u);
}

// fio's random map with mixed block sizes: blocks of the smallest size; an I/O starts at a random
// free block and is trimmed to the free blocks after it. One pass writes exactly size bytes and
// every block (iotail wrote 64.71 MiB and left 5,860 of 16,384 blocks untouched).
TEST_F(FioSemanticsTest, MixedBlockSizesWriteTheRegionExactlyOnceAsFio) {
  const std::string args =
      "--name=x --filename=f --size=64m --rw=randwrite --bssplit=4k/50:64k/30:1m/20 "
      "--ioengine=psync";
  const std::vector<Job> mine = Jobs(Run("iotail", args).out);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].write_bytes, 64u << 20);
  // The file was laid out with zeros and written with random data: no 4k block is zeros.
  std::ifstream in(dir_ / "iotail" / "f", std::ios::binary);
  std::vector<char> block(4096), zeros(4096, 0);
  uint64_t blocks = 0, untouched = 0;
  while (in.read(block.data(), 4096)) {
    ++blocks;
    untouched += block == zeros;
  }
  EXPECT_EQ(blocks, 16384u);
  EXPECT_EQ(untouched, 0u);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  const CommandResult fio = Run("fio", args);
  ASSERT_EQ(fio.status, 0) << fio.err;
  EXPECT_EQ(Jobs(fio.out).at(0).write_bytes, mine[0].write_bytes);
  // bsrange and reads too; a second loop is a second pass.
  ExpectSameBytes(
      "--ioengine=psync --filename=g --size=8m --name=w --rw=randwrite --bsrange=4k-64k "
      "--name=r --rw=randread --bssplit=4k/50:64k/50 --loops=2");
}

// fio's get_next_seq_offset: each I/O starts where the last one ended plus N; the pass over the
// file ends after an I/O that reaches its end, or when the next offset is past the region; a
// position past the file's end wraps to the start (forwards) and one below the start to the
// region's end + N (backwards), the job then ending at size bytes (iotail read each offset of
// rw=read:8k three times: 4,096 I/Os against fio's 1,366).
TEST_F(FioSemanticsTest, SequentialGapCountsAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string common = "--ioengine=psync --bs=4k --name=x --filename=f ";
  ExpectSameCounts(common + "--size=16m --rw=read:8k");  // 1,366
  ExpectSameCounts(common + "--size=20k --rw=read:8k");  // wraps: 5
  ExpectSameCounts(common + "--size=64k --rw=read:-8k");
  ExpectSameCounts(common + "--size=1m --rw=write:-12k");
  ExpectSameCounts(common + "--size=16m --rw=read:8k --loops=2");
  ExpectSameCounts(common + "--size=16m --rw=read:8k --io_size=32m");
}

// The offsets themselves, from fio's write_iolog and from iotail's pread calls (strace).
TEST_F(FioSemanticsTest, SequentialGapOffsetsAsFiosIolog) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  if (iotail::testing::Capture("command -v strace >/dev/null").status != 0) {
    GTEST_SKIP() << "strace not installed (needed to see iotail's offsets)";
  }
  for (const std::string job :
       {"--size=64k --rw=read:-8k", "--size=20k --rw=read:8k", "--size=256k --rw=read:12k",
        "--offset=32k --size=32k --rw=read:-8k"}) {
    SCOPED_TRACE(job);
    fs::remove_all(dir_ / "fio");
    fs::remove_all(dir_ / "iotail");
    const std::string args = "--ioengine=psync --bs=4k --name=x --filename=f " + job;
    ASSERT_EQ(Run("fio", args + " --write_iolog=iolog").status, 0);
    std::vector<uint64_t> theirs;
    {
      std::ifstream log(dir_ / "fio" / "iolog");
      const std::regex read(R"(f read (\d+) 4096)");
      std::smatch m;
      for (std::string line; std::getline(log, line);) {
        if (std::regex_search(line, m, read)) theirs.push_back(std::stoull(m[1]));
      }
    }
    ASSERT_FALSE(theirs.empty());
    const CommandResult ours =
        Run("iotail", args, "strace -f -qq -e trace=pread64 -o " + (dir_ / "trace").string() + " ");
    ASSERT_EQ(ours.status, 0) << ours.err;
    std::vector<uint64_t> mine;
    {
      std::ifstream trace(dir_ / "trace");
      const std::regex pread(R"(pread64\(\d+, .*, 4096, (\d+)\) = 4096)");
      std::smatch m;
      for (std::string line; std::getline(trace, line);) {
        if (std::regex_search(line, m, pread)) mine.push_back(std::stoull(m[1]));
      }
    }
    EXPECT_EQ(mine, theirs);
  }
}

// fio's null engine is diskless: it opens no file (a named one need not exist) and its region is
// --size (iotail laid out a 1 GiB file for --size=1g).
TEST_F(FioSemanticsTest, NullEngineOpensNoFileAsFio) {
  const std::string args =
      "--ioengine=null --size=1g --bs=64k --name=x --filename=no/such/dir/f --rw=randread "
      "--name=y --rw=write --numjobs=2 --size=16m";
  const CommandResult ours = Run("iotail", args);
  ASSERT_EQ(ours.status, 0) << ours.err;
  EXPECT_FALSE(fs::exists(dir_ / "iotail" / "no"));
  EXPECT_FALSE(fs::exists(dir_ / "iotail" / "y.0.0"));
  EXPECT_FALSE(fs::exists(dir_ / "iotail" / "y.1.0"));
  const std::vector<Job> mine = Jobs(ours.out);
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].read_bytes, 1u << 30);
  EXPECT_EQ(mine[1].write_bytes, 16u << 20);
  // fio's rule: without --size there is no region.
  EXPECT_EQ(Run("iotail", "--ioengine=null --name=x --rw=read").status, 2);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  ExpectSameCounts(args);
}

// fio's rate_min/rate_iops_min (__check_min_rate): checked at completions from 2 s after the job's
// start (after its ramp), over at least ratecycle since the last check; a clone below its floor
// ends with EIO and only it; the others run on. (iotail checked every full interval from the first
// one and stopped the whole run.) The rule in detail (the settle from the ramp's end, a floor met
// between completions, bytes and IOPS) is the worker's, tested in microseconds on a fake engine's
// clock (tests/engine/worker_passes_test.cc); this run checks the options' wiring against fio, with
// a short ratecycle so that the slow job ends 2.25 s in.
TEST_F(FioSemanticsTest, RateMinEndsOnlyTheJobBelowItAfterTheSettleAsFio) {
  // thinktime=10ms: about 95 IOPS, below 1000.
  const std::string args =
      "--ioengine=null --size=1g --rw=randread --runtime=3 --time_based --thinktime=10ms "
      "--name=slow --rate_iops_min=1000 --ratecycle=250 --name=ok";
  ExpectBoth(args, 1, [](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 2u) << r.out;
    EXPECT_EQ(jobs[0].error, 5);           // EIO
    EXPECT_GE(jobs[0].runtime_ms, 2200u);  // 2 s settle + 250 ms ratecycle
    EXPECT_LE(jobs[0].runtime_ms, 2900u);
    EXPECT_EQ(jobs[1].error, 0);
    EXPECT_GE(jobs[1].runtime_ms, 2900u);
    EXPECT_NE(r.err.find("slow: rate_iops_min=1000 not met, got "), std::string::npos) << r.err;
  });
}

// fio's exitall: once any job sets it, a clone that ends ends the jobs of its reporting group
// (exit_what=group), or every job running with it (exit_what=all); a job of another group runs on.
TEST_F(FioSemanticsTest, ExitallEndsTheGroupOrEveryJobAsFio) {
  const std::string jobs =
      "--ioengine=null --rw=randread --bs=4k --name=short --size=16m --exitall --name=long "
      "--size=1g --runtime=2 --time_based --name=other --size=1g --runtime=2 --time_based "
      "--new_group";
  for (const std::string what : {"group", "all"}) {
    SCOPED_TRACE(what);
    // Before the first --name: every job's (given after a job, it would be that job's only).
    ExpectBoth("--exit_what=" + what + " " + jobs, 0,
               [&](const std::vector<Job>& j, const auto& r) {
                 ASSERT_EQ(j.size(), 3u) << r.out;
                 EXPECT_LT(j[0].runtime_ms, 1000u) << j[0];
                 EXPECT_LT(j[1].runtime_ms, 1000u) << j[1];  // ended with `short`
                 if (what == "group") {
                   EXPECT_GE(j[2].runtime_ms, 1900u) << j[2];
                 } else {
                   EXPECT_LT(j[2].runtime_ms, 1000u) << j[2];
                 }
               });
  }
}

TEST_F(FioSemanticsTest, RateFloorsAreRefusedWhereFioRefusesThem) {
  // fio's rules: one kind of floor, none above the rate.
  EXPECT_EQ(Run("iotail", "--name=a --size=1m --rate=1m --rate_min=2m").status, 2);
  EXPECT_EQ(Run("iotail", "--name=a --size=1m --rate_min=1m --rate_iops_min=10").status, 2);
}

// number_ios ends the job after N I/Os (x loops; not extended past size; ignored with time_based
// in fio 3.33); offset_increment starts clone i at offset + i x increment; blockalign puts random
// offsets on its grid (and drops the random map: with replacement).
TEST_F(FioSemanticsTest, NumberIosOffsetIncrementAndBlockAlignAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  ExpectSameCounts(
      "--ioengine=psync --bs=4k --size=1m --filename=f --name=a --rw=randread --number_ios=100 "
      "--name=b --rw=read --number_ios=100 --loops=3 --name=c --rw=read --number_ios=1000 "
      "--name=d --rw=randread --ba=8k --name=e --rw=randread --blockalign=4k");
  // Three clones of 64 KiB, 1 MiB apart, in one new file: fio lays it out to 2 MiB + 64 KiB and
  // writes [0, 64k), [1m, 1m + 64k), [2m, 2m + 64k). (A new file: fio would unlink the 1 MiB
  // 'f' above and make it again; iotail extends a short file, keeping what it holds.)
  const std::string args =
      "--ioengine=psync --bs=4k --name=w --filename=g --rw=write --size=64k --numjobs=3 "
      "--offset_increment=1m";
  ExpectSameCounts(args);
  for (const char* tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    const fs::path f = dir_ / tool / "g";
    EXPECT_EQ(fs::file_size(f), (2u << 20) + 65536);
    std::ifstream in(f, std::ios::binary);
    std::vector<char> block(4096), zeros(4096, 0);
    for (uint64_t off = 0; in.read(block.data(), 4096); off += 4096) {
      const bool written = off % (1 << 20) < 65536;
      EXPECT_EQ(block != zeros, written) << "at " << off;
    }
  }
}

// verify_backlog=16: the writes are read back 16 at a time as they complete, each block once in
// all (fio keeps only the rest for the end), with fio's other checksums; the reads are the job's.
TEST_F(FioSemanticsTest, VerifyBacklogReadsEachBlockBackOnceAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  for (const char* kind : {"crc64", "xxhash", "crc32c"}) {
    SCOPED_TRACE(kind);
    ExpectSameCounts(std::string("--name=w --ioengine=psync --filename=f --rw=randwrite --bs=4k ") +
                     "--size=1m --verify_backlog=16 --verify=" + kind);
    ExpectSameCounts(std::string("--name=w --ioengine=psync --filename=f --rw=write --bs=4k ") +
                     "--size=1m --verify_backlog=10 --verify_backlog_batch=5 --verify=" + kind);
  }
}

// fio's SHA checksums (GNU Nettle's): a write job reads its blocks back after its writes, or as
// they complete, as fio does with the same checksum.
TEST_F(FioSemanticsTest, ShaVerifyReadsBackAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  for (const char* kind : {"sha1", "sha256", "sha512", "sha3-256", "sha3-512"}) {
    SCOPED_TRACE(kind);
    ExpectSameCounts(std::string("--name=w --ioengine=psync --filename=f --rw=randwrite --bs=4k ") +
                     "--size=512k --verify=" + kind);
    ExpectSameCounts(std::string("--name=w --ioengine=psync --filename=f --rw=write --bs=8k ") +
                     "--size=512k --verify_backlog=8 --verify=" + kind);
  }
}

// verify_dump: a bad block is written out as read and as it should be, named as fio names them.
TEST_F(FioSemanticsTest, VerifyDumpWritesTheBadBlockOut) {
  const std::string job = "--name=v --ioengine=psync --filename=f --rw=read --bs=4k --size=64k ";
  ASSERT_EQ(Run("iotail",
                "--name=w --ioengine=psync --filename=f --rw=write --bs=4k --size=64k "
                "--verify=crc32c")
                .status,
            0);
  {
    std::fstream f(dir_ / "iotail" / "f", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5 * 4096 + 100);
    f.write("CORRUPT", 7);
  }
  const auto r = Run("iotail", job + "--verify=crc32c --verify_dump=1");
  EXPECT_EQ(r.status, 1) << r.err;
  const fs::path received = dir_ / "iotail" / "f.20480.received";
  const fs::path expected = dir_ / "iotail" / "f.20480.expected";
  ASSERT_TRUE(fs::exists(received)) << r.err;
  ASSERT_TRUE(fs::exists(expected)) << r.err;
  const std::string got = iotail::testing::ReadFile(received);
  const std::string want = iotail::testing::ReadFile(expected);
  ASSERT_EQ(got.size(), 4096u);
  ASSERT_EQ(want.size(), 4096u);
  EXPECT_EQ(got.substr(100, 7), "CORRUPT");
  EXPECT_NE(want.substr(100, 7), "CORRUPT");
  EXPECT_EQ(got.substr(0, 100), want.substr(0, 100));
  EXPECT_NE(r.err.find("received data dumped as f.20480.received"), std::string::npos) << r.err;
  EXPECT_EQ(Run("iotail", job + "--verify_dump=1").status, 2);  // only with --verify
  // A dump never goes through a link (issue 38): a planted symlink, to a victim or dangling,
  // is refused and said; the victim keeps its bytes and a dangling link's target is not made.
  const fs::path victim = dir_ / "victim";
  { std::ofstream(victim) << "precious"; }
  fs::remove(received);
  fs::remove(expected);
  fs::create_symlink(victim, received);
  fs::create_symlink(dir_ / "made-by-the-dump", expected);
  const auto linked = Run("iotail", job + "--verify=crc32c --verify_dump=1");
  EXPECT_EQ(linked.status, 1) << linked.err;
  EXPECT_EQ(iotail::testing::ReadFile(victim), "precious");
  EXPECT_FALSE(fs::exists(dir_ / "made-by-the-dump"));
  EXPECT_NE(linked.err.find("received data not dumped"), std::string::npos) << linked.err;
  EXPECT_NE(linked.err.find("expected data not dumped"), std::string::npos) << linked.err;
}

// fio's falloc and ftruncate engines: no data moves, the file's allocation or size changes; the
// I/Os count as fio counts them, and the file ends as fio leaves it.
TEST_F(FioSemanticsTest, FallocAndFtruncateEnginesAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string falloc =
      "--name=a --ioengine=falloc --filename=f --bs=64k --size=1m --fallocate=none --rw=write";
  ExpectSameCounts(falloc);
  for (const std::string tool : {"fio", "iotail"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / tool / "f").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 1 << 20) << tool;
    EXPECT_GE(st.st_blocks * 512, 1 << 20) << tool;  // allocated, not written
  }
  const std::string truncate =
      "--name=t --ioengine=ftruncate --filename=g --bs=4k --size=64k --fallocate=none --rw=write";
  ExpectSameCounts(truncate);
  for (const std::string tool : {"fio", "iotail"}) {
    EXPECT_EQ(fs::file_size(dir_ / tool / "g"), 60u << 10) << tool;  // the last write's offset
  }
  // Reads are fallocate(KEEP_SIZE) for falloc, an error (EINVAL) for ftruncate, in both.
  ExpectSameCounts("--name=r --ioengine=falloc --filename=f --bs=64k --size=1m --rw=read");
  EXPECT_EQ(Run("iotail",
                "--name=w --ioengine=falloc --filename=f --size=64k --rw=write "
                "--verify=crc32c")
                .status,
            2);
}

// time_based without a runtime: fio warns and turns it off, so the job runs to its size (iotail
// used to refuse the job; fio's examples/e4defrag2.fio has one).
TEST_F(FioSemanticsTest, TimeBasedWithoutARuntimeRunsToTheSizeAsFio) {
  ExpectSameCounts("--name=t --filename=f --size=1m --bs=64k --rw=write --time_based");
  const CommandResult r = Run("iotail", "--name=t --filename=f --size=1m --bs=64k --time_based");
  EXPECT_NE(r.err.find("--time_based needs a --runtime"), std::string::npos) << r.err;
}

}  // namespace run_fio_semantics_test
