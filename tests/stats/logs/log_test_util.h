// Helpers of the histogram-log tests (reader, line parser, merger): a log line in fio's exact
// format, every record of a reader, and the LogFormatError a log string raises. Header-only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "stats/core/histogram_layout.h"
#include "stats/logs/log_reader.h"

namespace iotail::stats {

// One log line in fio's exact format, with `columns` buckets, the given ones non-zero.
inline std::string Line(int64_t time, int ddir, const std::map<size_t, uint64_t>& counts,
                        size_t columns = kFio3Buckets, const char* eol = "\n") {
  std::string line = std::to_string(time) + ", " + std::to_string(ddir) + ", 4096";
  for (size_t i = 0; i < columns; ++i) {
    const auto it = counts.find(i);
    line += ", " + std::to_string(it == counts.end() ? 0 : it->second);
  }
  return line + eol;
}

// Every record left in the reader; with `counts`, a copy of each record's counts too.
inline std::vector<LogRecord> ReadAll(LogReader& reader,
                                      std::vector<std::vector<uint64_t>>* counts) {
  std::vector<LogRecord> records;
  while (reader.Next()) {
    records.push_back(reader.record());
    if (counts) counts->emplace_back(reader.record().counts.begin(), reader.record().counts.end());
  }
  return records;
}

// Reads the string as "bad.log" and returns the LogFormatError's message, or "" if none was
// thrown.
inline std::string ErrorOf(const std::string& data, LogReaderOptions options = {}) {
  auto reader = LogReader::FromString("bad.log", data, options);
  try {
    while (reader.Next()) {
    }
  } catch (const LogFormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace iotail::stats
