// FioPctilesCompat: an exact emulation of fio's `fio-histo-log-pctiles.py` (fio 3.x, as shipped in
// Debian's fio 3.33 package), for `iotail pctiles --compat fio-histo-log-pctiles`.
//
// On every input the script accepts, RunFioPctilesCompat writes the same stdout text as the script
// (preamble, header, one row per time quantum, the same floating-point numbers, bit for bit: the
// same operations in the same order, and Python's float repr), and returns the script's exit
// status. The script's semantics are kept, faults included:
// - each log line is taken to cover [its own time, the next time of the same direction], i.e. the
//   end time is read as a start; the last record of a direction runs to the end of the last quantum
//   (in whole seconds of the test start); consecutive lines with the same time and direction are
//   dropped except the first; reads and writes (and files) are added together;
// - start of a log: 0 if its first time is below 1,000,000, else first - --log-hist-msec, else
//   first - (second - first); test start = max of the starts, end = min of the last times;
// - records before the test start land in Python's negative list indices (the last quanta);
// - percentiles trigger at the first bucket whose cumulative percentage is strictly above p (p =
// 100:
//   at or above 99.9999), interpolated linearly inside the bucket from the previous cumulative
//   percentage; unsorted or duplicate percentile lists behave as in the script.
// Errors the script reports itself (a non-integer, negative value, too few numbers, ddir above 2,
// block size above 2^24, a wrong bucket count, no records, no start estimate) are printed as the
// script prints them (`ERROR: ...` on stdout, exit status 1).
//
// Inputs on which the script crashes get a documented, sensible result instead, with a note on
// `err` saying what the script would have done:
// - trim lines (ddir 2; script: "invalid I/O direction"): counted like reads and writes, with their
//   own chain of end times;
// - per_job_logs=0 files (script: "timestamp in column 1 decreased"): a time going backwards in a
//   direction starts a new segment, and each segment is treated as a separate log file;
// - coarse logs (log_hist_coarseness c; script: "N buckets per interval but M expected"): a column
//   count of (buckets per interval) >> c is read with buckets spanning 2^c fine buckets; logs of
//   different coarseness are summed at the coarsest one;
// - zero-length intervals from duplicate-timestamp bursts of interleaved directions (script:
//   ZeroDivisionError): the record's counts go with weight 1 into the quantum holding its time;
// - a record whose next same-direction record is more than 3 lines ahead (script: AssertionError):
//   the next same-direction record is searched for without limit;
// - a quantum index below Python's negative-index range (script: IndexError): that part is dropped;
// - a percentile the cumulative sum never passes (script: AssertionError; float rounding) is
//   interpolated in the last non-empty bucket; a zero-width percentage step (ZeroDivisionError)
//   gives the bucket's lower edge;
// - `--output-unit nsec` (script: NameError): values in nanoseconds (microseconds times 1000);
// - no overlap between the logs (script: uncaught exception): message on `err`, exit status 1.
// ValidateFioPctilesCompatOptions rejects with UsageError what the script cannot run at all:
// --time-quantum <= 0 (script: ZeroDivisionError), an --output-unit other than msec/usec/nsec,
// percentiles above 100 or NaN, bucket geometry out of range.
//
// Files are parsed and aligned in parallel (one thread per file, up to `threads`); per-file results
// are added in the order of the file list, so results do not depend on the thread count. Memory:
// the non-zero counts of all logs plus (threads + 1) x quanta x buckets doubles. Not thread-safe
// per call's streams; the functions themselves hold no state.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "stats/compat/python_format.h"

namespace iotail::stats {

enum class FioPctilesUnit { kMsec, kUsec, kNsec };

struct FioPctilesCompatOptions {
  int fio_version = 3;     // --fio-version {2,3}; 2 forces bucket_groups to 19, as the script
  int bucket_groups = 29;  // --bucket-groups
  int bucket_bits = 6;     // --bucket-bits
  std::vector<double> percentiles{0.0, 50.0, 95.0, 99.0, 100.0};  // --percentiles, as given
  int64_t time_quantum_s = 1;                                     // --time-quantum (seconds)
  std::optional<int64_t> log_hist_msec;                           // --log-hist-msec
  FioPctilesUnit output_unit = FioPctilesUnit::kUsec;             // --output-unit
  std::vector<std::string> files;
  unsigned threads = 0;  // 0: one per hardware thread
};

// Parses "msec", "usec" or "nsec"; throws UsageError otherwise.
FioPctilesUnit ParseFioPctilesUnit(std::string_view text);
std::string_view FioPctilesUnitName(FioPctilesUnit unit);

// Throws UsageError for options the script cannot run with (see above).
void ValidateFioPctilesCompatOptions(const FioPctilesCompatOptions& options);

// Runs the emulation; writes the script's stdout to `out` and notes/errors to `err`. Returns 0, or
// 1 where the script stops with an error. Throws UsageError (invalid options) and
// std::system_error (a file that cannot be opened or read).
int RunFioPctilesCompat(const FioPctilesCompatOptions& options, std::ostream& out,
                        std::ostream& err);

}  // namespace iotail::stats
