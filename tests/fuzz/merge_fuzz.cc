// libFuzzer target for the analysis path behind `iotail pctiles` and `iotail merge`: arbitrary
// bytes, as a log file, go through ScanLogSegments, the Merger (aligner included), the percentile
// and SLC computation of every quantum and the merged-log writer. Each must end with a result or
// a LogFormatError/UsageError; never a crash, a sanitizer report, or unbounded work (libFuzzer's
// -timeout catches a hang). The first byte picks the options (time quantum, client sums,
// combined directions); the rest is the log, held in an anonymous memory file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "stats/analysis/merged_log_writer.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/core/latency_figures.h"

using namespace iotail::stats;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const int fd = memfd_create("merge_fuzz.log", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  static std::FILE* const sink = std::fopen("/dev/null", "w");
  if (fd < 0 || sink == nullptr) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data + 1, size - 1, 0) != static_cast<ssize_t>(size - 1))
    std::abort();
  const uint8_t flags = data[0];
  MergeOptions options;
  // Quanta of a minute or more keep the walk over a day's gap (the longest a log may hold) short.
  options.quantum_ms = (flags & 1) ? 60'000 : 3'600'000;
  options.undo_client_sums = (flags & 2) != 0;
  options.threads = 1;
  options.memory_budget = size_t{8} << 20;
  try {
    Merger merger({path}, options);
    if (merger.Empty()) return 0;
    MergedLogWriter writer(sink, "fuzz.out", merger,
                           (flags & 4) ? MergedDirections::kCombined : MergedDirections::kEach);
    const double shown[] = {50, 99, 99.9};
    merger.Run([&](const MergedQuantum& q) {
      writer.Write(q);
      for (const auto& counts : q.counts) {
        if (counts.size() != merger.layout().size()) std::abort();
        (void)ComputeLatencyFigures(counts, merger.layout(), shown, SbkSlcPercentiles(),
                                    PercentileMethod::kFio);
      }
    });
    writer.Flush();
  } catch (const LogFormatError&) {
  } catch (const UsageError&) {
  }
  return 0;
}
