// The report of `iotail run` as fio 3.33 writes it, each compared with fio itself on the same job
// (skipped with the reason when fio is not installed): the normal output's sections (a block per
// reported job, `Run status group N` per group, the disks) in fio's order and formats; a job's
// description in each form; the options of fio's profiles and its switches that turn measurements
// off, accepted (iotail measures regardless, and says so); a do_verify read-back is the job's reads
// (JSON read.total_ios and io_bytes, their latencies, the writes' own runtime).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_fio_report_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using iotail::testing::CommandResult;

bool HaveFio() { return iotail::testing::Capture("command -v fio").status == 0; }

class RunFioReportTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_fio_report"); }
  void TearDown() override { fs::remove_all(dir_); }
  // `fio ARGS` or `iotail run ARGS` in the scratch directory.
  CommandResult Fio(const std::string& args) {
    return iotail::testing::RunShell("cd " + dir_.string() + " && fio " + args, dir_);
  }
  CommandResult Iotail(const std::string& args) {
    return iotail::testing::RunShell(
        "cd " + dir_.string() + " && " + IOTAIL_BINARY + " run --live_format=none " + args, dir_);
  }
  static json Json(const CommandResult& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    const size_t brace = r.out.find('{');
    return r.status == 0 && brace != std::string::npos ? json::parse(r.out.substr(brace))
                                                       : json::object();
  }
  fs::path dir_;
};

// The lines of fio's normal output that both tools print whatever the timing, named by their
// kind, in order: job headers (name, groupid, jobs=N, err), direction lines, latency lines and
// percentile headings, cpu, depths, issued, latency target, group headings and their lines, disks.
// Bandwidth samples and the coarse latency buckets depend on the run's length and speed; iotail's
// own lines (SLC, errors, `iotail run:`) are not fio's.
std::vector<std::string> Sections(const std::string& text) {
  static const std::regex header(
      R"(^(\S+): \(groupid=(\d+), jobs=(\d+)\): err=\s*(\d+).*: pid=\d+: .*)");
  static const std::regex direction(
      R"(^  (read|write|trim): IOPS=[0-9.]+[kMG]?, BW=[0-9.]+[KMGT]?i?B/s \([0-9.]+[kMGT]?B/s\)\([0-9.]+[KMGT]?i?B/\d+msec\).*)");
  static const std::regex latency(
      R"(^    (slat| lat|clat) \((n|u|m)sec\): min=[0-9.]+k?, max=[0-9.]+[kM]?, avg=[ 0-9.]+, stdev=[ 0-9.]+.*)");
  static const std::regex percentiles(R"(^    (clat|lat) percentiles \((n|u|m)sec\):)");
  static const std::regex group(
      R"(^ *(READ|WRITE|TRIM): bw=\S+ \(\S+\), \S+-\S+ \(\S+-\S+\), io=\S+ \(\S+\), run=\d+-\d+msec)");
  std::vector<std::string> out;
  std::smatch m;
  for (const std::string& line : iotail::testing::Lines(text)) {
    if (std::regex_match(line, m, header)) {
      out.push_back("job " + m[1].str() + " groupid=" + m[2].str() + " jobs=" + m[3].str() +
                    " err=" + m[4].str());
    } else if (std::regex_match(line, m, direction)) {
      out.push_back("  " + m[1].str());
    } else if (std::regex_match(line, m, latency)) {
      out.push_back("    " + m[1].str());
    } else if (std::regex_match(line, m, percentiles)) {
      out.push_back("    " + m[1].str() + " percentiles");
    } else if (std::regex_match(line, m, group)) {
      out.push_back("  group " + m[1].str());
    } else {
      for (const char* kind :
           {"  Description  : [", "  cpu          : usr=", "  IO depths    : 1=",
            "     submit    : 0=", "     complete  : 0=", "     issued rwts: total=",
            "     latency   : target=", "Run status group ", "Disk stats (read/write):"}) {
        if (line.rfind(kind, 0) == 0)
          out.push_back(kind == std::string("Run status group ") ? line : kind);
      }
    }
  }
  return out;
}

TEST_F(RunFioReportTest, NormalOutputHasFiosSectionsPerJobAndGroup) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // Two jobs in two groups (stonewall), then a group reported as one job of two clones.
  std::ofstream(dir_ / "multi.fio") << "[global]\n"
                                       "filename=scratch\n"
                                       "size=4m\n"
                                       "bs=4k\n"
                                       "ioengine=psync\n"
                                       "[first]\n"
                                       "rw=write\n"
                                       "[second]\n"
                                       "stonewall\n"
                                       "rw=randread\n"
                                       "[third]\n"
                                       "stonewall\n"
                                       "rw=read\n"
                                       "numjobs=2\n"
                                       "group_reporting\n";
  const CommandResult fio = Fio("multi.fio");
  const CommandResult ours = Iotail("multi.fio");
  ASSERT_EQ(fio.status, 0) << fio.err;
  ASSERT_EQ(ours.status, 0) << ours.err;
  const std::vector<std::string> theirs = Sections(fio.out);
  // fio 3.33 on this job: a write job, a read job, a group of two readers, then the groups.
  const std::vector<std::string> expected_headers = {
      "job first groupid=0 jobs=1 err=0", "job second groupid=1 jobs=1 err=0",
      "job third groupid=2 jobs=2 err=0", "Run status group 0 (all jobs):",
      "Run status group 1 (all jobs):",   "Run status group 2 (all jobs):"};
  std::vector<std::string> headers;
  for (const std::string& s : theirs) {
    if (s.rfind("job ", 0) == 0 || s.rfind("Run status", 0) == 0) headers.push_back(s);
  }
  ASSERT_EQ(headers, expected_headers) << fio.out;
  EXPECT_EQ(Sections(ours.out), theirs) << "fio:\n" << fio.out << "\niotail:\n" << ours.out;
  // iotail's own lines follow fio's sections, under a heading of their own.
  EXPECT_NE(ours.out.find("\niotail run:\n  mode: burst"), std::string::npos) << ours.out;
}

TEST_F(RunFioReportTest, DescriptionIsShownAsFioShowsIt) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  std::ofstream(dir_ / "d.fio") << "[d]\nfilename=f\nsize=1m\nrw=read\nioengine=psync\n"
                                   "description=reads \"all\" of it\n";
  const std::string text = "reads \"all\" of it";
  for (const bool fio : {true, false}) {
    const std::string who = fio ? "fio" : "iotail";
    const auto run = [&](const std::string& args) { return fio ? Fio(args) : Iotail(args); };
    // JSON: "desc", and the option among the job's options.
    const json j = Json(run("d.fio --output-format=json"));
    ASSERT_FALSE(j.empty()) << who;
    EXPECT_EQ(j["jobs"][0]["desc"], text) << who;
    EXPECT_EQ(j["jobs"][0]["job options"]["description"], text) << who;
    // Terse: the last field.
    const CommandResult terse = run("d.fio --minimal");
    ASSERT_EQ(terse.status, 0) << who << terse.err;
    const std::string line = terse.out.substr(0, terse.out.find('\n'));
    EXPECT_EQ(line.substr(line.rfind(';') + 1), text) << who << ": " << line;
    // Normal: the line after the job's header.
    const CommandResult normal = run("d.fio");
    ASSERT_EQ(normal.status, 0) << who << normal.err;
    const size_t header = normal.out.find("d: (groupid=0, jobs=1)");
    ASSERT_NE(header, std::string::npos) << who << normal.out;
    const size_t next = normal.out.find('\n', header) + 1;
    EXPECT_EQ(normal.out.substr(next, normal.out.find('\n', next) - next),
              "  Description  : [" + text + "]")
        << who;
  }
  // Without one, no "desc" key (as fio).
  EXPECT_FALSE(
      Json(Iotail("--name=x --filename=f --size=64k --output-format=json"))["jobs"][0].contains(
          "desc"));
}

TEST_F(RunFioReportTest, ProfileOptionsAndMeasurementSwitchesAreAcceptedAsFioAcceptsThem) {
  // The tiobench and act profiles' options, which fio takes in any job file and ignores, and the
  // switches that turn fio's latency and bandwidth measurements off.
  std::ofstream(dir_ / "p.fio") << "[p]\nfilename=f\nsize=1m\nrw=read\nioengine=psync\n"
                                   "threads=4\nblock=8192\nnumruns=3\ndir=/nonexistent\nload=2\n"
                                   "device-names=/dev/none\ntest-duration=5\nthreads-per-queue=2\n"
                                   "read-req-num-512-blocks=3\nlarge-block-op-kbytes=128\nprep\n"
                                   "gtod_reduce=1\ndisable_lat=1\ndisable_clat=1\ndisable_slat=1\n"
                                   "disable_bw=1\n";
  const CommandResult ours = Iotail("p.fio --output-format=json");
  const json j = Json(ours);
  ASSERT_FALSE(j.empty());
  // Nothing changed by them: 1 MiB read in 4 KiB blocks, every latency measured, and one note.
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"], 256);
  EXPECT_EQ(j["jobs"][0]["read"]["clat_ns"]["N"], 256);
  EXPECT_NE(ours.err.find("--gtod_reduce, --disable_lat, --disable_clat, --disable_slat, "
                          "--disable_bw: iotail measures latencies and bandwidth regardless"),
            std::string::npos)
      << ours.err;
  EXPECT_EQ(std::count(ours.err.begin(), ours.err.end(), '\n'), 1) << ours.err;
  // Off (=0) they need no note.
  const CommandResult off =
      Iotail("--name=x --filename=f --size=64k --gtod_reduce=0 --disable_lat=0");
  EXPECT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(off.err.find("regardless"), std::string::npos) << off.err;
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  // fio takes the same file, does the same I/O, and with these switches reports no latency.
  const json fio = Json(Fio("p.fio --output-format=json"));
  ASSERT_FALSE(fio.empty());
  EXPECT_EQ(fio["jobs"][0]["read"]["total_ios"], 256);
  EXPECT_EQ(fio["jobs"][0]["read"]["clat_ns"]["N"], 0);
}

TEST_F(RunFioReportTest, VerifyReadBackIsReportedAsReadsWithTheirOwnRuntime) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string job =
      "--name=v --rw=write --verify=crc32c --size=16m --bs=4k --ioengine=psync "
      "--output-format=json ";
  const json fio = Json(Fio(job + "--filename=theirs"));
  const json ours = Json(Iotail(job + "--filename=ours"));
  ASSERT_FALSE(fio.empty());
  ASSERT_FALSE(ours.empty());
  for (const json* j : {&fio, &ours}) {
    const json& job0 = (*j)["jobs"][0];
    const json& read = job0["read"];
    const json& write = job0["write"];
    // Every block written once, then read back once: both directions carry 4096 I/Os.
    EXPECT_EQ(write["total_ios"], 4096) << *j;
    EXPECT_EQ(read["total_ios"], 4096) << *j;
    EXPECT_EQ(read["io_bytes"], 16 << 20) << *j;
    EXPECT_EQ(read["clat_ns"]["N"], 4096) << *j;
    EXPECT_EQ(read["lat_ns"]["N"], 4096) << *j;
    EXPECT_GT(read["clat_ns"]["max"].get<uint64_t>(), 0u);
    // Each direction's runtime is its own phase: together about the job's, not each the whole.
    const uint64_t r = read["runtime"], w = write["runtime"], all = job0["job_runtime"];
    EXPECT_GT(w, 0u) << *j;
    EXPECT_LE(r + w, all + 2) << *j;
  }
  // The total latency buckets cover both directions: 8192 I/Os.
  double sum = 0;
  for (const char* table : {"latency_ns", "latency_us", "latency_ms"}) {
    for (const auto& [k, v] : ours["jobs"][0][table].items()) sum += v.get<double>();
  }
  EXPECT_NEAR(sum, 100.0, 0.1);
}

}  // namespace run_fio_report_test
