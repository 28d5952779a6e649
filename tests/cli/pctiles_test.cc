// End-to-end tests of `iotail pctiles`: formats, options, whole-run rows, help and usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace pctiles_test {

namespace fs = std::filesystem;

using Result = iotail::testing::CommandResult;

// Runs `iotail ARGS` (ARGS shell-quoted by the caller), capturing stdout and stderr.
Result Iotail(const std::string& args) {
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_pctiles");
  Result result = iotail::testing::RunIotail(args, dir);
  fs::remove_all(dir);
  return result;
}

std::string Data(const std::string& run, const std::string& file) {
  return std::string(IOTAIL_TEST_DATA_DIR) + "/fio/" + run + "/" + file;
}

std::string RandRw() {
  return Data("randrw", "hist_clat_hist.1.log") + " " + Data("randrw", "hist_clat_hist.2.log") +
         " " + Data("randrw", "hist_clat_hist.3.log");
}

std::vector<std::vector<std::string>> Csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream fields(line);
    while (std::getline(fields, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

const char* kDefaultHeader =
    "time_ms,dir,samples,min,max,mean,p1,p5,p10,p20,p30,p40,p50,p60,p70,p80,p90,p95,p99,p99.5,"
    "p99.9,p99.95,p99.99,slc1,slc2,slc1_mean,slc2_mean";

TEST(PctilesTest, CsvHasTheStableHeaderAndTotals) {
  const Result r = Iotail("pctiles --format csv " + RandRw());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = Csv(r.out);
  ASSERT_GT(rows.size(), 4u);
  std::string header;
  for (size_t i = 0; i < rows[0].size(); ++i) header += (i ? "," : "") + rows[0][i];
  EXPECT_EQ(header, kDefaultHeader);
  int totals = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size()) << "row " << i;
    if (rows[i][0] == "total") {
      ++totals;
      EXPECT_TRUE(rows[i][1] == "read" || rows[i][1] == "write") << rows[i][1];
    }
  }
  EXPECT_EQ(totals, 2);
  // The whole-run rows hold every sample of the logs: fio's json+ N is higher (fio writes
  // nothing at job end), the logs hold fewer, never more.
  const auto doc = [] {
    std::ifstream in(Data("randrw", "fio.json"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return nlohmann::json::parse(text.substr(text.find('{')));
  }();
  double fio_reads = 0;
  for (const auto& job : doc["jobs"]) fio_reads += job["read"]["clat_ns"]["N"].get<double>();
  for (const auto& row : rows) {
    if (row[0] == "total" && row[1] == "read") {
      EXPECT_GT(std::stod(row[2]), 0.5 * fio_reads);
      EXPECT_LE(std::stod(row[2]), fio_reads);
    }
  }
}

TEST(PctilesTest, JsonParsesAndMatchesCsv) {
  const Result json = Iotail("pctiles --format json --output-unit ns " + RandRw());
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  const Result csv = Iotail("pctiles --format csv --output-unit ns " + RandRw());
  ASSERT_EQ(csv.status, 0);
  const auto rows = Csv(csv.out);
  ASSERT_EQ(doc["intervals"].size() + doc["total"].size(), rows.size() - 1);
  const auto& first = doc["intervals"][0];
  EXPECT_EQ(std::to_string(first["time_ms"].get<int64_t>()), rows[1][0]);
  EXPECT_EQ(first["dir"], rows[1][1]);
  EXPECT_DOUBLE_EQ(first["p99"].get<double>(), std::stod(rows[1][18]));
  EXPECT_EQ(doc["total"].back()["time_ms"], "total");
  EXPECT_EQ(doc["unit"], "ns");
}

TEST(PctilesTest, TableIsTheDefault) {
  const Result r = Iotail("pctiles " + Data("basic", "hist_clat_hist.1.log"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("time_ms"), std::string::npos);
  EXPECT_NE(r.out.find("total"), std::string::npos);
  EXPECT_NE(r.out.find("p99.99"), std::string::npos);
  EXPECT_NE(r.out.find("sbk"), std::string::npos);
}

TEST(PctilesTest, OptionNamesTakeFiosUnderscoresAsWellAsDashes) {
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  const Result dashes =
      Iotail("pctiles --log-hist-msec 1000 --time-quantum 2s --output-unit ns " + file);
  ASSERT_EQ(dashes.status, 0) << dashes.err;
  const Result underscores =
      Iotail("pctiles --log_hist_msec 1000 --time_quantum=2s --output_unit ns " + file);
  ASSERT_EQ(underscores.status, 0) << underscores.err;
  EXPECT_EQ(underscores.out, dashes.out);
  EXPECT_EQ(Iotail("merge --time_quantum 2s -o - " + file).out,
            Iotail("merge --time-quantum 2s -o - " + file).out);
}

TEST(PctilesTest, PercentileListForms) {
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  for (const std::string& form :
       {std::string("--percentiles 50 99.9"), std::string("--percentiles 50:99.9"),
        std::string("--percentiles 50,99.9"), std::string("--percentiles=50:99.9")}) {
    const Result r = Iotail("pctiles --format csv " + form + " -- " + file);
    ASSERT_EQ(r.status, 0) << form << ": " << r.err;
    EXPECT_EQ(Csv(r.out)[0],
              (std::vector<std::string>{"time_ms", "dir", "samples", "min", "max", "mean", "p50",
                                        "p99.9", "slc1", "slc2", "slc1_mean", "slc2_mean"}))
        << form;
  }
  // As in the Python script, the file may follow the list directly.
  const Result r = Iotail("pctiles --format csv --percentiles 50 90 " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Csv(r.out)[0][7], "p90");
  const Result bad = Iotail("pctiles --percentiles 50:101 -- " + file);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--percentiles"), std::string::npos) << bad.err;
}

TEST(PctilesTest, DirectionsAndCombine) {
  const std::string files = RandRw();
  auto dirs = [&](const std::string& options) {
    const Result r = Iotail("pctiles --format csv " + options + " " + files);
    EXPECT_EQ(r.status, 0) << options << ": " << r.err;
    std::set<std::string> seen;
    const auto rows = Csv(r.out);
    for (size_t i = 1; i < rows.size(); ++i) seen.insert(rows[i][1]);
    return seen;
  };
  EXPECT_EQ(dirs(""), (std::set<std::string>{"read", "write"}));
  EXPECT_EQ(dirs("--directions r"), (std::set<std::string>{"read"}));
  EXPECT_EQ(dirs("--directions w"), (std::set<std::string>{"write"}));
  EXPECT_EQ(dirs("--directions rm"), (std::set<std::string>{"read", "all"}));
  EXPECT_EQ(dirs("--combine"), (std::set<std::string>{"all"}));
  // The combined whole-run row adds reads and writes.
  const Result r = Iotail("pctiles --format csv --directions rwm " + files);
  double read = 0, write = 0, all = 0;
  for (const auto& row : Csv(r.out)) {
    if (row[0] != "total") continue;
    (row[1] == "read" ? read : row[1] == "write" ? write : all) = std::stod(row[2]);
  }
  EXPECT_GT(read, 0);
  EXPECT_EQ(all, read + write);
  const Result bad = Iotail("pctiles --directions x " + files);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--directions"), std::string::npos);
}

TEST(PctilesTest, OutputUnitScalesValues) {
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  auto p50_total = [&](const std::string& unit) {
    const Result r =
        Iotail("pctiles --format csv --percentiles 50 --output-unit " + unit + " -- " + file);
    EXPECT_EQ(r.status, 0) << r.err;
    for (const auto& row : Csv(r.out)) {
      if (row[0] == "total") return std::stod(row[6]);
    }
    return -1.0;
  };
  const double ns = p50_total("ns");
  EXPECT_GT(ns, 0);
  EXPECT_DOUBLE_EQ(p50_total("us"), ns / 1e3);
  EXPECT_DOUBLE_EQ(p50_total("msec"), ns / 1e6);
  EXPECT_EQ(Iotail("pctiles --output-unit s " + file).status, 2);
}

TEST(PctilesTest, MethodInterpolateDiffersFromFio) {
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  const Result fio = Iotail("pctiles --format csv --method fio --output-unit ns -- " + file);
  const Result lin =
      Iotail("pctiles --format csv --method interpolate --output-unit ns -- " + file);
  ASSERT_EQ(fio.status, 0);
  ASSERT_EQ(lin.status, 0);
  EXPECT_NE(fio.out, lin.out);
  // fio's rule gives fio's printed bucket values: integers.
  for (const auto& row : Csv(fio.out)) {
    if (row[0] != "total") continue;
    for (size_t i = 6; i < 23; ++i) {
      EXPECT_EQ(std::stod(row[i]), std::floor(std::stod(row[i]))) << row[i];
    }
  }
  EXPECT_EQ(Iotail("pctiles --method linear " + file).status, 2);
}

TEST(PctilesTest, TimeQuantumForms) {
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  auto starts = [&](const std::string& quantum) {
    const Result r = Iotail("pctiles --format csv --time-quantum " + quantum + " -- " + file);
    EXPECT_EQ(r.status, 0) << quantum << ": " << r.err;
    std::vector<int64_t> times;
    const auto rows = Csv(r.out);
    for (size_t i = 1; i < rows.size(); ++i) {
      if (rows[i][0] != "total") times.push_back(std::stoll(rows[i][0]));
    }
    return times;
  };
  const auto half = starts("500ms");
  ASSERT_GE(half.size(), 2u);
  EXPECT_EQ(half[0], 0);
  EXPECT_EQ(half[1], 500);
  const auto two = starts("2s");
  ASSERT_GE(two.size(), 1u);
  if (two.size() > 1) {
    EXPECT_EQ(two[1], 2000);
  }
  EXPECT_EQ(starts("2"), two);  // bare numbers are seconds
  for (const char* bad : {"0", "-1", "abc", "1.0005", "0ms"}) {
    const Result r = Iotail(std::string("pctiles --time-quantum ") + bad + " " + file);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--time-quantum"), std::string::npos) << r.err;
  }
}

TEST(PctilesTest, HelpAndUsageErrors) {
  for (const char* command : {"pctiles", "merge"}) {
    const Result help = Iotail(std::string(command) + " --help");
    EXPECT_EQ(help.status, 0) << command;
    EXPECT_NE(help.out.find("usage: iotail " + std::string(command)), std::string::npos)
        << help.out;
  }
  const Result top = Iotail("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("pctiles"), std::string::npos);
  EXPECT_NE(top.out.find("merge"), std::string::npos);
  const std::string file = Data("basic", "hist_clat_hist.1.log");
  const Result unknown = Iotail("pctiles --no-such-option " + file);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no-such-option"), std::string::npos) << unknown.err;
  EXPECT_EQ(Iotail("no-such-command").status, 2);
  EXPECT_EQ(Iotail("pctiles --format xml " + file).status, 2);
  const Result none = Iotail("pctiles");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no input files"), std::string::npos) << none.err;
  EXPECT_EQ(Iotail("merge " + file).status, 2);  // no -o
}

TEST(PctilesTest, ReadsEveryGoldenCase) {
  for (const char* run : {"basic", "burst", "coarse", "epoch", "perjob0", "randrw", "trim"}) {
    std::string files;
    for (const auto& e : fs::directory_iterator(fs::path(IOTAIL_TEST_DATA_DIR) / "fio" / run)) {
      if (e.path().extension() == ".log") files += " " + e.path().string();
    }
    const Result r = Iotail("pctiles --format csv" + files);
    EXPECT_EQ(r.status, 0) << run << ": " << r.err;
    EXPECT_NE(r.out.find("\ntotal,"), std::string::npos) << run;
  }
}

}  // namespace pctiles_test

namespace pctiles_test {

// Multi-value options stop at the first word that is not theirs, so the forms users type work.
TEST(PctilesOptionsTest, MultiValueOptionsStopAtTheFiles) {
  const std::string log = Data("basic", "hist_clat_hist.1.log");
  // docs/guide.md's own form: two targets, then the file.
  Result r = Iotail("pctiles --sla 'read:p99<=100s' 'p50<=100s' " + log);
  EXPECT_EQ(r.status, 0) << r.err;
  r = Iotail("pctiles --sla 'p99<=1ns' " + log);
  EXPECT_EQ(r.status, 3) << r.err;
  r = Iotail("pctiles --slc-percentiles paper " + log);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("SLC over the paper list"), std::string::npos) << r.out;
  r = Iotail("pctiles --format csv --percentiles 50 99 " + log);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "time_ms,dir,samples,min,max,mean,p50,p99,slc1,slc2,slc1_mean,slc2_mean");
}

TEST(PctilesOptionsTest, SlaLimitsNeedAUnit) {
  const Result r = Iotail("pctiles --sla 'p99<=2' " + Data("basic", "hist_clat_hist.1.log"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("needs a unit"), std::string::npos) << r.err;
}

// What fio --client writes for a log: per direction, line k holds the counts of records k, k-2,
// k-4, ... added up (the reader undoes it: see LogReader's undo_client_sums).
std::string AsClientLog(const std::string& plain_path) {
  std::ifstream in(plain_path);
  std::map<std::string, std::array<std::vector<uint64_t>, 2>> previous;  // ddir -> r(k-1), r(k-2)
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    auto& prev = previous[fields.at(1)];
    std::vector<uint64_t> raw(fields.size() - 3);
    for (size_t i = 3; i < fields.size(); ++i) {
      raw[i - 3] = std::stoull(fields[i]) + (prev[1].empty() ? 0 : prev[1][i - 3]);
    }
    out += fields[0] + "," + fields[1] + "," + fields[2];
    for (uint64_t v : raw) out += ", " + std::to_string(v);
    out += "\n";
    prev[1] = prev[0];
    prev[0] = raw;
  }
  return out;
}

TEST(PctilesOptionsTest, FioClientLogsAreRecognisedByName) {
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_client_logs");
  const std::string original = Data("randrw", "hist_clat_hist.1.log");
  const fs::path client = dir / "job_clat_hist.1.log.192.168.0.7";
  std::ofstream(client) << AsClientLog(original);
  const Result named = iotail::testing::RunIotail("pctiles --format csv " + client.string(), dir);
  const Result plain = iotail::testing::RunIotail("pctiles --format csv " + original, dir);
  EXPECT_EQ(named.status, 0) << named.err;
  EXPECT_NE(named.err.find("fio --client"), std::string::npos) << named.err;
  // The running sums are undone: the same numbers as the log they were made from.
  ASSERT_FALSE(plain.out.empty());
  EXPECT_EQ(named.out, plain.out);
  // A file named so that does not hold running sums is refused, not misread.
  const fs::path fake = dir / "other_clat_hist.1.log.host";
  fs::copy_file(Data("basic", "hist_clat_hist.1.log"), fake);
  const Result not_client = iotail::testing::RunIotail("pctiles " + fake.string(), dir);
  EXPECT_EQ(not_client.status, 2);
  EXPECT_NE(not_client.err.find("not the alternating sums"), std::string::npos) << not_client.err;
  // A mix cannot be read one way: refused, naming the flag.
  const Result mixed =
      iotail::testing::RunIotail("pctiles " + client.string() + " " + original, dir);
  EXPECT_EQ(mixed.status, 2);
  EXPECT_NE(mixed.err.find("--fio-client-logs"), std::string::npos) << mixed.err;
  fs::remove_all(dir);
}

// Counts in the last bucket of a fio layout are latencies of at least 17.05 s, the longer ones
// past its top (17.18 s) clamped there by the writer: pctiles says so (a percentile there is a
// lower bound), and only then.
TEST(PctilesTest, CountsInFiosTopBucketAreNotedAsAtLeast17Seconds) {
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_pctiles_top");
  const auto line = [](int time, uint64_t first, uint64_t last) {
    std::string l = std::to_string(time) + ", 0, 4096, " + std::to_string(first);
    for (int c = 1; c < 1855; ++c) l += ", 0";
    return l + ", " + std::to_string(last) + "\n";
  };
  std::ofstream(dir / "top.log") << line(1000, 5, 0) << line(2000, 1, 2);
  std::ofstream(dir / "plain.log") << line(1000, 5, 0) << line(2000, 1, 0);
  const Result top = iotail::testing::RunIotail("pctiles " + (dir / "top.log").string(), dir);
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_NE(
      top.err.find("note: 2 sample(s) in the last bucket of the logs' layout: latencies of at "
                   "least 17.05 s (longer ones, past the layout's top at 17.18 s"),
      std::string::npos)
      << top.err;
  const Result plain = iotail::testing::RunIotail("pctiles " + (dir / "plain.log").string(), dir);
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err.find("last bucket"), std::string::npos) << plain.err;
  fs::remove_all(dir);
}

}  // namespace pctiles_test
