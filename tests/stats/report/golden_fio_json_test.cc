// Golden tests against real fio 3.33 output (tests/data/fio/<case>/fio.json, --output-format=json+,
// made by scripts/gen-golden.sh): the histogram rebuilt from each job's clat_ns.bins, with fio's
// percentile rule, must reproduce fio's own clat_ns.percentile exactly; and the histogram logs fio
// wrote in the same run must hold no more completions than the job's total_ios (fio never writes
// the last partial interval).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"
#include "stats/logs/log_reader.h"
#include "stats/core/percentiles.h"

namespace iotail::stats {
namespace golden_fio_json_test {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kDirNames[] = {"read", "write", "trim"};

std::vector<fs::path> GoldenCases() {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(IOTAIL_TEST_DATA_DIR) / "fio")) {
    if (fs::exists(entry.path() / "fio.json")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

json LoadJson(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return json::parse(in);
}

// The fio-3 histogram held in a json+ clat_ns.bins map (bucket value -> count).
std::vector<uint64_t> HistogramFromBins(const json& bins) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (const auto& [value_text, count] : bins.items()) {
    const uint64_t value = std::stoull(value_text);
    const uint32_t index = Fio3BucketIndex(value);
    EXPECT_EQ(FineBucketValue(index), value) << "bin " << value_text << " is not a bucket value";
    counts[index] += count.get<uint64_t>();
  }
  return counts;
}

// Checks fio's rule on `counts` against fio's printed percentiles (map "99.900000" -> ns).
void ExpectFioPercentiles(const std::vector<uint64_t>& counts, const json& printed,
                          const std::string& what) {
  std::vector<double> wanted, expected;
  for (const auto& [p, v] : printed.items()) {
    wanted.push_back(std::stod(p));
    expected.push_back(v.get<double>());
  }
  ASSERT_FALSE(wanted.empty()) << what;
  const std::vector<double> got = ComputePercentiles(
      std::span<const uint64_t>(counts), HistogramLayout::Fio3(), wanted, PercentileMethod::kFio);
  ASSERT_EQ(got.size(), wanted.size()) << what;
  for (size_t i = 0; i < wanted.size(); ++i) {
    EXPECT_EQ(got[i], expected[i]) << what << " p" << wanted[i];
  }
}

TEST(GoldenFioJsonTest, AllCasesArePresent) {
  std::vector<std::string> names;
  for (const auto& c : GoldenCases()) names.push_back(c.filename().string());
  const std::vector<std::string> expected = {"basic",   "burst",  "coarse", "epoch",
                                             "perjob0", "randrw", "trim"};
  EXPECT_EQ(names, expected);
}

TEST(GoldenFioJsonTest, BinsReproduceFioPercentilesForEveryJobAndDirection) {
  int checked = 0;
  for (const auto& dir : GoldenCases()) {
    const json doc = LoadJson(dir / "fio.json");
    EXPECT_EQ(doc.at("fio version").get<std::string>(), "fio-3.33") << dir;
    for (const auto& job : doc.at("jobs")) {
      for (const char* d : kDirNames) {
        const json& clat = job.at(d).at("clat_ns");
        if (clat.at("N").get<uint64_t>() == 0) continue;
        const std::string what =
            dir.filename().string() + "/" + job.at("jobname").get<std::string>() + "/" + d;
        ASSERT_TRUE(clat.contains("bins")) << what << ": not json+ output";
        const std::vector<uint64_t> counts = HistogramFromBins(clat.at("bins"));
        uint64_t total = 0;
        for (uint64_t c : counts) total += c;
        EXPECT_EQ(total, clat.at("N").get<uint64_t>()) << what;
        ExpectFioPercentiles(counts, clat.at("percentile"), what);
        ++checked;
      }
    }
  }
  // 7 cases, read and write (and trim) each: far more than a handful.
  EXPECT_GE(checked, 15);
}

// Adding the jobs' bins bucket by bucket must give the group's histogram: the coarse case runs
// with group_reporting, so there fio itself printed the summed percentiles; in the other cases
// the summed histogram must at least be consistent (total = sum of the jobs' totals).
TEST(GoldenFioJsonTest, SummedJobHistogramsGiveGroupPercentiles) {
  const json doc = LoadJson(fs::path(IOTAIL_TEST_DATA_DIR) / "fio/coarse/fio.json");
  ASSERT_EQ(doc.at("jobs").size(), 1u) << "coarse is a group_reporting case";
  const json& job = doc.at("jobs")[0];
  for (const char* d : {"read", "write"}) {
    const json& clat = job.at(d).at("clat_ns");
    ExpectFioPercentiles(HistogramFromBins(clat.at("bins")), clat.at("percentile"),
                         std::string("coarse group ") + d);
  }
  for (const auto& dir : GoldenCases()) {
    const json doc2 = LoadJson(dir / "fio.json");
    for (const char* d : kDirNames) {
      std::vector<uint64_t> sum(kFio3Buckets, 0);
      uint64_t n = 0;
      for (const auto& j : doc2.at("jobs")) {
        const json& clat = j.at(d).at("clat_ns");
        n += clat.at("N").get<uint64_t>();
        if (!clat.contains("bins")) continue;
        const auto counts = HistogramFromBins(clat.at("bins"));
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += counts[i];
      }
      uint64_t total = 0;
      for (uint64_t c : sum) total += c;
      EXPECT_EQ(total, n) << dir << " " << d;
    }
  }
}

// Per direction, the completions in histogram-log files (keyed by fio's global job number).
std::map<int, std::array<uint64_t, kDirectionCount>> LogTotals(const fs::path& dir,
                                                               uint32_t* segments) {
  std::map<int, std::array<uint64_t, kDirectionCount>> totals;
  *segments = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("hist_clat_hist") || !name.ends_with(".log")) continue;
    int job = 0;  // 0: a per_job_logs=0 file
    if (name != "hist_clat_hist.log") {
      job = std::stoi(name.substr(std::string("hist_clat_hist.").size()));
    }
    LogReader reader(entry.path().string());
    auto& t = totals[job];
    while (reader.Next()) {
      const LogRecord& r = reader.record();
      for (uint64_t c : r.counts) t[DirectionIndex(r.direction)] += c;
      *segments = std::max(*segments, r.segment + 1);
    }
    EXPECT_TRUE(reader.warnings().empty()) << entry.path();
  }
  return totals;
}

TEST(GoldenFioJsonTest, HistogramLogsHoldAtMostTheJobsCompletions) {
  for (const auto& dir : GoldenCases()) {
    const json doc = LoadJson(dir / "fio.json");
    const json& jobs = doc.at("jobs");
    uint32_t segments = 0;
    const auto totals = LogTotals(dir, &segments);
    ASSERT_FALSE(totals.empty()) << dir;
    const bool grouped = jobs.size() == 1 && totals.size() > 1;
    for (int d = 0; d < kDirectionCount; ++d) {
      uint64_t jobs_total = 0, logs_total = 0;
      for (const auto& j : jobs) jobs_total += j.at(kDirNames[d]).at("total_ios").get<uint64_t>();
      for (const auto& [job, t] : totals) logs_total += t[d];
      EXPECT_LE(logs_total, jobs_total) << dir << " " << kDirNames[d];
      if (jobs_total > 1000) {
        EXPECT_GT(logs_total, 0u) << dir << " " << kDirNames[d] << ": nothing logged";
      }
      if (grouped || totals.begin()->first == 0) continue;
      for (const auto& [job, t] : totals) {
        ASSERT_LE(static_cast<size_t>(job), jobs.size()) << dir;
        const uint64_t ios = jobs[static_cast<size_t>(job - 1)].at(kDirNames[d]).at("total_ios");
        EXPECT_LE(t[d], ios) << dir << " job " << job << " " << kDirNames[d];
      }
    }
    if (dir.filename() == "perjob0") {
      EXPECT_EQ(segments, jobs.size()) << "one segment per job in a per_job_logs=0 file";
    }
  }
}

}  // namespace golden_fio_json_test
}  // namespace iotail::stats
