// libFuzzer target for LogReader::FromString: arbitrary bytes must either read as records or fail
// with LogFormatError, never crash, hang or trip a sanitizer. The first byte picks the reader's
// options (client-sum undo, one direction, a byte range), the rest is the log.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"

using iotail::stats::Direction;
using iotail::stats::LogFormatError;
using iotail::stats::LogReader;
using iotail::stats::LogReaderOptions;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string log(reinterpret_cast<const char*>(data + 1), size - 1);
  LogReaderOptions options;
  options.undo_client_sums = (flags & 1) != 0;
  if (flags & 2) options.only_direction = static_cast<Direction>((flags >> 2) % 3);
  if (flags & 16) {
    // Start at a line boundary, as ScanLogSegments would give.
    const size_t nl = log.find('\n');
    if (nl != std::string::npos) {
      options.begin_offset = nl + 1;
      options.first_line = 2;
    }
  }
  if (flags & 32) options.end_offset = log.size() / 2;
  LogReader reader = LogReader::FromString("fuzz.log", std::move(log), options);
  uint64_t last_line = 0;
  try {
    while (reader.Next()) {
      const auto& r = reader.record();
      if (!reader.layout() || r.counts.size() != reader.layout()->size()) std::abort();
      if (r.line <= last_line) std::abort();
      if (static_cast<int>(r.direction) > 2 || r.end_ms < 0) std::abort();
      if (options.only_direction && r.direction != *options.only_direction) std::abort();
      last_line = r.line;
      uint64_t sum = 0;
      for (uint64_t c : r.counts) sum += c;  // touch every count
      if (sum == 1 && r.counts.empty()) std::abort();
    }
  } catch (const LogFormatError& e) {
    if (e.file() != "fuzz.log") std::abort();
  }
  return 0;
}
