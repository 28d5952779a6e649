// Tests of the windowed parallel merger: alignment, adding up, layouts, time bases, windows.
#include "stats/analysis/merger.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"
#include "tests/stats/analysis/merger_test_util.h"
#include "tests/test_util.h"

namespace iotail::stats {
namespace merger_test {

namespace fs = std::filesystem;

class MergerTest : public LogFilesTest {
 protected:
  static MergeOptions Options(int64_t quantum_ms, unsigned threads = 1) {
    MergeOptions options;
    options.quantum_ms = quantum_ms;
    options.threads = threads;
    return options;
  }
};

TEST_F(MergerTest, PeriodEqualToQuantumKeepsCountsExact) {
  const std::string data = Line(250, 0, {{100, 3}}) + Line(250, 1, {{200, 5}}) +
                           Line(500, 0, {{101, 7}}) + Line(500, 1, {}) + Line(750, 0, {{1855, 1}}) +
                           Line(750, 1, {{0, 2}});
  Merger merger({Write("a.log", data)}, Options(250));
  EXPECT_EQ(merger.layout(), HistogramLayout::Fio3());
  EXPECT_FALSE(merger.epoch_times());
  EXPECT_TRUE(merger.HasDirection(Direction::kRead));
  EXPECT_TRUE(merger.HasDirection(Direction::kWrite));
  EXPECT_FALSE(merger.HasDirection(Direction::kTrim));
  const auto q = RunMerger(merger);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].start_ms, 0);
  EXPECT_EQ(q[0].end_ms, 250);
  EXPECT_EQ(q[2].start_ms, 500);
  EXPECT_EQ(q[0].counts[0][100], 3.0);
  EXPECT_EQ(q[0].counts[1][200], 5.0);
  EXPECT_EQ(q[1].counts[0][101], 7.0);
  EXPECT_EQ(Sum(q[1].counts[1]), 0.0);
  EXPECT_EQ(q[2].counts[0][1855], 1.0);
  EXPECT_EQ(q[2].counts[1][0], 2.0);
  EXPECT_EQ(Sum(q[0].counts[0]), 3.0);
  EXPECT_EQ(merger.records(), 6u);
  EXPECT_EQ(merger.Total(Direction::kRead)[100], 3u);
  EXPECT_EQ(merger.Total(Direction::kRead).Total(), 11u);
  EXPECT_EQ(merger.Total(Direction::kWrite).Total(), 7u);
}

TEST_F(MergerTest, RecordsAreSplitOverQuantaByOverlap) {
  // (0, 1500] with 300 samples over 1 s quanta: 200 in [0,1000), 100 in [1000,2000).
  Merger merger({Write("a.log", Line(1500, 0, {{50, 300}}))}, Options(1000));
  const auto q = RunMerger(merger);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_DOUBLE_EQ(q[0].counts[0][50], 200.0);
  EXPECT_DOUBLE_EQ(q[1].counts[0][50], 100.0);
  EXPECT_EQ(merger.Total(Direction::kRead)[50], 300u);
}

TEST_F(MergerTest, DuplicateTimestampBurstsLandInOneQuantum) {
  const std::string data = Line(1000, 0, {{5, 10}}) + Line(2400, 0, {{5, 14}}) +
                           Line(2400, 0, {{6, 1}}) + Line(2400, 0, {{7, 1}});
  Merger merger({Write("a.log", data)}, Options(1000));
  const auto q = RunMerger(merger);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_DOUBLE_EQ(q[0].counts[0][5], 10.0);
  EXPECT_DOUBLE_EQ(q[1].counts[0][5], 14.0 * 1000 / 1400);
  EXPECT_DOUBLE_EQ(q[2].counts[0][5], 14.0 * 400 / 1400);
  EXPECT_DOUBLE_EQ(q[2].counts[0][6], 1.0);
  EXPECT_DOUBLE_EQ(q[2].counts[0][7], 1.0);
}

TEST_F(MergerTest, SeveralFilesAddUpAndTotalsEqualAllCounts) {
  std::vector<std::string> files;
  uint64_t expected = 0;
  for (int f = 0; f < 4; ++f) {
    std::string data;
    for (int k = 1; k <= 10; ++k) {
      const uint64_t n = static_cast<uint64_t>(f * 100 + k);
      data += Line(k * 250 + f, k % 2, {{static_cast<size_t>(300 + k), n}, {900, 1}});
      expected += n + 1;
    }
    files.push_back(Write("f" + std::to_string(f) + ".log", data));
  }
  Merger merger(files, Options(1000));
  const auto q = RunMerger(merger);
  double merged = 0;
  for (const auto& quantum : q)
    for (const auto& d : quantum.counts) merged += Sum(d);
  EXPECT_NEAR(merged, static_cast<double>(expected), 1e-6);
  EXPECT_EQ(merger.Total(Direction::kRead).Total() + merger.Total(Direction::kWrite).Total(),
            expected);
  EXPECT_EQ(merger.Total(Direction::kRead)[900] + merger.Total(Direction::kWrite)[900], 40u);
  EXPECT_EQ(merger.records(), 40u);
}

TEST_F(MergerTest, MixedCoarsenessIsMergedAtTheCoarsest) {
  const std::string fine = Write("fine.log", Line(1000, 0, {{128, 1}, {1855, 2}}));
  const std::string coarse = Write("coarse.log", Line(1000, 0, {{2, 4}, {28, 8}}, 29));
  const std::string mid = Write("mid.log", Line(1000, 0, {{20, 16}}, 464));  // fine 80..83
  Merger merger({fine, coarse, mid}, Options(1000));
  EXPECT_EQ(merger.layout(), HistogramLayout::Fio3(6));
  const auto q = RunMerger(merger);
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(q[0].counts[0].size(), 29u);
  EXPECT_DOUBLE_EQ(q[0].counts[0][2], 1.0 + 4.0);  // fine 128 is group 2
  EXPECT_DOUBLE_EQ(q[0].counts[0][1], 16.0);       // fine 80 is group 1
  EXPECT_DOUBLE_EQ(q[0].counts[0][28], 2.0 + 8.0);
  EXPECT_EQ(merger.Total(Direction::kRead).Total(), 31u);
}

TEST_F(MergerTest, Fio2AndFio3AreNotMerged) {
  const std::string fio3 = Write("fio3.log", Line(1000, 0, {{1, 1}}));
  const std::string fio2 = Write("fio2.log", Line(1000, 0, {{1, 1}}, kFio2Buckets));
  EXPECT_THROW(Merger({fio3, fio2}, Options(1000)), UsageError);
}

TEST_F(MergerTest, RelativeAndEpochTimesAreNotMerged) {
  const std::string relative = Write("rel.log", Line(1000, 0, {{1, 1}}));
  const std::string epoch = Write("epoch.log", Line(1'795'315'430'677, 0, {{1, 1}}));
  try {
    Merger merger({relative, epoch}, Options(1000));
    FAIL() << "merged relative and epoch logs";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rel.log"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("epoch.log"), std::string::npos) << e.what();
  }
}

TEST_F(MergerTest, EpochJobStartFromLogHistMsecOrSpacing) {
  const int64_t t = 1'795'315'431'000;  // a multiple of 1000
  const std::string data = Line(t + 200, 0, {{10, 400}}) + Line(t + 600, 0, {{10, 1}});
  const std::string path = Write("epoch.log", data);
  {
    // Inferred from the spacing: the first record covers (t - 200, t + 200].
    Merger merger({path}, Options(1000));
    EXPECT_TRUE(merger.epoch_times());
    const auto q = RunMerger(merger);
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(q[0].start_ms, t - 1000);
    EXPECT_DOUBLE_EQ(q[0].counts[0][10], 200.0);
    EXPECT_DOUBLE_EQ(q[1].counts[0][10], 201.0);
  }
  {
    // Given: the first record covers (t + 100, t + 200].
    MergeOptions options = Options(1000);
    options.log_hist_msec = 100;
    Merger merger({path}, options);
    const auto q = RunMerger(merger);
    ASSERT_EQ(q.size(), 1u);
    EXPECT_EQ(q[0].start_ms, t);
    EXPECT_DOUBLE_EQ(q[0].counts[0][10], 401.0);
  }
}

TEST_F(MergerTest, ZeroRecordsAreEmittedAndAGapIsNot) {
  // Period 1 s. The record at 9 s holds no I/O and is emitted as such; the one at 60 s follows
  // 51 s without a record (more than 10 periods): it covers its last period only, and the quanta
  // of the gap are not emitted (nor walked: see HoursLongGapIsNotWalked).
  const std::string data = Line(1000, 0, {{1, 1}}) + Line(2000, 0, {{1, 1}}) + Line(9000, 0, {}) +
                           Line(60'000, 0, {{3, 4}}) + Line(61'000, 0, {{2, 5}});
  for (size_t budget : {size_t{1}, size_t{192} << 20}) {
    MergeOptions options = Options(1000);
    options.memory_budget = budget;
    Merger merger({Write("gap.log", data)}, options);
    const auto q = RunMerger(merger);
    ASSERT_EQ(q.size(), 11u) << budget;
    for (size_t i = 0; i < 9; ++i) EXPECT_EQ(q[i].start_ms, static_cast<int64_t>(i) * 1000);
    for (size_t i = 2; i < 9; ++i) EXPECT_EQ(Sum(q[i].counts[0]), 0.0) << i;
    EXPECT_EQ(q[9].start_ms, 59'000);
    EXPECT_DOUBLE_EQ(q[9].counts[0][3], 4.0);
    EXPECT_DOUBLE_EQ(q[10].counts[0][2], 5.0);
    const auto warnings = merger.warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("gap.log': 1 record(s) after a gap of more than 10 log periods"),
              std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find("the longest 51.000 s, before line 4"), std::string::npos);
  }
}

TEST_F(MergerTest, HoursLongGapIsNotWalked) {
  // Five records a second apart, then three 13.9 hours later (one changed digit): at 1 ms quanta
  // the gap is 50 million quanta; the merge emits the covered ones only, at once.
  std::string data;
  for (int64_t t : {1000, 2000, 3000, 4000, 5000}) data += Line(t, 0, {{7, 10}});
  for (int64_t t : {50'000'000, 50'001'000, 50'002'000}) data += Line(t, 0, {{8, 10}});
  Merger merger({Write("far.log", data)}, Options(1));
  const auto q = RunMerger(merger);
  ASSERT_EQ(q.size(), 8000u);  // 5 + 3 periods of 1000 quanta
  EXPECT_EQ(q.front().start_ms, 0);
  EXPECT_EQ(q[5000].start_ms, 49'999'000);
  EXPECT_EQ(q.back().start_ms, 50'001'999);
  double eights = 0;
  for (const auto& x : q) eights += x.counts[0][8];
  EXPECT_NEAR(eights, 30.0, 1e-9);
  EXPECT_EQ(merger.Total(Direction::kRead)[7], 50u);
}

TEST_F(MergerTest, BatchesHoldTheSameQuantaInOrder) {
  // 150 quanta in two files, both directions, a gap: batches of at most kBatchQuanta consecutive
  // quanta, the same as Run's one by one, with small windows (several per batch boundary) and
  // one big one, on 1 and 3 threads.
  std::string a, b;
  for (int k = 1; k <= 150; ++k) {
    if (k > 40 && k < 60) continue;  // a gap
    a += Line(k * 100, k % 2, {{static_cast<size_t>(k % 50), static_cast<uint64_t>(k)}});
    b += Line(k * 100, 0, {{static_cast<size_t>(k % 7), 1}});
  }
  const std::vector<std::string> files = {Write("a.log", a), Write("b.log", b)};
  for (size_t budget : {size_t{1}, size_t{192} << 20}) {
    for (unsigned threads : {1u, 3u}) {
      MergeOptions options = Options(100);
      options.memory_budget = budget;
      options.threads = threads;
      Merger one(files, options);
      const auto expected = RunMerger(one);
      ASSERT_EQ(expected.size(), 150u);
      Merger batched(files, options);
      std::vector<Quantum> got;
      size_t batches = 0;
      batched.RunBatches([&](std::span<const MergedQuantum> batch) {
        ++batches;
        EXPECT_GE(batch.size(), 1u);
        EXPECT_LE(batch.size(), Merger::kBatchQuanta);
        for (const MergedQuantum& q : batch) {
          Quantum copy{q.start_ms, q.end_ms, {}};
          for (int d = 0; d < kDirectionCount; ++d)
            copy.counts[d].assign(q.counts[d].begin(), q.counts[d].end());
          got.push_back(std::move(copy));
        }
      });
      EXPECT_GE(batches, 3u);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].start_ms, expected[i].start_ms) << i;
        EXPECT_EQ(got[i].end_ms, expected[i].end_ms) << i;
        for (int d = 0; d < kDirectionCount; ++d)
          EXPECT_EQ(got[i].counts[d], expected[i].counts[d]);
      }
      double all = 0, logged = 0;
      for (const Quantum& q : got) all += Sum(q.counts[0]) + Sum(q.counts[1]);
      for (int k = 1; k <= 150; ++k) logged += (k > 40 && k < 60) ? 0 : k + 1;
      EXPECT_NEAR(all, logged, 1e-6);
    }
  }
}

TEST_F(MergerTest, PerJobLogsZeroFileEqualsSeparateFiles) {
  // Job 1 reads only; job 2 writes first, then reads and writes. In one per_job_logs=0 file the
  // time jumps back at job 2's first line, whichever direction it has.
  const std::string job1 = Line(250, 0, {{10, 1}}) + Line(500, 0, {{11, 2}}) +
                           Line(750, 0, {{12, 3}}) + Line(1000, 0, {{13, 4}});
  const std::string job2 = Line(255, 1, {{20, 5}}) + Line(255, 0, {{21, 6}}) +
                           Line(505, 1, {{22, 7}}) + Line(505, 0, {{23, 8}}) +
                           Line(755, 0, {{24, 9}}) + Line(760, 1, {{25, 10}});
  Merger combined({Write("hist_clat_hist.log", job1 + job2)}, Options(250));
  Merger separate({Write("j1.log", job1), Write("j2.log", job2)}, Options(250));
  const auto a = RunMerger(combined);
  const auto b = RunMerger(separate);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].start_ms, b[i].start_ms);
    for (int d = 0; d < kDirectionCount; ++d) {
      for (size_t k = 0; k < a[i].counts[d].size(); ++k) {
        EXPECT_DOUBLE_EQ(a[i].counts[d][k], b[i].counts[d][k])
            << "quantum " << i << " dir " << d << " bucket " << k;
      }
    }
  }
  // Job 2's second write (505) covers (255, 505]: nothing of it before 250.
  EXPECT_EQ(a[0].counts[1][22], 0.0);
  EXPECT_EQ(combined.Total(Direction::kWrite).Total(), 22u);
}

TEST_F(MergerTest, TinyWindowsAndThreadsGiveTheSameResult) {
  std::vector<std::string> files;
  for (int f = 0; f < 3; ++f) {
    std::string data;
    for (int k = 1; k <= 40; ++k) {
      data += Line(k * 333 + 17 * f, k % 3,
                   {{static_cast<size_t>(100 + k), static_cast<uint64_t>(k)},
                    {static_cast<size_t>(900 + f), 3}});
      if (k % 7 == 0) data += Line(k * 333 + 17 * f, k % 3, {{5, 1}});  // bursts
    }
    files.push_back(Write("f" + std::to_string(f) + ".log", data));
  }
  auto run = [&](size_t budget, unsigned threads, int64_t quantum) {
    MergeOptions options = Options(quantum, threads);
    options.memory_budget = budget;
    Merger merger(files, options);
    return RunMerger(merger);
  };
  for (int64_t quantum : {100, 1000, 2500}) {
    const auto reference = run(size_t{192} << 20, 1, quantum);
    for (auto [budget, threads] : {std::pair<size_t, unsigned>{1, 1},
                                   {1, 2},
                                   {size_t{192} << 20, 2},
                                   {size_t{500} << 10, 2}}) {
      const auto other = run(budget, threads, quantum);
      ASSERT_EQ(other.size(), reference.size()) << budget << " " << threads;
      for (size_t i = 0; i < other.size(); ++i) {
        EXPECT_EQ(other[i].start_ms, reference[i].start_ms);
        for (int d = 0; d < kDirectionCount; ++d) {
          for (size_t k = 0; k < other[i].counts[d].size(); ++k) {
            ASSERT_NEAR(other[i].counts[d][k], reference[i].counts[d][k], 1e-9)
                << "q=" << quantum << " budget=" << budget << " threads=" << threads << " quantum "
                << i << " dir " << d << " bucket " << k;
          }
        }
      }
    }
  }
}

TEST_F(MergerTest, WindowSizeChangesNoBit) {
  // Records that straddle quanta (fractional weights) and windows; sources that end early, start
  // late or pause; with and without fio --client running sums (whose undoing needs the two
  // previous records of a direction: a source read again after a window boundary rebuilds them).
  for (const bool client : {false, true}) {
    SCOPED_TRACE(client);
    std::vector<std::string> files;
    for (int f = 0; f < 5; ++f) {
      std::string data;
      std::map<size_t, uint64_t> prev1[2], prev2[2];  // per direction: raw rows k-1, k-2
      for (int k = 1; k <= 60; ++k) {
        if (f == 3 && k > 10 && k < 40) continue;  // a pause
        if (f == 4 && k < 30) continue;            // a late start
        const int ddir = (k + f) % 2;
        std::map<size_t, uint64_t> counts = {{static_cast<size_t>(200 + k), uint64_t(k + f)},
                                             {static_cast<size_t>(1000 + f), 3}};
        if (client) {  // running sums r_k = d_k + r_(k-2), per direction
          for (const auto& [bucket, n] : prev2[ddir]) counts[bucket] += n;
          prev2[ddir] = prev1[ddir];
          prev1[ddir] = counts;
        }
        data += Line(k * 337 + 41 * f, ddir, counts);
      }
      files.push_back(Write("w" + std::to_string(f) + (client ? ".c" : "") + ".log", data));
    }
    for (const int64_t quantum : {100, 1000}) {
      auto run = [&](size_t budget) {
        MergeOptions options = Options(quantum, 2);
        options.memory_budget = budget;
        options.undo_client_sums = client;
        Merger merger(files, options);
        auto q = RunMerger(merger);
        return std::pair{std::move(q), merger.Total(Direction::kRead).Total() +
                                           merger.Total(Direction::kWrite).Total()};
      };
      const auto [reference, reference_total] = run(size_t{192} << 20);
      const auto [tiny, tiny_total] = run(1);  // 4-quantum windows
      EXPECT_EQ(tiny_total, reference_total);
      ASSERT_EQ(tiny.size(), reference.size());
      for (size_t i = 0; i < tiny.size(); ++i) {
        EXPECT_EQ(tiny[i].start_ms, reference[i].start_ms);
        for (int d = 0; d < kDirectionCount; ++d) {
          ASSERT_EQ(tiny[i].counts[d], reference[i].counts[d])  // every bit
              << "quantum " << quantum << " index " << i << " dir " << d;
        }
      }
    }
  }
}

// The entries of /proc/self/fd (the directory's own descriptor included).
size_t OpenFiles() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

TEST_F(MergerTest, ManyInputsUnderALowOpenFileLimit) {
  // 300 files of both directions (600 sources) under a limit of a few more files than are open
  // now: a source holds its file only during its turn, one per thread.
  std::vector<std::string> files;
  for (int f = 0; f < 300; ++f) {
    std::string data;
    for (int k = 1; k <= 4; ++k) {
      data += Line(k * 1000, 0, {{static_cast<size_t>(f), 1}}) +
              Line(k * 1000, 1, {{static_cast<size_t>(f), 2}});
    }
    files.push_back(Write("m" + std::to_string(f) + ".log", data));
  }
  const size_t open_before = OpenFiles();
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = open_before + 8;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  uint64_t records = 0;
  std::vector<Quantum> q;
  size_t most_open = 0;
  try {
    MergeOptions options = Options(1000, 3);
    options.memory_budget = 1;  // windows of 4 quanta: sources take several turns
    Merger merger(files, options);
    merger.Run([&](const MergedQuantum& quantum) {
      most_open = std::max(most_open, OpenFiles());
      Quantum copy{quantum.start_ms, quantum.end_ms, {}};
      for (int d = 0; d < kDirectionCount; ++d)
        copy.counts[d].assign(quantum.counts[d].begin(), quantum.counts[d].end());
      q.push_back(std::move(copy));
    });
    records = merger.records();
  } catch (...) {
    ::setrlimit(RLIMIT_NOFILE, &saved);
    throw;
  }
  ::setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(records, 2400u);
  EXPECT_EQ(most_open, open_before);  // no input is open between windows
  ASSERT_EQ(q.size(), 4u);
  for (size_t i = 0; i < q.size(); ++i) {
    EXPECT_EQ(Sum(q[i].counts[0]), 300.0);
    EXPECT_EQ(Sum(q[i].counts[1]), 600.0);
    for (size_t f = 0; f < 300; ++f) {
      EXPECT_EQ(q[i].counts[0][f], 1.0) << i << " " << f;
      EXPECT_EQ(q[i].counts[1][f], 2.0) << i << " " << f;
    }
  }
}

TEST_F(MergerTest, EmptyInputHasNoLayout) {
  Merger merger({Write("empty.log", "")}, Options(1000));
  EXPECT_TRUE(merger.Empty());
  EXPECT_THROW(merger.layout(), UsageError);
  int calls = 0;
  merger.Run([&](const MergedQuantum&) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST_F(MergerTest, ErrorsInAnyFileAreRethrown) {
  const std::string good = Write("good.log", Line(1000, 0, {{1, 1}}));
  std::string bad_data = Line(1000, 0, {}) + Line(2000, 0, {});
  bad_data.replace(bad_data.rfind(", 0"), 3, ", q");
  const std::string bad = Write("bad.log", bad_data);
  try {
    Merger merger({good, bad}, Options(1000));
    RunMerger(merger);
    FAIL() << "no error";
  } catch (const LogFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.log:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Merger({good, (dir_ / "missing.log").string()}, Options(1000)), std::system_error);
  EXPECT_THROW(Merger({}, Options(1000)), UsageError);
}

TEST_F(MergerTest, GoldenLogTotalsEqualTheSumOfAllLines) {
  const fs::path root = fs::path(IOTAIL_TEST_DATA_DIR) / "fio";
  for (const char* run : {"randrw", "burst", "perjob0", "trim", "epoch"}) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(root / run)) {
      if (e.path().extension() == ".log") files.push_back(e.path().string());
    }
    if (files.empty()) continue;
    std::array<uint64_t, kDirectionCount> expected{};
    for (const auto& f : files) {
      LogReader reader(f);
      while (reader.Next()) {
        for (uint64_t c : reader.record().counts)
          expected[DirectionIndex(reader.record().direction)] += c;
      }
    }
    Merger merger(files, Options(1000, 2));
    const auto q = RunMerger(merger);
    std::array<double, kDirectionCount> aligned{};
    for (const auto& quantum : q)
      for (int d = 0; d < kDirectionCount; ++d) aligned[d] += Sum(quantum.counts[d]);
    for (int d = 0; d < kDirectionCount; ++d) {
      EXPECT_EQ(merger.Total(static_cast<Direction>(d)).Total(), expected[d]) << run << " " << d;
      EXPECT_NEAR(aligned[d], static_cast<double>(expected[d]), 1e-6 * (1 + expected[d]))
          << run << " " << d;
    }
  }
}

}  // namespace merger_test
}  // namespace iotail::stats
