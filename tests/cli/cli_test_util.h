// Helpers for end-to-end tests of the iotail binary: running the built binary (IOTAIL_BINARY)
// with its standard output and error captured, command lines it must refuse; and those of
// tests/test_util.h (scratch directories, files, lines).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>

#include "tests/test_util.h"

namespace iotail::testing {

struct CommandResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// Runs a shell command and captures its standard output (the command's own redirections apply;
// err stays empty).
inline CommandResult Capture(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 65536> buffer;
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    result.out.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Runs a shell command; stdout is captured, stderr goes through a file in `scratch`.
inline CommandResult RunShell(const std::string& command, const std::filesystem::path& scratch) {
  const std::string err_path = (scratch / "stderr").string();
  CommandResult result = Capture("{ " + command + " ; } 2>" + err_path);
  std::ifstream err(err_path);
  result.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return result;
}

// Runs `iotail ARGS` (ARGS quoted by the caller for the shell).
inline CommandResult RunIotail(const std::string& args, const std::filesystem::path& scratch) {
  return RunShell(std::string(IOTAIL_BINARY) + " " + args, scratch);
}

// A test with a scratch directory of its own, dir_ (made by SetUp and named after the test, removed
// with all it holds by TearDown); `iotail ARGS` run there, and a directory per tool in it (fio's
// and iotail's runs of one job side by side).
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeScratchDir("iotail"); }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  CommandResult Iotail(const std::string& args) { return RunIotail(args, dir_); }
  // DIR/TOOL, made if missing.
  std::filesystem::path ToolDir(const std::string& tool) const {
    std::filesystem::create_directories(dir_ / tool);
    return dir_ / tool;
  }

  std::filesystem::path dir_;
};

// A command line that `iotail run` must refuse with exit status 2, naming `needle` (the option) on
// stderr.
struct RefusedRun {
  std::string args;
  std::string needle;
};

// Runs `iotail run ARGS` for each case (in `scratch`) and expects it refused as the case says.
inline void ExpectRefused(std::initializer_list<RefusedRun> cases,
                          const std::filesystem::path& scratch) {
  for (const RefusedRun& c : cases) {
    const CommandResult r = RunIotail("run " + c.args, scratch);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\n" << r.err;
  }
}

// Waits up to `seconds` for `file` to contain `text`.
inline bool WaitForText(const std::filesystem::path& file, const std::string& text,
                        double seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace iotail::testing
