#include "stats/report/replay_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace iotail::stats {
namespace replay_report_test {

const std::vector<double> kPercentiles = {50, 99};

// A replay whose trace recorded its reads' device times (200 us each) beside their clat (300 us).
RecorderSnapshot Replayed() {
  Recorder rec;
  rec.KeepRecorded();
  for (int i = 0; i < 10; ++i) {
    rec.RecordClat(Direction::kRead, 300'000, 4096);
    rec.RecordLateness(1'000);
    rec.RecordRecorded(Direction::kRead, 200'000);
  }
  return rec.Snapshot();
}

nlohmann::json Json(const ReplayInfo& info, const RecorderSnapshot& all, bool bins) {
  std::string out = "{\"x\": 0";
  AppendReplayJson(out, info, all, 1.0, kPercentiles, bins);
  return nlohmann::json::parse(out + "}")["iotail_replay"];
}

TEST(ReplayReportTest, RecordedLatenciesHavePercentilesAndBinsPerDirection) {
  const ReplayInfo info{true, "d.bin", 10, 1'000'000, 10, false};
  const nlohmann::json j = Json(info, Replayed(), true);
  EXPECT_EQ(j["recorded"]["ios"].get<uint64_t>(), 10u);
  EXPECT_NE(j["recorded"]["compare_with"].get<std::string>().find("submission to reaping"),
            std::string::npos);
  const nlohmann::json& r = j["read"]["recorded_ns"];
  EXPECT_EQ(r["N"].get<uint64_t>(), 10u);
  EXPECT_EQ(r["min"].get<uint64_t>(), 200'000u);
  EXPECT_NEAR(r["percentile"]["50.000000"].get<double>(), 200'000, 4'000);
  ASSERT_EQ(r["bins"].size(), 1u);
  EXPECT_EQ(r["bins"].begin().value().get<uint64_t>(), 10u);
  EXPECT_FALSE(j.contains("write"));  // no direction without recorded latencies
  // fio's json (not json+): percentiles without bins, as clat_ns's.
  EXPECT_FALSE(Json(info, Replayed(), false)["read"]["recorded_ns"].contains("bins"));
}

TEST(ReplayReportTest, ATraceWithoutRecordedLatenciesAddsNothing) {
  Recorder rec;
  rec.RecordClat(Direction::kRead, 300'000, 4096);
  const nlohmann::json j = Json({true, "t.iolog", 1, 0, 0, false}, rec.Snapshot(), true);
  EXPECT_FALSE(j.contains("recorded"));
  EXPECT_FALSE(j.contains("read"));
  std::string text;
  AppendReplayText(text, {true, "t.iolog", 1, 0, 0, false}, rec.Snapshot(), 1.0, kPercentiles);
  EXPECT_EQ(text.find("recorded"), std::string::npos) << text;
}

// The text sets recorded against replayed and says which replayed measure is like for like:
// clat is not (submission to reaping), --explain's device stage is.
TEST(ReplayReportTest, TheTextSaysWhatIsLikeForLike) {
  std::string text;
  AppendReplayText(text, {true, "d.bin", 10, 1'000'000, 10, false}, Replayed(), 1.0, kPercentiles);
  EXPECT_NE(text.find("recorded by the trace (dispatch to completion: device time)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("read : recorded p50="), std::string::npos) << text;
  EXPECT_NE(text.find("(N=10); replayed p50="), std::string::npos) << text;
  EXPECT_NE(text.find("--explain measures the device stage alone"), std::string::npos) << text;
  std::string explained;
  AppendReplayText(explained, {true, "d.bin", 10, 1'000'000, 10, true}, Replayed(), 1.0,
                   kPercentiles);
  EXPECT_NE(explained.find("like-for-like measure is --explain's device stage"), std::string::npos)
      << explained;
}

}  // namespace replay_report_test
}  // namespace iotail::stats
