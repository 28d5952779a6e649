// What the iotail-mpi tests under a real mpirun share (tests/mpi/mpi_*_test.cc): reading a
// histogram log's lines, and the fixture that runs iotail-mpi in a scratch directory and compares
// the cluster's log with `iotail merge` of the ranks' own. Skips, naming the reason, where
// iotail-mpi was not built (no MPI) or mpirun is missing.
#pragma once

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
#include "nbd_fixture.h"

namespace iotail::testing::mpi {

namespace fs = std::filesystem;
using nlohmann::json;

struct Line {
  uint64_t time_ms = 0;
  int ddir = 0;
  uint64_t bs = 0;
  std::vector<uint64_t> counts;
};

inline std::vector<Line> ReadLog(const fs::path& path) {
  std::vector<Line> lines;
  std::ifstream in(path);
  for (std::string text; std::getline(in, text);) {
    std::stringstream fields(text);
    std::string f;
    Line l;
    std::getline(fields, f, ',');
    l.time_ms = std::stoull(f);
    std::getline(fields, f, ',');
    l.ddir = std::stoi(f);
    std::getline(fields, f, ',');
    l.bs = std::stoull(f);
    while (std::getline(fields, f, ',')) l.counts.push_back(std::stoull(f));
    lines.push_back(std::move(l));
  }
  return lines;
}

class MpiRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(IOTAIL_MPI_BINARY).empty()) GTEST_SKIP() << "iotail-mpi not built (no MPI)";
    mpirun_ = iotail::testing::FindInPath("mpirun");
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun not found (Debian package openmpi-bin)";
    dir_ = iotail::testing::MakeScratchDir("iotail_mpi");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // Compares PREFIX_KIND_hist.1.log with `iotail merge` of PREFIX.rank*_KIND_hist.*.log, bucket
  // for bucket (KIND: clat, or a stage of --explain: explain_device); returns the I/Os the cluster
  // log holds.
  uint64_t CompareWithMerge(const std::string& prefix, int period_ms,
                            const std::string& kind = "clat") {
    const std::string merged_log = "M_" + kind + ".log";
    const auto merge = iotail::testing::RunShell(
        "cd '" + dir_.string() + "' && " + IOTAIL_BINARY +
            " merge --time-quantum=" + std::to_string(period_ms) + "ms -o " + merged_log + " " +
            prefix + ".rank*_" + kind + "_hist.*.log",
        dir_);
    EXPECT_EQ(merge.status, 0) << merge.err;
    const auto cluster = ReadLog(dir_ / (prefix + "_" + kind + "_hist.1.log"));
    const auto merged = ReadLog(dir_ / merged_log);
    EXPECT_EQ(cluster.size(), merged.size()) << kind;
    uint64_t logged = 0;
    for (size_t i = 0; i < cluster.size() && i < merged.size(); ++i) {
      EXPECT_EQ(cluster[i].counts, merged[i].counts) << kind << " line " << i;
      EXPECT_EQ(cluster[i].ddir, merged[i].ddir);
      // The bs column: the mean bytes per I/O, as merge computes it from the ranks' bs columns;
      // in an interval without I/O, the job's block size in both (a stalled machine once gave
      // one such interval, in which merge wrote 0).
      EXPECT_EQ(cluster[i].bs, merged[i].bs) << "line " << i;
      // Full intervals end where merge's quanta end; the final partial one inside its quantum.
      if (i + 1 < cluster.size()) {
        EXPECT_EQ(cluster[i].time_ms, merged[i].time_ms) << "line " << i;
      } else {
        EXPECT_LE(cluster[i].time_ms, merged[i].time_ms);
        EXPECT_GT(cluster[i].time_ms + period_ms, merged[i].time_ms);
      }
      for (uint64_t c : cluster[i].counts) logged += c;
    }
    return logged;
  }

  // iotail-mpi COMMAND ARGS on `ranks` ranks (COMMAND: run or sweep).
  iotail::testing::CommandResult Mpi(int ranks, const std::string& args,
                                     const std::string& command = "run") {
    return iotail::testing::RunShell(
        "cd '" + dir_.string() + "' && timeout -s KILL 170 " + mpirun_ +
            " --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(ranks) +
            " " + IOTAIL_MPI_BINARY + " " + command + " " + args,
        dir_);
  }
  std::string mpirun_;
  fs::path dir_;
};

}  // namespace iotail::testing::mpi
