// verify in a job that mixes reads and writes, or runs time_based, without verify_backlog: fio
// 3.33 reads back the blocks each loop wrote once the loop's I/O is over (its do_io, then
// do_verify), counts them as the job's reads, and checks none of the mixed job's own reads. A
// time_based loop ends after `size` bytes issued only with the engines fio counts issued bytes
// for (libaio, io_uring, posixaio, vsync): with psync it never ends, and the runtime ends the job
// unverified. Compared with fio 3.33 on the same jobs.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_verify_mixed_test {

constexpr uint64_t kBlocks = 256;  // --size=1m --bs=4k
const std::string kJob = "--name=m --filename=f --size=1m --bs=4k --verify=md5 ";

// Every block is touched once a loop, by a read or a write; the writes are read back: a loop's
// reads are its blocks, whatever the mix drew.
TEST_F(FioSemanticsTest, MixedJobReadsBackEachLoopsWritesAsFio) {
  for (const std::string mode : {"randrw", "rw"}) {
    for (const std::string extra : {"--ioengine=psync", "--ioengine=psync --loops=2",
                                    "--ioengine=libaio --iodepth=16 --direct=1"}) {
      const uint64_t loops = extra.find("loops=2") != std::string::npos ? 2 : 1;
      SCOPED_TRACE(mode + " " + extra);
      ExpectBoth(kJob + "--rw=" + mode + " " + extra, 0, [&](const auto& jobs, const auto&) {
        ASSERT_EQ(jobs.size(), 1u);
        EXPECT_EQ(jobs[0].error, 0);
        EXPECT_EQ(jobs[0].reads, kBlocks * loops);
        EXPECT_EQ(jobs[0].read_bytes, kBlocks * loops * 4096);
        EXPECT_GT(jobs[0].writes, kBlocks * loops / 4);
        EXPECT_LT(jobs[0].writes, kBlocks * loops * 3 / 4);
        EXPECT_EQ(jobs[0].write_bytes, jobs[0].writes * 4096);
      });
    }
  }
}

// With the mix at one side the counts are the same as fio's, I/O for I/O.
TEST_F(FioSemanticsTest, MixedJobAllWritesOrAllReadsCountsAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  ExpectSameCounts(kJob + "--rw=randrw --rwmixread=0 --ioengine=psync");
  ExpectSameCounts(kJob + "--rw=rw --rwmixread=0 --ioengine=libaio --iodepth=8 --loops=2");
  ExpectSameCounts(kJob + "--rw=randrw --rwmixread=100 --ioengine=psync");
}

// time_based with psync: fio's loop never ends at size, so nothing is read back.
TEST_F(FioSemanticsTest, TimeBasedVerifyWithPsyncReadsNothingBackAsFio) {
  ExpectBoth(kJob + "--rw=randrw --rwmixread=0 --ioengine=psync --runtime=300ms --time_based", 0,
             [](const auto& jobs, const auto&) {
               ASSERT_EQ(jobs.size(), 1u);
               EXPECT_EQ(jobs[0].reads, 0u);
               EXPECT_GT(jobs[0].writes, kBlocks);  // past one loop
             });
}

// time_based with libaio: loops of `size` bytes, each read back before the next; the runtime
// ends the last loop (or its read-back) where it is.
TEST_F(FioSemanticsTest, TimeBasedVerifyWithLibaioReadsBackEveryLoopAsFio) {
  for (const std::string mode : {"randwrite", "randrw --rwmixread=0"}) {
    SCOPED_TRACE(mode);
    ExpectBoth(
        kJob + "--rw=" + mode + " --ioengine=libaio --iodepth=8 --runtime=400ms --time_based", 0,
        [](const auto& jobs, const auto&) {
          ASSERT_EQ(jobs.size(), 1u);
          EXPECT_EQ(jobs[0].error, 0);
          EXPECT_GE(jobs[0].reads, kBlocks);  // at least the first loop's
          EXPECT_LE(jobs[0].reads, jobs[0].writes);
          EXPECT_LE(jobs[0].writes - jobs[0].reads, 2 * kBlocks);
        });
  }
}

// Clones writing one file over each other: a block another clone wrote over fails the read-back
// (fio's header seed check), in a write job and in a mixed one. (fio exits with the number of
// failed jobs, iotail with 1.)
TEST_F(FioSemanticsTest, ClonesSharingAFileFailTheirReadBackAsFio) {
  for (const std::string mode : {"randwrite", "randrw"}) {
    for (const std::string tool : {"iotail", "fio"}) {
      if (tool == "fio" && !HaveFio()) continue;
      SCOPED_TRACE(tool + " " + mode);
      // 4 MiB: long enough that the clones run together even on a loaded machine (one that ran
      // alone from its first write to its last read-back would find only its own blocks).
      const CommandResult r =
          Run(tool,
              "--name=m --filename=f --size=4m --bs=4k --verify=md5 --rw=" + mode + " --numjobs=2");
      EXPECT_NE(r.status, 0);
      const auto jobs = Jobs(r.out);
      ASSERT_EQ(jobs.size(), 2u) << r.out;
      int failed = 0;
      for (const Job& j : jobs) {
        EXPECT_TRUE(j.error == 0 || j.error == 84) << j;  // EILSEQ
        failed += j.error == 84;
      }
      EXPECT_GE(failed, 1);
    }
  }
}

// A loop that may write a block twice is refused: fio's own check fails on such a block.
TEST_F(FioSemanticsTest, MixedVerifyWritingABlockTwiceIsRefused) {
  const CommandResult r = Run("iotail", kJob + "--rw=randrw --norandommap");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--verify"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("norandommap"), std::string::npos) << r.err;
}

}  // namespace run_verify_mixed_test
}  // namespace iotail::testing
