#include "cli/run_options.h"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "cli/option_values.h"
#include "stats/core/errors.h"

namespace iotail::cli {
namespace run_options_test {

RunOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseRunOptions(argv);
}

TEST(RunOptionsTest, SizesAndTimes) {
  EXPECT_EQ(ParseSize("4k", "bs", {}), 4096u);
  EXPECT_EQ(ParseSize("64M", "size", {}), 64u << 20);
  EXPECT_EQ(ParseSize("1g", "size", {}), 1u << 30);
  // fio's kb_base=1024 (its default, "compatibility mode"): the IEC form is powers of 1000.
  EXPECT_EQ(ParseSize("1GiB", "size", {}), 1'000'000'000u);
  EXPECT_EQ(ParseSize("4KB", "bs", {}), 4096u);
  // kb_base=1000 is the job's context, not a setting of the process.
  const iotail::cli::ValueContext si{1000, nullptr};
  EXPECT_EQ(ParseSize("1GiB", "size", si), 1u << 30);
  EXPECT_EQ(ParseSize("4k", "bs", si), 4000u);
  EXPECT_EQ(ParseSize("4k", "bs", {}), 4096u);
  EXPECT_EQ(ParseSize("512", "bs", {}), 512u);
  EXPECT_THROW(ParseSize("4q", "bs", {}), std::exception);
  EXPECT_EQ(ParseTimeNs("3s", "runtime", {}), 3'000'000'000u);
  EXPECT_EQ(ParseTimeNs("500ms", "runtime", {}), 500'000'000u);
  EXPECT_EQ(ParseTimeNs("2", "runtime", {}), 2'000'000'000u);
  EXPECT_EQ(ParseTimeNs("1m", "runtime", {}), 60'000'000'000u);
  EXPECT_THROW(ParseTimeNs("3x", "runtime", {}), std::exception);
  EXPECT_EQ(ParseCpuList("0-2,5", "cpus_allowed", {}), (std::vector<int>{0, 1, 2, 5}));
}

TEST(RunOptionsTest, FioSpellings) {
  const RunOptions o =
      Parse({"--filename=a:b", "--bs", "8k", "--direct", "--time_based=1", "--runtime", "2s",
             "--cpus-allowed=1", "--zero-buffers", "--rw=randrw", "--rwmixread=30",
             "--bssplit=4k/50:8k/50", "--continue_on_error=0"});
  EXPECT_EQ(o.spec.filenames, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.spec.blocks.bs, 8192u);
  EXPECT_TRUE(o.spec.direct);
  EXPECT_TRUE(o.spec.time_based);
  EXPECT_EQ(o.spec.runtime_ns, 2'000'000'000u);
  EXPECT_EQ(o.spec.placement.cpus_allowed, (std::vector<int>{1}));
  EXPECT_TRUE(o.spec.buffers.zero);
  EXPECT_EQ(o.spec.rw, engine::RwMode::kRandReadWrite);
  EXPECT_EQ(o.spec.rwmixread, 30u);
  ASSERT_EQ(o.spec.blocks.bssplit.size(), 2u);
  EXPECT_EQ(o.spec.errors.continue_on_error, (std::array<bool, 3>{false, false, false}));
  EXPECT_EQ(o.percentiles.size(), 17u);
  EXPECT_FALSE(Parse({"--direct=0"}).spec.direct);
}

TEST(RunOptionsTest, ErrorsNameTheOption) {
  try {
    Parse({"--iodepth"});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--iodepth"), std::string::npos);
  }
  try {
    Parse({"--direct=maybe"});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--direct"), std::string::npos);
  }
}

// fio's rate=R,W,T: the third value is the trims' (examples/exitwhat.fio gives one to a randrw
// job); a job with trims refuses any rate, a fourth value is an error.
TEST(RunOptionsTest, PerDirectionValuesAreSplitOneWay) {
  const PerDirectionText one = SplitPerDirection("8k", "bs");
  EXPECT_TRUE(one.one);
  EXPECT_EQ(one.dirs[0], "8k");
  const PerDirectionText two = SplitPerDirection(",32k", "bsrange");
  EXPECT_FALSE(two.one);
  EXPECT_EQ(two.dirs[0], "");
  EXPECT_EQ(two.dirs[1], "32k");
  EXPECT_EQ(two.dirs[2], "");
  const PerDirectionText three = SplitPerDirection("1,2,3", "rate_iops");
  EXPECT_EQ(three.dirs[2], "3");
  try {
    SplitPerDirection("1,2,3,4", "rate_iops");
    ADD_FAILURE() << "four parts accepted";
  } catch (const stats::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--rate_iops: expected N, R,W or R,W,T"),
              std::string::npos)
        << e.what();
  }
  // Each option reads its parts: bssplit refuses a trims' value, cmdprio_class takes R,W only.
  EXPECT_THROW(Parse({"--bssplit=4k/100,8k/100,16k/100"}), stats::UsageError);
  EXPECT_NO_THROW(Parse({"--bssplit=4k/100,8k/100"}));
}

TEST(RunOptionsTest, RatesTakeFiosTrimValue) {
  RunOptions o = Parse({"--filename=f", "--size=1m", "--rw=randrw", "--rate=300,300,300"});
  EXPECT_EQ(o.spec.rates.dir[0].bytes_per_s, 300);
  EXPECT_EQ(o.spec.rates.dir[1].bytes_per_s, 300);
  EXPECT_TRUE(o.spec.rates.trim_given);
  o.spec.Validate();
  o = Parse({"--filename=f", "--rw=trim", "--size=1m", "--rate_iops=,,10"});
  EXPECT_THROW(o.spec.Validate(), stats::UsageError);
  EXPECT_THROW(Parse({"--rate=1,2,3,4"}), stats::UsageError);
  // The errno lists of ignore_error continue their types; continue_on_error=1 is every type.
  o = Parse({"--ignore_error=ENOSPC:5,,EILSEQ"});
  EXPECT_EQ(o.spec.errors.lists[0], (std::vector<int>{ENOSPC, EIO}));
  EXPECT_EQ(o.spec.errors.continue_on_error, (std::array<bool, 3>{true, false, true}));
  EXPECT_TRUE(o.spec.errors.KeepsGoing(stats::Direction::kRead, ENOSPC));
  EXPECT_FALSE(o.spec.errors.KeepsGoing(stats::Direction::kWrite, EIO));
  EXPECT_EQ(Parse({"--continue_on_error=1"}).spec.errors.continue_on_error,
            (std::array<bool, 3>{true, true, true}));
  EXPECT_THROW(Parse({"--ignore_error=ENOPE"}), stats::UsageError);
}

TEST(RunOptionsTest, WorkloadShapeOptionsWithFiosMeanings) {
  // timeout is runtime; buffered is the inverse of direct on the same setting: the later wins.
  EXPECT_EQ(Parse({"--timeout=3"}).spec.runtime_ns, 3'000'000'000u);
  EXPECT_FALSE(Parse({"--direct=1", "--buffered=1"}).spec.direct);
  EXPECT_TRUE(Parse({"--buffered=1", "--direct=1"}).spec.direct);
  EXPECT_TRUE(Parse({"--buffered=0"}).spec.direct);
  // rw=read:-8k goes backwards.
  EXPECT_EQ(Parse({"--rw=read:-8k"}).spec.rw_modifier, -8192);
  EXPECT_EQ(Parse({"--rw=write:16k"}).spec.rw_modifier, 16384);
  EXPECT_EQ(Parse({"--rw=randread:8"}).spec.rw_modifier, 8);
  EXPECT_THROW(Parse({"--rw=randread:-8"}), stats::UsageError);
  EXPECT_EQ(Parse({"--number_ios=1k"}).spec.number_ios, 1024u);
  const RunOptions inc = Parse({"--offset_increment=1m"});
  EXPECT_EQ(inc.spec.region.offset_increment, 1u << 20);
  EXPECT_EQ(Parse({"--offset_increment=25%"}).spec.region.offset_increment_percent, 25.0);
  EXPECT_EQ(Parse({"--blockalign=8k"}).spec.blocks.blockalign, 8192u);
  EXPECT_EQ(Parse({"--ba=8k,8k"}).spec.blocks.blockalign, 8192u);
  EXPECT_THROW(Parse({"--ba=8k,4k"}), stats::UsageError);  // one alignment for both directions
  EXPECT_EQ(Parse({"--random_generator=lfsr"}).spec.random_generator,
            engine::RandomGenerator::kLfsr);
  EXPECT_EQ(Parse({"--random_generator=tausworthe64"}).spec.random_generator,
            engine::RandomGenerator::kTausworthe64);
  EXPECT_THROW(Parse({"--random_generator=mt"}), stats::UsageError);
  EXPECT_EQ(Parse({"--ratecycle=250"}).spec.rates.cycle_ms, 250u);
}

}  // namespace run_options_test
}  // namespace iotail::cli

namespace run_options_test {

iotail::cli::RunPlan Plan(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return iotail::cli::ParseRunPlan(argv);
}

TEST(RunOptionsTest, GlobalOptionsApplyToEveryJobAndRunOptionsToTheRun) {
  const auto plan = Plan({"--bs=8k", "--name=a", "--iodepth=4", "--output-format=json", "--name=b",
                          "--bs=16k", "--eta", "never", "--eta_newline=250ms"});
  ASSERT_EQ(plan.jobs.size(), 2u);
  EXPECT_EQ(plan.jobs[0].spec.name, "a");
  EXPECT_EQ(plan.jobs[0].spec.blocks.bs, 8192u);
  EXPECT_EQ(plan.jobs[0].spec.queue.iodepth, 4u);
  EXPECT_EQ(plan.jobs[1].spec.blocks.bs, 16384u);
  EXPECT_EQ(plan.jobs[1].spec.queue.iodepth, 1u);  // a's own setting is not b's
  // Settings of the run, wherever they appear.
  EXPECT_EQ(plan.run.output_format, iotail::cli::OutputFormat::kJson);
  EXPECT_EQ(plan.run.live_format, iotail::stats::LiveFormat::kNone);
  EXPECT_EQ(plan.run.status_interval_ms, 250u);
  // "job options" are a job's own settings; the globals are listed once.
  EXPECT_EQ(plan.jobs[1].own,
            (std::vector<std::pair<std::string, std::string>>{{"name", "b"}, {"bs", "16k"}}));
  EXPECT_EQ(plan.global, (std::vector<std::pair<std::string, std::string>>{{"bs", "8k"}}));
  EXPECT_THROW(Plan({"--eta=sometimes"}), iotail::stats::UsageError);
}

// kb_base is the job's: every size its options hold is read under it, those its setters parse
// themselves (rates, block size lists and splits, alignments, steady-state limits) too, and a job
// without it keeps fio's 1024 whatever the job before it said (the parse keeps no setting of its
// own between jobs).
TEST(RunOptionsTest, KbBaseIsTheJobsOwnForEverySizeItsOptionsHold) {
  const std::vector<std::string> sizes = {"--bs=4k,8k",
                                          "--bssplit=4k/50:8k/50",
                                          "--rate=1m,2m",
                                          "--rate_min=1k",
                                          "--blockalign=4k",
                                          "--bsrange=1k-4k",
                                          "--size=1m",
                                          "--offset=2k",
                                          "--steadystate=bw:1k",
                                          "--rw=read:1k",
                                          "--cmdprio_bssplit=4k/50:1KiB/10"};
  std::vector<std::string> args = {"--name=si", "--kb_base=1000"};
  args.insert(args.end(), sizes.begin(), sizes.end());
  args.push_back("--name=iec");
  args.insert(args.end(), sizes.begin(), sizes.end());
  const auto plan = Plan(args);
  ASSERT_EQ(plan.jobs.size(), 2u);
  for (const uint64_t k : {1000u, 1024u}) {
    const iotail::engine::JobSpec& spec = plan.jobs[k == 1000 ? 0 : 1].spec;
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(spec.blocks.bs_dir[0], 4 * k);
    EXPECT_EQ(spec.blocks.bs_dir[1], 8 * k);
    ASSERT_EQ(spec.blocks.bssplit.size(), 2u);
    EXPECT_EQ(spec.blocks.bssplit[0].bs, 4 * k);
    EXPECT_EQ(spec.rates.dir[0].bytes_per_s, static_cast<double>(k * k));
    EXPECT_EQ(spec.rates.dir[1].bytes_per_s, static_cast<double>(2 * k * k));
    EXPECT_EQ(spec.rates.min[0].bytes_per_s, static_cast<double>(k));
    EXPECT_EQ(spec.blocks.blockalign, 4 * k);
    EXPECT_EQ(spec.blocks.bs_min, k);
    EXPECT_EQ(spec.region.size, k * k);
    EXPECT_EQ(spec.region.offset, 2 * k);
    EXPECT_EQ(spec.steady.criterion.limit, static_cast<double>(k));
    EXPECT_EQ(spec.rw_modifier, static_cast<int64_t>(k));
    // fio reads cmdprio_bssplit's sizes as its other sizes (str_to_decimal under kb_base): KiB is
    // the other base. Sorted by size: 1KiB first.
    ASSERT_EQ(spec.prio.cmdprio.bssplit[0].size(), 2u);
    EXPECT_EQ(spec.prio.cmdprio.bssplit[0][0].bs, k == 1000 ? 1024u : 1000u);
    EXPECT_EQ(spec.prio.cmdprio.bssplit[0][1].bs, 4 * k);
  }
}

// fio 3.33 reads bare arithmetic by its leading number; the note says so where it was given, once
// per setting, and a job's notes are its own.
TEST(RunOptionsTest, BareArithmeticNotesBelongToTheJobThatGaveThem) {
  const auto plan = Plan({"--name=a", "--iodepth=2*4", "--rate=1k*2", "--name=b", "--iodepth=3"});
  ASSERT_EQ(plan.jobs.size(), 2u);
  EXPECT_EQ(plan.jobs[0].spec.queue.iodepth, 2u);
  EXPECT_EQ(plan.jobs[0].spec.rates.limit.bytes_per_s, 1024.0);
  ASSERT_EQ(plan.jobs[0].value_notes.size(), 2u);
  EXPECT_NE(plan.jobs[0].value_notes[0].find("--iodepth: '2*4'"), std::string::npos);
  EXPECT_NE(plan.jobs[0].value_notes[1].find("--rate: '1k*2'"), std::string::npos);
  EXPECT_TRUE(plan.jobs[1].value_notes.empty());
}

}  // namespace run_options_test
