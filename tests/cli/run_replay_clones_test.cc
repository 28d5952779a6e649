// End-to-end tests of read_iolog with numjobs > 1 (issue 39): a ':'-separated list gives each
// clone its own trace, assigned as fio 3.33 assigns them (checked against fio replaying the same
// list, clone by clone), all replayed on the job's one clock.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/cli_test_util.h"
#include "tests/cli/fio_semantics_fixture.h"

namespace run_replay_clones_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::HaveFio;
using iotail::testing::ReadFile;
using iotail::testing::RunShell;
using nlohmann::json;

using Counts = std::pair<uint64_t, uint64_t>;  // reads, writes

class ReplayClonesTest : public iotail::testing::ScratchDirTest {
 protected:
  std::string P(const std::string& name) const { return (dir_ / name).string(); }

  // A v3 trace of `n` I/Os of `bs` bytes onto its own file, 100 us apart.
  void WriteTrace(const std::string& name, const std::string& file, const char* act, int n,
                  int bs) {
    std::ofstream(P(file)).close();
    fs::resize_file(P(file), 1 << 20);
    std::ofstream t(P(name));
    t << "fio version 3 iolog\n0 " << P(file) << " add\n0 " << P(file) << " open\n";
    for (int i = 0; i < n; ++i) {
      t << i * 100 << " " << P(file) << " " << act << " " << i * bs << " " << bs << "\n";
    }
    t << n * 100 << " " << P(file) << " close\n";
  }
};

// Reads and writes a fio log holds: a histogram log's counts (the fields after time, direction
// and bs), or a latency log's entries (one per I/O: time, value, direction, bs, prio).
enum class LogKind { kHistogram, kLatency };
Counts LogCounts(const std::string& text, LogKind kind) {
  const bool histogram = kind == LogKind::kHistogram;
  Counts c{0, 0};
  for (const std::string& line : iotail::testing::Lines(text)) {
    const std::vector<std::string> f = iotail::testing::SplitOn(line, ",");
    if (f.size() < 4) continue;
    uint64_t n = histogram ? 0 : 1;
    for (size_t i = 3; histogram && i < f.size(); ++i) n += std::stoull(f[i]);
    (std::stoi(f[histogram ? 1 : 2]) == 0 ? c.first : c.second) += n;
  }
  return c;
}

TEST_F(ReplayClonesTest, EachCloneReplaysItsTraceOfTheListAsFio333Does) {
  WriteTrace("a.iolog", "fa", "read", 30, 4096);
  WriteTrace("b.iolog", "fb", "write", 20, 8192);
  WriteTrace("c.iolog", "fc", "read", 10, 4096);
  const std::string list = P("a.iolog") + ":" + P("b.iolog") + ":" + P("c.iolog");
  const CommandResult r =
      Iotail("run --name=r --read_iolog=" + list + " --numjobs=5 --write_hist_log=" + P("h") +
             " --output-format=json --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  // fio 3.33's assignment, measured (thread 1 the first trace, thread k >= 2 the
  // ((5 - (k - 1)) mod 3)-th): a, b, a, c, b.
  const std::vector<Counts> want = {{30, 0}, {0, 20}, {30, 0}, {10, 0}, {0, 20}};
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string log = P("h_clat_hist." + std::to_string(k + 1) + ".log");
    EXPECT_EQ(LogCounts(ReadFile(log), LogKind::kHistogram), want[k]) << "clone " << k + 1;
  }
  const json j = json::parse(ReadFile(P("o.json")));
  EXPECT_EQ(j["iotail_replay"]["trace_ios"].get<uint64_t>(), 110u);
  EXPECT_EQ(j["iotail_replay"]["issued"].get<uint64_t>(), 110u);

  if (!HaveFio()) GTEST_SKIP() << "fio not installed: iotail's clones checked, fio's not";
  const CommandResult fio = RunShell("fio --name=r --read_iolog=" + list +
                                         " --numjobs=5 --ioengine=psync --write_lat_log=" + P("f") +
                                         " --output=" + P("fio.out"),
                                     dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string log = P("f_clat." + std::to_string(k + 1) + ".log");
    EXPECT_EQ(LogCounts(ReadFile(log), LogKind::kLatency), want[k]) << "fio's clone " << k + 1;
  }
}

TEST_F(ReplayClonesTest, OneTraceForSeveralClonesAndListsThatCannotBeAreSaid) {
  WriteTrace("a.iolog", "fa", "read", 12, 4096);
  const CommandResult r = Iotail("run --name=r --read_iolog=" + P("a.iolog") +
                                 " --numjobs=2 --output-format=json --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(ReadFile(P("o.json")));
  uint64_t reads = 0;
  for (const json& job : j["jobs"]) reads += job["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(reads, 24u);  // each clone replays the whole trace, as fio's
  EXPECT_EQ(j["iotail_replay"]["trace_ios"].get<uint64_t>(), 24u);
  WriteTrace("b.iolog", "fb", "read", 4, 4096);
  iotail::testing::ExpectRefused(
      {{"--name=r --numjobs=2 --read_iolog=" + P("a.iolog") + ":" + P("b.iolog") + ":" +
            P("a.iolog"),
        "3 traces for 2 clone(s)"},
       {"--name=r --numjobs=2 --read_iolog=" + P("a.iolog") + "::" + P("b.iolog"),
        "an empty trace name"}},
      dir_);
}

}  // namespace run_replay_clones_test
