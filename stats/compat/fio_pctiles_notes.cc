#include "stats/compat/fio_pctiles_notes.h"

#include <array>
#include <string_view>

namespace iotail::stats::fio_compat {
namespace {

// Indexed by Note.
constexpr std::array<std::string_view, kNoteCount> kMessages = {
    "trim records (ddir 2) counted like reads and writes (the script stops: invalid I/O "
    "direction)",
    "time goes backwards (per_job_logs=0): each job read as its own log (the script stops: "
    "timestamp decreased)",
    "coarse log (log_hist_coarseness) read with merged buckets (the script stops: wrong bucket "
    "count)",
    "zero-length intervals (duplicate time stamps) counted whole in their quantum (the script: "
    "ZeroDivisionError)",
    "next record of a direction more than 3 lines ahead (the script: AssertionError)",
    "records far before the test start dropped (the script: IndexError)",
    "a percentile not reached by rounding, taken in the last non-empty bucket (the script: "
    "AssertionError)",
    "a zero percentage step, lower bucket edge used (the script: ZeroDivisionError)",
};

}  // namespace

void Notes::Print(std::ostream& err) const {
  for (int i = 0; i < kNoteCount; ++i) {
    if (seen_.test(static_cast<size_t>(i))) {
      err << "fio-histo-log-pctiles compat: note: " << kMessages[static_cast<size_t>(i)] << '\n';
    }
  }
}

}  // namespace iotail::stats::fio_compat
