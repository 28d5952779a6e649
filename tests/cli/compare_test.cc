// End-to-end tests of `iotail compare A B`: verdicts on synthetic logs of known latency (5 ms
// against 6 ms; two samples of one distribution), repetitions, --fail-on's exit status, JSON,
// json+ summaries, the errors that name the file, and two real runs against nbdkit servers of
// 5 ms and 6 ms read latency.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "nbd_fixture.h"
#include "synthetic_logs.h"

namespace compare_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::SyntheticLog;
using nlohmann::json;

class CompareTest : public iotail::testing::ScratchDirTest {
 protected:
  std::string Log(const std::string& name, double median_ns, uint64_t seed, int intervals = 5) {
    return iotail::testing::WriteSyntheticLog(
        dir_ / name, SyntheticLog{.median_ns = median_ns, .intervals = intervals, .seed = seed});
  }
  // The row of `dir` and percentile `p` of a JSON result.
  static json Row(const json& doc, const std::string& dir, double p) {
    for (const json& row : doc["rows"]) {
      if (row["dir"] == dir && row["percentile"].get<double>() == p) return row;
    }
    ADD_FAILURE() << "no row " << dir << " p" << p;
    return json::object();
  }
};

TEST_F(CompareTest, SixMillisecondsIsSlowerThanFiveAtTheMedian) {
  const std::string a = Log("a.log", 5e6, 1), b = Log("b.log", 6e6, 2);
  const CommandResult r = Iotail("compare --output-format=json --output-unit ms " + a + " " + b);
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  const json p50 = Row(doc, "read", 50);
  EXPECT_EQ(p50["verdict"], "slower");
  EXPECT_GT(p50["diff_lower"].get<double>(), 0);
  EXPECT_NEAR(p50["diff"].get<double>(), 1.0, 0.1);
  EXPECT_LE(p50["diff_lower"].get<double>(), 1.0);
  EXPECT_GE(p50["diff_upper"].get<double>(), 1.0);
  EXPECT_EQ(doc["rows"].size(), 4u);  // p50, p90, p99, p99.9
  // And the other way round.
  const CommandResult back = Iotail("compare --output-format=json " + b + " " + a);
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(Row(json::parse(back.out), "read", 50)["verdict"], "faster");
}

TEST_F(CompareTest, TwoSamplesOfOneDistributionShowNoSignificantDifference) {
  const std::string a = Log("a.log", 5e6, 1), b = Log("b.log", 5e6, 7);
  const CommandResult r = Iotail("compare --output-format=json " + a + " " + b);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const json& row : json::parse(r.out)["rows"]) {
    EXPECT_EQ(row["verdict"], "no difference") << row.dump();
    EXPECT_LE(row["diff_lower"].get<double>(), 0) << row.dump();
  }
  const CommandResult text = Iotail("compare " + a + " " + b);
  EXPECT_NE(text.out.find("no difference"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("order statistics"), std::string::npos) << text.out;
}

TEST_F(CompareTest, FailOnSetsTheExitStatus) {
  const std::string a = Log("a.log", 5e6, 1), b = Log("b.log", 6e6, 2), c = Log("c.log", 5e6, 3);
  // 20% slower is beyond a 10% margin, within a 50% one.
  CommandResult r = Iotail("compare --fail-on 'p99:+10%' " + a + " " + b);
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("p99:+10%"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_EQ(Iotail("compare --fail-on 'p99:+50%' " + a + " " + b).status, 0);
  // The same target given many times is one check, printed once (issue 38).
  std::string many;
  for (int i = 0; i < 200; ++i) many += " --fail-on p99:+10%";
  r = Iotail("compare" + many + " --fail-on p99.0:+10% " + a + " " + b);
  EXPECT_EQ(r.status, 3) << r.err;
  size_t lines = 0;
  for (size_t p = r.err.find("p99"); p != std::string::npos; p = r.err.find("p99", p + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << r.err;
  EXPECT_EQ(Iotail("compare --fail-on 'read:p99.5:+2ms' " + a + " " + b).status, 0);
  EXPECT_EQ(Iotail("compare --fail-on 'read:p99.5:+100us' " + a + " " + b).status, 3);
  // No significant difference never fails, however small the margin.
  EXPECT_EQ(Iotail("compare --fail-on 'p99:+0%' --fail-on p50:+0ms " + a + " " + c).status, 0);
  // A faster B does not fail either.
  EXPECT_EQ(Iotail("compare --fail-on 'p99:+0%' " + b + " " + a).status, 0);
  // A target on a direction the runs do not have is refused naming it, never passed on nothing
  // (issue 38): these logs hold reads only.
  r = Iotail("compare --fail-on 'write:p50:+5%' " + a + " " + b);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("write:p50:+5%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the write direction is not compared"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read"), std::string::npos) << r.err;
  // The same file listed twice on each side: no run-to-run spread, no interval; a gate on it is
  // refused rather than passed or failed with certainty (issue 38).
  const CommandResult same = Iotail("compare " + a + "," + a + " " + b + "," + b);
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("no interval"), std::string::npos) << same.out;
  r = Iotail("compare --fail-on 'p99:+1%' " + a + "," + a + " " + b + "," + b);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no run-to-run spread"), std::string::npos) << r.err;
}

TEST_F(CompareTest, RepetitionsUseTheirSpread) {
  // Three repetitions per side: 5 ms against 6 ms is clear over them too; the method says so.
  const std::string a =
      Log("a1.log", 5e6, 1) + "," + Log("a2.log", 5.05e6, 2) + "," + Log("a3.log", 4.95e6, 3);
  const std::string b =
      Log("b1.log", 6e6, 4) + "," + Log("b2.log", 6.1e6, 5) + "," + Log("b3.log", 5.95e6, 6);
  const CommandResult r = Iotail("compare --output-format=json " + a + " " + b);
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["a"]["repetitions"], 3);
  const json p50 = Row(doc, "read", 50);
  EXPECT_EQ(p50["method"], "t over repetitions");
  EXPECT_EQ(p50["verdict"], "slower");
  // Files joined with '+' are one repetition: two halves of a run.
  const std::string joined = Log("h1.log", 5e6, 8) + "+" + Log("h2.log", 5e6, 9);
  const CommandResult one = Iotail("compare --output-format=json " + joined + " " + b);
  ASSERT_EQ(one.status, 0) << one.err;
  const json doc1 = json::parse(one.out);
  EXPECT_EQ(doc1["a"]["repetitions"], 1);
  EXPECT_EQ(Row(doc1, "read", 50)["samples_a"], 10000);
  EXPECT_EQ(Row(doc1, "read", 50)["method"], "order statistics");
}

// fio 3.33's plain JSON (tests/data/fio-json, scripts/gen-fio-plain-json.sh): the null engine
// (tens of ns) against psync reads from /dev/shm (microseconds). No bins: the printed percentiles
// are compared, with no interval and a line saying why; two repetitions each give Welch's t.
TEST_F(CompareTest, FioPlainJsonIsComparedByItsPrintedPercentiles) {
  const std::string data = std::string(IOTAIL_TEST_DATA_DIR) + "/fio-json/";
  const std::string null1 = data + "null.1.json", psync1 = data + "psync.1.json";
  CommandResult r = Iotail("compare --output-format=json --output-unit ns " + null1 + " " + psync1);
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  const json fio = json::parse(std::ifstream(psync1));
  const json null_fio = json::parse(std::ifstream(null1));
  for (const double p : {50.0, 90.0, 99.0, 99.9}) {
    const json row = Row(doc, "read", p);
    const std::string key = fmt::format("{:f}", p);
    EXPECT_EQ(row["a"].get<double>(),
              null_fio["jobs"][0]["read"]["clat_ns"]["percentile"][key].get<double>());
    EXPECT_EQ(row["b"].get<double>(),
              fio["jobs"][0]["read"]["clat_ns"]["percentile"][key].get<double>());
    EXPECT_EQ(row["method"], "printed percentiles");
    EXPECT_EQ(row["verdict"], "no interval");
    EXPECT_TRUE(row["diff_lower"].is_null());
    EXPECT_TRUE(row["diff_upper"].is_null());
    EXPECT_GT(row["diff"].get<double>(), 0);
  }
  EXPECT_EQ(Row(doc, "read", 50)["samples_b"], fio["jobs"][0]["read"]["clat_ns"]["N"]);
  EXPECT_NE(r.err.find("no histogram bins"), std::string::npos) << r.err;
  // The table says why there is no interval.
  r = Iotail("compare " + null1 + " " + psync1);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no interval"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("without histogram bins"), std::string::npos) << r.out;
  // A gate needs an interval.
  r = Iotail("compare --fail-on p99:+10% " + null1 + " " + psync1);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no confidence interval"), std::string::npos) << r.err;
  // A percentile fio did not print is named with the ones it did.
  r = Iotail("compare --percentiles 42 " + null1 + " " + psync1);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("null.1.json' printed no p42"), std::string::npos) << r.err;
  // Two repetitions on each side: Welch's t over the printed values, an interval, a verdict.
  r = Iotail("compare --output-format=json " + null1 + "," + data + "null.2.json " + psync1 + "," +
             data + "psync.2.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json reps = Row(json::parse(r.out), "read", 50);
  EXPECT_EQ(reps["method"], "t over repetitions");
  EXPECT_FALSE(reps["diff_lower"].is_null());
  EXPECT_EQ(reps["verdict"], "slower");
}

TEST_F(CompareTest, BadInputIsRefusedNamingTheFile) {
  const std::string a = Log("a.log", 5e6, 1);
  const std::string missing = (dir_ / "missing.log").string();
  CommandResult r = Iotail("compare " + a + " " + missing);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.log"), std::string::npos) << r.err;
  {
    std::ofstream bad(dir_ / "bad.log");
    bad << "this is not a log\n";
  }
  r = Iotail("compare " + a + " " + (dir_ / "bad.log").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.log"), std::string::npos) << r.err;
  {
    std::ofstream plain(dir_ / "plain.json");
    plain << R"({"jobs": [{"read": {"clat_ns": {"N": 10, "percentile": {"50.000000": 100}}}}]})";
  }
  // No bins, and p90 (of the default list) not printed.
  r = Iotail("compare " + a + " " + (dir_ / "plain.json").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plain.json' printed no p90"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("json+"), std::string::npos) << r.err;
  {
    std::ofstream two(dir_ / "two.json");
    two << R"({"jobs": [{"read": {"clat_ns": {"N": 10, "percentile": {"50.000000": 100}}}},)"
        << R"( {"read": {"clat_ns": {"N": 10, "percentile": {"50.000000": 200}}}}]})";
  }
  r = Iotail("compare --percentiles 50 " + a + " " + (dir_ / "two.json").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot be added up"), std::string::npos) << r.err;
  EXPECT_EQ(Iotail("compare " + a).status, 2);
  r = Iotail("compare --fail-on p99 " + a + " " + a);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--fail-on"), std::string::npos) << r.err;
  // Reads against writes: nothing in common.
  const std::string w = iotail::testing::WriteSyntheticLog(dir_ / "w.log", SyntheticLog{.ddir = 1});
  r = Iotail("compare " + a + " " + w);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no direction"), std::string::npos) << r.err;
}

TEST_F(CompareTest, JsonPlusSummariesOfTwoRunsAgainstNbdkit) {
  using iotail::testing::NbdServer;
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  std::string inputs[2];
  int i = 0;
  for (const char* delay : {"5ms", "6ms"}) {
    NbdServer server;
    ASSERT_EQ(server.Start(std::string("--filter=delay memory 64M rdelay=") + delay), "");
    const std::string prefix = (dir_ / ("r" + std::to_string(i))).string();
    const CommandResult run =
        Iotail("run --ioengine=nbd --uri='" + server.uri() +
               "' --live_format=none --rw=randread --bs=4k --iodepth=4 --runtime=3s --time_based "
               "--write_hist_log=" +
               prefix + " --output-format=json+ --output=" + prefix + ".json");
    ASSERT_EQ(run.status, 0) << run.err;
    inputs[i++] = prefix;
  }
  // The histogram logs, then the json+ summaries: both see the 1 ms.
  for (const std::string suffix : {"_clat_hist.1.log", ".json"}) {
    const CommandResult r = Iotail("compare --output-format=json --output-unit ms " + inputs[0] +
                                   suffix + " " + inputs[1] + suffix);
    ASSERT_EQ(r.status, 0) << r.err;
    const json p50 = Row(json::parse(r.out), "read", 50);
    EXPECT_EQ(p50["verdict"], "slower") << suffix << " " << p50.dump();
    EXPECT_NEAR(p50["diff"].get<double>(), 1.0, 0.3) << suffix;
  }
}

}  // namespace compare_test
