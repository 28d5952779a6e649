// Tests of one line of a histogram log (LogLineParser): layout detection, the fast and careful
// parses, and every damage a line can hold, named with its file and line as a reader reports it.
#include "stats/logs/log_line.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"
#include "tests/stats/logs/log_test_util.h"

namespace iotail::stats {
namespace log_line_test {

TEST(LogLineTest, EveryRecordHoldsOnlyItsOwnCountsWhateverPathParsedTheOneBefore) {
  // The fast parse writes only non-zero counts over the previous record's cleared ones; lines
  // that leave it half-way for the careful parse (a tab, a 16-digit count, a long number at the
  // end) must not leave a count of one record in the next.
  std::string tabbed = Line(300, 0, {{5, 4}, {9, 2}});
  tabbed.replace(tabbed.find(", 4096, "), 8, ",\t4096, ");
  std::string padded = Line(500, 0, {{2, 8}, {1000, 12}});  // 16 digits: the careful parse
  padded.replace(padded.find(", 12, "), 6, ", 0000000000000012, ");
  const std::string data = Line(100, 0, {{3, 11}, {7, 1}, {1800, 123456}}) + tabbed +
                           Line(400, 0, {{1, 9}}) + padded +
                           Line(600, 0, {{4, 1}, {1855, 999'999'999'999'990}}) + Line(700, 0, {});
  auto reader = LogReader::FromString("mixed.log", data);
  const std::vector<std::map<size_t, uint64_t>> expected = {{{3, 11}, {7, 1}, {1800, 123456}},
                                                            {{5, 4}, {9, 2}},
                                                            {{1, 9}},
                                                            {{2, 8}, {1000, 12}},
                                                            {{4, 1}, {1855, 999'999'999'999'990}},
                                                            {}};
  size_t r = 0;
  for (; reader.Next(); ++r) {
    ASSERT_LT(r, expected.size());
    const auto counts = reader.record().counts;
    std::map<size_t, uint64_t> got;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] != 0) got[i] = counts[i];
    }
    EXPECT_EQ(got, expected[r]) << "record " << r;
    size_t listed = 0;  // the sparse view lists every non-zero count
    for (uint32_t i : reader.record().nonzero) listed += counts[i] != 0;
    EXPECT_EQ(listed, got.size()) << "record " << r;
  }
  EXPECT_EQ(r, expected.size());
}

TEST(LogLineTest, DetectsGenerationAndCoarsenessFromColumnCount) {
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    for (bool fio2 : {false, true}) {
      const size_t columns = (fio2 ? kFio2Buckets : kFio3Buckets) >> c;
      auto reader = LogReader::FromString(
          "c.log", Line(100, 0, {{columns - 1, 5}}, columns) + Line(200, 2, {{0, 1}}, columns));
      ASSERT_TRUE(reader.Next());
      EXPECT_EQ(*reader.layout(), fio2 ? HistogramLayout::Fio2(c) : HistogramLayout::Fio3(c));
      EXPECT_EQ(reader.record().counts.size(), columns);
      EXPECT_EQ(reader.record().counts[columns - 1], 5u);
      ASSERT_TRUE(reader.Next());
      EXPECT_EQ(reader.record().direction, Direction::kTrim);
      EXPECT_FALSE(reader.Next());
    }
  }
}

TEST(LogLineTest, WrongFieldCountNamesFileAndLine) {
  std::string line3 = Line(300, 0, {});
  line3.insert(line3.size() - 1, ", 0");
  const std::string message = ErrorOf(Line(100, 0, {}) + Line(200, 1, {}) + line3);
  EXPECT_NE(message.find("bad.log:3:"), std::string::npos) << message;
  EXPECT_NE(message.find("1860 fields"), std::string::npos) << message;
  // Consistent column count: the second line cannot switch layouts.
  const std::string switched = ErrorOf(Line(100, 0, {}) + Line(200, 0, {}, 928));
  EXPECT_NE(switched.find("bad.log:2:"), std::string::npos) << switched;
  // A first line matching no layout.
  const std::string odd = ErrorOf(Line(100, 0, {}, 100));
  EXPECT_NE(odd.find("bad.log:1:"), std::string::npos) << odd;
  EXPECT_NE(odd.find("103 fields"), std::string::npos) << odd;
}

TEST(LogLineTest, NonNumberIsAnError) {
  std::string line = Line(100, 0, {{7, 1}});
  line.replace(line.find(", 1,"), 4, ", x1,");
  const std::string message = ErrorOf(Line(50, 0, {}) + line);
  EXPECT_NE(message.find("bad.log:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("x1"), std::string::npos) << message;
  std::string word_time = Line(100, 0, {});
  word_time.replace(0, 3, "abc");
  EXPECT_NE(ErrorOf(word_time).find("bad.log:1:"), std::string::npos);
  std::string decimal = Line(100, 0, {});
  decimal.replace(0, 3, "1.5");
  EXPECT_NE(ErrorOf(decimal).find("bad.log:1:"), std::string::npos);
  std::string embedded = Line(100, 0, {{2, 12}});
  embedded.replace(embedded.find(", 12,"), 5, ", 1 2,");
  EXPECT_NE(ErrorOf(embedded).find("bad.log:1:"), std::string::npos);
}

TEST(LogLineTest, NegativeValueIsAnError) {
  const std::string message = ErrorOf(Line(100, 0, {}) + Line(200, 0, {{5, 1}}) + [] {
    std::string l = Line(300, 0, {{5, 1}});
    l.replace(l.find(", 1,"), 4, ", -1,");
    return l;
  }());
  EXPECT_NE(message.find("bad.log:3:"), std::string::npos) << message;
  EXPECT_NE(message.find("negative"), std::string::npos) << message;
  std::string negative_time = Line(100, 0, {});
  negative_time.replace(0, 3, "-10");
  EXPECT_NE(ErrorOf(negative_time).find("negative"), std::string::npos);
}

TEST(LogLineTest, OverflowIsAnError) {
  std::string line = Line(100, 0, {{9, 1}});
  line.replace(line.find(", 1,"), 4, ", 18446744073709551616,");  // 2^64
  const std::string message = ErrorOf(line);
  EXPECT_NE(message.find("bad.log:1:"), std::string::npos) << message;
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  // 2^64 - 1 is a number but more I/Os than one interval holds: damage.
  std::string max = Line(100, 0, {{9, 1}});
  max.replace(max.find(", 1,"), 4, ", 18446744073709551615,");
  EXPECT_NE(ErrorOf(max).find("more than 1000000000000000 I/Os in one interval"),
            std::string::npos);
  std::string limit = Line(100, 0, {{9, 1}});
  limit.replace(limit.find(", 1,"), 4, ", 1000000000000000,");
  EXPECT_EQ(ErrorOf(limit), "");
  // A time beyond int64.
  std::string time = Line(100, 0, {});
  time.replace(0, 3, "9223372036854775808");
  EXPECT_NE(ErrorOf(time).find("out of range"), std::string::npos);
}

TEST(LogLineTest, DdirOutsideZeroToTwoIsAnError) {
  for (int ddir : {3, 7}) {
    const std::string message = ErrorOf(Line(100, 0, {}) + Line(200, ddir, {}));
    EXPECT_NE(message.find("bad.log:2:"), std::string::npos) << message;
    EXPECT_NE(message.find("ddir " + std::to_string(ddir)), std::string::npos) << message;
  }
}

TEST(LogLineTest, CompressedLogGarbageIsRejected) {
  const std::string message = ErrorOf("104, 94106378796208, 0, 4096, 0\n");
  EXPECT_NE(message.find("bad.log:1:"), std::string::npos) << message;
  EXPECT_NE(message.find("log_compression"), std::string::npos) << message;
}

// The parser on its own, as a reader drives it: a line without its ending, and where it is.
std::string Bare(std::string line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

// The LogFormatError that parsing `line` (followed by a newline) throws, or nullopt.
std::optional<LogFormatError> ParseError(LogLineParser& parser, std::string_view line,
                                         LogLinePlace place) {
  try {
    parser.Parse(line, LogLineEnd::kNewline, place);
  } catch (const LogFormatError& e) {
    return e;
  }
  return std::nullopt;
}

TEST(LogLineParserTest, ParsesFieldsAndCountsAndDetectsTheLayout) {
  LogLineParser parser;
  EXPECT_FALSE(parser.layout().has_value());
  const std::string line = Bare(Line(250, 1, {{0, 2}, {317, 3}, {1855, 123456789012345}}));
  const ParsedLogLine parsed = parser.Parse(line, LogLineEnd::kNewline, {"p.log", 7});
  EXPECT_TRUE(parsed.torn_warning.empty());
  EXPECT_EQ(parsed.fields.time_ms, 250u);
  EXPECT_EQ(parsed.fields.ddir, 1u);
  EXPECT_EQ(parsed.fields.block_size, 4096u);
  ASSERT_EQ(parser.layout(), HistogramLayout::Fio3());
  ASSERT_EQ(parser.counts().size(), kFio3Buckets);
  EXPECT_EQ(parser.counts()[0], 2u);
  EXPECT_EQ(parser.counts()[317], 3u);
  EXPECT_EQ(parser.counts()[1855], 123456789012345u);
  std::vector<uint32_t> listed;
  for (uint32_t i : parser.nonzero()) {
    if (parser.counts()[i] != 0) listed.push_back(i);
  }
  EXPECT_EQ(listed, (std::vector<uint32_t>{0, 317, 1855}));
  // The next line's counts replace these, whichever parse takes it.
  std::string tabbed = Bare(Line(500, 0, {{5, 1}}));
  tabbed.replace(tabbed.find(", 4096, "), 8, ",\t4096, ");
  parser.Parse(tabbed, LogLineEnd::kNewline, {"p.log", 8});
  for (size_t i = 0; i < parser.counts().size(); ++i) {
    EXPECT_EQ(parser.counts()[i], i == 5 ? 1u : 0u) << i;
  }
}

TEST(LogLineParserTest, TornLineIsAWarningOnlyAtTheEndOfTheInput) {
  LogLineParser parser;
  const std::string torn = "700, 0, 4096, 1, 2, 3";
  const ParsedLogLine parsed = parser.Parse(torn, LogLineEnd::kEndOfInput, {"t.log", 3});
  EXPECT_EQ(parsed.torn_warning, "t.log:3: torn last line (6 fields) ignored");
  EXPECT_FALSE(parser.layout().has_value());
  // The same line followed by a newline is damage.
  const std::optional<LogFormatError> error = ParseError(parser, torn, {"t.log", 3});
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->file(), "t.log");
  EXPECT_EQ(error->line(), 3u);
  // With the layout known: the count of fields expected too.
  parser.SetLayout(HistogramLayout::Fio3(6));
  EXPECT_EQ(parser.Parse(torn, LogLineEnd::kEndOfInput, {"t.log", 9}).torn_warning,
            "t.log:9: torn last line (6 of 32 fields) ignored");
}

TEST(LogLineParserTest, ErrorsNameThePlaceGiven) {
  LogLineParser parser;
  const std::optional<LogFormatError> error =
      ParseError(parser, Bare(Line(100, 3, {}, 29)), {"x.log", 42});  // ddir 3: damage
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->file(), "x.log");
  EXPECT_EQ(error->line(), 42u);
  EXPECT_NE(std::string(error->what()).find("ddir 3"), std::string::npos) << error->what();
}

TEST(LogLineParserTest, SetLayoutIsKeptUntilReset) {
  LogLineParser parser;
  parser.SetLayout(HistogramLayout::Fio3(6));
  const std::string wide = Bare(Line(100, 0, {{3, 1}}));
  EXPECT_THROW(parser.Parse(wide, LogLineEnd::kNewline, {"s.log", 1}), LogFormatError);
  EXPECT_EQ(parser.Parse(Bare(Line(100, 0, {{3, 1}}, 29)), LogLineEnd::kNewline, {"s.log", 2})
                .fields.time_ms,
            100u);
  parser.Reset();
  EXPECT_FALSE(parser.layout().has_value());
  parser.Parse(wide, LogLineEnd::kNewline, {"s.log", 3});
  EXPECT_EQ(parser.layout(), HistogramLayout::Fio3());
  EXPECT_EQ(parser.counts()[3], 1u);
}

TEST(LogLineParserTest, QuickDirectionLookPassesWhatItCannotRead) {
  const std::string write = Bare(Line(100, 1, {}, 29));
  EXPECT_TRUE(LogLineMayBeOfDirection(write, Direction::kWrite));
  EXPECT_FALSE(LogLineMayBeOfDirection(write, Direction::kRead));
  EXPECT_FALSE(LogLineMayBeOfDirection(write, Direction::kTrim));
  // "01", a tab, no comma at all: left to the full parse, for every direction.
  for (const std::string odd : {"100, 01, 4096, 0", "100,\t1, 4096, 0", "100"}) {
    for (int d = 0; d < kDirectionCount; ++d) {
      EXPECT_TRUE(LogLineMayBeOfDirection(odd, static_cast<Direction>(d))) << odd << " " << d;
    }
  }
}

TEST(LogLineParserTest, FastParseAgreesWithTheCarefulOneOnAnyDamage) {
  // The fast parse accepts what the careful one accepts, with the same counts, and leaves the rest
  // to it. A line with a leading blank always takes the careful parse: the same line without it
  // must give the same counts or the same error, whatever bytes a mutation put where (across the
  // fast parse's 64-byte blocks too), and whatever the line before it left behind.
  std::mt19937_64 random(23);
  const std::string bytes = "0123456789, \t-x\x80\xff";
  auto outcome = [](LogLineParser& parser, const std::string& line) -> std::string {
    try {
      parser.Parse(line, LogLineEnd::kNewline, {"f.log", 1});
    } catch (const LogFormatError& e) {
      return std::string("error: ") + e.what();
    }
    std::string counts;
    for (size_t i = 0; i < parser.counts().size(); ++i) {
      if (parser.counts()[i] != 0) counts += fmt::format("{}={} ", i, parser.counts()[i]);
    }
    return counts;
  };
  LogLineParser fast, careful;
  for (int round = 0; round < 3000; ++round) {
    const int coarseness = static_cast<int>(random() % 3);
    const size_t buckets = kFio3Buckets >> coarseness;
    fast.SetLayout(HistogramLayout::Fio3(coarseness));
    careful.SetLayout(HistogramLayout::Fio3(coarseness));
    std::map<size_t, uint64_t> counts;
    for (int k = static_cast<int>(random() % 40); k > 0; --k) {
      const uint64_t digits = 1 + random() % 16;
      uint64_t value = random() % 10;
      for (uint64_t d = 1; d < digits; ++d) value = value * 10 + random() % 10;
      counts[random() % buckets] = value % 1'000'000'000'000'000;
    }
    std::string line = Bare(Line(static_cast<int64_t>(random() % 100000), 0, counts, buckets));
    const int mutations = static_cast<int>(random() % 3);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = random() % line.size();
      switch (random() % 4) {
        case 0:
          line[at] = bytes[random() % bytes.size()];
          break;
        case 1:
          line.erase(at, 1);
          break;
        case 2:
          line.insert(at, 1, bytes[random() % bytes.size()]);
          break;
        default:
          line.insert(at, random() % 2 ? ", 0" : "000000000000000");
          break;
      }
    }
    if (line.empty() || line.find_first_not_of(" \t") == std::string::npos) continue;
    EXPECT_EQ(outcome(fast, line), outcome(careful, " " + line)) << "round " << round;
  }
}

}  // namespace log_line_test
}  // namespace iotail::stats
