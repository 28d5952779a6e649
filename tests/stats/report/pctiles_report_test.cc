// Tests of the pctiles report writer: columns, formats, units, empty intervals, SLC.
#include "stats/report/pctiles_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "tests/test_util.h"

namespace iotail::stats {
namespace pctiles_report_test {

using testing::Lines;

const HistogramLayout kFio3 = HistogramLayout::Fio3();

ReportOptions Options(ReportFormat format, LatencyUnit unit = LatencyUnit::kUs) {
  ReportOptions options;
  options.format = format;
  options.unit = unit;
  options.percentiles = {50, 99.9};
  const auto sbk = SbkSlcPercentiles();
  options.slc_percentiles.assign(sbk.begin(), sbk.end());
  options.slc_list_name = "sbk";
  return options;
}

std::vector<uint64_t> Sample() {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  counts[317] = 3;  // 1004 ns
  counts[954] = 1;  // 1003520 ns
  return counts;
}

TEST(PctilesReportTest, CsvHeaderAndRows) {
  std::ostringstream out;
  const auto options = Options(ReportFormat::kCsv);
  PctilesReport report(out, options, {{"files", "1"}});
  report.Begin();
  const auto counts = Sample();
  report.Row(1000, "read", ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options));
  const std::vector<uint64_t> empty(kFio3Buckets, 0);
  report.Row(2000, "read", ComputeIntervalStats(std::span<const uint64_t>(empty), kFio3, options));
  report.Row(std::nullopt, "all",
             ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options));
  report.End();
  const auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0], "time_ms,dir,samples,min,max,mean,p50,p99.9,slc1,slc2,slc1_mean,slc2_mean");
  EXPECT_TRUE(
      lines[1].starts_with("1000,read,4,1.004,1003.52,"
                           "251.633,1.004,1003.52,"))
      << lines[1];
  EXPECT_EQ(lines[2], "2000,read,0,,,,,,,,,");
  EXPECT_TRUE(lines[3].starts_with("total,all,4,")) << lines[3];
}

TEST(PctilesReportTest, UnitsScaleLatencies) {
  const auto counts = Sample();
  for (auto [unit, min] : {std::pair{LatencyUnit::kNs, std::string("1004")},
                           {LatencyUnit::kUs, std::string("1.004")},
                           {LatencyUnit::kMs, std::string("0.001004")}}) {
    std::ostringstream out;
    const auto options = Options(ReportFormat::kCsv, unit);
    PctilesReport report(out, options, {});
    report.Begin();
    report.Row(0, "read", ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options));
    report.End();
    EXPECT_TRUE(Lines(out.str())[1].starts_with("0,read,4," + min + ",")) << out.str();
  }
}

TEST(PctilesReportTest, RowsLeaveInBlocksAndNoneIsLostWithoutEnd) {
  // Rows are held up to 32 KiB and written then; a report that ends without End() (a run stopped
  // by an error) still writes the ones it holds.
  const auto counts = Sample();
  const auto options = Options(ReportFormat::kCsv, LatencyUnit::kUs);
  const IntervalStats row = ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options);
  std::ostringstream out;
  size_t header = 0;
  {
    PctilesReport report(out, options, {});
    report.Begin();
    header = out.str().size();
    report.Row(0, "read", row);
    EXPECT_EQ(out.str().size(), header) << "one row is held";
    for (int64_t t = 1000; out.str().size() == header; t += 1000) {
      ASSERT_LT(t, 10'000'000) << "rows were never written";
      report.Row(t, "read", row);
    }
    EXPECT_GE(out.str().size(), header + (size_t{32} << 10));
    report.Row(99'999'000, "read", row);
  }
  const std::vector<std::string> lines = Lines(out.str());
  EXPECT_TRUE(lines.back().starts_with("99999000,read,4,")) << lines.back();
}

TEST(PctilesReportTest, JsonParsesWithTheSameNames) {
  std::ostringstream out;
  const auto options = Options(ReportFormat::kJson);
  PctilesReport report(out, options, {{"files", "2"}, {"odd \"key\"", "a\\b"}});
  report.Begin();
  const auto counts = Sample();
  const std::vector<uint64_t> empty(kFio3Buckets, 0);
  report.Row(0, "read", ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options));
  report.Row(1000, "read", ComputeIntervalStats(std::span<const uint64_t>(empty), kFio3, options));
  report.Row(std::nullopt, "read",
             ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options));
  report.End();
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["files"], "2");
  EXPECT_EQ(doc["odd \"key\""], "a\\b");
  EXPECT_EQ(doc["unit"], "us");
  EXPECT_EQ(doc["method"], "fio");
  EXPECT_EQ(doc["slc_list"], "sbk");
  EXPECT_EQ(doc["percentiles"].size(), 2u);
  EXPECT_EQ(doc["slc_percentiles"].size(), 28u);
  ASSERT_EQ(doc["intervals"].size(), 2u);
  const auto& row = doc["intervals"][0];
  EXPECT_EQ(row["time_ms"], 0);
  EXPECT_EQ(row["dir"], "read");
  EXPECT_EQ(row["samples"], 4);
  EXPECT_DOUBLE_EQ(row["p50"].get<double>(), 1.004);
  EXPECT_DOUBLE_EQ(row["p99.9"].get<double>(), 1003.52);
  for (const char* key : {"min", "max", "mean", "slc1", "slc2", "slc1_mean", "slc2_mean"}) {
    EXPECT_TRUE(row.contains(key)) << key;
  }
  EXPECT_TRUE(doc["intervals"][1]["p50"].is_null());
  EXPECT_TRUE(doc["intervals"][1]["slc1"].is_null());
  ASSERT_EQ(doc["total"].size(), 1u);
  EXPECT_EQ(doc["total"][0]["time_ms"], "total");

  // No rows at all still parses.
  std::ostringstream none;
  PctilesReport empty_report(none, options, {});
  empty_report.Begin();
  empty_report.End();
  const auto empty_doc = nlohmann::json::parse(none.str());
  EXPECT_TRUE(empty_doc["intervals"].empty());
  EXPECT_TRUE(empty_doc["total"].empty());
}

TEST(PctilesReportTest, TableShowsDashesForEmptyIntervals) {
  std::ostringstream out;
  const auto options = Options(ReportFormat::kTable);
  PctilesReport report(out, options, {{"files", "1"}});
  report.Begin();
  const std::vector<uint64_t> empty(kFio3Buckets, 0);
  report.Row(0, "write", ComputeIntervalStats(std::span<const uint64_t>(empty), kFio3, options));
  report.End();
  const std::string text = out.str();
  EXPECT_NE(text.find("# files: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("sbk list (28 percentiles)"), std::string::npos) << text;
  EXPECT_NE(text.find("p99.9"), std::string::npos);
  const auto lines = Lines(text);
  EXPECT_NE(lines.back().find("write"), std::string::npos);
  EXPECT_NE(lines.back().find(" -"), std::string::npos) << lines.back();
  EXPECT_EQ(lines.back().find("nan"), std::string::npos) << lines.back();
}

TEST(PctilesReportTest, IntervalStatsComputeSlcOverItsOwnList) {
  // 100 samples spread over buckets 200..299: SLC from the SBK list against the median.
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (uint32_t i = 200; i < 300; ++i) counts[i] = 1;
  auto options = Options(ReportFormat::kCsv, LatencyUnit::kNs);
  const auto row = ComputeIntervalStats(std::span<const uint64_t>(counts), kFio3, options);
  const double p50[] = {50};
  const double median =
      ComputePercentiles(std::span<const uint64_t>(counts), kFio3, p50, PercentileMethod::kFio)[0];
  const auto values = ComputePercentiles(std::span<const uint64_t>(counts), kFio3,
                                         options.slc_percentiles, PercentileMethod::kFio);
  const auto expected = ComputeSlc(values, median);
  EXPECT_EQ(row.slc.slc1, expected.slc1);
  EXPECT_EQ(row.slc.slc2, expected.slc2);
  EXPECT_DOUBLE_EQ(row.slc.slc1_mean, expected.slc1_mean);
  EXPECT_DOUBLE_EQ(row.slc.slc2_mean, expected.slc2_mean);
  EXPECT_GT(row.slc.slc2_mean, 0);
  EXPECT_EQ(row.percentiles.size(), 2u);
  EXPECT_EQ(row.stats.samples, 100);
}

TEST(PctilesReportTest, ParsesFormatsAndUnits) {
  EXPECT_EQ(ParseReportFormat("csv", "--format"), ReportFormat::kCsv);
  EXPECT_EQ(ParseReportFormat("json", "--format"), ReportFormat::kJson);
  EXPECT_EQ(ParseReportFormat("table", "--format"), ReportFormat::kTable);
  EXPECT_THROW(ParseReportFormat("xml", "--format"), UsageError);
  EXPECT_EQ(ParseLatencyUnit("nsec", "--output-unit"), LatencyUnit::kNs);
  EXPECT_EQ(ParseLatencyUnit("usec", "--output-unit"), LatencyUnit::kUs);
  EXPECT_EQ(ParseLatencyUnit("ms", "--output-unit"), LatencyUnit::kMs);
  EXPECT_THROW(ParseLatencyUnit("s", "--output-unit"), UsageError);
  EXPECT_EQ(NsPerUnit(LatencyUnit::kMs), 1e6);
  EXPECT_EQ(LatencyUnitName(LatencyUnit::kUs), "us");
}

}  // namespace pctiles_report_test
}  // namespace iotail::stats
