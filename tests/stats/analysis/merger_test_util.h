// Helpers of the merger tests: log lines (Line, from the log tests), a merger's quanta copied out,
// and a fixture with a scratch directory for the logs.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "stats/analysis/merger.h"
#include "stats/core/histogram_layout.h"
#include "tests/stats/logs/log_test_util.h"
#include "tests/test_util.h"

namespace iotail::stats {

struct Quantum {
  int64_t start_ms;
  int64_t end_ms;
  std::array<std::vector<double>, kDirectionCount> counts;
};

inline std::vector<Quantum> RunMerger(Merger& merger) {
  std::vector<Quantum> out;
  merger.Run([&](const MergedQuantum& q) {
    Quantum copy{q.start_ms, q.end_ms, {}};
    for (int d = 0; d < kDirectionCount; ++d)
      copy.counts[d].assign(q.counts[d].begin(), q.counts[d].end());
    out.push_back(std::move(copy));
  });
  return out;
}

// What a whole merge gives: its quanta, each direction's whole-run total, records, warnings, how
// many files it scanned (before the run and after it: a wrong guess is scanned then) and whether
// its first window was split by time.
struct MergeResult {
  std::vector<Quantum> quanta;
  std::array<uint64_t, kDirectionCount> totals{};
  uint64_t records = 0;
  std::vector<std::string> warnings;
  size_t scanned_before_run = 0;
  size_t scanned_after_run = 0;
  bool split = false;
};

inline MergeResult RunMerge(const std::vector<std::string>& files, const MergeOptions& options) {
  Merger merger(files, options);
  MergeResult r;
  r.scanned_before_run = merger.scanned_files();
  r.quanta = RunMerger(merger);
  for (int d = 0; d < kDirectionCount; ++d) {
    if (!merger.Empty()) r.totals[d] = merger.Total(static_cast<Direction>(d)).Total();
  }
  r.records = merger.records();
  r.warnings = merger.warnings();
  r.scanned_after_run = merger.scanned_files();
  r.split = merger.split_by_time();
  return r;
}

inline double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// A scratch directory (removed afterwards) and Write() to put a log in it.
class LogFilesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeScratchDir("iotail_merger"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& data) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << data;
    return path.string();
  }
  std::filesystem::path dir_;
};

}  // namespace iotail::stats
