// `iotail run` against fio 3.33 on fio's per-command priorities (issue 24): cmdprio_percentage,
// cmdprio_class, cmdprio and cmdprio_bssplit on libaio and io_uring give each priority the share
// of I/Os fio gives it (within a few points: both draw at random), the JSON's per-priority
// latencies have fio's keys and types ("prios": prioclass, prio, clat_ns), the text has fio's
// "clat prio C/L" lines, libaio's requests carry the priority (strace), and log_prio writes the
// logs' priority column as fio does. The real-time class needs root: without it the tests use
// the idle and best-effort classes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_cmdprio_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using json = nlohmann::json;

json JobJson(const CommandResult& r, size_t job = 0) {
  const size_t brace = r.out.find('{');
  if (brace == std::string::npos) return {};
  const json j = json::parse(r.out.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.contains("jobs") || j["jobs"].size() <= job) return {};
  return j["jobs"][job];
}

// Each priority's share of a direction's I/Os, by "class/level".
std::map<std::string, double> Shares(const json& dir) {
  std::map<std::string, double> out;
  if (!dir.contains("prios")) return out;
  const double total = dir["total_ios"].get<double>();
  for (const json& p : dir["prios"]) {
    const std::string key =
        std::to_string(p["prioclass"].get<int>()) + "/" + std::to_string(p["prio"].get<int>());
    out[key] = 100.0 * p["clat_ns"]["N"].get<double>() / total;
  }
  return out;
}

// The shape of a JSON value: its keys (recursively) and their types; percentile keys collapsed.
std::string Shape(const json& j) {
  if (j.is_object()) {
    std::string out = "{";
    for (const auto& [k, v] : j.items()) {
      out += (k.find('.') != std::string::npos ? std::string("P") : k) + ":" + Shape(v) + ",";
      if (k.find('.') != std::string::npos) break;  // one percentile stands for all
    }
    return out + "}";
  }
  if (j.is_array()) return j.empty() ? "[]" : "[" + Shape(j[0]) + "]";
  if (j.is_number_integer()) return "int";
  if (j.is_number_float()) return "float";
  return j.type_name();
}

std::string HighClass() { return geteuid() == 0 ? "1" : "2"; }

// cmdprio-percentage.fio's job on a file: 20% of the reads at the high class, the rest at the
// job's prioclass=3; both engines; the shares as fio's, the JSON's prios as fio's.
TEST_F(FioSemanticsTest, CmdprioPercentageSharesAndJsonAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  for (const std::string engine : {"libaio", "io_uring"}) {
    SCOPED_TRACE(engine);
    const std::string args =
        "--name=randread --filename=f --size=16m --direct=1 --rw=randread "
        "--bs=4k --ioengine=" +
        engine +
        " --iodepth=8 --prioclass=3 "
        "--cmdprio_percentage=20 --cmdprio_class=" +
        HighClass();
    const CommandResult fio = Run("fio", args);
    const CommandResult ours = Run("iotail", args);
    ASSERT_EQ(fio.status, 0) << fio.err;
    ASSERT_EQ(ours.status, 0) << ours.err;
    const json a = JobJson(fio)["read"], b = JobJson(ours)["read"];
    ASSERT_TRUE(b.contains("prios")) << ours.out;
    const auto fs = Shares(a), os = Shares(b);
    ASSERT_EQ(os.size(), 2u);
    for (const auto& [prio, share] : fs) {
      ASSERT_TRUE(os.count(prio)) << prio;
      EXPECT_NEAR(os.at(prio), share, 4.0) << prio;  // 4096 draws: 3 sigma is under 2 points
    }
    EXPECT_NEAR(os.at(HighClass() + "/0"), 20.0, 4.0);
    // The same keys and types, in the same order (prios after lat_ns).
    EXPECT_EQ(Shape(b["prios"]), Shape(a["prios"]));
    std::vector<std::string> ka, kb;
    for (const auto& [k, v] : a.items()) ka.push_back(k);
    for (const auto& [k, v] : b.items()) {
      if (!k.starts_with("iotail")) kb.push_back(k);
    }
    EXPECT_EQ(kb, ka);
    // The text: fio's "clat prio C/L" latency lines and percentile blocks.
    const CommandResult text = Run("iotail", args + " --output-format=normal");
    EXPECT_NE(text.out.find("    clat prio 3/0 ("), std::string::npos) << text.out;
    EXPECT_TRUE(std::regex_search(
        text.out, std::regex(R"(clat prio \d/0 \(\d+\.\d\d% of IOs\) percentiles \(.sec\):)")))
        << text.out;
  }
}

// cmdprio-bssplit.fio's [cmdprio-adv] split on more I/Os (4k for its 64k, 64k for its 1m, reads
// only): the 4k reads 25% at 1/1 and 75% at 3/2, the 64k reads at the job's own; each priority's
// share of the reads as fio's; the writes of a mixed job with only zero entries get no list.
TEST_F(FioSemanticsTest, CmdprioBssplitSharesAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  if (geteuid() != 0) GTEST_SKIP() << "the real-time class needs root";
  const std::string args =
      "--name=adv --filename=f --size=64m --direct=1 --rw=randread --ioengine=libaio --iodepth=16 "
      "--bssplit=4k/40:64k/60 --cmdprio_bssplit=4k/25/1/1:4k/75/3/2:64k/0";
  const CommandResult fio = Run("fio", args);
  const CommandResult ours = Run("iotail", args);
  ASSERT_EQ(fio.status, 0) << fio.err;
  ASSERT_EQ(ours.status, 0) << ours.err;
  const json a = JobJson(fio), b = JobJson(ours);
  const auto fs = Shares(a["read"]), os = Shares(b["read"]);
  ASSERT_EQ(os.size(), 3u) << b["read"].dump();
  for (const auto& [prio, share] : fs) {
    ASSERT_TRUE(os.count(prio)) << prio;
    EXPECT_NEAR(os.at(prio), share, 4.0) << prio;  // about 2600 reads: 3 sigma is 3 points
  }
  EXPECT_EQ(Shape(b["read"]["prios"]), Shape(a["read"]["prios"]));
  const std::string mixed =
      "--name=mix --filename=f --size=8m --direct=1 --rw=randrw --ioengine=libaio --iodepth=16 "
      "--bssplit=4k/40:64k/60,64k/100 --cmdprio_bssplit=4k/25/1/1:4k/75/3/2:64k/0,64k/0";
  for (const std::string tool : {"fio", "iotail"}) {
    const json j = JobJson(Run(tool, mixed));
    EXPECT_TRUE(j["read"].contains("prios")) << tool;
    EXPECT_FALSE(j["write"].contains("prios")) << tool;
  }
}

// libaio: the chosen requests carry IOCB_FLAG_IOPRIO and their value (strace shows aio_reqprio),
// about cmdprio_percentage of them, the others none; as fio's.
TEST_F(FioSemanticsTest, LibaioRequestsCarryTheirPriority) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  if (iotail::testing::Capture("command -v strace >/dev/null").status != 0) {
    GTEST_SKIP() << "strace not installed";
  }
  const std::string args =
      "--name=r --filename=f --size=8m --direct=1 --rw=randread --bs=4k "
      "--ioengine=libaio --iodepth=4 --cmdprio_percentage=30 "
      "--cmdprio_class=2 --cmdprio=5 ";
  const std::string trace = "strace -f -qq -e trace=io_submit -e abbrev=none -s 0 -o trace.txt ";
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    const CommandResult r = Run(tool, args + (tool == "fio" ? "--thread" : ""), trace);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string t = iotail::testing::ReadFile(dir_ / tool / "trace.txt");
    auto count = [&](const std::string& re) {
      const std::regex e(re);
      return std::distance(std::sregex_iterator(t.begin(), t.end(), e), std::sregex_iterator());
    };
    const double with = count(R"(aio_reqprio=IOPRIO_PRIO_VALUE\(IOPRIO_CLASS_BE, 5\))");
    const double all = count("IOCB_CMD_PREAD");
    ASSERT_GT(all, 1000) << t.substr(0, 2000);
    EXPECT_NEAR(100 * with / all, 30.0, 5.0);
  }
}

// log_prio: the logs' priority column in fio's 0x%04x; windowed, a window's priority is 0 in
// both tools (fio's averaged samples carry none); without it, 0.
TEST_F(FioSemanticsTest, LogPrioWritesThePriorityColumnAsFio) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string args =
      "--name=r --filename=f --size=4m --direct=1 --rw=randread --bs=4k "
      "--ioengine=libaio --iodepth=4 --cmdprio_percentage=50 "
      "--cmdprio_class=2 --write_lat_log=pl --log_avg_msec=100 ";
  for (const std::string tool : {"fio", "iotail"}) {
    SCOPED_TRACE(tool);
    for (const std::string prio : {"1", "0"}) {
      ASSERT_EQ(Run(tool, args + "--log_prio=" + prio).status, 0);
      std::ifstream in(dir_ / tool / "pl_clat.1.log");
      std::string line;
      ASSERT_TRUE(std::getline(in, line));
      EXPECT_TRUE(line.ends_with(prio == "1" ? ", 0x0000" : ", 0")) << line;
    }
  }
}

// The options belong to libaio and io_uring (fio knows them only there) and exclude each other.
TEST_F(FioSemanticsTest, CmdprioIsRefusedWhereFioRefusesIt) {
  const std::string job = "--name=r --filename=f --size=1m --rw=randread ";
  EXPECT_EQ(Run("iotail", job + "--ioengine=psync --cmdprio_percentage=20").status, 2);
  EXPECT_EQ(Run("iotail", job + "--ioengine=libaio --cmdprio_percentage=20 "
                                "--cmdprio_bssplit=4k/10")
                .status,
            2);
  EXPECT_EQ(Run("iotail", job + "--ioengine=libaio --cmdprio_percentage=101").status, 2);
  EXPECT_EQ(Run("iotail", job + "--ioengine=libaio --cmdprio_class=4").status, 2);
}

}  // namespace run_cmdprio_test
