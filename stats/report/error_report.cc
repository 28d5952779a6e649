#include "stats/report/error_report.h"

#include <fmt/format.h>

#include <cstring>
#include <iterator>

#include "stats/report/run_summary.h"

namespace iotail::stats {

std::string ErrnoName(int err) {
  if (err == kMaxCountedErrno - 1) return "other";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : fmt::format("E{}", err);
}

int FirstErrno(const RecorderSnapshot& t) {
  for (size_t e = 1; e < t.errors.size(); ++e) {
    if (t.errors[e] != 0) return static_cast<int>(e);
  }
  return 0;
}

void AppendErrorsText(std::string& out, const RecorderSnapshot& t) {
  auto o = std::back_inserter(out);
  if (t.TotalErrors() == 0) {
    fmt::format_to(o, "  errors: none\n");
    return;
  }
  fmt::format_to(o, "  errors: {}", t.TotalErrors());
  for (size_t e = 0; e < t.errors.size(); ++e) {
    if (t.errors[e] != 0) fmt::format_to(o, " {}={}", ErrnoName(static_cast<int>(e)), t.errors[e]);
  }
  fmt::format_to(o, "\n");
}

}  // namespace iotail::stats
