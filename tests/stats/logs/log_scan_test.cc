// Tests of the quick segment scan of histogram logs.
#include "stats/logs/log_scan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "stats/logs/log_reader.h"

namespace iotail::stats {
namespace log_scan_test {

std::string Line(int64_t time, int ddir) {
  std::string line = std::to_string(time) + ", " + std::to_string(ddir) + ", 4096";
  for (int i = 0; i < 29; ++i) line += ", 1";
  return line + "\n";
}

class LogScanTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& data) {
    path_ = std::filesystem::temp_directory_path() /
            ("iotail_scan_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log");
    std::ofstream(path_, std::ios::binary) << data;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(LogScanTest, OneSegmentForAnOrdinaryLog) {
  const std::string data = Line(250, 0) + Line(250, 1) + Line(500, 1) + Line(500, 0);
  const auto segments = ScanLogSegments(Write(data));
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].begin_offset, 0u);
  EXPECT_EQ(segments[0].end_offset, data.size());
  EXPECT_EQ(segments[0].first_line, 1u);
  EXPECT_EQ(segments[0].first_end_ms, 250);
  EXPECT_EQ(segments[0].second_end_ms, 500);
  EXPECT_EQ(segments[0].directions, 0b011);
}

TEST_F(LogScanTest, PeriodIsTheSpacingOfOneDirection) {
  // fio's read and write lines of a job end a few ms apart (each direction has its own window):
  // the period is 250 ms, not the 1 ms between the first read and the first write.
  const int64_t e = 1'700'000'000'000;
  const std::string data =
      Line(e + 254, 0) + Line(e + 255, 1) + Line(e + 504, 0) + Line(e + 505, 1);
  const auto segments = ScanLogSegments(Write(data));
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].first_end_ms, e + 254);
  EXPECT_EQ(segments[0].second_end_ms, e + 504);
}

TEST_F(LogScanTest, SegmentsOfAPerJobLogsZeroFile) {
  const std::string job1 = Line(250, 0) + Line(500, 0);
  const std::string job2 = Line(251, 2) + Line(251, 2) + Line(501, 1);
  const std::string job3 = Line(100, 2);
  const auto segments = ScanLogSegments(Write(job1 + "\n" + job2 + job3));
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].end_offset, job1.size() + 1);
  EXPECT_EQ(segments[1].begin_offset, job1.size() + 1);
  EXPECT_EQ(segments[1].first_line, 4u);
  EXPECT_EQ(segments[1].first_end_ms, 251);
  EXPECT_EQ(segments[1].second_end_ms, 501);
  EXPECT_EQ(segments[1].directions, 0b110);
  EXPECT_EQ(segments[2].begin_offset, job1.size() + 1 + job2.size());
  EXPECT_EQ(segments[2].first_line, 7u);
  EXPECT_FALSE(segments[2].second_end_ms.has_value());
  EXPECT_EQ(segments[2].end_offset, job1.size() + 1 + job2.size() + job3.size());

  // Each segment read on its own by LogReader gives exactly its records.
  size_t total = 0;
  for (const auto& s : segments) {
    LogReaderOptions options;
    options.begin_offset = s.begin_offset;
    options.end_offset = s.end_offset;
    options.first_line = s.first_line;
    LogReader reader(path_.string(), options);
    bool first = true;
    while (reader.Next()) {
      if (first) {
        EXPECT_EQ(reader.record().line, s.first_line);
      }
      EXPECT_EQ(reader.record().segment, 0u);
      first = false;
      ++total;
    }
  }
  EXPECT_EQ(total, 6u);
}

TEST_F(LogScanTest, EmptyFileHasNoSegments) {
  EXPECT_TRUE(ScanLogSegments(Write("")).empty());
  EXPECT_TRUE(ScanLogSegments(Write("\n\n")).empty());
}

TEST_F(LogScanTest, LastLineWithoutNewlineIsScanned) {
  std::string data = Line(100, 0) + Line(50, 0);
  data.pop_back();
  const auto segments = ScanLogSegments(Write(data));
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[1].end_offset, data.size());
}

TEST_F(LogScanTest, UnreadableLinesStayInsideASegment) {
  // A damaged first line must be read (and reported) by LogReader: the segment starts at it.
  const std::string data = "garbage\n" + Line(100, 1) + Line(200, 1);
  const auto segments = ScanLogSegments(Write(data));
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].begin_offset, 0u);
  EXPECT_EQ(segments[0].first_line, 1u);
  EXPECT_EQ(segments[0].first_end_ms, 100);
  EXPECT_EQ(segments[0].second_end_ms, 200);
  EXPECT_EQ(segments[0].directions, 0b011);  // read: the reader that takes unreadable ddirs
  // A file of nothing but damage still has a segment, so that it is not taken for empty.
  for (const std::string bad : {"104, 94106378796208, 0, 4096, 0\n", "x\n", "250, 7, 0\n",
                                "99999999999999999999999, 0, 0\n"}) {
    const auto only = ScanLogSegments(Write(bad));
    ASSERT_EQ(only.size(), 1u) << bad;
    EXPECT_NE(only[0].directions, 0) << bad;
  }
  // A write line with an unreadable time is given to the write reader.
  EXPECT_EQ(ScanLogSegments(Write("x, 1, 0\n"))[0].directions, 0b010);
}

TEST_F(LogScanTest, MissingFileIsASystemError) {
  EXPECT_THROW(ScanLogSegments("/nonexistent/iotail/scan.log"), std::system_error);
}

}  // namespace log_scan_test
}  // namespace iotail::stats
