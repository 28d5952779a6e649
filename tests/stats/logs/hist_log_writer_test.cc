#include "stats/logs/hist_log_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "stats/core/errors.h"
#include "stats/core/histogram_layout.h"
#include "tests/test_util.h"

namespace iotail::stats {
namespace hist_log_writer_test {

// The fields of a log line (without its newline).
std::vector<std::string> Split(std::string_view line) {
  return iotail::testing::SplitOn(line, ", ");
}

TEST(HistLogWriterTest, FioLineFormatExactly) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  counts[0] = 3;
  counts[1855] = 7;
  fmt::memory_buffer buf;
  FormatHistLogLine(buf, 1500, Direction::kWrite, 4096, counts, 0);
  const std::string line(buf.data(), buf.size());
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.rfind("1500, 1, 4096, 3, 0, 0, ", 0), 0u);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_TRUE(line.ends_with(", 0, 7\n"));
  const auto fields = Split(line.substr(0, line.size() - 1));
  EXPECT_EQ(fields.size(), 1859u);
}

TEST(HistLogWriterTest, CoarsenessSumsRunsOfBuckets) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = i % 5;
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    fmt::memory_buffer buf;
    FormatHistLogLine(buf, 1, Direction::kRead, 512, counts, c);
    const auto fields = Split(std::string(buf.data(), buf.size() - 1));
    ASSERT_EQ(fields.size(), 3u + (kFio3Buckets >> c)) << c;
    uint64_t total = 0;
    for (size_t i = 3; i < fields.size(); ++i) total += std::stoull(fields[i]);
    uint64_t expected = 0;
    for (uint64_t x : counts) expected += x;
    EXPECT_EQ(total, expected);
    const size_t stride = size_t{1} << c;
    uint64_t first = 0;
    for (size_t j = 0; j < stride; ++j) first += counts[j];
    EXPECT_EQ(std::stoull(fields[3]), first);
  }
}

// The recorders count in 59 groups; a log in fio's 29 clamps what lies above into its last
// column, as fio itself would have, and a wide log keeps every bucket.
TEST(HistLogWriterTest, WideCountsFoldIntoFiosLastBucketOrStayInAWideLog) {
  std::vector<uint64_t> counts(kWideBuckets, 0);
  counts[5] = 2;
  counts[kFio3Buckets - 1] = 1;
  counts[RecordBucketIndex(18'000'000'000)] = 4;
  counts[kWideBuckets - 1] = 8;
  for (int c : {0, 3, 6}) {
    fmt::memory_buffer fio;
    FormatHistLogLine(fio, 1, Direction::kRead, 512, counts, c);
    const auto f = Split(std::string(fio.data(), fio.size() - 1));
    ASSERT_EQ(f.size(), 3u + (kFio3Buckets >> c)) << c;
    EXPECT_EQ(std::stoull(f.back()), 1u + 4u + 8u) << c;
    fmt::memory_buffer wide;
    FormatHistLogLine(wide, 1, Direction::kRead, 512, counts, c, kWideGroups);
    const auto w = Split(std::string(wide.data(), wide.size() - 1));
    ASSERT_EQ(w.size(), 3u + (kWideBuckets >> c)) << c;
    EXPECT_EQ(std::stoull(w.back()), 8u) << c;
    EXPECT_EQ(std::stoull(w[3 + (RecordBucketIndex(18'000'000'000) >> c)]), 4u) << c;
    uint64_t total = 0;
    for (size_t i = 3; i < w.size(); ++i) total += std::stoull(w[i]);
    EXPECT_EQ(total, 15u) << c;
  }
  // Fewer fine counts than the layout (a 29-group histogram into a wide log): zeros above.
  std::vector<uint64_t> narrow(kFio3Buckets, 1);
  fmt::memory_buffer buf;
  FormatHistLogLine(buf, 1, Direction::kRead, 512, narrow, 0, kWideGroups);
  const auto n = Split(std::string(buf.data(), buf.size() - 1));
  ASSERT_EQ(n.size(), 3u + kWideBuckets);
  EXPECT_EQ(n[3 + kFio3Buckets - 1], "1");
  EXPECT_EQ(n[3 + kFio3Buckets], "0");
  EXPECT_THROW(HistLogWriter("/dev/null/x", 0, 40), UsageError);
}

TEST(HistLogWriterTest, ColumnsAsGivenUseTheSameFormat) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  counts[3] = 12;
  fmt::memory_buffer fine, columns;
  FormatHistLogLine(fine, 2000, Direction::kTrim, 0, counts, 0);
  FormatHistLogColumns(columns, 2000, Direction::kTrim, 0, counts);
  EXPECT_EQ(std::string(columns.data(), columns.size()), std::string(fine.data(), fine.size()));

  const std::vector<uint64_t> three = {1, 0, 5};  // any layout: the columns are not summed
  fmt::memory_buffer short_line;
  FormatHistLogColumns(short_line, 250, Direction::kRead, 0, three);
  EXPECT_EQ(std::string(short_line.data(), short_line.size()), "250, 0, 0, 1, 0, 5\n");
}

TEST(HistLogWriterTest, WritesFileWithFioName) {
  char dir[] = "/tmp/iotail-hlw-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = HistLogWriter::ClatLogPath(std::string(dir) + "/p", 2);
  EXPECT_TRUE(path.ends_with("/p_clat_hist.2.log"));
  {
    HistLogWriter w(path, 2);
    std::vector<uint64_t> counts(kFio3Buckets, 1);
    w.Write(10, Direction::kRead, 4096, counts);
    w.Write(20, Direction::kRead, 4096, counts);
    w.Close();
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_EQ(Split(line).size(), 3u + 464u);
  }
  EXPECT_EQ(lines, 2);
  unlink(path.c_str());
  rmdir(dir);
  EXPECT_THROW(HistLogWriter("/nonexistent-dir/x.log", 0), std::system_error);
}

// The writer counts what fio's clamp puts in the last bucket of a 29-group log (the run says so).
TEST(HistLogWriterTest, CountsWhatItClampsIntoTheLastBucket) {
  char dir[] = "/tmp/iotail-hlw-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::vector<uint64_t> counts(kWideBuckets, 0);
  counts[100] = 5;
  counts[kFio3Buckets - 1] = 2;  // in fio's last bucket: not clamped
  counts[kFio3Buckets] = 3;      // above fio's top
  counts[kWideBuckets - 1] = 4;
  HistLogWriter narrow(std::string(dir) + "/n.log", 0);
  HistLogWriter wide(std::string(dir) + "/w.log", 0, kWideGroups);
  for (int k = 0; k < 2; ++k) {
    narrow.Write(1000 * (k + 1), Direction::kRead, 4096, counts);
    wide.Write(1000 * (k + 1), Direction::kRead, 4096, counts);
  }
  EXPECT_EQ(narrow.clamped(), 14u);
  EXPECT_EQ(wide.clamped(), 0u);
  narrow.Close();
  wide.Close();
  unlink((std::string(dir) + "/n.log").c_str());
  unlink((std::string(dir) + "/w.log").c_str());
  rmdir(dir);
}

}  // namespace hist_log_writer_test
}  // namespace iotail::stats
