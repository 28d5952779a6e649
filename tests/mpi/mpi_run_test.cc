// iotail-mpi under a real mpirun (Open MPI): 4 ranks on this machine run one rate-limited job from
// a common start; the cluster's histogram log equals, bucket for bucket, `iotail merge` of the
// ranks' own logs, and the summary's totals equal the per-rank sums; a rank that cannot open its
// target stops every rank with one error naming that rank, without a hang; and two "hosts" made of
// network namespaces joined by a veth pair, ranks launched into them by `ip netns exec` as
// mpirun's launcher agent, talk TCP over that pair. Skips, naming the reason, where iotail-mpi was
// not built (no MPI), mpirun is missing, or (namespaces) without root, ip or unshare.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "http_get.h"
#include "mpi_fixture.h"
#include "nbd_fixture.h"

namespace mpi_run_test {

namespace fs = std::filesystem;
using iotail::testing::mpi::MpiRunTest;
using iotail::testing::mpi::ReadLog;
using nlohmann::json;

TEST_F(MpiRunTest, FourRanksMergeExactlyAndTheSummaryTotalsEveryRank) {
  const auto r = Mpi(4,
                     "--ioengine=null --filename=t.{rank} --size=1m --rate_iops=20000 --runtime=3 "
                     "--time_based --write_hist_log=P --log_hist_msec=500 --log_per_rank "
                     "--output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u) << summary["iotail_run"];
  uint64_t rank_ios = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(ranks[k]["rank"], k);
    EXPECT_LT(std::abs(ranks[k]["start_skew_ns"].get<double>()), 5e6) << ranks[k];
    rank_ios += ranks[k]["ios"].get<uint64_t>();
    // The null engine opens no file, as fio's ({rank} in --filename: ARankThatCannotStart...).
    EXPECT_FALSE(fs::exists(dir_ / ("t." + std::to_string(k))));
  }
  const uint64_t ios = summary["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(ios, rank_ios);
  EXPECT_NEAR(static_cast<double>(ios), 4 * 20000 * 3, 4 * 20000 * 3 * 0.05);
  EXPECT_NE(r.err.find("live over 4 ranks"), std::string::npos) << r.err;

  EXPECT_EQ(CompareWithMerge("P", 500), ios);
  EXPECT_TRUE(fs::exists(dir_ / "P_lat_hist.1.log"));  // rate-limited: the lat log too
}

TEST_F(MpiRunTest, EachCloneHasItsOwnSamplesAndGroupReportingSumsThem) {
  // 2 ranks x 2 clones x 1000 reads/s: each clone's entry does 2000/s over the cluster; the group
  // of all four, 4000/s.
  const std::string args =
      "--ioengine=null --filename=t.{rank} --size=1m --rw=randread --rate_iops=1000 --numjobs=2 "
      "--runtime=3 --time_based --log_hist_msec=500 --output-format=json";
  for (const bool grouped : {false, true}) {
    SCOPED_TRACE(grouped);
    const auto r = Mpi(2, args + (grouped ? " --group_reporting" : ""));
    ASSERT_EQ(r.status, 0) << r.err;
    const json summary = json::parse(r.out.substr(r.out.find('{')));
    const json& jobs = summary["jobs"];
    ASSERT_EQ(jobs.size(), grouped ? 1u : 2u) << summary;
    uint64_t ios = 0;
    for (const json& job : jobs) {
      const json& read = job["read"];
      const double rate = grouped ? 4000 : 2000;
      EXPECT_NEAR(read["iops"].get<double>(), rate, rate * 0.05);
      EXPECT_NEAR(read["iops_mean"].get<double>(), rate, rate * 0.05) << read;
      ios += read["total_ios"].get<uint64_t>();
    }
    uint64_t rank_ios = 0;
    for (const json& rank : summary["iotail_run"]["ranks"]) rank_ios += rank["ios"].get<uint64_t>();
    EXPECT_EQ(ios, rank_ios);
  }
}

TEST_F(MpiRunTest, ARankThatCannotStartStopsEveryRankNamingIt) {
  // d2 is a file, so rank 2 cannot make d2/t (fio makes missing directories, as iotail does).
  for (int k : {0, 1, 3}) fs::create_directories(dir_ / ("d" + std::to_string(k)));
  std::ofstream(dir_ / "d2") << "not a directory\n";
  const auto r = Mpi(4,
                     "--ioengine=psync --filename=d{rank}/t --size=1m --runtime=30 --time_based "
                     "--rw=write");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("iotail-mpi: rank 2 ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("d2/t"), std::string::npos) << r.err;
}

// The case: 4 ranks on the null engine with --size=1g. The null engine creates no file (it
// laid out 1 GiB per rank, and the start chosen before that was in the past for some ranks);
// every rank runs its 3 s at 20,000 IOPS from the common start.
TEST_F(MpiRunTest, FourNullRanksOfOneGigabyteStartTogether) {
  const auto r = Mpi(4,
                     "--ioengine=null --size=1g --rw=randread --rate_iops=20000 --runtime=3 "
                     "--time_based --log_hist_msec=500 --output-format=json --live_format=none");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  for (const json& rank : ranks) {
    EXPECT_GT(rank["ios"].get<double>(), 0.8 * 60000) << rank;
    EXPECT_LE(rank["ios"].get<double>(), 60000 + 20) << rank;
  }
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_LT(fs::is_regular_file(e) ? fs::file_size(e) : 0, 1u << 20) << e.path();
  }
}

// A rank stopped with SIGSTOP mid-run sends nothing more: rank 0 names it in a warning within a
// few periods, and once its own run is over gives up on it after the grace (5 s), printing the
// summary of what the others measured (the stopped rank marked lost) and ending the job with
// status 1, where the job used to hang past --runtime without a word.
TEST_F(MpiRunTest, AStoppedRankIsNamedAndTheJobEndsWithoutIt) {
  const std::string script =
      "cd '" + dir_.string() + "' && timeout -s KILL 90 " + mpirun_ +
      " --allow-run-as-root --oversubscribe --bind-to none -np 2 " + IOTAIL_MPI_BINARY +
      " run --ioengine=null --size=1m --rw=read --rate_iops=1000 --runtime=4 --time_based "
      "--log_hist_msec=500 --output-format=json --live_format=none > out.json 2> err.txt &\n"
      "T=$!; sleep 2.5; stopped=\n"
      "for p in $(pgrep -P \"$(pgrep -P $T)\"); do\n"
      "  if tr '\\0' '\\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=1; then\n"
      "    kill -STOP $p && stopped=$p; fi; done\n"
      "s=$(date +%s%N); wait $T; rc=$?; e=$(date +%s%N)\n"
      "[ -n \"$stopped\" ] && { kill -CONT $stopped; kill -KILL $stopped; } 2>/dev/null\n"
      "echo \"stopped=$stopped rc=$rc ms=$(( (e - s) / 1000000 ))\"";
  const auto r = iotail::testing::RunShell(script, dir_);
  std::cerr << r.out;
  ASSERT_EQ(r.out.find("stopped= "), std::string::npos) << "no rank 1 process found" << r.out;
  ASSERT_NE(r.out.find("stopped="), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("rc=1 "), std::string::npos) << r.out;
  const int ms = std::stoi(r.out.substr(r.out.find("ms=") + 3));
  // Rank 0 ends its run 1.5 s after the stop, then waits out the rest of the 5 s grace.
  EXPECT_GT(ms, 3000);
  EXPECT_LT(ms, 20000);
  const std::string err = iotail::testing::ReadFile(dir_ / "err.txt");
  EXPECT_NE(err.find("iotail-mpi: warning: rank 1 ("), std::string::npos) << err;
  EXPECT_NE(err.find("has sent nothing for"), std::string::npos) << err;
  EXPECT_NE(err.find("ending the job without it"), std::string::npos) << err;
  const std::string out = iotail::testing::ReadFile(dir_ / "out.json");
  ASSERT_NE(out.find('{'), std::string::npos) << out << err;
  const json summary = json::parse(out.substr(out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_FALSE(ranks[0].contains("lost"));
  EXPECT_NEAR(ranks[0]["ios"].get<double>(), 4000, 400);
  EXPECT_TRUE(ranks[1]["lost"].get<bool>());
  EXPECT_GE(ranks[1]["lost_silence_s"].get<double>(), 5.0);
}

// The sum of every sample of `name` in a Prometheus text exposition.
double SumOfSamples(const std::string& text, const std::string& name) {
  double sum = 0;
  for (const std::string& line : iotail::testing::Lines(text)) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// The common start is chosen once every rank has opened and laid out its targets: rank 1 lays out
// 1 GiB (several seconds here; iotail-mpi started every rank three seconds ahead and aborted when
// a layout took longer), and both still start together; --setup_timeout names a straggler.
TEST_F(MpiRunTest, RanksStartTogetherAfterEverySetupHowEverLong) {
  std::ofstream(dir_ / "job.0.fio") << "[j]\nfilename=t.0\nsize=1m\n";
  std::ofstream(dir_ / "job.1.fio") << "[j]\nfilename=t.1\nsize=1g\n";
  const std::string common =
      "--ioengine=psync --rw=read --rate_iops=200 --runtime=2 --time_based --log_hist_msec=500 "
      "--output-format=json --live_format=none ";
  const auto slow = std::chrono::steady_clock::now();
  const auto r = Mpi(2, common + "job.{rank}.fio");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - slow).count();
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  for (const json& rank : ranks) {
    EXPECT_LT(std::abs(rank["start_skew_ns"].get<double>()), 5e6) << rank;
    EXPECT_NEAR(rank["ios"].get<double>(), 400, 40) << rank;
  }
  EXPECT_EQ(fs::file_size(dir_ / "t.1"), 1u << 30);
  std::cerr << "setup of 1 GiB and a 2 s run took " << took << " s\n";
  fs::remove(dir_ / "t.1");

  const auto late = Mpi(2, common + "--setup_timeout=1s job.{rank}.fio");
  EXPECT_NE(late.status, 0);
  EXPECT_NE(late.err.find("rank 1 ("), std::string::npos) << late.err;
  EXPECT_NE(late.err.find("not ready to start after 1 s (--setup_timeout)"), std::string::npos)
      << late.err;
}

TEST_F(MpiRunTest, RankZeroServesTheClustersMetrics) {
  const int port = iotail::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  iotail::testing::ChildProcess run;
  ASSERT_EQ(run.Spawn({"/bin/sh", "-c",
                       "cd '" + dir_.string() + "' && exec timeout -s KILL 120 " + mpirun_ +
                           " --allow-run-as-root --oversubscribe --bind-to none -np 2 " +
                           IOTAIL_MPI_BINARY +
                           " run --ioengine=null --filename=t.{rank} --size=1m --rate_iops=3000"
                           " --runtime=2 --time_based --log_hist_msec=500 --output-format=json"
                           " --output=summary.json --prometheus=127.0.0.1:" +
                           std::to_string(port) + " --prometheus_linger=3s"},
                      dir_ / "mpi.log", SIGKILL),
            "");
  ASSERT_TRUE(iotail::testing::WaitForText(dir_ / "mpi.log", "serving the final metrics", 30))
      << iotail::testing::ReadFile(dir_ / "mpi.log");
  const auto last = iotail::testing::HttpGet(port, "/metrics");
  ASSERT_TRUE(last.ok);
  EXPECT_TRUE(run.WaitFor(std::chrono::seconds(30)));
  EXPECT_EQ(run.status(), 0) << iotail::testing::ReadFile(dir_ / "mpi.log");
  const json summary = json::parse(iotail::testing::ReadFile(dir_ / "summary.json"));
  const json& read = summary["jobs"][0]["read"];
  // Both ranks' I/Os, as the summary counts them (the final reduce equals the intervals' sum).
  EXPECT_EQ(SumOfSamples(last.body, "iotail_io_ops_total"), read["total_ios"].get<double>());
  EXPECT_EQ(SumOfSamples(last.body, "iotail_io_bytes_total"), read["io_bytes"].get<double>());
  EXPECT_NEAR(read["total_ios"].get<double>(), 2 * 3000 * 2, 2 * 3000 * 2 * 0.05);
}

// The CPU seconds (user + system) in the second line of the shell's `times` output (children's).
double ChildCpuSeconds(const std::string& times) {
  const auto lines = iotail::testing::Lines(times);
  if (lines.size() < 2) return -1;
  double total = 0;
  std::stringstream fields(lines[1]);
  for (std::string f; fields >> f;) {  // "0m0.123000s"
    const size_t m = f.find('m');
    total += std::stod(f.substr(0, m)) * 60 + std::stod(f.substr(m + 1));
  }
  return total;
}

TEST_F(MpiRunTest, ARankWaitingForTheOthersDoesNotSpin) {
  // Rank 0 keeps serving its metrics for 4 s after the run; rank 1 waits for it all that time (in
  // the final exit-status reduce). Open MPI's blocking calls would poll a whole core (about 4 s
  // of CPU); iotail-mpi tests its requests with 1 ms sleeps.
  {
    std::ofstream wrap(dir_ / "cpu.sh");
    wrap << "#!/bin/sh\n\"$@\"\nrc=$?\ntimes > cpu.$OMPI_COMM_WORLD_RANK\nexit $rc\n";
  }
  fs::permissions(dir_ / "cpu.sh", fs::perms::owner_all);
  const auto r = iotail::testing::RunShell(
      "cd '" + dir_.string() + "' && timeout -s KILL 120 " + mpirun_ +
          " --allow-run-as-root --oversubscribe --bind-to none -np 2 ./cpu.sh " +
          IOTAIL_MPI_BINARY +
          " run --ioengine=null --filename=t.{rank} --size=1m --rate_iops=100 --runtime=1"
          " --time_based --log_hist_msec=500 --live_format=none --prometheus=0"
          " --prometheus_linger=4s",
      dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const double waiting = ChildCpuSeconds(iotail::testing::ReadFile(dir_ / "cpu.1"));
  ASSERT_GE(waiting, 0) << iotail::testing::ReadFile(dir_ / "cpu.1");
  // About 8 s of wall time (3 s to the common start, 1 s of run, 4 s of linger): 10% of a core
  // is 0.8 s; the measured cost is about 0.1 s.
  EXPECT_LT(waiting, 0.8) << "rank 1 used " << waiting << " s of CPU";
}

// Two "hosts": namespaces A and B joined by a veth pair (10.77.91.1 and .2), each with its own
// loopback; mpirun runs in A and starts B's rank through the launcher agent (`ip netns exec B
// unshare --uts`, so B also has a host name of its own). MPI may use TCP only, on that subnet.
class MpiNetnsTest : public MpiRunTest {
 protected:
  void SetUp() override {
    MpiRunTest::SetUp();
    if (IsSkipped()) return;
    if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    for (const char* tool : {"ip", "unshare"}) {
      if (iotail::testing::FindInPath(tool).empty()) GTEST_SKIP() << tool << " not found";
    }
    const std::string id = std::to_string(::getpid() % 100000);
    a_ = "iotailA" + id;
    b_ = "iotailB" + id;
    const std::string va = "ivA" + id, vb = "ivB" + id;
    const std::string setup =
        "ip netns add " + a_ + " && ip netns add " + b_ + " && ip link add " + va +
        " type veth peer name " + vb + " && ip link set " + va + " netns " + a_ +
        " && ip link set " + vb + " netns " + b_ + " && ip -n " + a_ +
        " addr add 10.77.91.1/24 dev " + va + " && ip -n " + b_ + " addr add 10.77.91.2/24 dev " +
        vb + " && ip -n " + a_ + " link set " + va + " up && ip -n " + b_ + " link set " + vb +
        " up && ip -n " + a_ + " link set lo up && ip -n " + b_ + " link set lo up";
    const auto r = iotail::testing::RunShell(setup, dir_);
    if (r.status != 0) GTEST_SKIP() << "cannot make network namespaces here: " << r.err;
    made_ = true;
    vb_ = vb;
    std::ofstream agent(dir_ / "agent.sh");
    agent << "#!/bin/sh\n"
          << "# mpirun's launcher: AGENT HOST COMMAND... runs COMMAND in HOST's namespace.\n"
          << "host=\"$1\"; shift\n"
          << "echo \"$host\" >> '" << (dir_ / "agent.log").string() << "'\n"
          << "case \"$host\" in 10.77.91.1) ns=" << a_ << " ;; 10.77.91.2) ns=" << b_
          << " ;; *) exit 1 ;; esac\n"
          << "exec ip netns exec \"$ns\" unshare --uts sh -c \"hostname $ns; $*\"\n";
    agent.close();
    fs::permissions(dir_ / "agent.sh", fs::perms::owner_all);
  }
  void TearDown() override {
    if (made_) iotail::testing::RunShell("ip netns del " + a_ + "; ip netns del " + b_, dir_);
    MpiRunTest::TearDown();
  }
  uint64_t RxBytes() {
    const auto r = iotail::testing::RunShell(
        "cat /proc/net/dev | grep ' " + vb_ + ":' || ip netns exec " + b_ + " cat /proc/net/dev",
        dir_);
    for (const std::string& line : iotail::testing::Lines(r.out)) {
      const size_t colon = line.find(vb_ + ":");
      if (colon != std::string::npos) return std::stoull(line.substr(colon + vb_.size() + 1));
    }
    return 0;
  }
  std::string a_, b_, vb_;
  bool made_ = false;
};

TEST_F(MpiNetnsTest, TwoHostsOverVethMergeExactly) {
  const auto r = iotail::testing::RunShell(
      "cd '" + dir_.string() + "' && timeout -s KILL 120 ip netns exec " + a_ + " " + mpirun_ +
          " --allow-run-as-root --oversubscribe --bind-to none -np 2 --host 10.77.91.1,10.77.91.2"
          " --mca plm_rsh_agent " +
          (dir_ / "agent.sh").string() +
          " --mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include 10.77.91.0/24"
          " --mca btl tcp,self --mca btl_tcp_if_include 10.77.91.0/24 " +
          IOTAIL_MPI_BINARY +
          " run --ioengine=null --filename=n.{host} --size=1m --rate_iops=2000 --runtime=2"
          " --time_based --write_hist_log=N --log_hist_msec=500 --log_per_rank"
          " --output-format=json",
      dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[1]["host"], b_);               // launched through the agent, in B
  EXPECT_FALSE(fs::exists(dir_ / ("n." + b_)));  // the null engine opens no file, as fio's
  EXPECT_NE(iotail::testing::ReadFile(dir_ / "agent.log").find("10.77.91.2"), std::string::npos);
  const uint64_t ios = summary["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(ios, ranks[0]["ios"].get<uint64_t>() + ranks[1]["ios"].get<uint64_t>());
  EXPECT_NEAR(static_cast<double>(ios), 2 * 2000 * 2, 2 * 2000 * 2 * 0.05);
  EXPECT_EQ(CompareWithMerge("N", 500), ios);
  EXPECT_GT(RxBytes(), 1000u);  // the ranks really talked over the veth pair
}

}  // namespace mpi_run_test
