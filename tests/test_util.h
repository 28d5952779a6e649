// Helpers shared by the tests of every layer: a scratch directory per test, a whole file read
// into a string, text split into lines. Header-only; each test owns the directories and strings
// it gets.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace iotail::testing {

// A fresh directory under the system temp dir, named after `prefix`, the process and the running
// test (one path component: '/' in parameterised test names becomes '_'). The caller removes it
// (std::filesystem::remove_all) in TearDown.
inline std::filesystem::path MakeScratchDir(std::string_view prefix) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      std::string(prefix) + "_" + std::to_string(::getpid()) + "_" +
      (test ? std::string(test->test_suite_name()) + "." + test->name() : std::string("global"));
  // Parameterised tests are named "Instance/Suite.Test/Param": one directory, not a tree whose
  // parents the caller's remove_all would leave behind.
  for (char& c : name) c = c == '/' ? '_' : c;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole content of `path` (empty if it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The lines of `text`, without their '\n'.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace iotail::testing
