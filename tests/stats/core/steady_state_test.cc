#include "stats/core/steady_state.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "stats/core/errors.h"

namespace iotail::stats {
namespace steady_state_test {

uint64_t Bytes(std::string_view text, std::string_view) { return text == "1m" ? 1 << 20 : 7; }

SteadyStateCriterion Parse(std::string_view text) {
  return ParseSteadyStateCriterion(text, "steadystate", Bytes);
}

TEST(SteadyStateCriterionTest, ParsesFioForms) {
  const SteadyStateCriterion a = Parse("iops:10%");
  EXPECT_EQ(a.metric, SteadyMetric::kIops);
  EXPECT_FALSE(a.slope);
  EXPECT_TRUE(a.percent);
  EXPECT_DOUBLE_EQ(a.limit, 10);
  const SteadyStateCriterion b = Parse("bw_slope:1m");
  EXPECT_EQ(b.metric, SteadyMetric::kBw);
  EXPECT_TRUE(b.slope);
  EXPECT_FALSE(b.percent);
  EXPECT_DOUBLE_EQ(b.limit, 1 << 20);  // a bandwidth limit is a size, bytes/s
  EXPECT_DOUBLE_EQ(Parse("iops:2").limit, 2);
  EXPECT_EQ(Parse("lat_slope:0.5%").metric, SteadyMetric::kLat);
  // As fio's JSON "ss" writes it.
  EXPECT_EQ(Parse("iops_slope:0.01%").Describe(), "iops_slope:0.010000%");
  EXPECT_EQ(Parse("bw_slope:5%").Describe(), "bw_slope:5.000000%");
  EXPECT_EQ(Parse("iops:2").Describe(), "iops:2.000000");
}

TEST(SteadyStateCriterionTest, RefusesWhatFioRefuses) {
  EXPECT_THROW(Parse("iops"), UsageError);  // a criterion without its threshold
  EXPECT_THROW(Parse("iops:"), UsageError);
  EXPECT_THROW(Parse("latency:1%"), UsageError);
  EXPECT_THROW(Parse("iops:x%"), UsageError);
  try {
    Parse("bogus:1");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--steadystate"), std::string::npos) << e.what();
  }
}

// fio 3.33's own figures: --ss=bw_slope:5% --ss_dur=3 on a rate-limited null job wrote
// "bw": [4100071, 4096000, 4096000], "slope": -2035.5, "criterion": "-0.049678%".
TEST(SteadyStateWindowTest, SlopeMatchesFio) {
  SteadyStateWindow w(Parse("bw_slope:5%"), 3, 3);
  EXPECT_FALSE(w.Add(1000, 4100071, 0));
  EXPECT_FALSE(w.Add(1000, 4096000, 0));
  EXPECT_TRUE(w.Add(1000, 4096000, 0));
  const SteadyStateResult& r = w.result();
  EXPECT_TRUE(r.attained);
  EXPECT_DOUBLE_EQ(r.slope, -2035.5);
  EXPECT_NEAR(r.figure, -0.049678, 5e-7);
  EXPECT_EQ(r.BwMean(), 4097357u);
  EXPECT_EQ(r.IopsMean(), 1000u);
}

TEST(SteadyStateWindowTest, DeviationIsTheLargestDistanceFromTheMean) {
  SteadyStateWindow strict(Parse("iops:10%"), 3, 3);
  strict.Add(100, 0, 0);
  strict.Add(110, 0, 0);
  EXPECT_FALSE(strict.Add(90, 0, 0));  // mean 100, deviation 10 = 10%: not below the limit
  EXPECT_DOUBLE_EQ(strict.result().max_deviation, 10);
  EXPECT_DOUBLE_EQ(strict.result().figure, 10);
  SteadyStateWindow loose(Parse("iops:10.5%"), 3, 3);
  loose.Add(100, 0, 0);
  loose.Add(110, 0, 0);
  EXPECT_TRUE(loose.Add(90, 0, 0));
}

TEST(SteadyStateWindowTest, RollsAndReportsOldestFirst) {
  SteadyStateWindow w(Parse("iops:1"), 3, 3);
  EXPECT_FALSE(w.Add(5, 0, 0));
  EXPECT_FALSE(w.Add(7, 0, 0));
  EXPECT_EQ(w.result().iops, (std::vector<uint64_t>{5, 7, 0}));  // not full: zeros last
  EXPECT_FALSE(w.Add(1000, 0, 0));
  EXPECT_FALSE(w.Add(100, 0, 0));
  EXPECT_FALSE(w.Add(100, 0, 0));
  EXPECT_EQ(w.result().iops, (std::vector<uint64_t>{1000, 100, 100}));
  EXPECT_TRUE(w.Add(100, 0, 0));  // the 1000 has left the window
  EXPECT_EQ(w.result().iops, (std::vector<uint64_t>{100, 100, 100}));
  EXPECT_TRUE(w.Add(5000, 0, 0));  // final once attained
  EXPECT_EQ(w.result().iops, (std::vector<uint64_t>{100, 100, 100}));
}

TEST(SteadyStateWindowTest, RisingSlopeAsAPercentageOfTheMean) {
  SteadyStateWindow w(Parse("iops_slope:9%"), 3, 3);
  w.Add(100, 0, 0);
  w.Add(110, 0, 0);
  EXPECT_FALSE(w.Add(120, 0, 0));  // slope 10 per interval, 9.09% of the mean 110
  EXPECT_DOUBLE_EQ(w.result().slope, 10);
  EXPECT_NEAR(w.result().figure, 100.0 * 10 / 110, 1e-9);
  SteadyStateWindow lat(Parse("lat_slope:9.1%"), 3, 3);
  lat.Add(0, 0, 100);
  lat.Add(0, 0, 110);
  EXPECT_TRUE(lat.Add(0, 0, 120));
  EXPECT_EQ(lat.result().LatMean(), 110u);
}

}  // namespace steady_state_test
}  // namespace iotail::stats
