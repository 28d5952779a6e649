// Tests of how many threads the merger runs, and that the count never changes a sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "tests/stats/analysis/merger_test_util.h"

namespace iotail::stats {
namespace merger_threads_test {

using MergerThreadsTest = LogFilesTest;

MergeOptions WithThreads(unsigned threads) {
  MergeOptions options;
  options.quantum_ms = 1000;
  options.threads = threads;
  return options;
}

TEST_F(MergerThreadsTest, SmallInputRunsOnOneThreadWithTheSumsOfOne) {
  // By default a small input runs on the caller's thread alone, in one lane (one window buffer,
  // the fractional sums in one order): the same bits as --threads=1 on any machine, and the same
  // sums as one thread per core. Records of 337 ms straddle the 1 s quanta, so the sums are
  // fractional.
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
  Merger one(files, WithThreads(1));
  const std::vector<Quantum> expected = RunMerger(one);
  Merger per_core(files, WithThreads(cores));
  EXPECT_EQ(per_core.threads(), cores);
  const std::vector<Quantum> spread = RunMerger(per_core);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_EQ(spread.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].start_ms, expected[i].start_ms);
    for (int d = 0; d < kDirectionCount; ++d) {
      ASSERT_EQ(got[i].counts[d], expected[i].counts[d]) << "index " << i << " dir " << d;
      ASSERT_EQ(spread[i].counts[d].size(), expected[i].counts[d].size());
      for (size_t b = 0; b < expected[i].counts[d].size(); ++b) {
        ASSERT_NEAR(spread[i].counts[d][b], expected[i].counts[d][b], 1e-9) << i << " " << b;
      }
    }
  }
}

TEST_F(MergerThreadsTest, TheErrorIsTheOneOneThreadMeetsFirstWhicheverLaneFailsFirst) {
  // Three files on two lanes: the first and third on lane 0, the second on lane 1. The second's
  // error is near its end, the third's on its second line: lane 0 fails long before lane 1 does,
  // and the second file's error is still the one shown, as one thread reading the files in order
  // shows it; the same with the split by time.
  auto damaged = [](int64_t time) {  // a line whose fields are all there, one not a number
    std::string line = Line(time, 0, {{3, 1}});
    return line.replace(line.rfind(", 0"), 3, ", x");
  };
  std::string big;
  for (int k = 1; k <= 400; ++k) big += Line(k * 250, k % 2, {{static_cast<size_t>(k % 90), 3}});
  big += damaged(100'250);
  const std::vector<std::string> files = {
      Write("first.log", Line(250, 0, {{3, 1}}) + Line(500, 0, {{3, 1}})), Write("second.log", big),
      Write("third.log", Line(250, 0, {{3, 1}}) + damaged(500))};
  auto error_of = [&](unsigned threads, bool split) {
    MergeOptions options = WithThreads(threads);
    options.split_by_time = split;
    options.split_min_piece_bytes = 1;
    try {
      Merger merger(files, options);
      RunMerger(merger);
    } catch (const LogFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string one = error_of(1, false);
  EXPECT_NE(one.find("second.log:401:"), std::string::npos) << one;
  for (int run = 0; run < 20; ++run) {
    EXPECT_EQ(error_of(2, false), one);
    EXPECT_EQ(error_of(2, true), one);
  }
}

TEST_F(MergerThreadsTest, EverySetOfDirectionsKeepsEachItsOwnCounts) {
  // The window has a slot per direction the input has (trims only, reads and trims, ...): each
  // direction's quantum holds its own records' counts and nothing of another's, and a direction
  // the input lacks is empty, with one thread, with lanes and split by time.
  for (unsigned set = 1; set < 8; ++set) {
    std::vector<std::string> files;
    for (int f = 0; f < 2; ++f) {
      std::string data;
      for (int k = 1; k <= 40; ++k) {
        for (int d = 0; d < kDirectionCount; ++d) {
          if (!(set & (1u << d))) continue;
          // Bucket 10 + d counts f + 1 per record: a quantum of 1 s holds four records of a file.
          data += Line(k * 250, d, {{static_cast<size_t>(10 + d), uint64_t(f + 1)}});
        }
      }
      files.push_back(Write("d" + std::to_string(set) + "_" + std::to_string(f) + ".log", data));
    }
    for (const unsigned threads : {1u, 2u, 3u}) {
      for (const bool split : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "directions " << set << ", " << threads << " threads, split " << split);
        MergeOptions options = WithThreads(threads);
        options.split_by_time = split;
        options.split_min_piece_bytes = 1;
        const MergeResult r = RunMerge(files, options);
        ASSERT_EQ(r.quanta.size(), 10u);
        for (const Quantum& q : r.quanta) {
          for (int d = 0; d < kDirectionCount; ++d) {
            const bool present = set & (1u << d);
            EXPECT_EQ(Sum(q.counts[d]), present ? 4.0 * (1 + 2) : 0.0) << q.start_ms << " " << d;
            if (present) {
              EXPECT_EQ(q.counts[d][10 + d], 12.0) << q.start_ms << " " << d;
            }
          }
        }
        for (int d = 0; d < kDirectionCount; ++d) {
          EXPECT_EQ(r.totals[d], set & (1u << d) ? 40u * 3 : 0u) << d;
        }
      }
    }
  }
}

}  // namespace merger_threads_test
}  // namespace iotail::stats
