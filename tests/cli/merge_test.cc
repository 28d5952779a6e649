// End-to-end tests of `iotail merge`: fio's line format, and totals preserved through pctiles.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace merge_test {

namespace fs = std::filesystem;

using Result = iotail::testing::CommandResult;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_merge"); }
  void TearDown() override { fs::remove_all(dir_); }

  Result Iotail(const std::string& args) { return iotail::testing::RunIotail(args, dir_); }

  static std::string Files(const std::string& run) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(fs::path(IOTAIL_TEST_DATA_DIR) / "fio" / run)) {
      if (e.path().extension() == ".log") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    std::string joined;
    for (const auto& f : files) joined += " " + f;
    return joined;
  }

  // The whole-run ("total") CSV rows of `iotail pctiles`.
  std::vector<std::string> Totals(const std::string& args) {
    const Result r = Iotail("pctiles --format csv --output-unit ns " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> totals;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("total,")) totals.push_back(line);
    }
    return totals;
  }

  fs::path dir_;
};

TEST_F(MergeTest, MergedLogGivesTheSameWholeRunTotals) {
  for (const char* run : {"randrw", "basic", "trim", "perjob0", "burst", "epoch", "coarse"}) {
    SCOPED_TRACE(run);
    const std::string out = (dir_ / (std::string(run) + ".log")).string();
    const Result merge = Iotail("merge -o " + out + Files(run));
    ASSERT_EQ(merge.status, 0) << merge.err;
    const auto before = Totals(Files(run));
    const auto after = Totals(out);
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(after, before);
  }
}

TEST_F(MergeTest, MergedLogHasFioLineFormat) {
  const std::string out = (dir_ / "merged.log").string();
  ASSERT_EQ(Iotail("merge --time-quantum 250ms -o " + out + Files("randrw")).status, 0);
  std::ifstream in(out, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\r'), std::string::npos);
  const std::regex head("^(\\d+), ([012]), (\\d+)");
  std::istringstream lines(text);
  int64_t previous = -1;
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, head)) << line.substr(0, 40);
    size_t fields = 1;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == ',') {
        ++fields;
        ASSERT_TRUE(i + 2 < line.size() && line[i + 1] == ' ' && std::isdigit(line[i + 2]))
            << "field " << fields << " of line " << count + 1;
      } else {
        ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == ' ');
      }
    }
    EXPECT_EQ(fields, 1859u);
    const int64_t time = std::stoll(m[1]);
    EXPECT_GE(time, previous);
    EXPECT_EQ(time % 250, 0) << "end of a 250 ms quantum";
    previous = time;
  }
  EXPECT_GT(count, 10u);
}

TEST_F(MergeTest, WritesToStandardOutput) {
  const Result r = Iotail("merge -o -" + Files("basic"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("1000, 0, 4096, ")) << r.out.substr(0, 40);
}

TEST_F(MergeTest, CombineWritesOneDirection) {
  const std::string out = (dir_ / "combined.log").string();
  ASSERT_EQ(Iotail("merge --combine -o " + out + Files("randrw")).status, 0);
  const auto combined = Totals(out);
  ASSERT_EQ(combined.size(), 1u);
  EXPECT_TRUE(combined[0].starts_with("total,read,")) << combined[0];
  const auto all = Totals("--combine" + Files("randrw"));
  ASSERT_EQ(all.size(), 1u);
  // Same statistics: only the direction label differs.
  EXPECT_EQ(combined[0].substr(std::string("total,read,").size()),
            all[0].substr(std::string("total,all,").size()));
}

TEST_F(MergeTest, OutputStaysProportionalAcrossAnHoursLongGap) {
  // fio's log with one changed digit in its last record's time: 13.9 hours later. The merge at
  // 1 ms quanta writes the covered quanta only (it wrote every quantum of the gap: 279 MB at
  // 1 s, 4.5 GB in 60 s at 1 ms), keeps the whole-run totals, and says there was a gap.
  std::ifstream in(fs::path(IOTAIL_TEST_DATA_DIR) / "fio" / "basic" / "hist_clat_hist.1.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 3u);
  lines.back() = "5000" + lines.back();  // "1759, ..." -> "50001759, ..."
  const fs::path log = dir_ / "moved.log";
  {
    std::ofstream out(log);
    for (const auto& line : lines) out << line << "\n";
  }
  // Output lines per input line: at most about period / quantum (250 at 1 ms, 1 at 1 s).
  for (const auto& [quantum, lines_per_record] : {std::pair{"1s", 1}, std::pair{"1ms", 250}}) {
    SCOPED_TRACE(quantum);
    const fs::path out = dir_ / "merged.log";
    const Result r = Iotail(std::string("merge --time-quantum ") + quantum + " -o " + out.string() +
                            " " + log.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("moved.log': 1 record(s) after a gap of more than 10 log periods"),
              std::string::npos)
        << r.err;
    EXPECT_LE(fs::file_size(out), 2 * lines_per_record * fs::file_size(log));
    EXPECT_EQ(Totals(out.string()), Totals(log.string()));
  }
}

TEST_F(MergeTest, UnwritableOutputIsASystemError) {
  const Result r = Iotail("merge -o /nonexistent/dir/out.log" + Files("basic"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/dir/out.log"), std::string::npos) << r.err;
}

}  // namespace merge_test
