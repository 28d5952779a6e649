// Helpers shared by the tests of every layer: a scratch directory per test, a whole file read
// into a string, text split into lines or fields, a check that text holds several needles.
// Header-only; each test owns the directories and strings
// it gets.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
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

// The fields of `text` between the occurrences of `separator` (", " for a histogram-log line, ";"
// for a terse line): n separators give n + 1 fields, empty ones included.
inline std::vector<std::string> SplitOn(std::string_view text, std::string_view separator) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t at = text.find(separator, start);
    fields.emplace_back(text.substr(start, at - start));
    if (at == std::string_view::npos) return fields;
    start = at + separator.size();
  }
}

// Success when `text` contains every one of `needles`; else a failure naming each missing one,
// with the text. For EXPECT_TRUE(ContainsAll(r.err, {"--rate", "expected"})).
inline ::testing::AssertionResult ContainsAll(std::string_view text,
                                              std::initializer_list<std::string_view> needles) {
  std::string missing;
  for (std::string_view needle : needles) {
    if (text.find(needle) == std::string_view::npos) missing += " '" + std::string(needle) + "'";
  }
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "missing" << missing << " in:\n" << text;
}

}  // namespace iotail::testing
