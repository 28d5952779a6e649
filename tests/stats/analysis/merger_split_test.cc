// Tests of the first window split by time between the threads (merger_split.cc): whatever the
// input, the split merge equals the merge of one thread in every bit (its cells get their
// additions in one thread's order), with the same totals, records and warnings; what it cannot
// split cheaply (or at all) it leaves to the lanes, with the same answers, and errors are reported
// as a single thread reports them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "tests/stats/analysis/merger_test_util.h"

namespace iotail::stats {
namespace merger_split_test {

class MergerSplitTest : public LogFilesTest {
 protected:
  using Result = MergeResult;
  static Result Merge(const std::vector<std::string>& files, unsigned threads, bool split = true,
                      bool guess = true,
                      uint64_t min_piece = MergeOptions{}.split_min_piece_bytes) {
    MergeOptions options;
    options.quantum_ms = 1000;
    options.threads = threads;
    options.split_by_time = split;
    options.guess_segments = guess;
    options.split_min_piece_bytes = min_piece;
    return RunMerge(files, options);
  }
  // The merge with `threads` threads has one thread's totals, records, warnings and quanta: in
  // every bit when it was split (returns whether it was), else (the lanes add their sums in another
  // order) to a billionth.
  static bool ExpectSameAsOneThread(const std::vector<std::string>& files, unsigned threads,
                                    uint64_t min_piece = MergeOptions{}.split_min_piece_bytes) {
    const Result one = Merge(files, 1);
    EXPECT_FALSE(one.split);
    const Result many = Merge(files, threads, true, true, min_piece);
    EXPECT_EQ(many.totals, one.totals);
    EXPECT_EQ(many.records, one.records);
    EXPECT_EQ(many.warnings, one.warnings);
    EXPECT_EQ(many.quanta.size(), one.quanta.size());
    for (size_t i = 0; i < std::min(many.quanta.size(), one.quanta.size()); ++i) {
      EXPECT_EQ(many.quanta[i].start_ms, one.quanta[i].start_ms);
      for (int d = 0; d < kDirectionCount; ++d) {
        if (many.split) {
          EXPECT_EQ(many.quanta[i].counts[d], one.quanta[i].counts[d])
              << "quantum " << i << " dir " << d;
          continue;
        }
        EXPECT_EQ(many.quanta[i].counts[d].size(), one.quanta[i].counts[d].size());
        const size_t n = std::min(many.quanta[i].counts[d].size(), one.quanta[i].counts[d].size());
        for (size_t b = 0; b < n; ++b) {
          EXPECT_NEAR(many.quanta[i].counts[d][b], one.quanta[i].counts[d][b], 1e-9);
        }
      }
    }
    return many.split;
  }
};

// A job's lines: reads and writes every `period` ms (a few ms apart, as fio writes them), trims
// every `trim_every` records when non-zero, from `first` on, with counts that differ per record
// (on buckets far apart, so lines are long and records cross the split's cuts).
std::string Job(int64_t first, int64_t period, int records, int seed, int trim_every = 0) {
  std::string data;
  for (int k = 0; k < records; ++k) {
    const int64_t t = first + k * period;
    data += Line(t, 0, {{static_cast<size_t>(300 + (k + seed) % 50), uint64_t(k + 1)}});
    data += Line(t + 3, 1, {{static_cast<size_t>(700 + (k * seed) % 40), 2}, {900, uint64_t(k)}});
    if (trim_every > 0 && k % trim_every == trim_every - 1) {
      data += Line(t + 5, 2, {{static_cast<size_t>(1200 + k % 9), uint64_t(k % 5 + 1)}});
    }
  }
  return data;
}

TEST_F(MergerSplitTest, SplitMergeHasTheSumsOfOneThread) {
  // Periods that straddle the 1 s quanta (fractional weights), different starts and lengths,
  // a sparse direction (trims every 7 records: each of its records spans 7 periods).
  std::vector<std::string> files;
  for (int f = 0; f < 4; ++f) {
    files.push_back(Write("j" + std::to_string(f) + ".log",
                          Job(337 + 41 * f, 337, 150 + 20 * f, f, f % 2 == 0 ? 7 : 0)));
  }
  for (const unsigned threads : {2u, 3u, 4u}) {
    SCOPED_TRACE(threads);
    EXPECT_TRUE(ExpectSameAsOneThread(files, threads));
  }
  // Scanned rather than guessed: the same.
  const Result scanned = Merge(files, 2, true, false);
  const Result one = Merge(files, 1);
  EXPECT_TRUE(scanned.split);
  ASSERT_EQ(scanned.quanta.size(), one.quanta.size());
  for (size_t i = 0; i < one.quanta.size(); ++i) {
    EXPECT_EQ(scanned.quanta[i].counts, one.quanta[i].counts) << i;
  }
  // The lanes without the split: the same I/Os, summed in another order.
  const Result lanes = Merge(files, 2, false);
  EXPECT_FALSE(lanes.split);
  EXPECT_EQ(lanes.totals, one.totals);
  ASSERT_EQ(lanes.quanta.size(), one.quanta.size());
  for (size_t i = 0; i < one.quanta.size(); ++i) {
    for (int d = 0; d < kDirectionCount; ++d) {
      EXPECT_NEAR(Sum(lanes.quanta[i].counts[d]), Sum(one.quanta[i].counts[d]), 1e-6) << i;
    }
  }
}

TEST_F(MergerSplitTest, GapsAreNotedWithTheLinesOneThreadNames) {
  // Gaps of more than ten periods in the middle and near the end of the file, in both directions
  // and in one: the warning names the line after the longest (the first write after 20.5 s),
  // found by whichever range.
  std::string data = Job(250, 250, 60, 1);
  data += Job(250 + 60 * 250 + 20'000, 250, 60, 2);     // both directions, 20 s later
  data += Line(250 + 120 * 250 + 40'000, 0, {{5, 3}});  // reads only, after a longer gap
  data += Job(250 + 120 * 250 + 40'250, 250, 40, 3);
  const std::string file = Write("gaps.log", data);
  const std::string plain = Write("plain.log", Job(100, 250, 300, 4));
  EXPECT_TRUE(ExpectSameAsOneThread({file, plain}, 2));
  EXPECT_TRUE(ExpectSameAsOneThread({plain, file}, 3));
  const Result r = Merge({file, plain}, 2);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("before line 243"), std::string::npos) << r.warnings[0];
}

TEST_F(MergerSplitTest, UnusualFilesHaveTheSameAnswersSplitOrNot) {
  const std::string plain = Write("plain.log", Job(250, 250, 200, 1));
  // per_job_logs=0: two jobs, the second starting where the first did.
  const std::string jobs = Write("jobs.log", Job(250, 250, 200, 2) + Job(260, 250, 150, 3));
  // Trims only in the second half (a direction that starts late) and writes only in the first.
  std::string late;
  for (int k = 0; k < 200; ++k) {
    late += Line(250 + k * 250, 0, {{static_cast<size_t>(400 + k % 30), 2}});
    if (k < 80) late += Line(252 + k * 250, 1, {{static_cast<size_t>(600 + k % 20), 1}});
    if (k >= 150) late += Line(254 + k * 250, 2, {{1300, uint64_t(k)}});
  }
  const std::string late_file = Write("late.log", late);
  // A torn last line (a log still being written).
  const std::string torn = Write("torn.log", Job(250, 250, 200, 4) + "99999, 0, 4096, 1, 2");
  // Coarser lines (fio 3 at coarseness 1), merged with finer ones at their coarseness.
  std::string coarse;
  for (int k = 0; k < 300; ++k) {
    coarse +=
        Line(400 + k * 400, k % 2, {{static_cast<size_t>(100 + k % 300), 3}}, kFio3Buckets / 2);
  }
  const std::string coarse_file = Write("coarse.log", coarse);
  // Blank and CRLF lines.
  std::string odd;
  for (int k = 0; k < 200; ++k) {
    odd += Line(250 + k * 250, k % 2, {{static_cast<size_t>(500 + k % 10), 1}}, kFio3Buckets,
                k % 3 == 0 ? "\r\n" : "\n");
    if (k % 17 == 0) odd += "\n";
  }
  const std::string odd_file = Write("odd.log", odd);
  for (const auto& files : std::vector<std::vector<std::string>>{{plain, jobs},
                                                                 {late_file, plain},
                                                                 {plain, torn},
                                                                 {coarse_file, plain},
                                                                 {odd_file, jobs, late_file}}) {
    SCOPED_TRACE(files[0] + " " + files[1]);
    // Split, except where a torn line's warning would need its line number: the lanes then.
    const bool split = files[1] != torn;
    EXPECT_EQ(ExpectSameAsOneThread(files, 2), split);
    EXPECT_EQ(ExpectSameAsOneThread(files, 4), split);
  }
}

TEST_F(MergerSplitTest, PiecesOfAnySizeHaveTheSumsOfOneThread) {
  // Files far below the usual least piece, split into as many ranges as they have quanta for.
  std::vector<std::string> files;
  for (int f = 0; f < 3; ++f) {
    files.push_back(Write("small" + std::to_string(f) + ".log",
                          Job(337 + 41 * f, 337, 12 + 5 * f, f, f == 0 ? 3 : 0)));
  }
  files.push_back(Write("jobs.log", Job(250, 250, 20, 2) + Job(260, 250, 15, 3)));
  files.push_back(Write("one.log", Line(5000, 0, {{7, 2}})));
  // Pieces of a byte at least: as many ranges as the quanta allow (four per thread).
  for (const unsigned threads : {2u, 4u}) EXPECT_TRUE(ExpectSameAsOneThread(files, threads, 1));
}

TEST_F(MergerSplitTest, ErrorsAreReportedAsOneThreadReportsThem) {
  auto error_of = [&](const std::vector<std::string>& files, unsigned threads) {
    try {
      Merge(files, threads);
    } catch (const LogFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string plain = Write("plain.log", Job(250, 250, 200, 1));
  // A count that is not a number on line 301 (in a later range), and a line of another layout.
  std::string damaged = Job(250, 250, 200, 3);
  size_t at = 0;
  for (int line = 1; line < 301; ++line) at = damaged.find('\n', at) + 1;
  std::string layout = damaged;
  damaged.replace(damaged.find(", 0", at), 3, ", x");
  layout.insert(at, Line(250 + 150 * 250 - 1, 0, {{3, 1}}, kFio3Buckets / 2));
  for (const auto& [data, where] : {std::pair{damaged, "bad.log:301:"}, {layout, "bad.log:301:"}}) {
    const std::string bad = Write("bad.log", data);
    const std::string one = error_of({plain, bad}, 1);
    EXPECT_NE(one.find(where), std::string::npos) << one;
    EXPECT_EQ(error_of({plain, bad}, 2), one);
    EXPECT_EQ(error_of({bad, plain}, 4), one);
  }
}

}  // namespace merger_split_test
}  // namespace iotail::stats
