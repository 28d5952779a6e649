// fio's engines in `iotail run`, end to end: each engine iotail runs does the I/Os fio 3.33 does
// on the same job file (counts and bytes per job and direction) through the same system calls
// (strace); a job without ioengine runs psync at depth 1, as fio, while the zero-argument default
// benchmark keeps the best engine available; fio's engines iotail does not run are refused by
// name. The comparisons with fio and strace skip when those tools are not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "engine/io/io_engine.h"

namespace run_engines_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using nlohmann::json;

// The engines iotail runs on files, with fio's names.
const std::vector<std::string> kFileEngines = {"sync",     "psync", "vsync",    "pvsync", "pvsync2",
                                               "posixaio", "mmap",  "io_uring", "libaio"};

bool Installed(const std::string& tool) {
  return iotail::testing::Capture("command -v " + tool + " >/dev/null 2>&1").status == 0;
}

// Whether `engine` can run here (io_uring and libaio may be refused by the kernel or not built).
bool Available(const std::string& engine) {
  return iotail::engine::ProbeEngine(iotail::engine::ParseEngineKind(engine)).empty();
}

class RunEnginesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_run_engines"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  CommandResult Shell(const std::string& command) {
    return iotail::testing::RunShell("cd " + dir_.string() + " && " + command, dir_);
  }
  CommandResult Iotail(const std::string& args) {
    return Shell(std::string(IOTAIL_BINARY) + " run --live_format=none " + args);
  }
  // A file of `bytes` random bytes in the scratch directory, so neither tool lays it out.
  std::string Target(const std::string& name, int kib) {
    EXPECT_EQ(Shell("head -c " + std::to_string(kib * 1024) + " /dev/urandom > " + name).status, 0);
    return (dir_ / name).string();
  }

  // The strace logs PREFIX.PID of every thread, joined, and removed.
  std::string Logs(const std::string& prefix) {
    std::string all;
    std::vector<fs::path> logs;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().starts_with(prefix + ".")) logs.push_back(e.path());
    }
    for (const fs::path& log : logs) {
      all += iotail::testing::ReadFile(log);
      fs::remove(log);
    }
    return all;
  }

  fs::path dir_;
};

// Per job and direction: "job/read" -> {io_bytes, total_ios}, from fio's JSON layout (ours too).
std::map<std::string, std::pair<uint64_t, uint64_t>> Counts(const json& summary) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const json& job : summary.at("jobs")) {
    for (const char* dir : {"read", "write"}) {
      const json& d = job.at(dir);
      out[job.at("jobname").get<std::string>() + "/" + dir] = {d.at("io_bytes").get<uint64_t>(),
                                                               d.at("total_ios").get<uint64_t>()};
    }
  }
  return out;
}

TEST_F(RunEnginesTest, EachEngineDoesTheIosFioDoesOnTheSameJob) {
  const bool fio = Installed("fio");
  for (const std::string& engine : kFileEngines) {
    SCOPED_TRACE(engine);
    if (!Available(engine)) continue;
    const std::string target = Target("t-" + engine, 512);
    // A random write pass, then sequential reads of another block size and a bounded io_size, at
    // a depth that fio (and iotail) caps to 1 for the synchronous engines. But vsync: fio 3.33
    // keeps up to iodepth of its I/Os queued (one writev each unless iodepth_batch gathers them)
    // and then counts 128 writes of 4k in total_ios but only 125 in io_bytes (all 128 are
    // written: strace), so it is compared where fio runs it as iotail does, at depth 1.
    const std::string depth = engine == "vsync" ? "1" : "4";
    const std::string job =
        Write(engine + ".fio", "[global]\nioengine=" + engine + "\nfilename=" + target +
                                   "\nsize=512k\niodepth=" + depth +
                                   "\n"
                                   "[w]\nrw=randwrite\nbs=4k\n"
                                   "[r]\nstonewall\nrw=read\nbs=16k\n"
                                   "io_size=384k\n");
    const CommandResult ours = Iotail("--output-format=json --output=ours.json " + job);
    ASSERT_EQ(ours.status, 0) << ours.err;
    const json summary = json::parse(iotail::testing::ReadFile(dir_ / "ours.json"));
    const auto counts = Counts(summary);
    EXPECT_EQ(counts.at("w/write"), std::make_pair(uint64_t{512 << 10}, uint64_t{128}));
    EXPECT_EQ(counts.at("r/read"), std::make_pair(uint64_t{384 << 10}, uint64_t{24}));
    EXPECT_EQ(counts.at("w/read").second + counts.at("r/write").second, 0u);
    EXPECT_TRUE(summary.at("global options")
                    .at("ioengine_used")
                    .get<std::string>()
                    .starts_with(engine == "io_uring" ? "io_uring" : engine));
    if (!fio) continue;
    const CommandResult theirs = Shell("fio --output-format=json --output=fio.json " + job);
    ASSERT_EQ(theirs.status, 0) << theirs.out << theirs.err;
    EXPECT_EQ(Counts(json::parse(iotail::testing::ReadFile(dir_ / "fio.json"))), counts);
  }
  if (!fio) GTEST_SKIP() << "fio is not installed: counts checked against their expected values";
}

// The I/O system calls that moved `bs` bytes in an strace log, and "lseek" if a nonzero offset
// that is a multiple of `bs` was sought (a positioned I/O's lseek, not a size probe).
std::set<std::string> IoCalls(const std::string& log, int bs) {
  std::set<std::string> calls;
  const std::string n = std::to_string(bs);
  const std::regex io("(\\w+)\\([0-9]+, .*[ =]" + n + "(\\}\\], 1)?[^)]*\\) = " + n);
  const std::regex seek("lseek\\([0-9]+, ([0-9]+), SEEK_SET\\)");
  const std::set<std::string> names = {"read",   "write",  "pread64", "pwrite64", "readv",
                                       "writev", "preadv", "pwritev", "preadv2",  "pwritev2"};
  for (const std::string& line : iotail::testing::Lines(log)) {
    std::smatch m;
    if (std::regex_search(line, m, io) && names.count(m[1].str()) != 0) calls.insert(m[1].str());
    if (std::regex_search(line, m, seek)) {
      const uint64_t at = std::stoull(m[1].str());
      if (at != 0 && at % static_cast<uint64_t>(bs) == 0) calls.insert("lseek");
    }
  }
  return calls;
}

TEST_F(RunEnginesTest, EachEngineUsesFiosSystemCalls) {
  if (!Installed("strace") || Shell("strace -f -o /dev/null true").status != 0) {
    GTEST_SKIP() << "strace is not installed or may not trace here";
  }
  const bool fio = Installed("fio");
  const std::map<std::string, std::set<std::string>> expected = {
      {"sync", {"lseek", "read", "write"}},
      {"psync", {"pread64", "pwrite64"}},
      {"vsync", {"lseek", "readv", "writev"}},
      {"pvsync", {"preadv", "pwritev"}},
      {"pvsync2", {"preadv2", "pwritev2"}},
      {"posixaio", {"pread64", "pwrite64"}},  // glibc's threads
      {"mmap", {}},                           // memcpy through the mapping: no I/O call at all
  };
  for (const auto& [engine, calls] : expected) {
    SCOPED_TRACE(engine);
    const std::string target = Target("s-" + engine, 256);
    const std::string job =
        Write("s-" + engine + ".fio", "[t]\nioengine=" + engine + "\nfilename=" + target +
                                          "\nsize=256k\nbs=8k\nrw=randrw\n"
                                          "iodepth=4\n");
    // -ff: a log per thread, so no call is split by another thread's ("<unfinished ...>").
    const CommandResult ours = Shell("strace -ff -o ours.strace " + std::string(IOTAIL_BINARY) +
                                     " run --live_format=none --output=ours.txt " + job);
    ASSERT_EQ(ours.status, 0) << ours.err;
    const std::string log = Logs("ours.strace");
    EXPECT_EQ(IoCalls(log, 8192), calls);
    if (engine == "mmap") {
      EXPECT_NE(log.find("MAP_SHARED"), std::string::npos);
    }
    if (!fio) continue;
    const CommandResult theirs =
        Shell("strace -ff -o fio.strace fio --output=fio.txt " + job + " >/dev/null");
    ASSERT_EQ(theirs.status, 0) << theirs.err;
    EXPECT_EQ(IoCalls(Logs("fio.strace"), 8192), calls);
  }
}

TEST_F(RunEnginesTest, AJobWithoutIoengineRunsPsyncAtDepthOneAsFio) {
  const std::string target = Target("p", 256);
  const CommandResult r = Iotail("--name=t --filename=" + target +
                                 " --size=256k --rw=randread --iodepth=8 --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json s = json::parse(r.out);
  EXPECT_EQ(s.at("global options").at("ioengine_used"), "psync");
  EXPECT_EQ(s.at("jobs").at(0).at("iodepth_level").at("1"), 100.0);
  EXPECT_NE(r.err.find("note: --ioengine=psync is synchronous"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--iodepth=8 runs as --iodepth=1"), std::string::npos) << r.err;
  // The same from a job file.
  const std::string job =
      Write("plain.fio", "[t]\nfilename=" + target + "\nsize=256k\nrw=randread\niodepth=8\n");
  const CommandResult f = Iotail("--output-format=json " + job);
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(json::parse(f.out).at("global options").at("ioengine_used"), "psync");
  EXPECT_NE(f.err.find("runs as --iodepth=1"), std::string::npos) << f.err;
}

TEST_F(RunEnginesTest, TheDefaultBenchmarkKeepsTheBestEngineAvailable) {
  const auto available = iotail::engine::AvailableEngines();
  ASSERT_FALSE(available.empty());
  const std::string best = iotail::engine::EngineKindName(available.front());
  const CommandResult r = Iotail("--runtime=300ms --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json s = json::parse(r.out);
  EXPECT_TRUE(s.at("global options").at("ioengine_used").get<std::string>().starts_with(best))
      << s.at("global options");
  if (Available("io_uring")) {
    EXPECT_EQ(best, "io_uring");
    // Its queue of 32, not psync's one I/O at a time.
    EXPECT_LT(s.at("jobs").at(0).at("iodepth_level").at("1").get<double>(), 50.0);
    EXPECT_EQ(r.err.find("synchronous"), std::string::npos) << r.err;
  }
}

TEST_F(RunEnginesTest, FiosOtherEnginesAreRefusedByName) {
  const std::string target = " --filename=" + (dir_ / "x").string() + " --size=64k";
  for (const std::string engine :
       {"rdma", "http", "net", "rbd", "sg", "io_uring_cmd", "dev-dax", "libpmem"}) {
    const CommandResult r = Iotail("--name=t --ioengine=" + engine + target);
    EXPECT_EQ(r.status, 2) << engine;
    EXPECT_NE(r.err.find("--ioengine=" + engine + ": iotail does not support fio's " + engine +
                         " engine"),
              std::string::npos)
        << r.err;
  }
  const CommandResult ext = Iotail("--name=t --ioengine=external:/opt/engine.so" + target);
  EXPECT_EQ(ext.status, 2);
  EXPECT_NE(ext.err.find("does not support external engines"), std::string::npos) << ext.err;
  // In a job file the error says where.
  const std::string job = Write("rbd.fio", "[global]\nsize=64k\n[t]\nioengine=rbd\n");
  const CommandResult f = Iotail(job);
  EXPECT_EQ(f.status, 2);
  EXPECT_NE(f.err.find(job + ":4: --ioengine=rbd: iotail does not support fio's rbd engine"),
            std::string::npos)
      << f.err;
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(RunEnginesTest, Pvsync2NowaitFailsAnIoThatWouldBlockAsFio) {
  // A buffered read of data not in the page cache would block: with RWF_NOWAIT it fails with
  // EAGAIN, which fio reports as the job's error (err=11) and ends the job, not a retry. The file
  // is synced so that the run's invalidate (fio's default) can drop its pages.
  const std::string target = Target("n", 256);
  ASSERT_EQ(Shell("sync " + target).status, 0);
  const std::string job = " --name=t --ioengine=pvsync2 --nowait=1 --filename=" + target +
                          " --size=256k --rw=read --output-format=json";
  const CommandResult r = Iotail(job);
  if (r.status == 0) GTEST_SKIP() << "every read was served from the page cache here";
  EXPECT_EQ(r.status, 1) << r.err;
  const json s = json::parse(r.out);
  EXPECT_EQ(s.at("jobs").at(0).at("error"), 11);
  EXPECT_EQ(s.at("jobs").at(0).at("iotail_errors").at("by_errno").at("EAGAIN"), 1);
  if (!Installed("fio")) return;
  ASSERT_EQ(Shell("sync " + target).status, 0);
  const CommandResult theirs = Shell("fio --output=fio.json" + job);
  EXPECT_EQ(json::parse(iotail::testing::ReadFile(dir_ / "fio.json")).at("jobs").at(0).at("error"),
            11)
      << theirs.out;
}

}  // namespace run_engines_test
