// Job files as fio 3.33 reads them, each run under fio and iotail on the same job (issue 37,
// round 3): arithmetic written without parentheses is read as fio reads it (its leading number)
// and said so, a bare write_bw_log (and the other log options) names the logs after the job, and
// a job's filename= adds to the files its [global] named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace iotail::testing {
namespace run_fio_round3_test {

namespace fs = std::filesystem;

class FioRound3Test : public FioSemanticsTest {
 protected:
  // {name, size} of the files `tool` left in its directory (its captured stderr aside).
  std::set<std::pair<std::string, uintmax_t>> FilesLeft(const std::string& tool,
                                                        bool sizes = true) {
    std::set<std::pair<std::string, uintmax_t>> out;
    for (const auto& e : fs::directory_iterator(dir_ / tool)) {
      const std::string name = e.path().filename().string();
      if (name != "stderr") out.emplace(name, sizes ? fs::file_size(e.path()) : 0);
    }
    return out;
  }
};

// The share of I/Os issued at each depth ("1", "2", "4", ...) of the first job of a summary.
nlohmann::json DepthLevels(const std::string& out) {
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return {};
  const nlohmann::json j = nlohmann::json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded() || j["jobs"].empty()) return {};
  return j["jobs"][0]["iodepth_level"];
}

// fio 3.33 evaluates arithmetic only in parentheses or after a $ variable: iodepth=2*4 runs at
// depth 2, size=1m*2 does 1 MiB, bs=4k+4k and 4096*2 are 4 KiB, 2*4k is 2 bytes. iotail reads
// the same and says so, naming the line and what fio reads.
TEST_F(FioRound3Test, ArithmeticWithoutParenthesesIsReadAsFioReadsItAndSaidSo) {
  const std::string job = JobFile(
      "arith.fio",
      "[x]\nfilename=d\nsize=1m*2\nbs=4k+4k\nrw=write\nioengine=libaio\ndirect=1\niodepth=2*4\n");
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 1u) << r.err;
    EXPECT_EQ(jobs[0].write_bytes, 1u << 20);
    EXPECT_EQ(jobs[0].writes, 256u);
    const nlohmann::json levels = DepthLevels(r.out);
    ASSERT_TRUE(levels.contains("2")) << levels;
    EXPECT_GT(levels["2"].get<double>(), 90.0) << levels;
    EXPECT_EQ(levels["4"].get<double>(), 0.0) << levels;
  });
  const CommandResult ours = Run("iotail", job);
  for (const std::string said :
       {"arith.fio:3: --size: '1m*2' is arithmetic without parentheses: fio 3.33 reads only its "
        "leading number, 1m, and so does iotail (write (1m*2) in a job file for the result)",
        "arith.fio:4: --bs: '4k+4k'", "arith.fio:8: --iodepth: '2*4'"}) {
    EXPECT_NE(ours.err.find(said), std::string::npos) << ours.err;
  }
  // The number before the operator, with the suffix right after it: 2*4k is 2 bytes, 4096*2 and
  // 4k*2 are 4 KiB.
  for (const auto& [bs, writes] : {std::pair{"2*4k", 32768u}, {"4096*2", 16u}, {"4k*2", 16u}}) {
    SCOPED_TRACE(bs);
    ExpectBoth(std::string("--name=x --filename=e --size=64k --rw=write --bs=") + bs, 0,
               [&](const std::vector<Job>& jobs, const CommandResult& r) {
                 ASSERT_EQ(jobs.size(), 1u) << r.err;
                 EXPECT_EQ(jobs[0].writes, writes);
               });
  }
  // A time in fio's get_mult_time: the unit after the leading digits, '+' and '-', taken only
  // when it is all the rest (1+1s: 1 s) or us/ms (1ms*2: 1 ms); otherwise fio's microsecond
  // (1s*2 is 1 us: a time_based job that ends at once).
  ExpectBoth("--name=x --filename=t --size=1m --rw=write --time_based --runtime=1s*2", 0,
             [&](const std::vector<Job>& jobs, const CommandResult& r) {
               ASSERT_EQ(jobs.size(), 1u) << r.err;
               EXPECT_LT(jobs[0].runtime_ms, 50u);
             });
  const CommandResult times = Run("iotail",
                                  "--name=x --filename=t --size=1m --runtime=1s*2 --ramp_time=1+1s "
                                  "--thinktime=1ms*2 --startdelay=2*1s --parse-only");
  EXPECT_EQ(times.status, 0) << times.err;
  for (const std::string said : {"--runtime: '1s*2' is arithmetic without parentheses: fio 3.33 "
                                 "reads only its leading number, 1us,",
                                 "--ramp_time: '1+1s' is arithmetic without parentheses: fio "
                                 "3.33 reads only its leading number, 1s,",
                                 "--thinktime: '1ms*2' is arithmetic without parentheses: fio "
                                 "3.33 reads only its leading number, 1ms,",
                                 "--startdelay: '2*1s' is arithmetic without parentheses: fio "
                                 "3.33 reads only its leading number, 2,"}) {
    EXPECT_NE(times.err.find(said), std::string::npos) << times.err;
  }
  // A fraction before the operator: fio reads 1 of 1.5k*2, which iotail does not read of 1.5k.
  const CommandResult fraction = Run("iotail", "--name=x --filename=d --size=1.5k*2 --parse-only");
  EXPECT_EQ(fraction.status, 2);
  EXPECT_NE(fraction.err.find("--size: '1.5k*2' is arithmetic without parentheses, which fio 3.33 "
                              "does not evaluate"),
            std::string::npos)
      << fraction.err;
  // Sizes with a dash stay ranges.
  EXPECT_EQ(Run("iotail", "--name=x --filename=d --size=1m --bsrange=4k-8k --parse-only").status,
            0);
}

// A bare write_bw_log (or write_lat_log, write_iops_log, write_hist_log), or one given as
// write_bw_log= in a job file, names the logs after the job, as fio's make_log_name; on the
// command line both tools want a prefix.
TEST_F(FioRound3Test, BareLogOptionsNameTheLogsAfterTheJobAsFio) {
  const std::string job = JobFile(
      "logs.fio",
      "[global]\nsize=1m\nbs=4k\nlog_avg_msec=100\nwrite_bw_log\n[myjob]\nfilename=d\nrw=write\n"
      "write_lat_log\nwrite_iops_log=\nwrite_hist_log\n[second]\nname=renamed\nfilename=d\n"
      "rw=read\nstonewall\n");
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 2u) << r.err;
  });
  const auto fio = FilesLeft("fio", false);
  EXPECT_TRUE(fio.contains({"myjob_bw.1.log", 0}));
  EXPECT_TRUE(fio.contains({"renamed_bw.2.log", 0}));
  EXPECT_EQ(FilesLeft("iotail", false), fio);
  for (const std::string tool : {"iotail", "fio"}) {
    SCOPED_TRACE(tool);
    EXPECT_NE(Run(tool, "--name=x --filename=d --size=1m --write_bw_log=").status, 0);
  }
}

// fio makes a job's clones after the first from its section (get_new_job with the section's
// name): a name= inside the section names the first clone only, in the JSON and the text.
TEST_F(FioRound3Test, ClonesOfARenamedSectionTakeTheSectionsNameAsFio) {
  const std::string job =
      JobFile("clones.fio", "[sec]\nname=other\nfilename=d\nsize=1m\nrw=write\nbs=4k\nnumjobs=3\n");
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const CommandResult r = Run(tool, job);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> names;
    for (const Job& j : Jobs(r.out)) names.push_back(j.name);
    EXPECT_EQ(names, (std::vector<std::string>{"other", "sec", "sec"}));
  }
}

// fio adds a job's filename= to the files it has (from [global], the command line before
// --name, or earlier in its section: str_filename_cb), so [global] filename=a with [j]
// filename=b does its size over a and b (1536k: 768k each; [k] 512k over each of three).
// fileops.fio of the corpus left ops.dat and trunc.dat at 448 KiB under fio (its ftruncate job
// truncated both, to each last write's offset), 1 MiB and 960 KiB under iotail.
TEST_F(FioRound3Test, AJobsFilenameAddsToTheFilesItHasAsFio) {
  const std::string job =
      JobFile("two.fio",
              "[global]\nfilename=a.dat\nsize=1536k\nbs=64k\n[j]\nfilename=b.dat\nrw=write\n[k]\n"
              "stonewall\nfilename=c.dat:d.dat\nrw=write\n[t]\nstonewall\nioengine=ftruncate\n"
              "filename=trunc.dat\nrw=write\n");
  ExpectBoth(job, 0, [&](const std::vector<Job>& jobs, const CommandResult& r) {
    ASSERT_EQ(jobs.size(), 3u) << r.err;
    for (const Job& j : jobs) EXPECT_EQ(j.writes, 24u) << j;
  });
  const auto fio = FilesLeft("fio");
  EXPECT_TRUE(fio.contains({"b.dat", 768u << 10}));
  EXPECT_TRUE(fio.contains({"c.dat", 512u << 10}));
  EXPECT_TRUE(fio.contains({"trunc.dat", 704u << 10}));  // truncated to its last write's offset
  EXPECT_EQ(FilesLeft("iotail"), fio);
  // The same on the command line: a job's --filename after a global one.
  fs::remove_all(dir_ / "fio");
  fs::remove_all(dir_ / "iotail");
  ExpectBoth("--filename=a.dat --size=1m --bs=64k --rw=write --name=j --filename=b.dat", 0,
             [&](const std::vector<Job>& jobs, const CommandResult& r) {
               ASSERT_EQ(jobs.size(), 1u) << r.err;
               EXPECT_EQ(jobs[0].writes, 16u);
             });
  EXPECT_EQ(FilesLeft("iotail"), FilesLeft("fio"));
}

}  // namespace run_fio_round3_test
}  // namespace iotail::testing
