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
