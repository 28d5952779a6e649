// `iotail run --explain` end to end, against block devices of known latency (issue 34's checks):
// a loop device over an nbdfuse file over nbdkit's delay filter (a device stage of 2 ms), a loop
// device over tmpfs (microseconds), a host that reaps late on purpose (IOTAIL_TEST_REAP_DELAY_US),
// the stages adding up per interval and per slow I/O, and another device's I/O left out. Each test
// needs root and a kernel that loads the BPF programs; without them it skips with the run's own
// reason, never passing without running.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "stats/core/histogram_layout.h"
#include "tests/cli/cli_test_util.h"
#include "tests/cli/nbd_fixture.h"
#include "tests/engine/explain_fixture.h"

namespace iotail::testing {
namespace explain_run_test {

using json = nlohmann::json;

class ExplainRunTest : public ScratchDirTest {
 protected:
  // `iotail run ARGS --explain --output-format=json` on `device`; the JSON, or skips the test with
  // the run's reason when it has no kernel view here.
  json Explain(const std::string& device, const std::string& args, const std::string& env = "") {
    const CommandResult r =
        RunShell(env + " " + IOTAIL_BINARY + " run --name=x --filename=" + device +
                     " --direct=1 --explain --output-format=json " + args,
                 dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    if (r.status != 0 || r.out.find('{') == std::string::npos) return json();
    json j = json::parse(r.out.substr(r.out.find('{')));
    const std::string why = j["iotail_run"]["explain"]["why_not"];
    if (!why.empty()) {
      skip_ = why;
      return json();
    }
    return j;
  }
  std::string skip_;
};

double P50Ms(const json& stage) { return stage["percentile"]["50.000000"].get<double>() / 1e6; }

#define IOTAIL_SKIP_WITHOUT_KERNEL_VIEW()                                 \
  do {                                                                    \
    if (!skip_.empty()) GTEST_SKIP() << "no kernel view here: " << skip_; \
  } while (0)

TEST_F(ExplainRunTest, KnownDeviceDelayIsTheDeviceStage) {
  NbdFuseMount slow;
  if (std::string why = slow.Start("--filter=delay memory 64M rdelay=2ms"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  slow.ServeRealTime();
  LoopDevice slow_loop, fast_loop;
  if (std::string why = slow_loop.Attach(slow.path().string()); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = fast_loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  // The backing file's own latency now (direct reads of the FUSE file): the device stage of the
  // loop device over it is that time (2 ms and the FUSE path's cost, 2.24 ms on a quiet machine,
  // more under load).
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 200; ++i) offsets.push_back((i * 7919 * 4096) % (64 << 20));
  std::vector<double> backing_ms;
  for (const StampedRead& r : DirectReads(slow.path().string(), offsets)) {
    backing_ms.push_back(static_cast<double>(r.after_ns - r.before_ns) / 1e6);
  }
  const double backing_p50 = Median(backing_ms);
  const json s = Explain(slow_loop.path(),
                         "--rw=randread --bs=4k --ioengine=io_uring --iodepth=1 --runtime=5 "
                         "--time_based");  // about 2,000 reads
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  ASSERT_FALSE(s.is_null());
  const json& slow_read = s["jobs"][0]["iotail_explain"]["read"];
  const json f = Explain(fast_loop.path(),
                         "--rw=randread --bs=4k --ioengine=io_uring --iodepth=1 --runtime=2 "
                         "--time_based");
  ASSERT_FALSE(f.is_null());
  const json& fast_read = f["jobs"][0]["iotail_explain"]["read"];
  std::printf(
      "device p50 %.3f ms (queue %.3f, delivery %.3f) over rdelay=2ms (the file's reads: %.3f "
      "ms); %.4f ms over tmpfs\n",
      P50Ms(slow_read["stages"]["device"]), P50Ms(slow_read["stages"]["queue"]),
      P50Ms(slow_read["stages"]["delivery"]), backing_p50, P50Ms(fast_read["stages"]["device"]));
  EXPECT_GT(slow_read["ios_joined"].get<uint64_t>(), 1000u);
  // Nothing unjoined but what the kernel did not trace (a program not run because another was
  // running on that CPU: counted in records_dropped), and never more than 0.5%.
  const uint64_t dropped = s["iotail_run"]["explain"]["records_dropped"].get<uint64_t>();
  EXPECT_LE(slow_read["ios_not_joined"].get<uint64_t>(),
            std::max<uint64_t>(dropped, slow_read["ios_joined"].get<uint64_t>() / 200));
  EXPECT_GE(P50Ms(slow_read["stages"]["device"]), 2.0);
  // [2.0, 2.3] ms on a quiet machine; under load the FUSE path itself takes longer, and the
  // device stage must then follow the file's own latency, not exceed it.
  EXPECT_LE(P50Ms(slow_read["stages"]["device"]), std::max(2.3, backing_p50 + 0.1));
  EXPECT_LT(P50Ms(slow_read["stages"]["queue"]), 0.1);
  EXPECT_LT(P50Ms(slow_read["stages"]["delivery"]), 0.05);
  EXPECT_LT(P50Ms(fast_read["stages"]["device"]), 0.1);
}

// A host that reaps 500 us late: the added latency is delivery's, not the device's.
TEST_F(ExplainRunTest, HostDelayIsTheDeliveryStage) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  const std::string job =
      "--rw=randread --bs=4k --ioengine=io_uring --iodepth=1 --runtime=3 "
      "--time_based";
  const json base = Explain(loop.path(), job);
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  const json late = Explain(loop.path(), job, "IOTAIL_TEST_REAP_DELAY_US=500");
  ASSERT_FALSE(base.is_null());
  ASSERT_FALSE(late.is_null());
  auto mean = [](const json& j, const char* stage) {
    return j["jobs"][0]["iotail_explain"]["read"]["stages"][stage]["mean"].get<double>();
  };
  const double added = late["jobs"][0]["read"]["lat_ns"]["mean"].get<double>() -
                       base["jobs"][0]["read"]["lat_ns"]["mean"].get<double>();
  const double delivery = mean(late, "delivery") - mean(base, "delivery");
  const double device = mean(late, "device") - mean(base, "device");
  std::printf("added %.1f us: delivery %.1f us, device %.1f us\n", added / 1e3, delivery / 1e3,
              device / 1e3);
  EXPECT_GT(added, 400e3);
  EXPECT_GE(delivery, 0.9 * added);
  EXPECT_LE(device, 0.05 * added);
}

// One fio histogram log as {time: {direction: counts}}.
std::map<uint64_t, std::map<int, std::vector<uint64_t>>> ReadHistLog(
    const std::filesystem::path& p) {
  std::map<uint64_t, std::map<int, std::vector<uint64_t>>> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string field;
    std::vector<uint64_t> values;
    while (std::getline(fields, field, ',')) values.push_back(std::stoull(field));
    if (values.size() < 4) continue;  // time, direction, bs, then the buckets
    out[values[0]][static_cast<int>(values[1])] =
        std::vector<uint64_t>(values.begin() + 3, values.end());
  }
  return out;
}

double BucketMean(const std::vector<uint64_t>& counts, uint64_t* n) {
  double sum = 0;
  *n = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    sum += static_cast<double>(counts[i]) * static_cast<double>(stats::FineBucketValue(i));
    *n += counts[i];
  }
  return *n != 0 ? sum / static_cast<double>(*n) : 0;
}

// Per interval, the stages' means add up to iotail's mean latency (slat + clat, from fio's lat
// log of window means); each slow I/O's stages add up to its latency; and the slow-I/O log holds
// each interval's largest latencies of the clat histogram (psync: lat is clat).
TEST_F(ExplainRunTest, StagesAddUpPerIntervalAndPerSlowIo) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  const json j = Explain(loop.path(),
                         "--rw=randread --bs=4k --ioengine=libaio --iodepth=4 --runtime=4 "
                         "--time_based --write_hist_log=" +
                             (dir_ / "h").string() + " --write_lat_log=" + (dir_ / "v").string() +
                             " --log_avg_msec=1000 --log_hist_groups=59");
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  ASSERT_FALSE(j.is_null());
  std::vector<std::map<uint64_t, std::map<int, std::vector<uint64_t>>>> stages;
  for (const char* s : {"schedule", "submit", "queue", "device", "delivery"}) {
    stages.push_back(ReadHistLog(dir_ / ("h_explain_" + std::string(s) + "_hist.1.log")));
  }
  // fio's lat log: one line per window, its mean latency in ns.
  std::ifstream lat(dir_ / "v_lat.1.log");
  std::string line;
  int checked = 0;
  while (std::getline(lat, line)) {
    std::stringstream fields(line);
    uint64_t time = 0, value = 0;
    char comma;
    fields >> time >> comma >> value;
    uint64_t n = 0;
    double sum = 0;
    for (const auto& stage : stages) {
      auto at = stage.find(time);
      if (at == stage.end()) continue;
      sum += BucketMean(at->second.at(0), &n);
    }
    if (n < 1000) continue;  // the final partial window
    EXPECT_NEAR(sum, static_cast<double>(value), 0.02 * static_cast<double>(value)) << time;
    ++checked;
  }
  EXPECT_GE(checked, 3);
  // The slow I/Os: 16 per interval, stages adding up to the latency.
  std::ifstream slow(dir_ / "h_slowest.1.log");
  std::getline(slow, line);
  EXPECT_EQ(line.rfind("time_ms,direction,file,offset,length,depth,cpu,latency_ns,joined,", 0), 0u);
  std::map<uint64_t, int> rows;
  while (std::getline(slow, line)) {
    std::stringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 14u) << line;
    ++rows[std::stoull(f[0])];
    EXPECT_EQ(f[1], "read");
    EXPECT_EQ(f[2], loop.path());
    if (f[8] != "1") continue;
    uint64_t stages_sum = 0;
    for (size_t k = 9; k < 14; ++k) stages_sum += std::stoull(f[k]);
    EXPECT_LE(std::llabs(static_cast<long long>(stages_sum) - std::stoll(f[7])), 2000) << line;
  }
  EXPECT_GE(rows.size(), 4u);
  // Every interval's sixteen slowest; the final partial interval may have had fewer I/Os.
  for (const auto& [time, n] : rows) {
    if (time == rows.rbegin()->first) {
      EXPECT_LE(n, 16) << time;
    } else {
      EXPECT_EQ(n, 16) << time;
    }
  }
}

TEST_F(ExplainRunTest, SlowIoLogHoldsEachIntervalsLargestLatencies) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  const json j = Explain(loop.path(),
                         "--rw=randread --bs=4k --ioengine=psync --runtime=4 --time_based "
                         "--explain_slowest=8 --log_hist_groups=59 --write_hist_log=" +
                             (dir_ / "h").string());
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  ASSERT_FALSE(j.is_null());
  const auto clat = ReadHistLog(dir_ / "h_clat_hist.1.log");
  std::map<uint64_t, std::vector<uint64_t>> slow;
  std::ifstream in(dir_ / "h_slowest.1.log");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    slow[std::stoull(f[0])].push_back(std::stoull(f[7]));
  }
  int checked = 0;
  for (const auto& [time, latencies] : slow) {
    auto at = clat.find(time);
    ASSERT_NE(at, clat.end()) << time;
    const std::vector<uint64_t>& counts = at->second.at(0);
    if (time == slow.rbegin()->first) continue;  // the final partial interval: maybe fewer I/Os
    ASSERT_EQ(latencies.size(), 8u) << time;
    // Every I/O of the interval slower than the slowest eight's fastest is among them: the clat
    // histogram holds fewer than eight above its bucket (give or take the I/Os done at the
    // interval's boundary, which the histogram and the log may book on either side).
    const uint64_t fastest = *std::min_element(latencies.begin(), latencies.end());
    const uint32_t bucket = stats::FineBucketIndex(fastest, stats::kWideGroups);
    uint64_t above = 0;
    for (size_t i = bucket + 1; i < counts.size(); ++i) above += counts[i];
    EXPECT_LE(above, 7u + 2u) << time;
    // ...and each of them is in the histogram: this interval's, or for at most the two allowed
    // above (done at a boundary), a neighbour's.
    int at_boundary = 0;
    for (uint64_t l : latencies) {
      const uint32_t b = stats::FineBucketIndex(l, stats::kWideGroups);
      if (counts[b] > 0) continue;
      ++at_boundary;
      bool neighbour = false;
      if (at != clat.begin()) neighbour = std::prev(at)->second.at(0)[b] > 0;
      if (std::next(at) != clat.end()) neighbour = neighbour || std::next(at)->second.at(0)[b] > 0;
      EXPECT_TRUE(neighbour) << time << " " << l;
    }
    EXPECT_LE(at_boundary, 2) << time;
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

// A dd on another loop device during the run: none of its requests is counted.
TEST_F(ExplainRunTest, AnotherDevicesIoIsNotCounted) {
  LoopDevice mine, other;
  if (std::string why = mine.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = other.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  const std::string dd = "(for i in 1 2 3 4 5 6; do dd if=" + other.path() +
                         " of=/dev/null bs=4k iflag=direct status=none; done) & ";
  const json j = Explain(mine.path(),
                         "--rw=randread --bs=4k --ioengine=io_uring --iodepth=8 --runtime=3 "
                         "--time_based",
                         dd);
  RunShell("wait", dir_);
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  ASSERT_FALSE(j.is_null());
  const json& read = j["jobs"][0]["iotail_explain"]["read"];
  const uint64_t total = j["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  const uint64_t joined = read["ios_joined"].get<uint64_t>();
  // Every I/O is counted, joined or not; each worker joins its own as it reaps them, and a request
  // is written over before its I/O is reaped only when both entries of its group hold requests
  // not yet reaped (about (8 / 4096)^2 per I/O here): at most a few of some 100,000.
  EXPECT_EQ(joined + read["ios_not_joined"].get<uint64_t>(), total);
  EXPECT_LE(total - joined, 8u) << "joined " << joined << " of " << total;
  EXPECT_GT(joined, 10000u);
  // Isolation: none of the dd's requests is counted, nor left over as a request of nobody's.
  EXPECT_EQ(j["iotail_run"]["explain"]["requests_unmatched"].get<uint64_t>(), 0u);
}

// The nbd engine has no block layer: its stages come from iotail's own stamps (the send, the
// server's answer), with nothing to load, so the test needs neither root nor BPF.
TEST_F(ExplainRunTest, NbdStagesPutTheServersDelayInTheDeviceStage) {
  NbdServer server;
  if (std::string why = server.Start("--filter=delay memory 64M rdelay=2ms"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const CommandResult r = Iotail("run --name=n --ioengine=nbd --uri='" + server.uri() +
                                 "' --rw=randread --bs=4k --iodepth=1 --runtime=2 --time_based "
                                 "--explain --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["iotail_run"]["explain"]["kernel_view"], "the nbd engine's own stamps");
  const json& read = j["jobs"][0]["iotail_explain"]["read"];
  EXPECT_EQ(read["ios_joined"].get<uint64_t>(), j["jobs"][0]["read"]["total_ios"].get<uint64_t>());
  EXPECT_GE(P50Ms(read["stages"]["device"]), 2.0);
  EXPECT_LT(P50Ms(read["stages"]["device"]), 2.5);
  EXPECT_LT(P50Ms(read["stages"]["submit"]), 0.2);
  double sum = 0;
  for (const char* s : {"schedule", "submit", "queue", "device", "delivery"}) {
    sum += read["stages"][s]["mean"].get<double>();
  }
  EXPECT_NEAR(sum, j["jobs"][0]["read"]["lat_ns"]["mean"].get<double>(), 1.0);
}

// iotail sweep --explain: each step's stages are in its JSON, and a step that fails its SLA names
// a stage (the largest before any step passed: here every step fails a target of 1 us).
TEST_F(ExplainRunTest, SweepNamesTheStageOfEachFailedStep) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  // The kernel view first, by a run: a sweep that explained nothing would otherwise look alike.
  (void)Explain(loop.path(), "--rw=randread --bs=4k --ioengine=psync --runtime=1 --time_based");
  IOTAIL_SKIP_WITHOUT_KERNEL_VIEW();
  const CommandResult r =
      Iotail("sweep --filename=" + loop.path() +
             " --direct=1 --rw=randread --bs=4k --ioengine=libaio --iodepth=4 --explain "
             "--sla 'read:p99<=1us' --step_time=1s --ramp_time=0 --start_rate=1000 --min_rate=500 "
             "--retries=0 --output-format=json");
  ASSERT_NE(r.out.find('{'), std::string::npos) << r.err;
  const json j = json::parse(r.out.substr(r.out.find('{')));
  ASSERT_GE(j["steps"].size(), 1u) << r.out;
  for (const json& step : j["steps"]) {
    ASSERT_TRUE(step.contains("explain")) << step;
    EXPECT_EQ(step["explain"]["joined"].get<uint64_t>(), step["ios"].get<uint64_t>()) << step;
    EXPECT_EQ(step["verdict"], "fail");
    const std::string named = step["explain"]["stage_largest"];
    // The stage named is the largest of the step's means.
    double largest = 0;
    for (const auto& [stage, mean] : step["explain"]["stages_mean_ms"].items()) {
      largest = std::max(largest, mean.get<double>());
    }
    EXPECT_EQ(step["explain"]["stages_mean_ms"][named].get<double>(), largest) << step;
  }
}

// Without root or a block device nothing is explained, the run goes on and says why once.
TEST_F(ExplainRunTest, WithoutABlockDeviceTheRunGoesOnAndSaysWhy) {
  const std::string file = "/dev/shm/iotail_explain_" + std::to_string(::getpid());
  const CommandResult r = Iotail("run --name=x --filename=" + file +
                                 " --size=4m --rw=read --bs=4k --explain --explain_slowest=2 "
                                 "--write_hist_log=" +
                                 (dir_ / "h").string() + " --unlink=1");
  std::filesystem::remove(file);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--explain: no kernel view"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not joined to block requests: " + file), std::string::npos) << r.err;
  // The slowest I/Os are kept from iotail's own stamps: two per interval, not joined.
  const std::string slow = ReadWholeFile(dir_ / "h_slowest.1.log");
  EXPECT_NE(slow.find(",read," + file + ","), std::string::npos) << slow;
  EXPECT_NE(slow.find(",0,0,,,,\n"), std::string::npos) << slow;
}

}  // namespace explain_run_test
}  // namespace iotail::testing
