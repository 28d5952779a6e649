// Notes of the fio-histo-log-pctiles emulation: the inputs on which fio's script would crash and
// iotail gives a documented result instead (see fio_pctiles_compat.h). Each kind is noted while
// the logs are parsed and aligned, and reported once, after the output, on the error stream.
//
// Internal to stats/compat. A Notes is a small value: each thread fills its own, and the caller
// merges them in a fixed order. Not thread-safe.
#pragma once

#include <bitset>
#include <ostream>

namespace iotail::stats::fio_compat {

enum class Note {
  kTrim,        // trim records (ddir 2)
  kSegments,    // time going backwards (per_job_logs=0)
  kCoarse,      // a coarse log (log_hist_coarseness)
  kZeroLength,  // zero-length intervals (duplicate time stamps)
  kFarNext,     // the next record of a direction more than 3 lines ahead
  kBelowRange,  // records far before the test start
  kUnreached,   // a percentile not reached by rounding
  kZeroStep,    // a zero percentage step
};
inline constexpr int kNoteCount = 8;

class Notes {
 public:
  void Add(Note note) { seen_.set(static_cast<size_t>(note)); }
  bool Has(Note note) const { return seen_.test(static_cast<size_t>(note)); }
  void Merge(const Notes& other) { seen_ |= other.seen_; }
  // One line per note seen, in the order of Note, each saying what the script would have done.
  void Print(std::ostream& err) const;

 private:
  std::bitset<kNoteCount> seen_;
};

}  // namespace iotail::stats::fio_compat
