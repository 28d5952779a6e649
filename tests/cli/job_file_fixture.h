// The fixture of the job-file tests: a scratch directory per test, files written into it, the
// error a job file makes, and the iotail binary run on job files with bounded time and memory.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cli/job_file.h"
#include "cli_test_util.h"
#include "stats/core/errors.h"

namespace iotail::testing {

// A fixed environment: ${BS} is 64k, nothing else is set; 6 CPUs, 1 GiB, 4 KiB pages.
inline cli::JobFileEnvironment TestJobFileEnvironment() {
  cli::JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "BS") return "64k";
    return std::nullopt;
  };
  env.ncpus = 6;
  env.mb_memory = 1024;
  env.pagesize = 4096;
  return env;
}

class JobFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeScratchDir("iotail_job_file"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // The message of the UsageError parsing the job file `path` throws ("" if none).
  static std::string ErrorOf(const std::string& path) {
    try {
      cli::ParseJobFile(path, TestJobFileEnvironment());
    } catch (const stats::UsageError& e) {
      return e.what();
    }
    return "";
  }
  // The message of the UsageError parsing `text` (as bad.fio) throws ("" if none).
  std::string Error(const std::string& text) { return ErrorOf(Write("bad.fio", text)); }
  // `iotail ARGS` in the scratch directory (a run's data files go there), with at most 2 GiB of
  // address space and 60 s, so that a reader that does not bound its work fails the test rather
  // than the machine.
  CommandResult RunBounded(const std::string& args) {
    return RunShell("cd " + dir_.string() + " && ulimit -v 2097152 && timeout 60 " +
                        std::string(IOTAIL_BINARY) + " " + args,
                    dir_);
  }
  std::filesystem::path dir_;
};

}  // namespace iotail::testing
