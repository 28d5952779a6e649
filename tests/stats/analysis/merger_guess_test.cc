// Tests of the merger's guessed segments: a large file is read in one pass on a guess made from its
// ends (GuessLogSegment), and whatever the scan would have found otherwise takes the guess back
// before anything is emitted. Each case is compared bit for bit with the merge that scans first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/logs/log_scan.h"
#include "tests/stats/analysis/merger_test_util.h"
#include "tests/test_util.h"

namespace iotail::stats {
namespace merger_guess_test {

namespace fs = std::filesystem;

// A full fio 3 line is about 5.6 KB: this many make a file of several guess blocks.
constexpr int kRecords = 120;

// One job's lines: reads and writes every `period` ms (a few ms apart, as fio writes them), from
// `first` on, with counts that differ per record so that misplaced ones show.
std::string Job(int64_t first, int64_t period, int records, int seed) {
  std::string data;
  for (int k = 0; k < records; ++k) {
    const int64_t t = first + k * period;
    data += Line(t, 0, {{static_cast<size_t>(300 + (k + seed) % 50), uint64_t(k + 1)}});
    data += Line(t + 3, 1, {{static_cast<size_t>(700 + (k * seed) % 40), 2}, {900, uint64_t(k)}});
  }
  return data;
}

class MergerGuessTest : public LogFilesTest {
 protected:
  using Result = MergeResult;
  static Result Merge(const std::vector<std::string>& files, bool guess, unsigned threads = 2,
                      size_t budget = size_t{192} << 20) {
    MergeOptions options;
    options.quantum_ms = 1000;
    options.threads = threads;
    options.guess_segments = guess;
    options.memory_budget = budget;
    return RunMerge(files, options);
  }
  // The guessing merge equals the scanning one in every bit, and scanned `scanned` files.
  static void ExpectSameAsScanned(const std::vector<std::string>& files, size_t scanned,
                                  unsigned threads = 2, size_t budget = size_t{192} << 20) {
    const Result guessed = Merge(files, true, threads, budget);
    const Result reference = Merge(files, false, threads, budget);
    EXPECT_EQ(reference.scanned_after_run, files.size());
    EXPECT_EQ(guessed.scanned_after_run, scanned);
    EXPECT_EQ(guessed.totals, reference.totals);
    EXPECT_EQ(guessed.records, reference.records);
    EXPECT_EQ(guessed.warnings, reference.warnings);
    ASSERT_EQ(guessed.quanta.size(), reference.quanta.size());
    for (size_t i = 0; i < guessed.quanta.size(); ++i) {
      EXPECT_EQ(guessed.quanta[i].start_ms, reference.quanta[i].start_ms);
      for (int d = 0; d < kDirectionCount; ++d) {
        ASSERT_EQ(guessed.quanta[i].counts[d], reference.quanta[i].counts[d])
            << "quantum " << i << " dir " << d;
      }
    }
  }
};

TEST_F(MergerGuessTest, LargeFilesAreReadOnAGuessThatHoldsWithTheSameSums) {
  std::vector<std::string> files;
  for (int f = 0; f < 3; ++f) {
    // Periods that straddle the 1 s quanta (fractional weights), starts that differ.
    files.push_back(Write("g" + std::to_string(f) + ".log", Job(337 + 41 * f, 337, kRecords, f)));
    ASSERT_GE(fs::file_size(files.back()), 4 * kGuessBlock);
  }
  ExpectSameAsScanned(files, 0);
  ExpectSameAsScanned(files, 0, 1);
  // A small file beside them is scanned (a scan of it costs little), the large ones still guessed.
  files.push_back(Write("small.log", Job(500, 500, 3, 7)));
  ExpectSameAsScanned(files, 1);
  // A coarser large one (fio 3 at coarseness 1): its first records and layout are guessed from its
  // first block too, and the merge is at its coarseness.
  std::string coarse;
  for (int k = 0; k < 2 * kRecords; ++k) {
    coarse +=
        Line(400 + k * 400, k % 2, {{static_cast<size_t>(100 + k % 300), 3}}, kFio3Buckets / 2);
  }
  files.push_back(Write("coarse.log", coarse));
  ASSERT_GE(fs::file_size(files.back()), 4 * kGuessBlock);
  ExpectSameAsScanned(files, 1);
}

TEST_F(MergerGuessTest, AWrongGuessIsTakenBackBeforeAnythingIsEmitted) {
  const std::string plain = Write("plain.log", Job(250, 250, kRecords, 1));
  // per_job_logs=0: a second job starts where the first did; its times go back mid-file.
  const std::string two_jobs =
      Write("two_jobs.log", Job(250, 250, kRecords, 2) + Job(255, 250, kRecords + 5, 3));
  // A direction that first appears after the first block (trims late in the run).
  std::string late_trim = Job(250, 250, kRecords, 4);
  late_trim += Line(250 * kRecords + 250, 2, {{1000, 9}}) + Line(250 * kRecords + 260, 0, {});
  const std::string trim = Write("late_trim.log", late_trim);
  // A torn last line (a log still being written): skipped with a warning either way.
  std::string torn_data = Job(250, 250, kRecords, 5) + "99999, 0, 4096, 1, 2";
  const std::string torn = Write("torn.log", torn_data);
  ExpectSameAsScanned({plain, two_jobs}, 2);
  // The same with jobs that only read (one direction: one source per segment).
  std::string reads_only;
  for (const auto& [first, seed] : {std::pair{250, 6}, {255, 7}}) {
    for (int k = 0; k < 2 * kRecords; ++k) {
      reads_only += Line(first + k * 250, 0, {{static_cast<size_t>(300 + (k + seed) % 50), 1}});
    }
  }
  ExpectSameAsScanned({Write("reads_two_jobs.log", reads_only)}, 1);
  ExpectSameAsScanned({trim, plain}, 2);
  ExpectSameAsScanned({plain, torn}, 2);
  ExpectSameAsScanned({plain}, 0);
}

TEST_F(MergerGuessTest, AFileLongerThanTheFirstWindowIsScannedFirst) {
  // 4-quantum windows (the smallest budget): no large file fits, so none is guessed.
  const std::vector<std::string> files = {Write("a.log", Job(250, 250, kRecords, 1)),
                                          Write("b.log", Job(300, 250, kRecords, 2))};
  const Result r = Merge(files, true, 2, 1);
  EXPECT_EQ(r.scanned_before_run, 2u);
  ExpectSameAsScanned(files, 2, 2, 1);
}

TEST_F(MergerGuessTest, ErrorsInAGuessedFileAreTheScansWithFileAndLine) {
  auto error_of = [&](const std::string& file, bool guess) {
    try {
      Merge({file}, guess);
    } catch (const LogFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A time that jumps forward by more than a day, mid-file.
  std::string jump = Job(250, 250, kRecords, 1);
  jump += Line(int64_t{250} * kRecords + 90'000'000, 0, {{5, 1}});
  jump += Job(int64_t{250} * kRecords + 90'000'250, 250, 10, 2);
  const std::string jumped = Write("jump.log", jump);
  // A count that is not a number on line 100.
  std::string damaged = Job(250, 250, kRecords, 3);
  size_t at = 0;
  for (int line = 1; line < 100; ++line) at = damaged.find('\n', at) + 1;
  damaged.replace(damaged.find(", 0", at), 3, ", x");
  const std::string bad = Write("bad.log", damaged);
  // The first line damaged (its first records are guessed from the first block: the reader
  // finds the damage in the first window, and the scan names it).
  std::string first = Job(250, 250, kRecords, 4);
  first.replace(first.find(", 0"), 3, ", y");
  const std::string bad_first = Write("bad_first.log", first);
  // The first write line's direction damaged: the first write record is not on line 2.
  std::string ddir = Job(250, 250, kRecords, 5);
  ddir.replace(ddir.find('\n') + 1 + ddir.substr(ddir.find('\n') + 1).find(", 1,"), 4, ", 1x,");
  const std::string bad_ddir = Write("bad_ddir.log", ddir);
  for (const auto& [file, where] : {std::pair{jumped, "jump.log:241:"},
                                    {bad, "bad.log:100:"},
                                    {bad_first, "bad_first.log:1:"},
                                    {bad_ddir, "bad_ddir.log:2:"}}) {
    const std::string guessed = error_of(file, true);
    EXPECT_NE(guessed.find(where), std::string::npos) << guessed;
    EXPECT_EQ(guessed, error_of(file, false));
  }
}

}  // namespace merger_guess_test
}  // namespace iotail::stats
