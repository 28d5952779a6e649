// Issue 37: figures and files that were not fio's on the same job (fio 3.33 where installed):
// a job that ends inside its ramp, wait_for jobs' page cache, the verify read-back's engine and
// depth, lat_ns in rate-limited jobs, the value logs' stamps, and the smaller ones.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_fio_meaning_test {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The JSON document of a run's stdout (null when there is none).
json Doc(const std::string& out) {
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return json();
  return json::parse(out.substr(brace), nullptr, false);
}

// The job named `name` of a run's JSON (null when missing).
json JobNamed(const json& doc, const std::string& name) {
  if (!doc.is_object()) return json();
  for (const json& j : doc["jobs"]) {
    if (j["jobname"] == name) return j;
  }
  return json();
}

// The lines of a fio value log, as (time, value) pairs.
std::vector<std::pair<uint64_t, uint64_t>> LogLines(const fs::path& path) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    uint64_t t = 0, v = 0;
    char comma = 0;
    if (ss >> t >> comma >> v) out.emplace_back(t, v);
  }
  return out;
}

class FioMeaningTest : public FioSemanticsTest {
 protected:
  // Runs `tool` on `args` (exit status 0 expected): its JSON document.
  json RunJson(const std::string& tool, const std::string& args) {
    const CommandResult r = Run(tool, args);
    EXPECT_EQ(r.status, 0) << tool << ": " << r.err;
    return Doc(r.out);
  }
};

// Item 1: fio never resets the statistics of a job that ends inside its ramp_time: its I/Os and
// bytes are reported (no latency samples), and the job is in the text.
TEST_F(FioMeaningTest, AJobThatEndsInsideItsRampReportsItsIoAsFio) {
  const std::string job =
      JobFile("r.fio", "[r]\nfilename=f\nsize=16m\nbs=1m\nrw=read\nramp_time=2\n");
  const CommandResult text = Run("iotail", "--output-format=normal " + job);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("r: (groupid=0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("read: IOPS="), std::string::npos) << text.out;
  const json ours = JobNamed(RunJson("iotail", job), "r");
  ASSERT_TRUE(ours.is_object());
  EXPECT_EQ(ours["read"]["io_bytes"], 16u << 20);
  EXPECT_EQ(ours["read"]["total_ios"], 16);
  EXPECT_EQ(ours["read"]["clat_ns"]["N"], 0);       // fio takes no latency sample in the ramp
  EXPECT_LT(ours["job_runtime"].get<int>(), 1900);  // from the start to the job's end
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  ExpectSameCounts(job);
}

// Item 2: a wait_for job's files are opened, and their cached pages dropped, when it starts (after
// the job it waits for), so its reads are the device's, not the page cache the writer left.
TEST_F(FioMeaningTest, AWaitForJobDropsTheCacheWhenItStartsAsFio) {
  const std::string job = JobFile("wf.fio",
                                  "[global]\nfilename=data\nsize=32m\n[w]\nrw=write\nbs=1m\n"
                                  "end_fsync=1\n[r]\nwait_for=w\nrw=randread\nbs=4k\n");
  const json ours = JobNamed(RunJson("iotail", job), "r");
  ASSERT_TRUE(ours.is_object());
  ASSERT_EQ(ours["read"]["total_ios"], 8192);
  const double clat = ours["read"]["clat_ns"]["mean"].get<double>();
  // A read from the page cache takes 1-2 us here, one from the disk tens of us at least.
  EXPECT_GT(clat, 10'000) << "the reader read the writer's page cache";
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  const json theirs = JobNamed(RunJson("fio", job), "r");
  ASSERT_TRUE(theirs.is_object());
  EXPECT_EQ(ours["read"]["total_ios"], theirs["read"]["total_ios"]);
  EXPECT_GT(clat, theirs["read"]["clat_ns"]["mean"].get<double>() / 10);
}

// Item 3: the verify read-back goes through the job's engine at its iodepth, as fio's: slat for
// every read (libaio), and completion latencies of a queue of 16, not of one pread at a time.
TEST_F(FioMeaningTest, TheVerifyReadBackRunsOnTheJobsEngineAtItsDepthAsFio) {
  const std::string job = JobFile("v.fio",
                                  "[v]\nfilename=f\nsize=16m\nrw=write\nbs=4k\nverify=crc32c\n"
                                  "ioengine=libaio\niodepth=16\ndirect=1\n");
  const json ours = JobNamed(RunJson("iotail", job), "v");
  ASSERT_TRUE(ours.is_object());
  const json& read = ours["read"];
  EXPECT_EQ(read["total_ios"], 4096);
  EXPECT_EQ(read["slat_ns"]["N"], 4096);
  EXPECT_EQ(read["lat_ns"]["N"], 4096);
  EXPECT_EQ(ours["error"], 0);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  const json theirs = JobNamed(RunJson("fio", job), "v");
  ASSERT_TRUE(theirs.is_object());
  EXPECT_EQ(read["total_ios"], theirs["read"]["total_ios"]);
  EXPECT_EQ(read["slat_ns"]["N"], theirs["read"]["slat_ns"]["N"]);
  // At depth 16 a read waits behind the others: its clat is fio's within a wide margin (the
  // machine is shared; slat's N above is what tells the engine's read-back from a pread's).
  const double mine = read["clat_ns"]["mean"].get<double>();
  const double fio = theirs["read"]["clat_ns"]["mean"].get<double>();
  EXPECT_GT(mine, fio / 5) << "ours " << mine << " ns, fio's " << fio << " ns";
  EXPECT_LT(mine, fio * 5) << "ours " << mine << " ns, fio's " << fio << " ns";
}

// Item 5: in a rate-limited job the device cannot keep up with, fio's lat_ns is still start to
// completion (slat + clat); iotail's latency from each I/O's intended start is its own key,
// iotail_olat_ns, and the text's olat line.
TEST_F(FioMeaningTest, RateLimitedLatNsKeepsFiosMeaningAndOlatIsIotailsOwnKey) {
  const std::string job = JobFile("l.fio",
                                  "[l]\nfilename=f\nsize=16m\nrw=randread\nbs=4k\ndirect=1\n"
                                  "ioengine=libaio\nrate_iops=200000\nruntime=1\ntime_based\n");
  const json doc = RunJson("iotail", job);
  const json ours = JobNamed(doc, "l");
  ASSERT_TRUE(ours.is_object());
  const json& read = ours["read"];
  const double lat = read["lat_ns"]["mean"].get<double>();
  const double sum = read["slat_ns"]["mean"].get<double>() + read["clat_ns"]["mean"].get<double>();
  EXPECT_NEAR(lat, sum, sum * 0.01 + 2);                // lat = slat + clat, I/O by I/O
  EXPECT_FALSE(read["lat_ns"].contains("percentile"));  // fio's: without lat_percentiles
  ASSERT_TRUE(read.contains("iotail_olat_ns"));
  // 200,000 IOPS asked of a disk that does far fewer: the backlog grows all run long.
  EXPECT_GT(read["iotail_olat_ns"]["mean"].get<double>(), 100 * lat);
  EXPECT_TRUE(read["iotail_olat_ns"].contains("percentile"));
  const CommandResult text = Run("iotail", "--output-format=normal " + job);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("    olat ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("olat percentiles ("), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(" lat percentiles ("), std::string::npos) << text.out;
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  const json theirs = JobNamed(RunJson("fio", job), "l");
  ASSERT_TRUE(theirs.is_object());
  const double fio_lat = theirs["read"]["lat_ns"]["mean"].get<double>();
  // The same quantity: within a wide margin on a shared machine, where the intended start's
  // latency was 10,000 times fio's.
  EXPECT_LT(lat, 10 * fio_lat) << "ours " << lat << " ns, fio's " << fio_lat << " ns";
  EXPECT_GT(lat, fio_lat / 10) << "ours " << lat << " ns, fio's " << fio_lat << " ns";
  // fio's keys of lat_ns, no more.
  std::vector<std::string> mine_keys, fio_keys;
  for (const auto& [k, v] : read["lat_ns"].items()) mine_keys.push_back(k);
  for (const auto& [k, v] : theirs["read"]["lat_ns"].items()) fio_keys.push_back(k);
  EXPECT_EQ(mine_keys, fio_keys);
}

// Item 6: the bw, iops and lat logs count from the job's start, as fio's: whole windows at
// log_avg_msec, the lat log's last line at the job's end, and no bw or iops line for the shorter
// final window.
TEST_F(FioMeaningTest, ValueLogsAreStampedFromTheStartAndEndAtTheJobsEndAsFio) {
  const std::string args =
      "--name=j --filename=f --size=8m --rw=randread --bs=4k --runtime=2300ms --time_based "
      "--write_bw_log=lg --write_iops_log=lg --write_lat_log=lg --log_avg_msec=1000";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const json job = JobNamed(RunJson(tool, args), "j");
    ASSERT_TRUE(job.is_object());
    const uint64_t runtime = job["job_runtime"].get<uint64_t>();
    const fs::path d = dir_ / tool;
    for (const char* kind : {"bw", "iops"}) {
      const auto lines = LogLines(d / (std::string("lg_") + kind + ".1.log"));
      ASSERT_EQ(lines.size(), 2u) << kind;
      EXPECT_NEAR(static_cast<double>(lines[0].first), 1000, 100) << kind;
      EXPECT_NEAR(static_cast<double>(lines[1].first), 2000, 100) << kind;
    }
    const auto lat = LogLines(d / "lg_lat.1.log");
    ASSERT_EQ(lat.size(), 3u);
    EXPECT_NEAR(static_cast<double>(lat[0].first), 1000, 100);
    EXPECT_NEAR(static_cast<double>(lat[1].first), 2000, 100);
    // At the job's end (2,300 ms; a loaded machine stretches it a little), never after it.
    EXPECT_LE(lat[2].first, runtime + 5);
    EXPECT_GE(lat[2].first + 100, runtime);
    EXPECT_GE(lat[2].first, 2250u);
  }
}

// Item 7: a size that is not a multiple of the block in a longer file: fio's loop goes on while it
// has issued less than the size, so it does one more block.
TEST_F(FioMeaningTest, ASizeNotAMultipleOfTheBlockDoesOneMoreBlockAsFio) {
  const std::string job = JobFile("s.fio", "[s]\nfilename=f\nfilesize=1m\nsize=10000\nbs=4k\n");
  const json ours = JobNamed(RunJson("iotail", job), "s");
  ASSERT_TRUE(ours.is_object());
  EXPECT_EQ(ours["read"]["total_ios"], 3);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  ExpectSameCounts(job);
}

// Item 7: fio issues fsync=N's sync before the I/O after the Nth write, so none follows the last
// write: 31 over 1,024 writes at fsync=32.
TEST_F(FioMeaningTest, TheSyncDueAfterTheLastWriteIsNotIssuedAsFio) {
  const std::string args = "--name=s --filename=sf --size=4m --bs=4k --rw=write --fsync=32";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const json job = JobNamed(RunJson(tool, args), "s");
    ASSERT_TRUE(job.is_object());
    EXPECT_EQ(job["write"]["total_ios"], 1024);
    EXPECT_EQ(job["sync"]["total_ios"], 31);
  }
}

// Item 7: JSON "elapsed" is the time since the run began, at the report, for every job, as fio's
// time since its start: two stonewalled jobs of 1 s each both say 3 (2 s and the setup, rounded
// up), not 1 each.
TEST_F(FioMeaningTest, ElapsedCountsFromTheRunsStartAsFio) {
  const std::string job = JobFile("e.fio",
                                  "[a]\nfilename=f\nsize=8m\nrw=read\nruntime=1\ntime_based\n"
                                  "[b]\nstonewall\nfilename=f\nsize=8m\nrw=read\nruntime=1\n"
                                  "time_based\n");
  const json ours = RunJson("iotail", job);
  ASSERT_TRUE(ours.is_object());
  ASSERT_EQ(ours["jobs"].size(), 2u);
  const int a = ours["jobs"][0]["elapsed"].get<int>();
  EXPECT_EQ(a, ours["jobs"][1]["elapsed"].get<int>());
  EXPECT_GE(a, 3);
  if (!HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
  const json theirs = RunJson("fio", job);
  ASSERT_TRUE(theirs.is_object());
  EXPECT_NEAR(a, theirs["jobs"][1]["elapsed"].get<int>(), 1);
}

// No fio key carries a quantity fio's would not: fio's file operation engines measure each
// operation as clat and no total latency, so lat_ns is empty, as fio's (it was clat's).
TEST_F(FioMeaningTest, FileOperationJobsHaveNoTotalLatencyAsFio) {
  const std::string job =
      JobFile("c.fio", "[c]\nioengine=filecreate\nfilesize=4k\nnrfiles=20\nfallocate=none\n");
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const json c = JobNamed(RunJson(tool, job), "c");
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["read"]["clat_ns"]["N"], 20);
    EXPECT_EQ(c["read"]["lat_ns"]["N"], 0);
    // Nor any in fio's coarse buckets (io_u_mark_latency): latency_us all 0, no text lines.
    for (const char* unit : {"latency_ns", "latency_us", "latency_ms"}) {
      for (const auto& [bucket, pct] : c[unit].items()) EXPECT_EQ(pct, 0.0) << unit << bucket;
    }
  }
  for (const std::string tool : {"iotail", "fio"}) {
    SCOPED_TRACE(tool);
    fs::remove_all(dir_ / tool);
    const CommandResult text = Run(tool, job + " --output-format=normal");
    EXPECT_NE(text.out.find("clat ("), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("  lat (usec)   :"), std::string::npos) << text.out;
  }
}

}  // namespace run_fio_meaning_test
}  // namespace iotail::testing
