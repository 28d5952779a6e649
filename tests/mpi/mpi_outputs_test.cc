// iotail-mpi's outputs under a real mpirun: the cluster's histogram log of a bssplit job from a job
// file (its name and period the file's) equals `iotail merge` of the ranks' own logs in every
// column; no two ranks write the same file, whatever the kind and wherever it is set; Ctrl-C on
// rank 0 during --prometheus_linger ends it as it ends `iotail run`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mpi_fixture.h"

namespace mpi_outputs_test {

namespace fs = std::filesystem;
using iotail::testing::mpi::MpiRunTest;
using iotail::testing::mpi::ReadLog;
using nlohmann::json;
using MpiOutputsTest = MpiRunTest;

// A bssplit job from a job file that sets the log's name and period: the cluster's log is that
// name at that period, and equals merge of the ranks' own logs in every column (bs: the mean bytes
// per I/O of the 4k/64k mix, about 34 KiB, not 4096).
TEST_F(MpiOutputsTest, BssplitJobFileClusterLogEqualsMergeInEveryColumn) {
  std::ofstream(dir_ / "mix.fio") << "[mix]\nioengine=null\nfilename=t\nsize=64m\nrw=randread\n"
                                     "bssplit=4k/50:64k/50\nrate_iops=2000\nruntime=2\n"
                                     "time_based\nwrite_hist_log=J\nlog_hist_msec=250\n";
  const auto r = Mpi(2, "--log_per_rank --output-format=json mix.fio");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const uint64_t ios = summary["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(CompareWithMerge("J", 250), ios);
  const auto cluster = ReadLog(dir_ / "J_clat_hist.1.log");
  ASSERT_GT(cluster.size(), 4u);
  EXPECT_EQ(cluster[1].time_ms - cluster[0].time_ms, 250u);
  EXPECT_GT(cluster[1].bs, 20000u);
  EXPECT_LT(cluster[1].bs, 50000u);
}

// Every kind of file a rank writes is its own: fio's value logs, its histogram logs and the target
// files iotail names, given on the command line or in a job file.
TEST_F(MpiOutputsTest, NoTwoRanksWriteTheSameFile) {
  const std::string logs = "write_bw_log=B\nwrite_iops_log=I\nwrite_lat_log=L\nwrite_hist_log=H\n";
  std::ofstream(dir_ / "own.fio") << "[f]\nioengine=psync\nsize=256k\nrw=randread\nruntime=1\n"
                                     "time_based\n" +
                                         logs;
  for (const std::string& args :
       {std::string("--log_per_rank own.fio"),
        std::string("--log_per_rank --name=f --ioengine=psync --size=256k --rw=randread "
                    "--runtime=1 --time_based --write_bw_log=B --write_iops_log=I "
                    "--write_lat_log=L --write_hist_log=H")}) {
    const auto r = Mpi(2, args);
    ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    for (const std::string& name : {std::string("f.0.0"), std::string("B_bw.1.log"),
                                    std::string("I_iops.1.log"), std::string("L_clat.1.log"),
                                    std::string("L_lat.1.log"), std::string("H_clat_hist.1.log")}) {
      const size_t dot = name.find(name[0] == 'f' ? '\0' : '_');
      for (int k = 0; k < 2; ++k) {
        const std::string own =
            name[0] == 'f' ? name + ".rank" + std::to_string(k)
                           : name.substr(0, dot) + ".rank" + std::to_string(k) + name.substr(dot);
        EXPECT_TRUE(fs::exists(dir_ / own)) << args << ": " << own;
      }
      // The shared name is only the cluster's histogram log (rank 0's).
      EXPECT_EQ(fs::exists(dir_ / name), name == "H_clat_hist.1.log") << args << ": " << name;
    }
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().extension() == ".log") fs::remove(entry.path());
    }
  }
}

// Stonewalled jobs run in two batches, each closing its interval clock and each job's log counting
// from its own start (as fio's): the cluster's log holds both batches on one time line, the second
// from the first boundary after the first ended, each equal to merge of its job's logs.
TEST_F(MpiOutputsTest, StonewalledBatchesAllReachTheClusterLog) {
  std::ofstream(dir_ / "two.fio") << "[global]\nioengine=null\nfilename=t\nsize=64m\n"
                                     "rw=randread\nrate_iops=1000\nruntime=1\ntime_based\n"
                                     "write_hist_log=W\nlog_hist_msec=250\n"
                                     "[first]\n[second]\nstonewall\n";
  const auto r = Mpi(2, "--log_per_rank --output-format=json two.fio");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const auto merge = [&](int job) {
    const std::string name = "M" + std::to_string(job) + ".log";
    const auto m = iotail::testing::RunShell(
        "cd '" + dir_.string() + "' && " + IOTAIL_BINARY + " merge --time-quantum=250ms -o " +
            name + " W.rank*_clat_hist." + std::to_string(job) + ".log",
        dir_);
    EXPECT_EQ(m.status, 0) << m.err;
    return ReadLog(dir_ / name);
  };
  const auto first = merge(1), second = merge(2);
  const auto cluster = ReadLog(dir_ / "W_clat_hist.1.log");
  ASSERT_EQ(cluster.size(), first.size() + second.size());
  uint64_t logged = 0;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const bool in_first = i < first.size();
    const auto& want = in_first ? first[i] : second[i - first.size()];
    EXPECT_EQ(cluster[i].counts, want.counts) << "line " << i;
    for (uint64_t c : cluster[i].counts) logged += c;
  }
  // The second batch from the boundary after the first's last line.
  const uint64_t offset = (first.back().time_ms + 249) / 250 * 250;
  EXPECT_EQ(cluster[first.size()].time_ms, offset + second[0].time_ms);
  EXPECT_EQ(logged, summary["jobs"][0]["read"]["total_ios"].get<uint64_t>() +
                        summary["jobs"][1]["read"]["total_ios"].get<uint64_t>());
}

// Ctrl-C on rank 0 while it serves the cluster's final metrics (--prometheus_linger) ends the
// linger as it ends `iotail run`'s: at once, cleanly, the summary written, the run's exit status.
TEST_F(MpiOutputsTest, CtrlCDuringTheLingerEndsRankZeroAsARun) {
  const std::string script =
      // cd first on its own: in `cd D && (...) &` the cd is the background list's, and the loop
      // below would wait its 30 s for an `err` in another directory.
      "cd '" + dir_.string() + "' || exit 1; (exec timeout -s KILL 120 " + mpirun_ +
      " --allow-run-as-root --oversubscribe --bind-to none -np 2 " + IOTAIL_MPI_BINARY +
      " run --ioengine=null --filename=x --size=1m --runtime=1 --time_based --prometheus=0 "
      "--prometheus_linger=60s --live_format=none --output-format=json > out 2> err) & "
      "job=$!; for i in $(seq 300); do grep -q 'serving the final' err 2>/dev/null && break; "
      "sleep 0.1; done; start=$(date +%s); "
      "for p in $(pgrep -f -- '" +
      std::string(IOTAIL_MPI_BINARY) +
      " run'); do "
      "tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=0 && "
      "grep -q -- prometheus_linger=60s /proc/$p/cmdline && kill -INT $p; done; "
      "wait $job; echo \"rc=$? after=$(( $(date +%s) - start ))\"";
  const auto r = iotail::testing::RunShell(script, dir_);
  std::ifstream err(dir_ / "err");
  const std::string err_text((std::istreambuf_iterator<char>(err)), {});
  EXPECT_NE(r.out.find("rc=0 "), std::string::npos) << r.out << err_text;
  const size_t after = r.out.find("after=");
  ASSERT_NE(after, std::string::npos) << r.out;
  EXPECT_LT(std::stoi(r.out.substr(after + 6)), 15) << err_text;
  std::ifstream out(dir_ / "out");
  const std::string out_text((std::istreambuf_iterator<char>(out)), {});
  EXPECT_NE(out_text.find("\"ranks\""), std::string::npos) << out_text;
}

}  // namespace mpi_outputs_test
