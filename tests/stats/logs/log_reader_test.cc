// Tests of the streaming fio histogram-log reader: files, byte ranges and positions, segments,
// client sums, one direction, damage. The checks of one line are in log_line_test.cc.
#include "stats/logs/log_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "tests/stats/logs/log_test_util.h"

namespace iotail::stats {
namespace log_reader_test {

TEST(LogReaderTest, ReadsFio3Records) {
  const std::string data =
      Line(250, 0, {{317, 3}, {954, 1}}) + Line(251, 1, {{0, 2}}) + Line(500, 0, {{1855, 7}});
  auto reader = LogReader::FromString("a.log", data);
  EXPECT_FALSE(reader.layout().has_value());
  std::vector<std::vector<uint64_t>> counts;
  const auto records = ReadAll(reader, &counts);
  ASSERT_EQ(records.size(), 3u);
  ASSERT_TRUE(reader.layout().has_value());
  EXPECT_EQ(*reader.layout(), HistogramLayout::Fio3());
  EXPECT_EQ(records[0].end_ms, 250);
  EXPECT_EQ(records[0].direction, Direction::kRead);
  EXPECT_EQ(records[0].block_size, 4096u);
  EXPECT_EQ(records[0].line, 1u);
  EXPECT_EQ(records[1].direction, Direction::kWrite);
  EXPECT_EQ(records[2].line, 3u);
  EXPECT_EQ(counts[0].size(), 1856u);
  EXPECT_EQ(counts[0][317], 3u);
  EXPECT_EQ(counts[0][954], 1u);
  EXPECT_EQ(counts[1][0], 2u);
  EXPECT_EQ(counts[2][1855], 7u);
  uint64_t total = 0;
  for (const auto& c : counts)
    for (uint64_t n : c) total += n;
  EXPECT_EQ(total, 13u);
  EXPECT_TRUE(reader.warnings().empty());
  EXPECT_EQ(reader.bytes_consumed(), data.size());
}

TEST(LogReaderTest, AcceptsCrlfAndSkipsEmptyLines) {
  const std::string data = "\n" + Line(100, 0, {{5, 1}}, 29, "\r\n") + "\r\n   \n" +
                           Line(200, 0, {{6, 2}}, 29, "\r\n") + "\n";
  auto reader = LogReader::FromString("crlf.log", data);
  std::vector<std::vector<uint64_t>> counts;
  const auto records = ReadAll(reader, &counts);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 2u);
  EXPECT_EQ(records[1].line, 5u);
  EXPECT_EQ(counts[1][6], 2u);
  EXPECT_EQ(counts[1][28], 0u);
  EXPECT_TRUE(reader.warnings().empty());
}

TEST(LogReaderTest, EmptyFileHasNoRecords) {
  auto reader = LogReader::FromString("empty.log", "");
  EXPECT_FALSE(reader.Next());
  EXPECT_FALSE(reader.layout().has_value());
  auto blank = LogReader::FromString("blank.log", "\n\n\r\n");
  EXPECT_FALSE(blank.Next());
}

TEST(LogReaderTest, TruncatedTrailingRecordIsIgnored) {
  std::string torn = Line(200, 0, {{3, 4}});
  torn.resize(300);  // no newline, 99 fields: no layout has that many
  auto reader = LogReader::FromString("torn.log", Line(100, 0, {{3, 1}}) + torn);
  ASSERT_TRUE(reader.Next());
  EXPECT_FALSE(reader.Next());
  ASSERT_EQ(reader.warnings().size(), 1u);
  EXPECT_NE(reader.warnings()[0].find("torn.log:2"), std::string::npos) << reader.warnings()[0];
  EXPECT_NE(reader.warnings()[0].find("torn"), std::string::npos);

  // A torn first (and only) line: no layout known yet.
  auto first = LogReader::FromString("torn1.log", torn);
  EXPECT_FALSE(first.Next());
  EXPECT_EQ(first.warnings().size(), 1u);
}

TEST(LogReaderTest, TornLineInTheMiddleIsAnError) {
  std::string torn = Line(200, 0, {{3, 4}});
  torn.resize(300);
  const std::string message = ErrorOf(Line(100, 0, {}) + torn + "\n" + Line(300, 0, {}));
  EXPECT_NE(message.find("bad.log:2:"), std::string::npos) << message;
}

TEST(LogReaderTest, PerJobLogsZeroStartsASegmentWhenTimeJumpsBack) {
  const std::string data = Line(250, 0, {}) + Line(250, 1, {}) + Line(500, 1, {}) +
                           Line(500, 0, {}) +
                           // job 2 starts: time jumps back
                           Line(251, 0, {}) + Line(251, 1, {}) + Line(501, 0, {}) +
                           // job 3
                           Line(249, 1, {}) + Line(499, 1, {});
  auto reader = LogReader::FromString("perjob0.log", data);
  const auto records = ReadAll(reader, nullptr);
  ASSERT_EQ(records.size(), 9u);
  const std::vector<uint32_t> expected = {0, 0, 0, 0, 1, 1, 1, 2, 2};
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].segment, expected[i]) << i;
  // The next job's first line may be of a direction the previous job never had.
  auto switched = LogReader::FromString(
      "perjob0.log", Line(250, 0, {}) + Line(500, 0, {}) + Line(255, 1, {}) + Line(255, 0, {}));
  const auto s = ReadAll(switched, nullptr);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[2].segment, 1u);
  EXPECT_EQ(s[3].segment, 1u);
  // Equal times (a duplicate-timestamp burst) stay in the segment.
  auto burst = LogReader::FromString(
      "burst.log", Line(250, 0, {}) + Line(500, 0, {}) + Line(500, 0, {}) + Line(500, 0, {}));
  for (const auto& r : ReadAll(burst, nullptr)) EXPECT_EQ(r.segment, 0u);
}

TEST(LogReaderTest, UndoesClientAlternatingSums) {
  // True deltas d_k per direction; the client log holds r_k = d_k + d_(k-2) + d_(k-4) + ...
  const std::vector<std::vector<uint64_t>> deltas = {{1, 0, 5}, {2, 3, 0}, {4, 1, 1},
                                                     {0, 7, 2}, {3, 3, 3}, {9, 0, 1}};
  const size_t columns = 29;
  std::string data;
  std::vector<std::vector<uint64_t>> raw(deltas.size(), std::vector<uint64_t>(3, 0));
  for (size_t k = 0; k < deltas.size(); ++k) {
    for (size_t b = 0; b < 3; ++b) {
      raw[k][b] = deltas[k][b] + (k >= 2 ? raw[k - 2][b] : 0);
    }
    // Interleave a write line carrying the same pattern times 10.
    data += Line(static_cast<int64_t>(100 * (k + 1)), 0,
                 {{0, raw[k][0]}, {1, raw[k][1]}, {2, raw[k][2]}}, columns);
    data += Line(static_cast<int64_t>(100 * (k + 1)), 1,
                 {{0, 10 * raw[k][0]}, {1, 10 * raw[k][1]}, {2, 10 * raw[k][2]}}, columns);
  }
  LogReaderOptions options;
  options.undo_client_sums = true;
  auto reader = LogReader::FromString("client.log", data, options);
  std::vector<std::vector<uint64_t>> counts;
  const auto records = ReadAll(reader, &counts);
  ASSERT_EQ(records.size(), 2 * deltas.size());
  for (size_t k = 0; k < deltas.size(); ++k) {
    for (size_t b = 0; b < 3; ++b) {
      EXPECT_EQ(counts[2 * k][b], deltas[k][b]) << "read k=" << k << " b=" << b;
      EXPECT_EQ(counts[2 * k + 1][b], 10 * deltas[k][b]) << "write k=" << k << " b=" << b;
    }
  }
  // Without the option, the raw sums come back.
  auto plain = LogReader::FromString("client.log", data);
  std::vector<std::vector<uint64_t>> raw_counts;
  ReadAll(plain, &raw_counts);
  EXPECT_EQ(raw_counts[8][0], raw[4][0]);
}

TEST(LogReaderTest, ClientSumUndoRestartsPerSegment) {
  // Two jobs in one file; each job's first two records are kept as they are.
  std::string data = Line(100, 0, {{0, 1}}, 29) + Line(200, 0, {{0, 2}}, 29) +
                     Line(300, 0, {{0, 4}}, 29) +  // r = 3 + 1
                     Line(100, 0, {{0, 5}}, 29) + Line(200, 0, {{0, 1}}, 29) +
                     Line(300, 0, {{0, 6}}, 29);  // d = 6 - 5 = 1
  LogReaderOptions options;
  options.undo_client_sums = true;
  auto reader = LogReader::FromString("client.log", data, options);
  std::vector<std::vector<uint64_t>> counts;
  ReadAll(reader, &counts);
  ASSERT_EQ(counts.size(), 6u);
  const std::vector<uint64_t> expected = {1, 2, 3, 5, 1, 1};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(counts[i][0], expected[i]) << i;
  // A decreasing sum is not a client log.
  const std::string message = ErrorOf(
      Line(100, 0, {{0, 5}}, 29) + Line(200, 0, {}, 29) + Line(300, 0, {{0, 1}}, 29), options);
  EXPECT_NE(message.find("bad.log:3:"), std::string::npos) << message;
}

TEST(LogReaderTest, OnlyDirectionSkipsOtherLines) {
  std::string bad_write = Line(200, 1, {});
  bad_write.replace(bad_write.find(", 0,"), 4, ", zz,");
  const std::string data =
      Line(100, 0, {{1, 1}}) + Line(100, 1, {{2, 2}}) + bad_write + Line(200, 0, {{3, 3}});
  LogReaderOptions options;
  options.only_direction = Direction::kRead;
  auto reader = LogReader::FromString("dir.log", data, options);
  const auto records = ReadAll(reader, nullptr);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 1u);
  EXPECT_EQ(records[1].line, 4u);
  // The write reader does see the damaged line.
  options.only_direction = Direction::kWrite;
  EXPECT_NE(ErrorOf(data, options).find("bad.log:3:"), std::string::npos);
}

TEST(LogReaderTest, OnlyDirectionNeverReturnsAnotherDirection) {
  // Found by the fuzzer: "01" (or a tab before the ddir) defeats the quick ddir filter.
  std::string odd = Line(200, 1, {{4, 9}}, 29);
  odd.replace(odd.find(", 1,"), 4, ", 01,");
  std::string tab = Line(300, 1, {{4, 9}}, 29);
  tab.replace(tab.find(", 1,"), 4, ",\t1,");
  const std::string data = Line(100, 0, {{1, 1}}, 29) + odd + tab + Line(400, 0, {{1, 1}}, 29);
  for (int d = 0; d < kDirectionCount; ++d) {
    LogReaderOptions options;
    options.only_direction = static_cast<Direction>(d);
    auto reader = LogReader::FromString("dir.log", data, options);
    const auto records = ReadAll(reader, nullptr);
    EXPECT_EQ(records.size(), d == 2 ? 0u : 2u) << d;
    for (const auto& r : records) EXPECT_EQ(r.direction, static_cast<Direction>(d));
  }
}

TEST(LogReaderTest, BeginAndEndOffsetsReadARangeWithLineNumbers) {
  const std::string a = Line(100, 0, {{1, 1}});
  const std::string b = Line(200, 0, {{2, 2}});
  const std::string c = Line(300, 0, {{3, 3}});
  const std::string data = a + b + c;
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_range_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << data;
  LogReaderOptions options;
  options.begin_offset = a.size();
  options.end_offset = a.size() + b.size();
  options.first_line = 2;
  for (bool from_file : {true, false}) {
    SCOPED_TRACE(from_file);
    LogReader reader = from_file ? LogReader(path.string(), options)
                                 : LogReader::FromString("mem.log", data, options);
    ASSERT_TRUE(reader.Next());
    EXPECT_EQ(reader.record().end_ms, 200);
    EXPECT_EQ(reader.record().line, 2u);
    EXPECT_EQ(reader.record().counts[2], 2u);
    EXPECT_FALSE(reader.Next());
    EXPECT_TRUE(reader.warnings().empty());
  }
  std::filesystem::remove(path);
}

TEST(LogReaderTest, BeginInsideALineStartsAtTheNextLineAndRecordsCarryTheirOffsets) {
  // Lines of different lengths, a blank one and a CRLF one.
  std::vector<std::string> lines = {Line(100, 0, {{1, 1}}), Line(200, 1, {{2, 2}, {900, 7}}), "\n",
                                    Line(300, 0, {{3, 3}}, kFio3Buckets, "\r\n"),
                                    Line(400, 1, {{4, 4}})};
  std::string data;
  std::vector<uint64_t> starts;
  for (const std::string& l : lines) {
    starts.push_back(data.size());
    data += l;
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_inside_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << data;
  // The records from each line start, for every begin offset: the first line that starts at or
  // after it; record offsets are their lines' starts; a hint to stop early changes nothing.
  const std::vector<size_t> record_lines = {0, 1, 3, 4};
  for (uint64_t begin = 0; begin <= data.size(); ++begin) {
    for (bool hint : {false, true}) {
      for (bool from_file : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << "begin " << begin << " hint " << hint << " file " << from_file);
        LogReaderOptions options;
        options.begin_offset = begin;
        options.begin_inside_line = true;
        options.buffer_size = 7;  // refills inside lines
        if (hint) options.read_hint_end = begin + 1;
        LogReader reader = from_file ? LogReader(path.string(), options)
                                     : LogReader::FromString("mem.log", data, options);
        std::vector<uint64_t> offsets;
        while (reader.Next()) offsets.push_back(reader.record().offset);
        std::vector<uint64_t> expected;
        for (const size_t i : record_lines) {
          if (starts[i] >= begin) expected.push_back(starts[i]);
        }
        EXPECT_EQ(offsets, expected);
        EXPECT_TRUE(reader.warnings().empty());
      }
    }
  }
  std::filesystem::remove(path);
}

TEST(LogReaderTest, TinyBufferWithLongLinesReadsTheSame) {
  std::string data;
  for (int k = 1; k <= 20; ++k) {
    data += Line(k * 100, k % 3,
                 {{static_cast<size_t>(k), static_cast<uint64_t>(k)}, {1855, 123456789012ull}});
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_tiny_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << data;
  LogReaderOptions small;
  small.buffer_size = 1;  // far shorter than one line (~3.7 KB)
  LogReader reader(path.string(), small);
  auto memory = LogReader::FromString("mem", data);
  std::vector<std::vector<uint64_t>> a, b;
  const auto ra = ReadAll(reader, &a);
  const auto rb = ReadAll(memory, &b);
  ASSERT_EQ(ra.size(), 20u);
  ASSERT_EQ(rb.size(), 20u);
  EXPECT_EQ(a, b);
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].end_ms, rb[i].end_ms);
    EXPECT_EQ(ra[i].line, i + 1);
  }
  EXPECT_EQ(reader.bytes_consumed(), data.size());
  std::filesystem::remove(path);
}

// What a caller sees of a record, to compare two reads of one file.
struct SeenRecord {
  int64_t end_ms;
  Direction direction;
  uint64_t line;
  uint32_t segment;
  std::vector<uint64_t> counts;
  bool operator==(const SeenRecord&) const = default;
};

std::vector<SeenRecord> ReadRest(LogReader& reader, size_t limit = SIZE_MAX) {
  std::vector<SeenRecord> seen;
  while (seen.size() < limit && reader.Next()) {
    const LogRecord& r = reader.record();
    seen.push_back({r.end_ms, r.direction, r.line, r.segment, {r.counts.begin(), r.counts.end()}});
  }
  return seen;
}

TEST(LogReaderTest, OpenAtAPositionCarriesOnExactly) {
  // Two jobs (per_job_logs=0), both directions interleaved, a blank line, a CRLF line and a torn
  // last line; counts that only grow, so that they are also valid fio --client running sums.
  std::string data;
  for (int job = 0; job < 2; ++job) {
    for (int k = 1; k <= 6; ++k) {
      const auto n = static_cast<uint64_t>(k * k + job);
      data += Line(k * 100, 0, {{3, n}, {40, 2 * n}}, 29);
      if (k % 3 != 0) data += Line(k * 100 + 5, 1, {{7, n + 1}}, 29, k == 4 ? "\r\n" : "\n");
      if (k == 2) data += "\n";
    }
  }
  data += "700, 0, 4096, 1, 2";  // torn
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_position_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path, std::ios::binary) << data;

  struct Variant {
    std::optional<Direction> only;
    bool undo;
  };
  for (const Variant v : {Variant{std::nullopt, false}, Variant{Direction::kRead, false},
                          Variant{Direction::kRead, true}, Variant{Direction::kWrite, true}}) {
    SCOPED_TRACE(::testing::Message()
                 << "only " << (v.only ? DirectionIndex(*v.only) : -1) << " undo " << v.undo);
    LogReaderOptions options;
    options.only_direction = v.only;
    options.undo_client_sums = v.undo;
    options.buffer_size = 1;  // refills in the middle of lines, too
    LogReader straight(path.string(), options);
    const auto all = ReadRest(straight);
    ASSERT_GE(all.size(), 7u);
    ASSERT_EQ(straight.warnings().size(), v.only == Direction::kWrite ? 0u : 1u);  // a read line
    LogReader resumed;  // one reader takes every turn, reusing its buffers
    for (size_t k = 0; k <= all.size(); ++k) {
      SCOPED_TRACE(k);
      LogReader first(path.string(), options);
      auto seen = ReadRest(first, k);
      const LogReaderPosition position = first.Position();
      first.Close();
      EXPECT_FALSE(first.Next());
      resumed.Open(path.string(), options, position);
      const auto rest = ReadRest(resumed);
      seen.insert(seen.end(), rest.begin(), rest.end());
      EXPECT_EQ(seen, all);
      EXPECT_EQ(resumed.warnings(), straight.warnings());
      EXPECT_EQ(resumed.bytes_consumed(), data.size());
      EXPECT_EQ(resumed.layout(), HistogramLayout::Fio3(6));
    }
  }
  std::filesystem::remove(path);
}

TEST(LogReaderTest, PositionOfAClientSumReaderNeedsOneDirection) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("iotail_reader_client_" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << Line(100, 0, {{1, 1}}, 29) << Line(200, 0, {{1, 2}}, 29);
  LogReaderOptions options;
  options.undo_client_sums = true;
  LogReader reader(path.string(), options);
  ASSERT_TRUE(reader.Next());
  EXPECT_THROW(reader.Position(), std::logic_error);
  std::filesystem::remove(path);
}

TEST(LogReaderTest, ReadsEveryGoldenFioLog) {
  const std::filesystem::path root = std::filesystem::path(IOTAIL_TEST_DATA_DIR) / "fio";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no golden data";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".log") continue;
    SCOPED_TRACE(entry.path().string());
    LogReader reader(entry.path().string());
    uint64_t records = 0;
    while (reader.Next()) {
      ++records;
      EXPECT_EQ(reader.record().counts.size(), reader.layout()->size());
    }
    EXPECT_GT(records, 0u);
    EXPECT_TRUE(reader.warnings().empty());
    ++files;
  }
  EXPECT_GT(files, 5);
}

}  // namespace log_reader_test
}  // namespace iotail::stats
