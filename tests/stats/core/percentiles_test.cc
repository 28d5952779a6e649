// Tests of the fio and interpolate percentile rules, histogram statistics and list parsing.
#include "stats/core/percentiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats/core/errors.h"

namespace iotail::stats {
namespace percentiles_test {

const HistogramLayout kFio3 = HistogramLayout::Fio3();

std::vector<uint64_t> Counts(std::initializer_list<std::pair<uint32_t, uint64_t>> buckets) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (auto [i, n] : buckets) counts[i] += n;
  return counts;
}

std::vector<double> Fio(const std::vector<uint64_t>& counts, std::vector<double> p) {
  return ComputePercentiles(std::span<const uint64_t>(counts), kFio3, p, PercentileMethod::kFio);
}

std::vector<double> Interp(const std::vector<uint64_t>& counts, std::vector<double> p) {
  return ComputePercentiles(std::span<const uint64_t>(counts), kFio3, p,
                            PercentileMethod::kInterpolate);
}

TEST(PercentilesTest, FioRuleReturnsPrintedBucketValue) {
  // 10 samples at 1000 ns (bucket 317, value 1004) and 10 at 1,000,000 (bucket 954).
  const auto counts = Counts({{317, 10}, {954, 10}});
  const auto v = Fio(counts, {1, 50, 50.0001, 99, 100});
  EXPECT_EQ(v, (std::vector<double>{1004, 1004, 1'003'520, 1'003'520, 1'003'520}));
}

TEST(PercentilesTest, FioRuleTriggersWhenSumReachesExactlyPPercentOfN) {
  // N = 4: p = 25 is reached exactly after the first bucket (S = 1 >= 1).
  const auto counts = Counts({{10, 1}, {20, 1}, {30, 1}, {40, 1}});
  EXPECT_EQ(Fio(counts, {25}), std::vector<double>{10});
  EXPECT_EQ(Fio(counts, {25.000001}), std::vector<double>{20});
  EXPECT_EQ(Fio(counts, {50}), std::vector<double>{20});
  EXPECT_EQ(Fio(counts, {75}), std::vector<double>{30});
  EXPECT_EQ(Fio(counts, {75.01}), std::vector<double>{40});
  // N = 210: p30 and p60 are reached exactly at S = 63 and S = 126, as fio 3.33 reports them
  // (tests/data/fio/burst, job bursty-reads); (long double)p / 100 * N would land just above.
  const auto ties = Counts({{100, 63}, {200, 63}, {300, 84}});
  EXPECT_EQ(Fio(ties, {30, 60}),
            (std::vector<double>{100, static_cast<double>(FineBucketValue(200))}));
  // p99.9 as a double is slightly above 99.9: with N = 1000, S = 999 does not reach it (as in fio).
  const auto many = Counts({{100, 999}, {200, 1}});
  EXPECT_EQ(Fio(many, {99.9}), std::vector<double>{static_cast<double>(FineBucketValue(200))});
  EXPECT_EQ(Fio(many, {99.8}), std::vector<double>{100});
}

TEST(PercentilesTest, ZeroAndHundredArePercentilesOfTheOccupiedBuckets) {
  const auto counts = Counts({{300, 5}, {900, 1}});
  EXPECT_EQ(Fio(counts, {0, 100}),
            (std::vector<double>{static_cast<double>(FineBucketValue(300)),
                                 static_cast<double>(FineBucketValue(900))}));
  const auto v = Interp(counts, {0, 100});
  EXPECT_DOUBLE_EQ(v[0], static_cast<double>(FineBucketLower(300)));
  EXPECT_DOUBLE_EQ(v[1], static_cast<double>(FineBucketUpper(900)));
}

TEST(PercentilesTest, UnsortedListKeepsItsOrder) {
  const auto counts = Counts({{10, 1}, {20, 1}, {30, 1}, {40, 1}});
  EXPECT_EQ(Fio(counts, {99, 1, 50, 1}), (std::vector<double>{40, 10, 20, 10}));
  EXPECT_EQ(Fio(counts, {100, 0}), (std::vector<double>{40, 10}));
}

TEST(PercentilesTest, InterpolateIsLinearInsideTheBucket) {
  // All 100 samples in bucket 317 = [1000, 1008).
  const auto counts = Counts({{317, 100}});
  const auto v = Interp(counts, {25, 50, 100});
  EXPECT_DOUBLE_EQ(v[0], 1002);
  EXPECT_DOUBLE_EQ(v[1], 1004);
  EXPECT_DOUBLE_EQ(v[2], 1008);
  // Two buckets: 50 in [1000,1008), 50 in [999424,1007616). p75 is half-way into the second.
  const auto two = Counts({{317, 50}, {954, 50}});
  const auto w = Interp(two, {50, 75});
  EXPECT_DOUBLE_EQ(w[0], 1008);
  EXPECT_DOUBLE_EQ(w[1], (999'424.0 + 1'007'616.0) / 2);
}

TEST(PercentilesTest, WeightedCountsFollowTheSameRule) {
  std::vector<double> counts(kFio3Buckets, 0.0);
  counts[10] = 0.25;
  counts[20] = 0.25;
  counts[30] = 0.5;
  const std::vector<double> p = {25, 26, 50, 51, 100};
  const auto v =
      ComputePercentiles(std::span<const double>(counts), kFio3, p, PercentileMethod::kFio);
  EXPECT_EQ(v, (std::vector<double>{10, 20, 20, 30, 30}));
  const auto s = ComputeStats(std::span<const double>(counts), kFio3, PercentileMethod::kFio);
  EXPECT_DOUBLE_EQ(s.samples, 1.0);
  EXPECT_DOUBLE_EQ(s.min_ns, 10);
  EXPECT_DOUBLE_EQ(s.max_ns, 30);
  EXPECT_DOUBLE_EQ(s.mean_ns, 0.25 * 10 + 0.25 * 20 + 0.5 * 30);
}

TEST(PercentilesTest, EmptyHistogramGivesNaN) {
  const std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (auto method : {PercentileMethod::kFio, PercentileMethod::kInterpolate}) {
    const std::vector<double> p = {0, 50, 100};
    for (double v : ComputePercentiles(std::span<const uint64_t>(counts), kFio3, p, method)) {
      EXPECT_TRUE(std::isnan(v));
    }
    const auto s = ComputeStats(std::span<const uint64_t>(counts), kFio3, method);
    EXPECT_EQ(s.samples, 0);
    EXPECT_TRUE(std::isnan(s.min_ns));
    EXPECT_TRUE(std::isnan(s.max_ns));
    EXPECT_TRUE(std::isnan(s.mean_ns));
  }
}

TEST(PercentilesTest, StatsUseRepresentativeValuesOrEdges) {
  const auto counts = Counts({{317, 3}, {954, 1}});
  const auto fio = ComputeStats(std::span<const uint64_t>(counts), kFio3, PercentileMethod::kFio);
  EXPECT_EQ(fio.samples, 4);
  EXPECT_EQ(fio.min_ns, 1004);
  EXPECT_EQ(fio.max_ns, 1'003'520);
  EXPECT_DOUBLE_EQ(fio.mean_ns, (3 * 1004.0 + 1'003'520.0) / 4);
  const auto in =
      ComputeStats(std::span<const uint64_t>(counts), kFio3, PercentileMethod::kInterpolate);
  EXPECT_EQ(in.min_ns, 1000);
  EXPECT_EQ(in.max_ns, 1'007'616);
}

TEST(PercentilesTest, CoarseLayoutUsesCoarseBuckets) {
  const auto layout = HistogramLayout::Fio3(6);  // 29 buckets, one per group
  std::vector<uint64_t> counts(layout.size(), 0);
  counts[4] = 10;  // fine buckets 256..319: [512, 1024)
  const std::vector<double> p = {50};
  EXPECT_DOUBLE_EQ(
      ComputePercentiles(std::span<const uint64_t>(counts), layout, p, PercentileMethod::kFio)[0],
      768);
  EXPECT_DOUBLE_EQ(ComputePercentiles(std::span<const uint64_t>(counts), layout, p,
                                      PercentileMethod::kInterpolate)[0],
                   768);
}

// Ground truth: fio's json+ bins rebuilt into a histogram reproduce fio's printed percentiles.
TEST(PercentilesTest, ReproducesFioJsonPercentilesFromBins) {
  int checked = 0;
  for (const char* run : {"basic", "randrw", "epoch", "burst", "coarse", "trim", "perjob0"}) {
    std::ifstream in(std::string(IOTAIL_TEST_DATA_DIR) + "/fio/" + run + "/fio.json");
    if (!in) continue;
    // fio may print non-JSON notes before the document.
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.erase(0, text.find('{'));
    const auto doc = nlohmann::json::parse(text);
    for (const auto& job : doc["jobs"]) {
      for (const char* dir : {"read", "write", "trim"}) {
        const auto& clat = job[dir]["clat_ns"];
        if (!clat.contains("bins") || !clat.contains("percentile")) continue;
        std::vector<uint64_t> counts(kFio3Buckets, 0);
        for (const auto& [value, n] : clat["bins"].items()) {
          counts[Fio3BucketIndex(std::stoull(value))] += n.get<uint64_t>();
        }
        std::vector<double> p;
        std::vector<double> expected;
        for (const auto& [name, v] : clat["percentile"].items()) {
          p.push_back(std::stod(name));
          expected.push_back(v.get<double>());
        }
        EXPECT_EQ(Fio(counts, p), expected) << run << " " << dir;
        ++checked;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no fio.json with bins under " << IOTAIL_TEST_DATA_DIR;
  EXPECT_GT(checked, 5);
}

TEST(PercentileListTest, ParsesColonCommaAndSeveralArguments) {
  const std::vector<std::string> colon = {"50:99"};
  EXPECT_EQ(ParsePercentileList(colon, "--percentiles"), (std::vector<double>{50, 99}));
  const std::vector<std::string> comma = {"50,99.9"};
  EXPECT_EQ(ParsePercentileList(comma, "--percentiles"), (std::vector<double>{50, 99.9}));
  const std::vector<std::string> several = {"0", "99.99", "1:5,100"};
  EXPECT_EQ(ParsePercentileList(several, "--percentiles"),
            (std::vector<double>{0, 99.99, 1, 5, 100}));
}

TEST(PercentileListTest, RejectsBadInputNamingTheOption) {
  for (std::vector<std::string> bad : {std::vector<std::string>{"abc"},
                                       {"50:"},
                                       {":50"},
                                       {"50::99"},
                                       {"101"},
                                       {"-1"},
                                       {"1e999"},
                                       {"nan"},
                                       {"inf"},
                                       {"50x"},
                                       {""},
                                       {}}) {
    try {
      ParsePercentileList(bad, "--percentiles");
      ADD_FAILURE() << "accepted '" << (bad.empty() ? "<none>" : bad[0]) << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--percentiles"), std::string::npos) << e.what();
    }
  }
}

TEST(PercentileListTest, LabelsAreThePercentileAsGiven) {
  const std::pair<double, const char*> kLabels[] = {
      {50, "p50"}, {99.9, "p99.9"}, {99.99, "p99.99"}, {0, "p0"}, {92.5, "p92.5"}};
  for (const auto& [percentile, label] : kLabels) EXPECT_EQ(PercentileLabel(percentile), label);
}

TEST(PercentileMethodTest, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(ParsePercentileMethod("fio", "--method"), PercentileMethod::kFio);
  EXPECT_EQ(ParsePercentileMethod("interpolate", "--method"), PercentileMethod::kInterpolate);
  EXPECT_EQ(PercentileMethodName(PercentileMethod::kInterpolate), "interpolate");
  EXPECT_THROW(ParsePercentileMethod("linear", "--method"), UsageError);
  const auto d = FioDefaultPercentiles();
  EXPECT_EQ(std::vector<double>(d.begin(), d.end()),
            (std::vector<double>{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9,
                                 99.95, 99.99}));
}

}  // namespace percentiles_test
}  // namespace iotail::stats
