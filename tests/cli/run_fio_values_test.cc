// Job files as fio 3.33 reads them, each run under fio and iotail on the same job (issue 37, items
// 4, 8, 9 and 10): the default files of a job renamed by `name=` keep its section's name, reads
// past the end of a create_on_open file on an asynchronous engine are counted short and the job
// goes on, fio's value forms (an unset ${VAR}, bssplit entries without a share, rate=0; arithmetic
// without parentheses: run_fio_round3_test.cc) and the options fio 3.33 accepts that iotail
// refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_fio_values_test {

namespace fs = std::filesystem;

class FioValuesTest : public FioSemanticsTest {
 protected:
  // The size of `file` in `tool`'s directory, -1 when it is missing.
  int64_t SizeOf(const std::string& tool, const std::string& file) {
    std::error_code ec;
    const auto n = fs::file_size(dir_ / tool / file, ec);
    return ec ? -1 : static_cast<int64_t>(n);
  }
};

TEST_F(FioValuesTest, NameInsideASectionKeepsTheSectionsFileNamesAsFio) {
  const std::string job =
      JobFile("same.fio",
              "[global]\nrw=write\nbs=64k\nsize=8m\n[first]\nname=same\n[second]\nname=same\n"
              "offset=8m\n[third]\nname=same\nfilename_format=$jobname.x.$jobnum\n");
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const auto&) {
    ASSERT_EQ(jobs.size(), 3u);
    for (const Job& j : jobs) {
      EXPECT_EQ(j.name, "same");
      EXPECT_EQ(j.write_bytes, 8u << 20);
    }
  });
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) continue;
    SCOPED_TRACE(tool);
    EXPECT_EQ(SizeOf(tool, "first.0.0"), 8 << 20);
    EXPECT_EQ(SizeOf(tool, "second.0.0"), 16 << 20);
    EXPECT_EQ(SizeOf(tool, "third.x.0"), 8 << 20);
    EXPECT_EQ(SizeOf(tool, "same.0.0"), -1);
  }
}

// fio counts a read that meets the end of the file on libaio or io_uring with the bytes it
// brought, and the job goes on (a synchronous engine's is fio's "full resid" EIO:
// run_create_on_open_test.cc).
TEST_F(FioValuesTest, AsynchronousReadsPastTheEndOfACreateOnOpenFileCompleteShortAsFio) {
  for (const std::string engine : {"libaio", "io_uring"}) {
    SCOPED_TRACE(engine);
    fs::remove_all(dir_ / "iotail");
    fs::remove_all(dir_ / "fio");
    ExpectBoth(
        "--name=x --filename=c --size=16m --rw=randrw --bs=4k --create_on_open=1 --iodepth=8 "
        "--ioengine=" +
            engine,
        0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
          ASSERT_EQ(jobs.size(), 1u) << r.err;
          EXPECT_EQ(jobs[0].error, 0);
          EXPECT_EQ(jobs[0].reads + jobs[0].writes, 4096u);
          EXPECT_EQ(jobs[0].write_bytes, jobs[0].writes * 4096);
          EXPECT_LT(jobs[0].read_bytes, jobs[0].reads * 4096);  // some came back short
        });
    const CommandResult ours = Run("iotail",
                                   "--name=x --filename=c2 --size=1m --rw=read --bs=4k "
                                   "--create_on_open=1 --iodepth=8 --ioengine=" +
                                       engine);
    EXPECT_EQ(ours.status, 0) << ours.err;
    EXPECT_NE(ours.err.find("256 read(s) met the end of the file"), std::string::npos) << ours.err;
  }
}

TEST_F(FioValuesTest, AnUnsetVariableIsTheEmptyStringAsFio) {
  const std::string job = JobFile(
      "unset.fio", "[x]\nfilename=${IOTAIL_TEST_SURELY_UNSET}data\nsize=1m\nrw=write\nbs=64k\n");
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const auto&) {
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].write_bytes, 1u << 20);
  });
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) continue;
    EXPECT_EQ(SizeOf(tool, "data"), 1 << 20) << tool;
  }
}

// Entries without a percentage share what the others leave: 4k/50:64k is half and half (neither
// all 4k, 1,024 I/Os, nor all 64k, 64), 128k alone is all of them.
TEST_F(FioValuesTest, BssplitEntriesWithoutAShareSplitTheRestAsFio) {
  for (const auto& [split, low, high] :
       {std::tuple<std::string, uint64_t, uint64_t>{"128k", 32, 32},
        {"4k/50:64k", 90, 400},
        {"4k/20:8k:16k", 250, 700}}) {
    SCOPED_TRACE(split);
    // A random write job: fio's mixed job with a split per direction does not do the whole
    // amount (docs/fio-compatibility.md).
    ExpectBoth("--name=x --filename=d --size=4m --rw=randwrite --bssplit=" + split, 0,
               [&](const std::vector<Job>& jobs, const CommandResult& r) {
                 ASSERT_EQ(jobs.size(), 1u) << r.err;
                 EXPECT_EQ(jobs[0].read_bytes + jobs[0].write_bytes, 4u << 20);
                 EXPECT_GE(jobs[0].reads + jobs[0].writes, low);
                 EXPECT_LE(jobs[0].reads + jobs[0].writes, high);
               });
  }
  // Per direction: the writes' 8k shares what 64k/30 leaves.
  EXPECT_EQ(
      Run("iotail", "--name=x --filename=d --size=4m --bssplit=4k,64k/30:8k --parse-only").status,
      0);
  const CommandResult over =
      Run("iotail", "--name=x --filename=d --size=4m --bssplit=4k/70:8k/40:16k");
  EXPECT_EQ(over.status, 2);
  EXPECT_NE(over.err.find("--bssplit: the percentages given add up to 110"), std::string::npos)
      << over.err;
}

TEST_F(FioValuesTest, ARateOfZeroIsNoLimitAsFio) {
  for (const std::string rate : {"--rate_iops=0", "--rate=0", "--rate=0,0", "--rate_iops=0,"}) {
    SCOPED_TRACE(rate);
    ExpectBoth("--name=x --filename=d --size=4m --bs=4k --rw=write " + rate, 0,
               [&](const std::vector<Job>& jobs, const CommandResult& r) {
                 ASSERT_EQ(jobs.size(), 1u) << r.err;
                 EXPECT_EQ(jobs[0].writes, 1024u);
                 EXPECT_LT(jobs[0].runtime_ms, 2000u);
               });
  }
}

// The "bw_samples" of the first job's writes in a JSON summary (-1: none).
int64_t WriteBwSamples(const std::string& out) {
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return -1;
  const nlohmann::json j = nlohmann::json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded() || j["jobs"].empty()) return -1;
  return j["jobs"][0]["write"]["bw_samples"].get<int64_t>();
}

// bwavgtime and iopsavgtime: the sampling period of bw_min/.../bw_samples. iotail samples on its
// window, which they set (and with which they must agree when it is given).
TEST_F(FioValuesTest, BwavgtimeSetsTheSamplingPeriodAsFio) {
  const std::string job =
      "--name=x --filename=d --size=64m --bs=4k --rw=write --runtime=2 --time_based "
      "--bwavgtime=250 --iopsavgtime=250 --rate=4m";
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 1u) << r.err;
    const int64_t n = WriteBwSamples(r.out);
    EXPECT_GE(n, 7);  // 2 s in 250 ms samples (fio's 500 ms default would give 4)
    EXPECT_LE(n, 9);
  });
  const CommandResult differ =
      Run("iotail", "--name=x --filename=d --size=1m --bwavgtime=250 --log_avg_msec=1000");
  EXPECT_EQ(differ.status, 2);
  EXPECT_NE(differ.err.find("--bwavgtime: 250 ms differs from this job's window (1000 ms"),
            std::string::npos)
      << differ.err;
  EXPECT_EQ(
      Run("iotail", "--name=x --filename=d --size=1m --bwavgtime=250 --iopsavgtime=500").status, 2);
}

// allrandrepeat: every random choice is the same run after run, even with randrepeat=0 (here the
// mix of reads and writes).
TEST_F(FioValuesTest, AllrandrepeatRepeatsEveryRandomChoiceAsFio) {
  const std::string job =
      "--name=x --filename=d --size=4m --bs=4k --rw=randrw --randrepeat=0 --allrandrepeat=1";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) continue;
    SCOPED_TRACE(tool);
    const CommandResult a = Run(tool, job), b = Run(tool, job);
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    ASSERT_EQ(Jobs(a.out).size(), 1u);
    EXPECT_EQ(Jobs(a.out)[0].reads, Jobs(b.out)[0].reads);
  }
}

// file_service_type: the order iotail takes a job's files in is fio's sequential for a
// sequential job and fio's random for a random one; those are accepted, the others refused.
TEST_F(FioValuesTest, FileServiceTypeIsAcceptedWhereItIsIotailsOrder) {
  ExpectSameCounts(
      "--name=x --nrfiles=2 --size=2m --bs=4k --rw=read --file_service_type=sequential");
  ExpectSameCounts(
      "--name=y --nrfiles=2 --size=2m --bs=4k --rw=randread --file_service_type=random");
  ExpectSameCounts(
      "--name=z --filename=d --size=1m --bs=4k --rw=read --file_service_type=roundrobin:4");
  const CommandResult rr =
      Run("iotail", "--name=x --nrfiles=2 --size=2m --rw=read --file_service_type=roundrobin");
  EXPECT_EQ(rr.status, 2);
  EXPECT_NE(rr.err.find("--file_service_type=roundrobin: iotail finishes each file before the "
                        "next of the job's 2 files"),
            std::string::npos)
      << rr.err;
  EXPECT_EQ(Run("iotail", "--name=x --filename=d --size=1m --file_service_type=bogus").status, 2);
}

// verify_only: the blocks a write job would write are read and checked; nothing is written. Each
// tool checks its own blocks (the headers are each tool's own): good data passes, a zeroed block
// fails the job.
TEST_F(FioValuesTest, VerifyOnlyChecksWhatAnEarlierRunWroteAsFio) {
  const std::string job = "--name=v --filename=f --size=1m --bs=4k --rw=randwrite --verify=crc32c";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) continue;
    SCOPED_TRACE(tool);
    ASSERT_EQ(Run(tool, job).status, 0);
    const auto before = fs::last_write_time(dir_ / tool / "f");
    const CommandResult good = Run(tool, job + " --verify_only=1");
    EXPECT_EQ(good.status, 0) << good.err;
    ASSERT_EQ(Jobs(good.out).size(), 1u);
    EXPECT_EQ(Jobs(good.out)[0].reads, 256u);
    EXPECT_EQ(fs::last_write_time(dir_ / tool / "f"), before);
    {
      std::fstream f(dir_ / tool / "f", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(12288);
      f << std::string(4096, '\0');
    }
    EXPECT_EQ(Run(tool, job + " --verify_only=1").status, 1);
  }
  EXPECT_EQ(Run("iotail", "--name=v --filename=f --size=1m --rw=write --verify_only=1").status, 2);
}

// verify with norandommap: fio reads back each block written, once, the last write's.
TEST_F(FioValuesTest, VerifyWithNorandommapReadsBackEachWrittenBlockOnceAsFio) {
  const std::string job =
      "--name=v --filename=f --size=1m --bs=4k --rw=randwrite --verify=crc32c --norandommap "
      "--verifysort=1";
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 1u) << r.err;
    EXPECT_EQ(jobs[0].writes, 256u);
    // 256 draws of 256 blocks: about 256 * (1 - 1/e) = 162 distinct ones.
    EXPECT_GT(jobs[0].reads, 120u);
    EXPECT_LT(jobs[0].reads, 200u);
  });
  const CommandResult ours = Run("iotail", job);
  EXPECT_NE(ours.err.find("--verifysort is deprecated: fio 3.33 warns and ignores it"),
            std::string::npos)
      << ours.err;
}

}  // namespace run_fio_values_test
}  // namespace iotail::testing
