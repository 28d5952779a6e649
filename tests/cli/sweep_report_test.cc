// iotail sweep's report with --explain: a failed step names the stage whose mean grew most against
// the first step that passed, or before one passed the stage that is most of its mean; the JSON
// carries every explained step's stage means. Steps built by hand: no run, no BPF.
#include "cli/sweep_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace iotail::cli {
namespace sweep_report_test {

SweepStep Explained(double rate, std::array<double, stats::kStageCount> means_us, bool pass) {
  SweepStep s;
  s.phase = "probe";
  s.rate = s.target_iops = s.achieved_iops = rate;
  s.ios = 1000;
  s.explained = true;
  s.joined = 1000;
  for (size_t k = 0; k < stats::kStageCount; ++k) s.stage_mean_ns[k] = means_us[k] * 1000;
  if (!pass) s.violations.push_back("p99<=1ms (read: 2.000 ms)");
  return s;
}

TEST(SweepReportTest, AFailedStepNamesTheStageThatGrewMostSinceTheFirstPass) {
  // Before any pass: the largest stage. Against the pass: the one that grew most, even when
  // another is larger (queue is 300 us in both; device grew from 50 to 200 us).
  const SweepStep first_fail = Explained(4000, {5, 10, 300, 400, 20}, false);
  const SweepStep pass = Explained(1000, {5, 10, 300, 50, 20}, true);
  const SweepStep later_fail = Explained(2000, {5, 10, 300, 200, 20}, false);
  StageBlame b = BlameStage(first_fail, nullptr);
  EXPECT_EQ(b.stage, "device");
  EXPECT_FALSE(b.grew);
  EXPECT_NE(b.text.find("device is most of the mean: 0.400 ms of 0.735 ms"), std::string::npos)
      << b.text;
  b = BlameStage(later_fail, &pass);
  EXPECT_EQ(b.stage, "device");
  EXPECT_TRUE(b.grew);
  EXPECT_NE(b.text.find("device grew most: mean 0.050 -> 0.200 ms (vs 1000 IOPS)"),
            std::string::npos)
      << b.text;
  // A passing step, or one not explained, names nothing.
  EXPECT_TRUE(BlameStage(pass, nullptr).stage.empty());
  SweepStep plain = later_fail;
  plain.explained = false;
  EXPECT_TRUE(BlameStage(plain, &pass).stage.empty());

  SweepSettings settings;
  std::ostringstream text, json_out;
  for (std::ostringstream* out : {&text, &json_out}) {
    SweepReport report(*out, out == &json_out, {"p99<=1ms"}, settings);
    report.Begin();
    for (const SweepStep& s : {first_fail, pass, later_fail}) report.Step(s);
    report.End({});
  }
  EXPECT_NE(text.str().find("(read: 2.000 ms); device is most of the mean"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("; device grew most: mean 0.050 -> 0.200 ms"), std::string::npos)
      << text.str();
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_EQ(j["steps"][0]["explain"]["stage_largest"], "device");
  EXPECT_FALSE(j["steps"][1]["explain"].contains("stage_grew_most"));
  EXPECT_EQ(j["steps"][2]["explain"]["stage_grew_most"], "device");
  EXPECT_EQ(j["steps"][2]["explain"]["joined"], 1000);
  EXPECT_DOUBLE_EQ(j["steps"][2]["explain"]["stages_mean_ms"]["queue"].get<double>(), 0.3);
}

TEST(SweepReportTest, WithoutExplainTheStepsCarryNoStages) {
  SweepStep s = Explained(1000, {1, 1, 1, 1, 1}, false);
  s.explained = false;
  std::ostringstream out;
  SweepReport report(out, true, {"p99<=1ms"}, SweepSettings{});
  report.Step(s);
  report.End({});
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_FALSE(j["steps"][0].contains("explain"));
}

}  // namespace sweep_report_test
}  // namespace iotail::cli
