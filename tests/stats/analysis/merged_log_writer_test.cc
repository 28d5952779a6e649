// Tests of the merged-log writer: fio's line format, one line per direction or combined, and
// rounding that keeps every bucket's whole-run sum exact.
#include "stats/analysis/merged_log_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace iotail::stats {
namespace merged_log_writer_test {

namespace fs = std::filesystem;

// A fio 3 log line with `count` samples in bucket `bucket`.
std::string Line(int64_t time, int ddir, size_t bucket, uint64_t count, uint64_t bs = 4096) {
  std::string line = std::to_string(time) + ", " + std::to_string(ddir) + ", " + std::to_string(bs);
  for (size_t i = 0; i < kFio3Buckets; ++i)
    line += i == bucket ? ", " + std::to_string(count) : ", 0";
  return line + "\n";
}

struct ParsedLine {
  int64_t time;
  int ddir;
  uint64_t bs;
  std::vector<uint64_t> counts;
};

std::vector<ParsedLine> Parse(const std::string& text) {
  std::vector<ParsedLine> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ParsedLine p{};
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; std::getline(fields, field, ','); ++i) {
      const uint64_t v = std::stoull(field);
      if (i == 0) p.time = static_cast<int64_t>(v);
      if (i == 1) p.ddir = static_cast<int>(v);
      if (i == 2) p.bs = v;
      if (i >= 3) p.counts.push_back(v);
    }
    lines.push_back(std::move(p));
  }
  return lines;
}

class MergedLogWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeScratchDir("iotail_merged_log"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Merges `data` (one log) over `quantum_ms` quanta and returns the merged log's text.
  std::string Merge(const std::string& data, int64_t quantum_ms, MergedDirections directions) {
    const fs::path in = dir_ / "in.log", out = dir_ / "out.log";
    std::ofstream(in, std::ios::binary) << data;
    MergeOptions options;
    options.quantum_ms = quantum_ms;
    options.threads = 1;
    Merger merger({in.string()}, options);
    std::FILE* file = std::fopen(out.c_str(), "w");
    EXPECT_NE(file, nullptr);
    MergedLogWriter writer(file, out.string(), merger, directions);
    merger.Run([&](const MergedQuantum& q) { writer.Write(q); });
    writer.Flush();
    std::fclose(file);
    return testing::ReadFile(out);
  }

  fs::path dir_;
};

TEST_F(MergedLogWriterTest, OneLinePerQuantumAndDirectionStampedWithTheQuantumEnd) {
  const std::string text =
      Merge(Line(1000, 0, 7, 4) + Line(1000, 1, 9, 2) + Line(2000, 0, 7, 6) + Line(2000, 1, 9, 0),
            1000, MergedDirections::kEach);
  EXPECT_TRUE(text.starts_with("1000, 0, 4096, 0, 0, 0, 0, 0, 0, 0, 4, 0, ")) << text.substr(0, 80);
  const auto lines = Parse(text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].time, 1000);
  EXPECT_EQ(lines[1].ddir, 1);
  EXPECT_EQ(lines[1].counts[9], 2u);
  EXPECT_EQ(lines[2].time, 2000);
  EXPECT_EQ(lines[2].counts[7], 6u);
  for (const auto& l : lines) {
    // The quantum's mean bytes per I/O; without I/O (lines[3]), the bs its input line carried (the
    // job's block size, as iotail's logs write an idle interval's).
    EXPECT_EQ(l.bs, 4096u);
    EXPECT_EQ(l.counts.size(), kFio3Buckets);
  }
}

TEST_F(MergedLogWriterTest, BsIsTheQuantumsMeanBytesPerIo) {
  // Quantum 2 s: 3 I/Os of 4 KiB and 1 of 64 KiB (read), 76 KiB in 4 I/Os; bytes = I/Os x bs
  // survives the merge for any mix of block sizes.
  const auto lines = Parse(
      Merge(Line(1000, 0, 7, 3, 4096) + Line(2000, 0, 7, 1, 65536), 2000, MergedDirections::kEach));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].bs, 19456u);
}

TEST_F(MergedLogWriterTest, AQuantumWithoutIoHasItsLinesSmallestBs) {
  // Two idle lines (8 KiB and 4 KiB jobs) in one quantum: 4 KiB; an idle line without a bs: 0.
  auto lines =
      Parse(Merge(Line(500, 0, 7, 0, 8192) + Line(1000, 0, 7, 0, 4096) + Line(2000, 0, 7, 0, 0),
                  1000, MergedDirections::kEach));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].bs, 4096u);
  EXPECT_EQ(lines[1].bs, 0u);
}

TEST_F(MergedLogWriterTest, CombinedAddsAllDirectionsIntoDdirZero) {
  const auto lines = Parse(Merge(Line(1000, 0, 7, 4) + Line(1000, 1, 7, 2) + Line(1000, 2, 8, 1),
                                 1000, MergedDirections::kCombined));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].ddir, 0);
  EXPECT_EQ(lines[0].counts[7], 6u);
  EXPECT_EQ(lines[0].counts[8], 1u);
}

TEST_F(MergedLogWriterTest, RoundingKeepsEveryBucketsWholeRunSumExact) {
  // 10 samples per 1000 ms record over 300 ms quanta: 3 or 4 per quantum, never lost or doubled.
  std::string data;
  for (int t = 1000; t <= 5000; t += 1000) data += Line(t, 0, 100, 10);
  const auto lines = Parse(Merge(data, 300, MergedDirections::kEach));
  uint64_t total = 0;
  double exact = 0;
  uint64_t emitted = 0;
  for (const auto& l : lines) {
    total += l.counts[100];
    // The running total is the rounded running total of the exact shares (10 per 1000 ms).
    exact = std::min(50.0, static_cast<double>(l.time) / 100.0);
    emitted += l.counts[100];
    EXPECT_EQ(emitted, static_cast<uint64_t>(std::llround(exact))) << l.time;
  }
  EXPECT_EQ(total, 50u);
}

}  // namespace merged_log_writer_test
}  // namespace iotail::stats
