// The plan of each rank of an iotail-mpi job (mpi/rank_plan.h), as every rank reads it: the command
// line and job files through the option table with iotail-mpi's rows and the rank's {rank} and
// {host}, then the rank's transform, then PlanRun. No two ranks may write the same file, whether
// the setting comes from the command line or from a job file; the cluster's log takes the job
// file's name and period.
#include "mpi/rank_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../test_util.h"
#include "cli/option_table.h"
#include "cli/run_assembly.h"
#include "mpi/mpi_options.h"
#include "stats/core/errors.h"

namespace iotail::mpi {
namespace rank_plan_test {

namespace fs = std::filesystem;

cli::RunPlan Parsed(std::vector<std::string> args, int rank, const std::string& host = "h") {
  args.insert(args.begin(), "run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cli::ParseContext context;
  context.driver = MpiOptionGroups();
  context.substitutions = {{"{rank}", std::to_string(rank)}, {"{host}", host}};
  return cli::ParseRunPlan(argv, context);
}

// Every file the rank's planned run would write: targets and every log prefix.
std::set<std::string> Writes(const cli::PlannedRun& run) {
  std::set<std::string> out;
  for (const engine::JobSpec& s : run.Specs()) {
    for (const std::string& f : s.filenames) out.insert("target " + f);
    for (const std::string* p : {&s.logs.write_hist_log, &s.logs.write_bw_log,
                                 &s.logs.write_iops_log, &s.logs.write_lat_log}) {
      if (!p->empty()) out.insert("log " + *p);
    }
  }
  return out;
}

class RankPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_rank_plan"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string JobFile(const std::string& text) {
    const fs::path path = dir_ / "job.fio";
    std::ofstream(path) << text;
    return path.string();
  }
  // The files of ranks 0 and 1 share nothing.
  void ExpectDisjoint(const std::vector<std::string>& args, size_t at_least) {
    std::ostringstream notes;
    const cli::PlannedRun r0 = cli::PlanRun(RankPlan(Parsed(args, 0), 0), notes);
    const cli::PlannedRun r1 = cli::PlanRun(RankPlan(Parsed(args, 1), 1), notes);
    const std::set<std::string> w0 = Writes(r0), w1 = Writes(r1);
    EXPECT_GE(w0.size(), at_least);
    for (const std::string& w : w0) EXPECT_EQ(w1.count(w), 0u) << "both ranks write " << w;
  }
  fs::path dir_;
};

TEST_F(RankPlanTest, RankAndHostAreReplacedOnTheCommandLineAndInJobFiles) {
  const cli::RunPlan cl = Parsed({"--ioengine=null", "--filename=t.{rank}:{host}", "--size=1m"}, 2);
  EXPECT_EQ(cl.jobs[0].spec.filenames, (std::vector<std::string>{"t.2", "h"}));
  const std::string file = JobFile("[j]\nioengine=null\nsize=1m\nfilename=f.{host}.{rank}\n");
  const cli::RunPlan jf = Parsed({file}, 3, "b");
  EXPECT_EQ(jf.jobs[0].spec.filenames, (std::vector<std::string>{"f.b.3"}));
}

TEST_F(RankPlanTest, ValueLogsAreEachRanksOwnFromTheCommandLine) {
  ExpectDisjoint({"--name=j", "--ioengine=null", "--size=1m", "--filename=t.{rank}",
                  "--write_bw_log=B", "--write_iops_log=I", "--write_lat_log=L"},
                 3);
}

TEST_F(RankPlanTest, ValueLogsAreEachRanksOwnFromAJobFile) {
  const std::string file = JobFile(
      "[global]\nioengine=null\nsize=1m\nfilename=t.{rank}\n[j]\nwrite_bw_log=B\nwrite_iops_log=I\n"
      "write_lat_log=L\n");
  ExpectDisjoint({file}, 3);
}

TEST_F(RankPlanTest, HistogramLogsOfEachRankAreItsOwnAndTheClustersIsTheJobFiles) {
  const std::string file = JobFile(
      "[j]\nioengine=null\nsize=1m\nfilename=t.{rank}\nwrite_hist_log=H\nlog_hist_msec=250\n");
  ExpectDisjoint({"--log_per_rank", file}, 1);
  const cli::RunPlan rank0 = RankPlan(Parsed({"--log_per_rank", file}, 0), 0);
  EXPECT_EQ(rank0.run.driver.cluster.hist_prefix, "H");
  EXPECT_EQ(rank0.jobs[0].spec.logs.write_hist_log, "H.rank0");
  EXPECT_EQ(rank0.jobs[0].spec.logs.hist_msec, 250u);
  // Without --log_per_rank no rank writes its own; the period stays the job file's even with a
  // status interval that would otherwise set the clock.
  const cli::RunPlan quiet = RankPlan(Parsed({"--status_interval=1s", file}, 1), 1);
  EXPECT_TRUE(quiet.jobs[0].spec.logs.write_hist_log.empty());
  std::ostringstream notes;
  EXPECT_EQ(cli::PlanRun(quiet, notes).spec(0).logs.hist_msec, 250u);
}

TEST_F(RankPlanTest, TargetFilesIotailNamesAreEachRanksOwn) {
  // A named job without --filename: fio's NAME.CLONE.FILE in the current directory.
  ExpectDisjoint({"--name=j", "--size=1m", "--numjobs=2"}, 2);
  const std::string file = JobFile("[j]\nsize=1m\nnrfiles=2\nfilename_format=d.$jobnum.$filenum\n");
  ExpectDisjoint({file}, 2);
}

TEST_F(RankPlanTest, TheDefaultBenchmarkLogsAsEachRanksOwn) {
  // Its temporary file is named by host and process (iotail-default.HOST.PID.tmp): each rank's own.
  std::ostringstream notes;
  const cli::PlannedRun r0 = cli::PlanRun(RankPlan(Parsed({}, 0), 0), notes);
  const cli::PlannedRun r1 = cli::PlanRun(RankPlan(Parsed({}, 1), 1), notes);
  EXPECT_EQ(r0.plan.run.driver.cluster.hist_prefix, "iotail");
  EXPECT_EQ(r0.spec(0).logs.write_hist_log, "iotail.rank0");
  EXPECT_EQ(r1.spec(0).logs.write_hist_log, "iotail.rank1");
  EXPECT_EQ(r0.spec(0).logs.hist_msec, 500u);
}

TEST_F(RankPlanTest, OnlyRankZeroShowsAndServes) {
  const std::vector<std::string> args = {"--ioengine=null", "--size=1m",      "--filename=x",
                                         "--sla=p99<=1ms",  "--prometheus=0", "--output=o.json"};
  const cli::RunPlan r0 = RankPlan(Parsed(args, 0), 0), r1 = RankPlan(Parsed(args, 1), 1);
  EXPECT_EQ(r0.run.sla.size(), 1u);
  EXPECT_EQ(r0.run.prometheus, "0");
  EXPECT_TRUE(r1.run.sla.empty());
  EXPECT_TRUE(r1.run.prometheus.empty());
  EXPECT_TRUE(r1.run.output.empty());
  EXPECT_EQ(r1.run.live_format, stats::LiveFormat::kNone);
}

TEST_F(RankPlanTest, IotailMpisOptionsAreRowsOfScopeRun) {
  for (const cli::OptionGroup& group : MpiOptionGroups()) {
    for (const cli::OptionDef& d : group.rows) {
      EXPECT_EQ(d.scope, cli::OptionScope::kRun) << d.name;
      EXPECT_TRUE(d.set.run != nullptr && d.set.job == nullptr) << d.name;
      EXPECT_EQ(cli::FindRunOption(d.name), nullptr) << d.name << " shadows iotail run's";
    }
  }
}

TEST_F(RankPlanTest, RefusesWhatTheClusterDecides) {
  EXPECT_THROW(
      RankPlan(Parsed({"--ioengine=null", "--filename=x", "--start_at=1700000000000"}, 0), 0),
      stats::UsageError);
  EXPECT_THROW(RankPlan(Parsed({"--ioengine=null", "--filename=x", "--log_per_rank"}, 0), 0),
               stats::UsageError);
  // iotail-mpi's options are rows of the table: a bad value is named; and not iotail run's.
  EXPECT_THROW(Parsed({"--setup_timeout=0"}, 0), stats::UsageError);
  std::vector<std::string> run_args = {"run", "--log_per_rank"};
  std::vector<char*> argv;
  for (auto& a : run_args) argv.push_back(a.data());
  EXPECT_THROW(cli::ParseRunPlan(argv), stats::UsageError);
}

}  // namespace rank_plan_test
}  // namespace iotail::mpi
