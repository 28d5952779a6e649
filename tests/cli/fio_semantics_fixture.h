// The fixture of the tests that run `iotail run` and fio 3.33 on the same jobs: each tool in a
// scratch directory of its own with a JSON summary, the jobs read from it (name, error, I/Os and
// bytes per direction, runtime), and checks that both give the same counts or pass one rule.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_util.h"

namespace iotail::testing {

namespace fio_semantics {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct Job {
  std::string name;
  int error = 0;
  uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0;
  uint64_t runtime_ms = 0;  // job_runtime
  bool operator==(const Job&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Job& j) {
  return os << j.name << " (error " << j.error << "): " << j.reads << " reads, " << j.read_bytes
            << " B; " << j.writes << " writes, " << j.write_bytes << " B; " << j.runtime_ms
            << " ms";
}

inline std::vector<Job> Jobs(const std::string& out) {
  std::vector<Job> jobs;
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return jobs;
  const json j = json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded()) return jobs;
  for (const json& x : j["jobs"]) {
    jobs.push_back({x["jobname"].get<std::string>(), x["error"].get<int>(),
                    x["read"]["total_ios"].get<uint64_t>(), x["read"]["io_bytes"].get<uint64_t>(),
                    x["write"]["total_ios"].get<uint64_t>(), x["write"]["io_bytes"].get<uint64_t>(),
                    x["job_runtime"].get<uint64_t>()});
  }
  return jobs;
}

inline bool HaveFio() { return Capture("command -v fio >/dev/null").status == 0; }

class FioSemanticsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeScratchDir("iotail_fio_semantics"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `tool` (fio or iotail) with ARGS in its own directory (files named there are the tool's
  // own), JSON summary on stdout.
  CommandResult Run(const std::string& tool, const std::string& args,
                    const std::string& prefix = "") {
    const fs::path d = dir_ / tool;
    fs::create_directories(d);
    const std::string bin =
        tool == "fio" ? "fio" : std::string(IOTAIL_BINARY) + " run --live_format=none";
    return RunShell("cd " + d.string() + " && " + prefix + bin + " --output-format=json " + args,
                    d);
  }
  // Writes `text` as the job file `name` in the scratch directory; returns its path.
  std::string JobFile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  // Both tools on ARGS: their jobs, which must have run (exit status 0).
  std::pair<std::vector<Job>, std::vector<Job>> Both(const std::string& args) {
    const CommandResult fio = Run("fio", args);
    EXPECT_EQ(fio.status, 0) << fio.err;
    const CommandResult ours = Run("iotail", args);
    EXPECT_EQ(ours.status, 0) << ours.err;
    return {Jobs(fio.out), Jobs(ours.out)};
  }
  // Runs iotail, then fio (where installed), on ARGS: each must exit with `status`, and its jobs
  // pass check(jobs, result).
  template <class Check>
  void ExpectBoth(const std::string& args, int status, Check check) {
    for (const std::string tool : {"iotail", "fio"}) {
      if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
      SCOPED_TRACE(tool);
      const CommandResult r = Run(tool, args);
      EXPECT_EQ(r.status, status) << r.err;
      check(Jobs(r.out), r);
    }
  }
  // The counts of both must be equal (runtimes aside).
  void ExpectSameCounts(const std::string& args) {
    SCOPED_TRACE(args);
    auto [fio, ours] = Both(args);
    ASSERT_FALSE(fio.empty());
    for (auto* jobs : {&fio, &ours}) {
      for (Job& j : *jobs) j.runtime_ms = 0;
    }
    EXPECT_EQ(ours, fio);
  }
  // Only the bytes (random block sizes make the I/O counts differ).
  void ExpectSameBytes(const std::string& args) {
    SCOPED_TRACE(args);
    auto [fio, ours] = Both(args);
    ASSERT_FALSE(fio.empty());
    for (auto* jobs : {&fio, &ours}) {
      for (Job& j : *jobs) j.runtime_ms = j.reads = j.writes = 0;
    }
    EXPECT_EQ(ours, fio);
  }
  fs::path dir_;
};

}  // namespace fio_semantics

using fio_semantics::FioSemanticsTest;
using fio_semantics::HaveFio;
using fio_semantics::Job;
using fio_semantics::Jobs;

}  // namespace iotail::testing
