// End-to-end tests of `iotail run`'s workload modes: the rate-limited open loop (achieved rate,
// lat vs clat under overload, lat logs), ramp exclusion, --start_at, --sla verdicts, live lines,
// and clean interruption by SIGINT.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace run_rate_test {

namespace fs = std::filesystem;
using iotail::testing::ReadFile;
using iotail::testing::WaitForText;
using nlohmann::json;

// Sum of the counts of every line of one direction in a histogram log; also the line count.
std::pair<uint64_t, size_t> LogCounts(const fs::path& p, int ddir) {
  std::ifstream in(p);
  std::string line;
  uint64_t total = 0;
  size_t lines = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string field;
    std::vector<uint64_t> v;
    while (std::getline(ss, field, ',')) v.push_back(std::stoull(field));
    if (v.size() < 4 || static_cast<int>(v[1]) != ddir) continue;
    ++lines;
    for (size_t i = 3; i < v.size(); ++i) total += v[i];
  }
  return {total, lines};
}

uint64_t NowEpochMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

class RunRateTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_run_rate"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `iotail run ARGS`, stdout to out.txt, stderr to err.txt; returns the exit status.
  int Run(const std::string& args) {
    const std::string cmd = std::string(IOTAIL_BINARY) + " run " + args + " >" +
                            (dir_ / "out.txt").string() + " 2>" + (dir_ / "err.txt").string();
    const int st = std::system(cmd.c_str());
    out_ = ReadFile(dir_ / "out.txt");
    err_ = ReadFile(dir_ / "err.txt");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  // Starts `iotail run ARGS` in a child process, its stderr to `err_path` (its stdout is ours);
  // returns its pid, or -1 if fork failed.
  static pid_t SpawnRun(const std::vector<std::string>& args, const std::string& err_path) {
    std::vector<const char*> argv = {IOTAIL_BINARY, "run"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      freopen(err_path.c_str(), "w", stderr);
      execv(IOTAIL_BINARY, const_cast<char* const*>(argv.data()));
      _exit(127);
    }
    return pid;
  }
  // How an interrupted run ended: its exit status and how long it took to exit after the signal.
  struct Ended {
    int status = -1;
    double seconds = 0;
  };
  // Sends SIGINT to the run `pid` and reaps it. nullopt, the failure recorded, unless it could be
  // signalled and then exited (rather than being killed by a signal).
  static std::optional<Ended> Interrupt(pid_t pid) {
    if (kill(pid, SIGINT) != 0) {
      ADD_FAILURE() << "kill(" << pid << ", SIGINT) failed";
      return std::nullopt;
    }
    int st = 0;
    const auto t0 = std::chrono::steady_clock::now();
    if (waitpid(pid, &st, 0) != pid) {
      ADD_FAILURE() << "waitpid(" << pid << ") failed";
      return std::nullopt;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!WIFEXITED(st)) {
      ADD_FAILURE() << "the run did not exit (wait status " << st << ")";
      return std::nullopt;
    }
    return Ended{WEXITSTATUS(st), seconds};
  }

  fs::path dir_;
  std::string out_, err_;
};

TEST_F(RunRateTest, AchievedRateWithinOnePercentAndLatLogsAddUp) {
  for (const std::string process : {"linear", "poisson"}) {
    SCOPED_TRACE(process);
    const int rc = Run("--ioengine=psync --filename=" + File("t") +
                       " --size=4m --rw=randrw --numjobs=2 --iodepth=4 --runtime=1s --time_based "
                       "--rate_iops=2000 --rate_process=" +
                       process + " --log_hist_msec=250 --write_hist_log=" + File("l" + process) +
                       " --live-format=none --output-format=json --output=" + File("o.json"));
    ASSERT_EQ(rc, 0) << out_ << err_;
    const json j = json::parse(ReadFile(File("o.json")));
    const json& run = j["iotail_run"];
    EXPECT_EQ(run["mode"], "rate");
    EXPECT_EQ(run["rate_process"], process);
    // fio's meaning: the rate caps each direction of each job clone, so two clones at 2000 IOPS
    // do 4000 reads and 4000 writes per second.
    ASSERT_EQ(run["rates"].size(), 2u);
    for (const json& rate : run["rates"]) {
      EXPECT_DOUBLE_EQ(rate["target"].get<double>(), 4000.0) << rate;
      // Linear is exact up to the edges; poisson's count has a sqrt(4000) = 1.6% spread.
      EXPECT_LT(std::abs(rate["error_pct"].get<double>()), process == "linear" ? 1.0 : 5.0);
    }
    for (int job = 1; job <= 2; ++job) {
      const json& jj = j["jobs"][job - 1];
      for (int ddir = 0; ddir < 2; ++ddir) {
        const json& d = jj[ddir == 0 ? "read" : "write"];
        const uint64_t ios = d["total_ios"];
        const std::string n = std::to_string(job) + ".log";
        EXPECT_EQ(LogCounts(File("l" + process) + "_clat_hist." + n, ddir).first, ios);
        EXPECT_EQ(LogCounts(File("l" + process) + "_lat_hist." + n, ddir).first, ios);
        EXPECT_EQ(d["iotail_olat_ns"]["N"].get<uint64_t>(), ios);
        EXPECT_TRUE(d["iotail_olat_ns"].contains("percentile"));
        // fio's lat_ns keeps fio's meaning (no percentiles without lat_percentiles).
        EXPECT_FALSE(d["lat_ns"].contains("percentile"));
        // olat covers clat: it starts earlier (at the intended start) or at the same time.
        EXPECT_GE(d["iotail_olat_ns"]["mean"].get<double>(), d["clat_ns"]["mean"].get<double>());
      }
    }
  }
}

TEST_F(RunRateTest, OverloadGrowsLatWhileClatStaysFlat) {
  // psync at queue depth 1 does one 64 KiB read at a time: far below 1M IOPS on any machine, so
  // the backlog grows all run long. lat (from the intended start) must grow with it; clat (one
  // read's service time) must not.
  const int rc = Run("--ioengine=psync --filename=" + File("big") +
                     " --size=16m --bs=64k --rw=randread --iodepth=1 --runtime=1200ms "
                     "--time_based --rate_iops=1000000 --log_hist_msec=200 --live-format=json "
                     "--percentile_list=50:99 --output-format=json --output=" +
                     File("o.json"));
  ASSERT_EQ(rc, 0) << out_ << err_;
  std::vector<json> lines;
  std::stringstream ss(err_);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(json::parse(line));
  ASSERT_GE(lines.size(), 5u) << err_;
  const json& first = lines[0]["read"];
  const json& last = lines[lines.size() - 2]["read"];  // the last full interval
  EXPECT_EQ(first["latency"], "olat");
  EXPECT_GT(last["p50_ns"].get<double>(), 2 * first["p50_ns"].get<double>()) << err_;
  EXPECT_GT(last["p50_ns"].get<double>(), 100e6);  // > 100 ms behind after ~1 s
  EXPECT_LT(last["clat_p99_ns"].get<double>(), last["p50_ns"].get<double>() / 10);
  const json j = json::parse(ReadFile(File("o.json")));
  const json& d = j["iotail_aggregate"]["read"];
  EXPECT_GT(d["iotail_olat_ns"]["percentile"]["99.000000"].get<double>(),
            100 * d["clat_ns"]["percentile"]["99.000000"].get<double>());
  EXPECT_GT(j["iotail_run"]["late_ios"].get<uint64_t>(), 0u);
  EXPECT_GT(j["iotail_run"]["max_lag_ns"].get<uint64_t>(), 500'000'000u);
  EXPECT_LT(j["iotail_run"]["rates"][0]["error_pct"].get<double>(), -50.0);
}

TEST_F(RunRateTest, RampTimeIsExcludedFromStatsAndLogs) {
  const int rc =
      Run("--ioengine=null --filename=" + File("r") +
          " --size=1m --rw=randread --rate_iops=2000 --ramp_time=400ms --runtime=500ms "
          "--time_based --log_hist_msec=100 --write_hist_log=" +
          File("rl") + " --live-format=none --output-format=json --output=" + File("o.json"));
  ASSERT_EQ(rc, 0) << out_ << err_;
  const json j = json::parse(ReadFile(File("o.json")));
  const uint64_t ios = j["jobs"][0]["read"]["total_ios"];
  EXPECT_NEAR(static_cast<double>(ios), 1000.0, 30.0);  // 0.5 s at 2000 IOPS, not 0.9 s
  EXPECT_EQ(LogCounts(File("rl") + "_clat_hist.1.log", 0).first, ios);
  EXPECT_EQ(LogCounts(File("rl") + "_lat_hist.1.log", 0).first, ios);
  EXPECT_EQ(j["iotail_run"]["issued"].get<uint64_t>(), ios);
}

TEST_F(RunRateTest, StartAtWaitsForTheSharedInstantAndRefusesThePast) {
  const uint64_t at = NowEpochMs() + 1200;
  const auto t0 = std::chrono::steady_clock::now();
  int rc =
      Run("--ioengine=null --filename=" + File("s") + " --size=1m --runtime=200ms --time_based " +
          "--live-format=none --start_at=" + std::to_string(at) +
          " --output-format=json --output=" + File("o.json"));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << out_ << err_;
  EXPECT_GT(took, 1.2);
  const json j = json::parse(ReadFile(File("o.json")));
  EXPECT_EQ(j["iotail_run"]["start_at_ms"].get<uint64_t>(), at);
  const double skew = j["iotail_run"]["start_skew_ms"];
  EXPECT_GE(skew, 0.0);
  EXPECT_LT(skew, 250.0);  // scheduling delay on a loaded 2-core machine, not a clock error
  EXPECT_GE(j["timestamp"].get<uint64_t>(), at / 1000);

  rc = Run("--ioengine=null --filename=" + File("past") +
           " --size=1m --start_at=" + std::to_string(NowEpochMs() - 10'000));
  EXPECT_EQ(rc, 2) << err_;
  EXPECT_NE(err_.find("--start_at"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(File("past")));
}

TEST_F(RunRateTest, SlaVerdictsFlagIntervalsAndSetTheExitStatus) {
  const std::string base = "--ioengine=null --filename=" + File("q") +
                           " --size=1m --rw=randrw --runtime=300ms --time_based "
                           "--log_hist_msec=100 ";
  // Unmeetable: every interval violates; exit 3; listed in the live lines and the summary.
  int rc = Run(base + "--sla 'read:p99<=1ns' --sla 'write:max<1s'");
  EXPECT_EQ(rc, 3) << out_ << err_;
  EXPECT_NE(err_.find("SLA VIOLATED: read:p99<=1ns"), std::string::npos) << err_;
  EXPECT_NE(out_.find("SLA read:p99<=1ns"), std::string::npos) << out_;
  EXPECT_NE(out_.find("intervals violated"), std::string::npos) << out_;
  // JSON summary lists the verdicts.
  rc = Run(base + "'--sla=read:p99<=1ns,p50<=10s' --live-format=json --output-format=json");
  EXPECT_EQ(rc, 3);
  const json j = json::parse(out_);
  ASSERT_EQ(j["iotail_sla"].size(), 2u);
  EXPECT_GT(j["iotail_sla"][0]["violated"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["iotail_sla"][0]["violated"], j["iotail_sla"][0]["checked"]);
  EXPECT_EQ(j["iotail_sla"][1]["violated"].get<uint64_t>(), 0u);
  std::stringstream live(err_);
  std::string line;
  std::getline(live, line);
  EXPECT_EQ(json::parse(line)["sla_violations"][0], "read:p99<=1ns") << line;
  // Met targets: exit 0.
  EXPECT_EQ(Run(base + "--sla 'all:p99.9<=10s'"), 0) << out_ << err_;
  // Bad targets: exit 2 naming --sla.
  EXPECT_EQ(Run(base + "--sla 'read:p99=2ms'"), 2);
  EXPECT_NE(err_.find("--sla"), std::string::npos) << err_;
}

TEST_F(RunRateTest, RateOptionsParseAndRejectNonsense) {
  // Per-direction rates: reads and writes each on their own schedule.
  int rc = Run("--ioengine=null --filename=" + File("d") +
               " --size=1m --rw=randrw --rate_iops=3000,1000 --runtime=500ms --time_based "
               "--live-format=none --output-format=json --output=" +
               File("o.json"));
  ASSERT_EQ(rc, 0) << err_;
  const json j = json::parse(ReadFile(File("o.json")));
  const json& rates = j["iotail_run"]["rates"];
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_EQ(rates[0]["what"], "read IOPS");
  EXPECT_LT(std::abs(rates[0]["error_pct"].get<double>()), 1.5);
  EXPECT_LT(std::abs(rates[1]["error_pct"].get<double>()), 1.5);
  // Bandwidth: 4 MiB/s of 64 KiB reads = 64 IOPS.
  rc = Run("--ioengine=null --filename=" + File("b") +
           " --size=1m --bs=64k --rate=4m --runtime=500ms --time_based --live-format=none "
           "--output-format=json --output=" +
           File("o.json"));
  ASSERT_EQ(rc, 0) << err_;
  EXPECT_NEAR(json::parse(ReadFile(File("o.json")))["jobs"][0]["read"]["total_ios"].get<double>(),
              32, 2);
  const std::string f = " --filename=" + File("x") + " --size=1m";
  iotail::testing::ExpectRefused(
      {
          {"--rate_iops=fast" + f, "--rate_iops"},
          {"--rate=1q" + f, "--rate"},
          {"--rate_iops=1,2,3" + f, "--rate_iops"},
          {"--rate_iops=100 --rate=1m" + f, "--rate"},
          {"--rw=randread --rate_iops=,100" + f, "--rate"},
          {"--rw=randrw --rate_iops=100," + f, "--rate"},
          {"--rate_process=bursty --rate_iops=1" + f, "--rate_process"},
          {"--live-format=xml" + f, "--live-format"},
          {"--status-interval=1500us" + f, "--status-interval"},
          {"--write_hist_log=" + File("w") + " --log_hist_msec=300 --status-interval=1s" + f,
           "--status-interval"},
          {"--start_at=yesterday" + f, "--start_at"},
      },
      dir_);
}

TEST_F(RunRateTest, LiveLinesPerStatusIntervalWithProgress) {
  const int rc = Run("--ioengine=null --filename=" + File("v") +
                     " --size=1m --rw=randrw --runtime=600ms --time_based --log_hist_msec=100 "
                     "--write_hist_log=" +
                     File("vl") + " --status-interval=200ms");
  ASSERT_EQ(rc, 0) << err_;
  // A legend first; then about 3 spans (plus the partial first/last), each a read line and a
  // write line with their figures, the time left on the last; nothing wider than 120 columns.
  const auto lines = iotail::testing::Lines(err_);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("live: a line per 200 ms interval and direction", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("SLC1/SLC2"), std::string::npos) << lines[1];
  size_t spans = 0;
  for (size_t i = 2; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), 120u) << lines[i];
    if (lines[i].front() != '[') continue;
    ++spans;
    ASSERT_LT(i + 1, lines.size());
    EXPECT_NE(lines[i].find("] read "), std::string::npos) << lines[i];
    EXPECT_NE(lines[i + 1].find(" write "), std::string::npos) << lines[i + 1];
    for (const std::string& l : {lines[i], lines[i + 1]}) {
      EXPECT_NE(l.find("p99.9"), std::string::npos) << l;
      EXPECT_NE(l.find("SLC"), std::string::npos) << l;
    }
    const std::string rest = lines[i + 1] + (i + 2 < lines.size() ? lines[i + 2] : "");
    EXPECT_NE(rest.find("s left"), std::string::npos) << rest;
  }
  EXPECT_GE(spans, 3u);
  EXPECT_LE(spans, 5u);
  EXPECT_EQ(out_.find("IOPS") < out_.size(), true);   // the summary is on stdout
  EXPECT_EQ(out_.find("s left"), std::string::npos);  // and live lines are not
}

TEST_F(RunRateTest, SigintStopsCleanlyWithCompleteLogs) {
  const std::string prefix = File("i");
  const std::string json_path = File("i.json");
  const pid_t pid =
      SpawnRun({"--ioengine=io_uring", "--filename=" + File("int"), "--size=4m", "--rw=randrw",
                "--iodepth=8", "--numjobs=2", "--time_based", "--runtime=30s", "--rate_iops=5000",
                "--log_hist_msec=200", "--write_hist_log=" + prefix, "--output-format=json",
                "--output=" + json_path},
               File("err.txt"));
  ASSERT_GE(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::optional<Ended> ended = Interrupt(pid);
  ASSERT_TRUE(ended.has_value());
  EXPECT_LT(ended->seconds, 2.0);
  const std::string err = ReadFile(File("err.txt"));
  if (ended->status == 2 && err.find("not available") != std::string::npos) {
    GTEST_SKIP() << err;
  }
  EXPECT_EQ(ended->status, 130) << err;
  EXPECT_NE(err.find("interrupted by SIGINT"), std::string::npos) << err;
  const json j = json::parse(ReadFile(json_path));
  EXPECT_EQ(j["iotail_run"]["interrupted"], true);
  EXPECT_EQ(j["iotail_run"]["signal"], "SIGINT");
  uint64_t all = 0;
  for (int job = 1; job <= 2; ++job) {
    for (int ddir = 0; ddir < 2; ++ddir) {
      const uint64_t ios = j["jobs"][job - 1][ddir == 0 ? "read" : "write"]["total_ios"];
      const std::string n = std::to_string(job) + ".log";
      EXPECT_EQ(LogCounts(prefix + "_clat_hist." + n, ddir).first, ios);
      EXPECT_EQ(LogCounts(prefix + "_lat_hist." + n, ddir).first, ios);
      all += ios;
    }
  }
  // At most 1.5 s at 2 clones x 2 directions x 5000 IOPS; the start (file creation, ring setup)
  // takes some of the 1.5 s, more on a loaded machine, so only a clear lower bound.
  EXPECT_GT(all, 5'000u);
  EXPECT_LT(all, 32'000u);
  EXPECT_LT(j["iotail_aggregate"]["elapsed"].get<uint64_t>(), 3u);
}

// A SIGINT while waiting for --start_at stops the run before anything is written, and the wait
// says when the run would have started (issue 25: 32 writes went to a device after the interrupt).
TEST_F(RunRateTest, SigintDuringTheStartAtWaitWritesNothing) {
  const std::string target = File("untouched");
  {
    std::ofstream(target).close();
    std::filesystem::resize_file(target, 1 << 20);  // zeros; random data would show any write
  }
  const std::string err_path = File("wait.err");
  const uint64_t at = NowEpochMs() + 30'000;
  const pid_t pid = SpawnRun(
      {"--name=w", "--ioengine=psync", "--filename=" + target, "--size=1m", "--rw=write", "--bs=4k",
       "--start_at=" + std::to_string(at), "--live_format=none", "--output=" + File("w.json")},
      err_path);
  ASSERT_GE(pid, 0);
  ASSERT_TRUE(WaitForText(err_path, "waiting for --start_at", 20.0)) << ReadFile(err_path);
  // The summary's temporary file is made when the summary is written, not at the start, so a run
  // killed meanwhile leaves none (issue 25).
  const auto temporaries = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      n += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(temporaries(), 0u);
  const std::optional<Ended> ended = Interrupt(pid);
  ASSERT_TRUE(ended.has_value());
  const std::string err = ReadFile(err_path);
  EXPECT_EQ(ended->status, 130) << err;
  // When it would have started: 30 s after the command began.
  EXPECT_TRUE(err.find("in 30.0 s") != std::string::npos || err.find("in 29.") != std::string::npos)
      << err;
  EXPECT_NE(err.find("nothing was run"), std::string::npos) << err;
  const std::string data = ReadFile(target);
  ASSERT_EQ(data.size(), 1u << 20);
  EXPECT_EQ(data.find_first_not_of('\0'), std::string::npos) << "the target was written";
  EXPECT_EQ(temporaries(), 0u);
  EXPECT_FALSE(std::filesystem::exists(File("w.json")));
}

// Interrupted during the second of three stonewalled jobs: the third is not reported (it was
// reported with an empty name, group 0 and the run's time) and the run says it did not run.
TEST_F(RunRateTest, JobsThatNeverRanAreNotReported) {
  const std::string json_path = File("s.json");
  const std::string err_path = File("s.err");
  const pid_t pid = SpawnRun(
      {"--ioengine=psync", "--filename=" + File("s"), "--size=1m", "--rw=read", "--time_based",
       "--runtime=1500ms", "--rate_iops=200", "--live_format=none", "--output-format=json",
       "--output=" + json_path, "--name=a", "--name=b", "--stonewall", "--name=c", "--stonewall"},
      err_path);
  ASSERT_GE(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2300));  // during b
  const std::optional<Ended> ended = Interrupt(pid);
  ASSERT_TRUE(ended.has_value());
  const std::string err = ReadFile(err_path);
  EXPECT_EQ(ended->status, 130) << err;
  EXPECT_NE(err.find("job 'c' did not run"), std::string::npos) << err;
  EXPECT_EQ(err.find("job 'a' did not run"), std::string::npos) << err;
  const json j = json::parse(ReadFile(json_path));
  ASSERT_EQ(j["jobs"].size(), 2u) << j["jobs"].dump();
  EXPECT_EQ(j["jobs"][0]["jobname"], "a");
  EXPECT_EQ(j["jobs"][1]["jobname"], "b");
  EXPECT_EQ(j["jobs"][1]["groupid"], 1);
  EXPECT_GT(j["jobs"][1]["read"]["total_ios"].get<uint64_t>(), 0u);
}

}  // namespace run_rate_test
