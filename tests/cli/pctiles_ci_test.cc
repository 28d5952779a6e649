// End-to-end tests of `iotail pctiles --ci`: the interval columns in every format, their bounds
// around the percentile on synthetic logs of known latency, the default output unchanged, and the
// option's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "synthetic_logs.h"

namespace pctiles_ci_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::SyntheticLog;

class PctilesCiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_pctiles_ci");
    // 10,000 reads around 5 ms.
    log_ = iotail::testing::WriteSyntheticLog(dir_ / "a.log", SyntheticLog{});
  }
  void TearDown() override { fs::remove_all(dir_); }
  CommandResult Iotail(const std::string& args) { return iotail::testing::RunIotail(args, dir_); }
  fs::path dir_;
  std::string log_;
};

TEST_F(PctilesCiTest, JsonTotalsHoldAnIntervalAroundEachPercentile) {
  const CommandResult r =
      Iotail("pctiles --ci=95 --format json --output-unit ns --percentiles 50:99 " + log_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ci"], 95);
  ASSERT_EQ(doc["total"].size(), 1u);
  const auto& total = doc["total"][0];
  // The true median is 5 ms; 10,000 samples with sigma 0.2 bound it within about 1%.
  const double lo = total["p50_lo"], hi = total["p50_hi"], p50 = total["p50"];
  EXPECT_LE(lo, p50);
  EXPECT_GE(hi, p50);
  EXPECT_LE(lo, 5e6);
  EXPECT_GE(hi, 5e6);
  EXPECT_LT(hi - lo, 0.05 * 5e6);
  const double p99_lo = total["p99_lo"], p99_hi = total["p99_hi"], p99 = total["p99"];
  EXPECT_LE(p99_lo, p99);
  EXPECT_GE(p99_hi, p99);
  EXPECT_GT(p99_lo, hi);
  // Every interval row has the columns too; with 1000 samples a row's interval is wider.
  const auto& row = doc["intervals"][0];
  EXPECT_GT(double(row["p50_hi"]) - double(row["p50_lo"]), hi - lo);
}

TEST_F(PctilesCiTest, CsvAndTableCarryTheColumns) {
  CommandResult r = Iotail("pctiles --ci 90 --format csv --percentiles 50 99.9 " + log_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "time_ms,dir,samples,min,max,mean,p50,p50_lo,p50_hi,p99.9,p99.9_lo,p99.9_hi,slc1,slc2,"
            "slc1_mean,slc2_mean");
  r = Iotail("pctiles --ci=95 --percentiles 50 " + log_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# pN_lo, pN_hi: 95% confidence interval"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p50_lo"), std::string::npos) << r.out;
}

TEST_F(PctilesCiTest, FewSamplesLeaveAHighPercentileOpenAbove) {
  const std::string small = iotail::testing::WriteSyntheticLog(
      dir_ / "small.log", SyntheticLog{.intervals = 1, .per_interval = 100});
  const CommandResult r = Iotail("pctiles --ci=95 --format csv --percentiles 99 " + small);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(",inf,"), std::string::npos) << r.out;
}

TEST_F(PctilesCiTest, WithoutCiTheOutputIsUnchanged) {
  const CommandResult plain = Iotail("pctiles --format json " + log_);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("_lo"), std::string::npos);
  EXPECT_EQ(plain.out.find("\"ci\""), std::string::npos);
}

TEST_F(PctilesCiTest, BadLevelsAreRefused) {
  for (const char* level : {"100", "0", "12", "x"}) {
    const CommandResult r = Iotail(std::string("pctiles --ci=") + level + " " + log_);
    EXPECT_EQ(r.status, 2) << level;
    EXPECT_NE(r.err.find("--ci"), std::string::npos) << r.err;
  }
}

}  // namespace pctiles_ci_test
