// Several jobs in one `iotail run`, compared with fio 3.33 itself on the same command line: each
// --name starts a job, options before the first --name are global, stonewall runs jobs one group
// after another and new_group numbers reporting groups, group_reporting sums a group into one
// entry, loops repeats the pass, and histogram logs are numbered by worker across the run (fio's
// thread numbers). Tests that need fio skip with the reason when it is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_util.h"

namespace run_jobs_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using iotail::testing::CommandResult;

// What each jobs[] entry did: name, reporting group, bytes read and written.
using Entry = std::tuple<std::string, int, uint64_t, uint64_t>;

std::vector<Entry> Entries(const std::string& text) {
  const json j = json::parse(text.substr(text.find('{')));
  std::vector<Entry> out;
  for (const json& job : j["jobs"]) {
    out.emplace_back(job["jobname"].get<std::string>(), job["groupid"].get<int>(),
                     job["read"]["io_bytes"].get<uint64_t>(),
                     job["write"]["io_bytes"].get<uint64_t>());
  }
  return out;
}

class RunJobsTest : public iotail::testing::ScratchDirTest {
 protected:
  // Runs `tool` (fio or iotail run) in its own directory with ARGS on a 1 MiB file there.
  CommandResult Run(const std::string& tool, const std::string& args) {
    const fs::path d = ToolDir(tool);
    const std::string bin = tool == "fio" ? "fio" : std::string(IOTAIL_BINARY) + " run";
    const std::string extra = tool == "fio" ? "" : " --live_format=none";
    return iotail::testing::RunShell("cd " + d.string() + " && " + bin +
                                         " --ioengine=psync --filename=target --size=1m" + extra +
                                         " --output-format=json " + args,
                                     d);
  }
  // Both tools on ARGS, each of which must exit 0: fio's result, then iotail's.
  std::pair<CommandResult, CommandResult> Both(const std::string& args) {
    std::pair<CommandResult, CommandResult> both{Run("fio", args), Run("iotail", args)};
    EXPECT_EQ(both.first.status, 0) << both.first.err;
    EXPECT_EQ(both.second.status, 0) << both.second.err;
    return both;
  }
  // Runs both and checks that they did the same jobs in the same groups.
  void CompareWithFio(const std::string& args) {
    SCOPED_TRACE(args);
    if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
    const auto [fio, ours] = Both(args);
    const std::vector<Entry> expected = Entries(fio.out);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(Entries(ours.out), expected) << ours.out;
  }
  // An iotail run with its JSON summary and wall time.
  struct TimedRun {
    json summary;
    double wall_s = 0;
  };
  // Runs iotail with ARGS and times it. Every jobs[] entry must have run `runtime_ms` (within
  // 60 ms), counted from its own start. nullopt, the failure recorded, unless it exits 0 with
  // `jobs` entries.
  std::optional<TimedRun> RunTimed(const std::string& args, size_t jobs, double runtime_ms) {
    const auto t0 = std::chrono::steady_clock::now();
    const CommandResult r = Run("iotail", args);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.status != 0) {
      ADD_FAILURE() << "exit status " << r.status << ": " << r.err;
      return std::nullopt;
    }
    TimedRun run{json::parse(r.out), wall};
    if (run.summary["jobs"].size() != jobs) {
      ADD_FAILURE() << run.summary["jobs"].size() << " jobs[] entries, expected " << jobs;
      return std::nullopt;
    }
    for (const json& job : run.summary["jobs"]) {
      EXPECT_NEAR(job["job_runtime"].get<double>(), runtime_ms, 60) << job["jobname"];
    }
    return run;
  }
  std::set<std::string> Files(const std::string& tool) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / tool)) {
      const std::string n = e.path().filename().string();
      if (n.find("_hist.") != std::string::npos) out.insert(n);
    }
    return out;
  }
};

TEST_F(RunJobsTest, EachNameStartsAJobAndStonewallAndNewGroupNumberGroupsAsFio) {
  CompareWithFio(
      "--bs=8k --name=a --rw=read --numjobs=2 --name=b --rw=write --stonewall "
      "--name=c --rw=randread --new_group --name=d --rw=randwrite");
}

TEST_F(RunJobsTest, GroupReportingSumsEachGroupAsFio) {
  CompareWithFio(
      "--group_reporting --name=a --rw=read --numjobs=3 --name=b --rw=write --stonewall "
      "--numjobs=2");
}

TEST_F(RunJobsTest, GroupReportingJobRuntimeIsTheMembersRuntimesSummedAsFio) {
  // fio's job_runtime of a group_reporting entry is its members' runtimes added up (its usr_cpu
  // and sys_cpu are per that sum); the directions' runtimes stay the longest member's.
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const auto [fio, ours] = Both(
      "--group_reporting --name=a --rw=randread --numjobs=3 --time_based --runtime=1 "
      "--rate_iops=200");
  for (const CommandResult* r : {&fio, &ours}) {
    const json j = json::parse(r->out.substr(r->out.find('{')));
    ASSERT_EQ(j["jobs"].size(), 1u) << r->out;
    EXPECT_NEAR(j["jobs"][0]["job_runtime"].get<double>(), 3000, 150) << r->out;
    EXPECT_NEAR(j["jobs"][0]["read"]["runtime"].get<double>(), 1000, 60) << r->out;
  }
}

TEST_F(RunJobsTest, LoopsRepeatThePassAsFio) {
  CompareWithFio("--name=a --rw=read --loops=3 --name=b --rw=randwrite --loops=2");
}

TEST_F(RunJobsTest, SizeSuffixesFollowKbBaseAsFio) {
  // Under the default kb_base=1024, 4k is 4096 bytes but 4KiB is 4000; kb_base=1000 swaps them.
  CompareWithFio(
      "--name=a --rw=read --bs=4KiB --name=b --rw=read --kb_base=1000 --bs=4k --size=400k "
      "--name=c --rw=read --bs=2kB --size=300k");
}

TEST_F(RunJobsTest, PerDirectionBlockSizesAsFio) {
  CompareWithFio(
      "--name=a --rw=read --bs=,8k --name=b --rw=write --bs=,8k --name=c --rw=randwrite --bs=8k, "
      "--name=d --rw=read --blocksize=16k,4k");
  // Mixed: every read is 4 KiB and every write 64 KiB.
  const CommandResult r = Run("iotail", "--name=m --rw=randrw --bs=4k,64k --size=4m");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const json& job = j["jobs"][0];
  ASSERT_GT(job["read"]["total_ios"].get<uint64_t>(), 0u);
  ASSERT_GT(job["write"]["total_ios"].get<uint64_t>(), 0u);
  EXPECT_EQ(job["read"]["io_bytes"].get<uint64_t>(),
            4096 * job["read"]["total_ios"].get<uint64_t>());
  EXPECT_EQ(job["write"]["io_bytes"].get<uint64_t>(),
            65536 * job["write"]["total_ios"].get<uint64_t>());
}

TEST_F(RunJobsTest, SizeAndOffsetAsPercentagesAsFio) {
  // The first job lays the 1 MiB file out; the next ones take shares of it.
  CompareWithFio(
      "--name=make --rw=write --name=half --stonewall --rw=read --size=50% --name=tail --rw=read "
      "--offset=25% --size=100% --name=mid --rw=randread --offset=10% --size=30%");
}

TEST_F(RunJobsTest, RandomOffsetOptionsAsFio) {
  // The skew itself is tested on the sampler (tests/engine/random_distribution_test.cc); here, the
  // options are taken with fio's spellings and each job does its size's worth of I/O.
  CompareWithFio(
      "--name=a --rw=randread --norandommap --name=b --rw=randread --randrepeat=0 --name=c "
      "--rw=randwrite --random_distribution=zipf:1.2 --name=d --rw=randread "
      "--random_distribution=pareto:0.9 --name=e --rw=randread --random_distribution=normal:20");
}

TEST_F(RunJobsTest, ThinktimeStallsBetweenIos) {
  // 16 reads of 4 KiB, a 20 ms stall after every 4 (bare thinktime values are microseconds, as
  // fio's), half of it spinning: at least 3 full stalls.
  const auto t0 = std::chrono::steady_clock::now();
  const CommandResult r =
      Run("iotail",
          "--name=a --rw=read --size=64k --thinktime=20000 --thinktime_blocks=4 "
          "--thinktime_spin=10ms");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GE(wall, 0.06);
  EXPECT_GE(json::parse(r.out)["jobs"][0]["job_runtime"].get<double>(), 60);
  EXPECT_EQ(Run("iotail", "--name=a --thinktime=1ms --thinktime_spin=2ms").status, 2);
}

TEST_F(RunJobsTest, FsyncAndFdatasyncEveryNWritesAsFio) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  for (const std::string option : {"--fsync=4", "--fdatasync=8"}) {
    SCOPED_TRACE(option);
    const auto [fio, ours] = Both("--name=a --rw=write --size=256k " + option);
    ASSERT_TRUE(fio.status == 0 && ours.status == 0);
    const json theirs = json::parse(fio.out.substr(fio.out.find('{')))["jobs"][0]["sync"];
    const json mine = json::parse(ours.out)["jobs"][0]["sync"];
    // One per N writes but after the last write, as fio; fdatasync's total_ios 0 as fio 3.33's.
    const int n = mine["lat_ns"]["N"].get<int>();
    EXPECT_EQ(n, theirs["lat_ns"]["N"].get<int>());
    EXPECT_EQ(mine["total_ios"], theirs["total_ios"]);
    EXPECT_GT(mine["lat_ns"]["mean"].get<double>(), 0);
  }
  EXPECT_EQ(
      Run("iotail", "--name=a --rw=write --sync=dsync --fadvise_hint=random --invalidate=0").status,
      0);
  EXPECT_EQ(Run("iotail", "--name=a --sync=sometimes").status, 2);
}

TEST_F(RunJobsTest, DirectoryNrfilesFilenameListsAndFilesizeMakeFiosFiles) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  auto files = [&](const std::string& tool, const std::string& extra) {
    const fs::path d = dir_ / (tool + "-files");
    fs::create_directories(d / "data");
    const std::string bin = tool == "fio" ? "fio" : std::string(IOTAIL_BINARY) + " run";
    const CommandResult r = iotail::testing::RunShell(
        "cd " + d.string() + " && " + bin +
            " --ioengine=psync --directory=data --rw=write --output-format=json --name=x "
            "--numjobs=2 " +
            extra,
        d);
    EXPECT_EQ(r.status, 0) << r.err;
    std::set<std::pair<std::string, uintmax_t>> out;
    for (const auto& e : fs::directory_iterator(d / "data")) {
      out.emplace(e.path().filename().string(), fs::file_size(e.path()));
    }
    return std::make_pair(out, Entries(r.out));
  };
  // A clone's own files (nrfiles), or a --filename list that every clone uses: --size is a
  // clone's total divided among its files, --filesize each file's.
  for (const std::string extra :
       {"--nrfiles=3 --size=300k", "--nrfiles=2 --filesize=64k", "--filename=a:b --size=256k",
        "--filename=a:b --filesize=64k", "--filename=a:b:c --size=300k --numjobs=1"}) {
    SCOPED_TRACE(extra);
    const auto theirs = files("fio", extra);
    const auto ours = files("iotail", extra);
    EXPECT_EQ(ours.first, theirs.first);    // the same files, of the same sizes
    EXPECT_EQ(ours.second, theirs.second);  // the same bytes written by each clone
    fs::remove_all(dir_ / "fio-files");
    fs::remove_all(dir_ / "iotail-files");
  }
}

TEST_F(RunJobsTest, VerifyWritesChecksummedBlocksAndFindsACorruptOne) {
  for (const std::string kind : {"crc32c", "md5", "crc64", "crc32", "crc16", "crc7", "xxhash",
                                 "sha1", "sha256", "sha512", "sha3-224", "sha3-384"}) {
    SCOPED_TRACE(kind);
    // A write job reads every block back after its writes (do_verify, fio's default).
    CommandResult r = Run("iotail", "--name=w --rw=randwrite --size=256k --verify=" + kind);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    // A read job checks what it reads.
    r = Run("iotail", "--name=r --rw=randread --size=256k --verify=" + kind);
    ASSERT_EQ(r.status, 0) << r.err;
    // One corrupt block: the read job finds it, names its offset and exits 1.
    const fs::path target = dir_ / "iotail" / "target";
    {
      std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(12 * 4096 + 1000);
      f.write("CORRUPT", 7);
    }
    r = Run("iotail", "--name=r --rw=read --size=256k --verify=" + kind);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("job 'r': verify (" + kind +
                         ") failed at offset 49152 of file 0: " + kind + " mismatch"),
              std::string::npos)
        << r.err;
  }
  // What a verify needs.
  // (A mixed or time_based job reads back each loop's writes: tests/cli/run_verify_mixed_test.cc.)
  EXPECT_EQ(Run("iotail", "--name=w --rw=randrw --verify=crc32c --norandommap").status, 2);
  EXPECT_EQ(Run("iotail", "--name=w --rw=randrw --verify=crc32c --rate_iops=100").status, 2);
  EXPECT_EQ(Run("iotail", "--name=w --rw=write --verify=sha224").status, 2);  // not fio's
  // A SHA-512 header is 96 bytes: a smaller block cannot hold it.
  const CommandResult small = Run("iotail", "--name=w --rw=write --bs=64 --verify=sha512");
  EXPECT_EQ(small.status, 2);
  EXPECT_NE(small.err.find("--verify=sha512: iotail's header needs 96 bytes"), std::string::npos)
      << small.err;
}

TEST_F(RunJobsTest, ContinueOnErrorTakesFiosValues) {
  for (const char* v : {"none", "read", "write", "io", "verify", "all", "0", "1"}) {
    EXPECT_EQ(Run("iotail", std::string("--name=a --continue_on_error=") + v).status, 0) << v;
  }
  const CommandResult bad = Run("iotail", "--name=a --continue_on_error=some");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("expected none, read, write, io, verify, all"), std::string::npos);
}

TEST_F(RunJobsTest, PerDirectionBsrangeAndBssplitAsFio) {
  CompareWithFio(
      "--name=a --rw=write --bssplit=4k/100,16k/100 --name=b --rw=read --bssplit=8k/100,64k/100 "
      "--name=c --rw=write --bsrange=4k-4k,32k-32k --name=d --rw=read --bsrange=8k-8k,");
  // Mixed: reads from the first list, writes from the second.
  const CommandResult r =
      Run("iotail", "--name=m --rw=randrw --bssplit=4k/50:8k/50,64k/100 --size=4m");
  ASSERT_EQ(r.status, 0) << r.err;
  const json job = json::parse(r.out)["jobs"][0];
  const double read_avg =
      job["read"]["io_bytes"].get<double>() / job["read"]["total_ios"].get<double>();
  EXPECT_GT(read_avg, 4096);
  EXPECT_LT(read_avg, 8192);
  EXPECT_EQ(job["write"]["io_bytes"].get<uint64_t>(),
            65536 * job["write"]["total_ios"].get<uint64_t>());
  EXPECT_EQ(Run("iotail", "--name=m --bssplit=4k/100,8k/100,16k/100").status, 2);  // no trims
}

TEST_F(RunJobsTest, TrimsPunchHolesInAFile) {
  // fio 3.33 trims only block devices (tests/cli/run_loop_device_test.cc compares those); iotail
  // also punches holes in files, keeping their size.
  ASSERT_EQ(Run("iotail", "--name=w --rw=write --size=1m").status, 0);
  const fs::path target = dir_ / "iotail" / "target";
  const CommandResult r = Run("iotail", "--name=t --rw=randtrim --size=1m");
  ASSERT_EQ(r.status, 0) << r.err;
  const json trim = json::parse(r.out)["jobs"][0]["trim"];
  EXPECT_EQ(trim["io_bytes"].get<uint64_t>(), 1u << 20);
  EXPECT_EQ(trim["total_ios"].get<uint64_t>(), 256u);
  EXPECT_GT(trim["clat_ns"]["N"].get<uint64_t>(), 0u);
  EXPECT_EQ(fs::file_size(target), 1u << 20);
  EXPECT_EQ(Run("iotail", "--name=t --rw=trimwrite").status, 2);
  EXPECT_EQ(Run("iotail", "--name=t --rw=trim --rate_iops=100").status, 2);
}

TEST_F(RunJobsTest, RateIsPerCloneAndPerDirectionAsFio) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const std::string args =
      "--runtime=1 --time_based --name=a --rw=randrw --numjobs=2 --rate_iops=300 --name=b "
      "--rw=randread --rate_iops=200";
  const auto [fio, ours] = Both(args);
  ASSERT_TRUE(fio.status == 0 && ours.status == 0);
  const auto theirs = Entries(fio.out), mine = Entries(ours.out);
  ASSERT_EQ(mine.size(), 3u);
  ASSERT_EQ(theirs.size(), mine.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(std::get<0>(mine[i]), std::get<0>(theirs[i]));
    // About 300 (or 200) I/Os of 4 KiB per direction in the second each clone runs.
    const double r = static_cast<double>(std::get<2>(mine[i]));
    const double w = static_cast<double>(std::get<3>(mine[i]));
    EXPECT_NEAR(r, static_cast<double>(std::get<2>(theirs[i])), 0.1 * r + 4096);
    EXPECT_NEAR(w, static_cast<double>(std::get<3>(theirs[i])), 0.1 * w + 4096);
    EXPECT_NEAR(r / 4096, i < 2 ? 300 : 200, 20);
  }
}

TEST_F(RunJobsTest, HistogramLogsAreNumberedByWorkerAcrossTheRunAsFio) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const std::string args =
      "--write_hist_log=x --name=a --numjobs=2 --name=b --write_hist_log=y --stonewall --name=c";
  ASSERT_EQ(Run("fio", args).status, 0);
  ASSERT_EQ(Run("iotail", args).status, 0);
  EXPECT_EQ(Files("iotail"), Files("fio"));
  EXPECT_EQ(Files("iotail"), (std::set<std::string>{"x_clat_hist.1.log", "x_clat_hist.2.log",
                                                    "y_clat_hist.3.log", "x_clat_hist.4.log"}));
}

TEST_F(RunJobsTest, StonewallRunsGroupsOneAfterAnotherAndStartdelayDelaysAJob) {
  // Each job runs its own 300 ms, counted from its own start.
  const auto run = RunTimed(
      "--runtime=300ms --time_based --name=a --name=b --startdelay=200ms --name=c --stonewall", 3,
      300);
  ASSERT_TRUE(run);
  // a and b overlap (b starts 200 ms late and ends 500 ms in), then c runs alone.
  EXPECT_GE(run->wall_s, 0.8);
}

TEST_F(RunJobsTest, WaitForStartsAJobWhenTheNamedOneHasEnded) {
  const auto run =
      RunTimed("--runtime=300ms --time_based --name=a --name=b --wait_for=a --name=c", 3, 300);
  ASSERT_TRUE(run);
  for (const json& job : run->summary["jobs"]) {
    EXPECT_EQ(job["groupid"], 0) << job["jobname"];  // wait_for does not start a group
  }
  EXPECT_GE(run->wall_s, 0.6);  // b runs after a, c beside a
  const CommandResult forward = Run("iotail", "--name=a --wait_for=b --name=b");
  EXPECT_EQ(forward.status, 2);
  EXPECT_NE(forward.err.find("--wait_for: job 'a' waits for 'b', which is not an earlier job"),
            std::string::npos)
      << forward.err;
}

TEST_F(RunJobsTest, CpusAllowedOutsideTheMachineIsRefused) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const CommandResult r = Run("iotail", "--name=a --cpus_allowed=" + std::to_string(cpus + 3));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--cpus_allowed: CPU " + std::to_string(cpus + 3)), std::string::npos)
      << r.err;
}

TEST_F(RunJobsTest, JobsThatRunTogetherMustShareTheLogPeriod) {
  const CommandResult r =
      Run("iotail", "--name=a --log_hist_msec=100 --name=b --log_hist_msec=200");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--log_hist_msec: jobs 'a' and 'b' run together"), std::string::npos)
      << r.err;
  // Separated by a stonewall they do not run together.
  EXPECT_EQ(
      Run("iotail", "--name=a --log_hist_msec=100 --name=b --log_hist_msec=200 --stonewall").status,
      0);
}

}  // namespace run_jobs_test
