// The fio-histo-log-pctiles emulation's input: a histogram log read the way the script's
// parse_hist_file() reads it (same checks in the same order, same error messages), with the
// extensions of fio_pctiles_compat.h: trim records, per_job_logs=0 files split into segments
// (one per job), coarse logs. Counts are kept sparse and already in double, as the script's.
//
// Internal to stats/compat. ParseHistFile is a free function that only writes its `result`, so
// files can be parsed on parallel threads, one ParsedFile each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats/compat/fio_pctiles_notes.h"

namespace iotail::stats::fio_compat {

inline constexpr int kDirections = 3;  // read, write, trim (the script knows only 0 and 1)

// One log as the script sees a file: a file, or one job of a per_job_logs=0 file. Counts are kept
// sparse (non-zero buckets only), already converted to double as Python's float * int does.
struct Segment {
  int coarseness = 0;
  std::vector<int64_t> times;
  std::vector<uint8_t> dirs;
  std::vector<uint32_t> nz_begin{0};  // record k's counts: [nz_begin[k], nz_begin[k + 1])
  std::vector<uint32_t> nz_index;
  std::vector<double> nz_value;
  int64_t start = 0;  // the log's start: 0, first - log_hist_msec or first - (second - first)
  int64_t end = 0;    // its last time
};

struct ParsedFile {
  std::vector<Segment> segments;
  std::string error;  // the script's message (printed after "ERROR: "); empty if none
  Notes notes;
};

// Reads `path` into `result` (empty on entry). An input error the script reports itself is left
// in result.error, the segments read so far unusable. Throws std::system_error when the file
// cannot be opened or read.
void ParseHistFile(const std::string& path, uint32_t buckets_per_interval,
                   std::optional<int64_t> log_hist_msec, ParsedFile& result);

}  // namespace iotail::stats::fio_compat
