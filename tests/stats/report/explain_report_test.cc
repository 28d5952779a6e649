// The reports of --explain (stats/report/explain_report.h): the stage an SLA violation is blamed
// on, the text table and the JSON.
#include "stats/report/explain_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {
namespace explain_report_test {

// An interval of `ios` reads, each with these stage times (ns).
ExplainIntervalSums Interval(uint64_t start_ms, std::array<uint64_t, kStageCount> stages,
                             uint64_t ios = 100) {
  ExplainIntervalSums i;
  i.start_ns = start_ms * 1'000'000u;
  i.end_ns = (start_ms + 1000) * 1'000'000u;
  for (size_t s = 0; s < kStageCount; ++s) i.sum_ns[0][s] = stages[s] * ios;
  i.joined[0] = ios;
  return i;
}

// One interval's read latencies, all `ns`, as counts in the recorded layout.
std::vector<double> AllAt(uint64_t ns) {
  std::vector<double> counts(kRecordBuckets, 0);
  counts[RecordBucketIndex(ns)] = 100;
  return counts;
}

TEST(ExplainReportTest, AViolatedTargetNamesTheStageThatGrewMost) {
  // Four intervals; in the last two the device takes 3 ms more and delivery 1 ms more.
  const std::vector<ExplainIntervalSums> history = {
      Interval(0, {0, 5'000, 1'000, 500'000, 20'000}),
      Interval(1000, {0, 5'000, 1'000, 500'000, 20'000}),
      Interval(2000, {0, 5'000, 1'000, 3'500'000, 1'020'000}),
      Interval(3000, {0, 6'000, 1'000, 3'500'000, 1'020'000})};
  const std::string target[] = {"read:p99<=2ms"};
  SlaChecker sla(ParseSlaTargets(target, "--sla"), PercentileMethod::kFio);
  const HistogramLayout layout = HistogramLayout::Recorded();
  sla.Check(0, "read", AllAt(526'000), layout);
  sla.Check(1000, "read", AllAt(526'000), layout);
  sla.Check(2000, "read", AllAt(4'526'000), layout);
  sla.Check(3000, "read", AllAt(4'527'000), layout);
  const std::vector<SlaStageNote> notes = SlaStageGrowth(history, sla);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].target, "read:p99<=2ms");
  EXPECT_EQ(notes[0].stage, Stage::kDevice);
  EXPECT_DOUBLE_EQ(notes[0].first_mean_ns, 500'000);
  EXPECT_DOUBLE_EQ(notes[0].violating_mean_ns, 3'500'000);
  EXPECT_EQ(notes[0].first_intervals, 1u);
  EXPECT_EQ(notes[0].violating_intervals, 2u);
  ExplainNote note;
  note.sla = notes;
  std::string text;
  AppendSlaStageText(text, note);
  EXPECT_NE(text.find("the stage that grew most is device, 500.0 us mean in the first 1 "
                      "interval(s), 3.50 ms in the 2 violating"),
            std::string::npos)
      << text;
}

TEST(ExplainReportTest, ATargetMetOrAnotherDirectionsIntervalsNameNothing) {
  const std::vector<ExplainIntervalSums> history = {Interval(0, {0, 1, 1, 1, 1}),
                                                    Interval(1000, {0, 1, 1, 1, 1})};
  const std::string target[] = {"read:p99<=2ms"};
  SlaChecker sla(ParseSlaTargets(target, "--sla"), PercentileMethod::kFio);
  sla.Check(0, "read", AllAt(1'000), HistogramLayout::Recorded());
  EXPECT_TRUE(SlaStageGrowth(history, sla).empty());
}

TEST(ExplainReportTest, TheTableSaysWhatWasJoinedAndEachStagesShare) {
  ExplainTotals totals;
  ExplainDirection& read = totals.dirs[0];
  for (int i = 0; i < 10; ++i) {
    AddSample(read.stages[1], 10'000);
    AddSample(read.stages[3], 30'000);
    read.latency_sum_ns += 40'000;
  }
  for (size_t s : {0, 2, 4}) {
    for (int i = 0; i < 10; ++i) AddSample(read.stages[s], 0);
  }
  read.joined = 10;
  read.not_joined = 2;
  read.split = 1;
  std::string text;
  AppendExplainText(text, totals);
  EXPECT_NE(text.find("where the read time went: 10 of 12 I/Os joined to their block request (1 "
                      "split or merged by the block layer)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("device         30.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("75.0%"), std::string::npos) << text;
  std::string json;
  const double p[] = {50.0, 99.0};
  AppendExplainJson(json, totals, p);
  EXPECT_NE(json.find("\"read\": {\"ios_joined\": 10, \"ios_not_joined\": 2, \"ios_split\": 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"device\": {\"min\": 30000, \"max\": 30000, \"mean\": 30000.000000"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"bins\""), std::string::npos) << json;  // json+ only
  // json+: each stage's buckets as fio's "bins", which add up to its N at the bucket of its value.
  std::string plus;
  AppendExplainJson(plus, totals, p, /*bins=*/true);
  const nlohmann::json doc = nlohmann::json::parse("{" + plus + "}");
  const nlohmann::json& stages = doc["iotail_explain"]["read"]["stages"];
  for (const auto& [name, stage] : stages.items()) {
    ASSERT_TRUE(stage.contains("bins")) << name << ": " << stage;
    uint64_t n = 0;
    for (const auto& [value, count] : stage["bins"].items()) {
      n += count.get<uint64_t>();
      // One value per stage here: its bucket holds it (fio's buckets are within 1/64 of a value).
      EXPECT_NEAR(std::stod(value), stage["mean"].get<double>(), stage["mean"].get<double>() / 32)
          << name;
    }
    EXPECT_EQ(n, stage["N"].get<uint64_t>()) << name;
  }
}

}  // namespace explain_report_test
}  // namespace iotail::stats
