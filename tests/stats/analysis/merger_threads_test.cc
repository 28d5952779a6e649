// Tests of how many threads the merger runs, and that the count never changes a sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "stats/analysis/merger.h"
#include "tests/stats/analysis/merger_test_util.h"

namespace iotail::stats {
namespace {

using MergerThreadsTest = LogFilesTest;

MergeOptions WithThreads(unsigned threads) {
  MergeOptions options;
  options.quantum_ms = 1000;
  options.threads = threads;
  return options;
}

TEST_F(MergerThreadsTest, SmallInputRunsOnOneThreadWithTheSumsOfOnePerCore) {
  // By default a small input runs on the caller's thread alone, with the lanes (and so the order
  // of the fractional sums) of one thread per core: the same bits as --threads=cores. Records of
  // 337 ms straddle the 1 s quanta, so the sums are fractional.
  std::vector<std::string> files;
  for (int f = 0; f < 5; ++f) {
    std::string data;
    for (int k = 1; k <= 40; ++k) {
      data += Line(
          k * 337 + 41 * f, (k + f) % 2,
          {{static_cast<size_t>(200 + k), uint64_t(k + f)}, {static_cast<size_t>(1000 + f), 3}});
    }
    files.push_back(Write("s" + std::to_string(f) + ".log", data));
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  Merger automatic(files, WithThreads(0));
  EXPECT_EQ(automatic.threads(), 1u);
  const std::vector<Quantum> got = RunMerger(automatic);
  Merger per_core(files, WithThreads(cores));
  EXPECT_EQ(per_core.threads(), cores);
  const std::vector<Quantum> expected = RunMerger(per_core);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start_ms, expected[i].start_ms);
    for (int d = 0; d < kDirectionCount; ++d) {
      ASSERT_EQ(got[i].counts[d], expected[i].counts[d]) << "index " << i << " dir " << d;
    }
  }
}

}  // namespace
}  // namespace iotail::stats
