// End-to-end tests of `iotail merge` and `iotail pctiles` on thousands of small logs: they run
// under an open-file limit far below the input count, in bounded memory, and give what merging
// the same files in batches gives.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace many_inputs_test {

namespace fs = std::filesystem;

using Result = iotail::testing::CommandResult;

constexpr int kFiles = 3000;
constexpr int kBatch = 500;
constexpr long kPeakRssLimitKb = 100 * 1024;
// The shell's status when `ulimit -n 1024` is refused (a lower hard limit).
constexpr int kNoLimit = 97;

// One fio 3 log line with two non-zero buckets.
std::string Line(int64_t time, int ddir, size_t bucket, uint64_t count) {
  std::string line = std::to_string(time) + ", " + std::to_string(ddir) + ", 4096";
  for (size_t i = 0; i < 1856; ++i) {
    line += ", ";
    line += i == bucket ? std::to_string(count) : i == 1800 ? "1" : "0";
  }
  return line + "\n";
}

class ManyInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_many");
    fs::create_directories(dir_ / "in");
    // Three records each; every direction's records follow each other from the start at the
    // period of the 1 s quantum, so that counts stay whole numbers and a merged log merges again
    // to the same. Even files read and write, odd ones only read.
    for (int f = 0; f < kFiles; ++f) {
      const auto b = [&](int k) { return static_cast<size_t>((f * 7 + k * 131) % 1700); };
      const auto n = [&](int k) { return static_cast<uint64_t>(1 + (f + k) % 5); };
      const std::string data =
          f % 2 == 0
              ? Line(1000, 0, b(1), n(1)) + Line(1000, 1, b(2), n(2)) + Line(2000, 0, b(3), n(3))
              : Line(1000, 0, b(1), n(1)) + Line(2000, 0, b(2), n(2)) + Line(3000, 0, b(3), n(3));
      const fs::path path = dir_ / "in" / ("h" + std::to_string(f) + ".log");
      std::ofstream(path, std::ios::binary) << data;
      files_.push_back(path.string());
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `iotail ARGS FILES` under `ulimit -n 1024` (FILES: paths or a glob, for the shell);
  // stores the peak RSS of the iotail process in *peak_kb when asked.
  Result Iotail(const std::string& args, const std::string& files, long* peak_kb = nullptr) {
    const std::string rss = (dir_ / "rss").string();
    std::string timer;
    if (peak_kb && ::access("/usr/bin/time", X_OK) == 0) timer = "/usr/bin/time -f %M -o " + rss;
    const Result r =
        iotail::testing::RunShell("ulimit -n 1024 || exit " + std::to_string(kNoLimit) + "; " +
                                      timer + " " + IOTAIL_BINARY + " " + args + " " + files,
                                  dir_);
    if (peak_kb) {
      if (!timer.empty()) {
        std::ifstream in(rss);
        std::string last;
        for (std::string line; std::getline(in, line);) last = line;  // after any status line
        *peak_kb = last.empty() ? -1 : std::stol(last);
      } else {
        // The largest of the process's waited-for descendants so far: an upper bound.
        rusage usage{};
        ::getrusage(RUSAGE_CHILDREN, &usage);
        *peak_kb = usage.ru_maxrss;
      }
    }
    return r;
  }

  fs::path dir_;
  std::vector<std::string> files_;
};

TEST_F(ManyInputsTest, ThousandsOfFilesUnderAThousandOpenFilesMatchBatches) {
  const std::string all = (dir_ / "in" / "*.log").string();  // the shell expands it
  const std::string merged = (dir_ / "all.merged").string();
  long merge_kb = 0, pctiles_kb = 0;
  const Result merge = Iotail("merge -o " + merged, all, &merge_kb);
  if (merge.status == kNoLimit) GTEST_SKIP() << "the hard open-file limit is below 1024";
  ASSERT_EQ(merge.status, 0) << merge.err;
  EXPECT_NE(merge.err.find("3000 files, 9000 records"), std::string::npos) << merge.err;
  const Result pctiles = Iotail("pctiles --format csv", all, &pctiles_kb);
  ASSERT_EQ(pctiles.status, 0) << pctiles.err;
  EXPECT_GT(merge_kb, 0);
  EXPECT_LT(merge_kb, kPeakRssLimitKb);
  EXPECT_GT(pctiles_kb, 0);
  EXPECT_LT(pctiles_kb, kPeakRssLimitKb);

  // The same files merged in batches, then the batches merged.
  std::string batches;
  for (int first = 0; first < kFiles; first += kBatch) {
    std::string list;
    for (int f = first; f < std::min(first + kBatch, kFiles); ++f) list += " " + files_[f];
    const std::string out = (dir_ / ("batch" + std::to_string(first) + ".merged")).string();
    const Result batch = Iotail("merge -o " + out, list);
    ASSERT_EQ(batch.status, 0) << batch.err;
    batches += " " + out;
  }
  const std::string rebatched = (dir_ / "batched.merged").string();
  const Result again = Iotail("merge -o " + rebatched, batches);
  ASSERT_EQ(again.status, 0) << again.err;
  const std::string merged_log = iotail::testing::ReadFile(merged);
  EXPECT_EQ(iotail::testing::Lines(merged_log).size(), 6u);  // 3 quanta x read and write
  EXPECT_EQ(merged_log, iotail::testing::ReadFile(rebatched));
  const Result batched_pctiles = Iotail("pctiles --format csv", batches);
  ASSERT_EQ(batched_pctiles.status, 0) << batched_pctiles.err;
  EXPECT_EQ(pctiles.out, batched_pctiles.out);
}

}  // namespace many_inputs_test
