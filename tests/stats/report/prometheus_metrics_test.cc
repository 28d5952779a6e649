#include "stats/report/prometheus_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace iotail::stats {
namespace prometheus_metrics_test {

// The value of the first sample line starting with `prefix`, or -1.
double Sample(const std::string& text, const std::string& prefix) {
  for (size_t at = 0; (at = text.find(prefix, at)) != std::string::npos; at += prefix.size()) {
    if (at != 0 && text[at - 1] != '\n') continue;
    return std::stod(text.substr(at + prefix.size()));
  }
  return -1;
}

// A replay's lateness is a histogram of its own per job, on the latency histograms' edges, summed
// over the intervals; a job that does not replay has none.
TEST(PrometheusMetricsTest, AReplaysLatenessIsAHistogramPerJob) {
  PrometheusMetrics metrics(
      {{"r", {Direction::kRead}, {}, {}, true}, {"plain", {Direction::kRead}, {}, {}, false}},
      "test");
  metrics.SetWorkers({0, 1});
  std::vector<RecorderSnapshot> deltas(2);
  for (int interval = 0; interval < 2; ++interval) {
    Recorder rec;
    rec.RecordLateness(1'000);
    rec.RecordLateness(2'000);
    if (interval == 1) rec.RecordLateness(5'000'000);  // 5 ms late
    deltas[0] = rec.Snapshot();
    deltas[1] = Recorder().Snapshot();
    metrics.OnInterval({static_cast<uint64_t>(interval + 1) * 1000, 1, 2, false, 0, 0}, deltas);
  }
  const std::string text = *metrics.Exposition();
  EXPECT_NE(text.find("# TYPE iotail_replay_lateness_seconds histogram"), std::string::npos);
  EXPECT_EQ(Sample(text, "iotail_replay_lateness_seconds_count{jobname=\"r\"} "), 5) << text;
  EXPECT_EQ(Sample(text, "iotail_replay_lateness_seconds_bucket{jobname=\"r\",le=\"+Inf\"} "), 5);
  // Four within 2 us (the edge of fio's union holding 2,000 ns), the fifth above 1 ms.
  EXPECT_EQ(
      Sample(text, "iotail_replay_lateness_seconds_bucket{jobname=\"r\",le=\"0.001048575\"} "), 4)
      << text;
  EXPECT_NEAR(Sample(text, "iotail_replay_lateness_seconds_sum{jobname=\"r\"} "), 0.005006, 1e-9);
  EXPECT_EQ(text.find("iotail_replay_lateness_seconds_count{jobname=\"plain\"}"),
            std::string::npos);
  EXPECT_EQ(Sample(text, "iotail_schedule_issued_total{jobname=\"r\"} "), 5);

  PrometheusMetrics none({{"plain", {Direction::kRead}, {}, {}, false}}, "test");
  EXPECT_EQ(none.Exposition()->find("iotail_replay_lateness_seconds"), std::string::npos);
}

}  // namespace prometheus_metrics_test
}  // namespace iotail::stats
