// The error types shared by every layer.
//
// UsageError: bad user input (an option, a job spec, a percentile list); the message names the
// option and what was expected. Commands exit with status 2.
// LogFormatError: a histogram log that cannot be read; the message names the file and line.
// Commands exit with status 2.
// OS failures use std::system_error (exit status 1).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace iotail::stats {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Setup stopped by a signal (SIGINT/SIGTERM) before the run began, e.g. while laying out a file;
// everything it had created is removed or restored.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LogFormatError : public std::runtime_error {
 public:
  LogFormatError(std::string file, uint64_t line, const std::string& what)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + what),
        file_(std::move(file)),
        line_(line) {}
  const std::string& file() const { return file_; }
  uint64_t line() const { return line_; }

 private:
  std::string file_;
  uint64_t line_;
};

}  // namespace iotail::stats
