// libFuzzer target for the analysis path behind `iotail pctiles` and `iotail merge`: arbitrary
// bytes, as a log file, go through ScanLogSegments, the Merger (aligner included), the percentile
// and SLC computation of every quantum and the merged-log writer. Each must end with a result or
// a LogFormatError/UsageError; never a crash, a sanitizer report, or unbounded work (libFuzzer's
// -timeout catches a hang). The first byte picks the options (time quantum, client sums,
// combined directions, or instead: a merge split by time against one thread's); the rest is the
// log, held in an anonymous memory file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stats/analysis/merged_log_writer.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/core/latency_figures.h"

using namespace iotail::stats;

namespace {

// A merge's whole output, or its error.
struct Outcome {
  std::vector<std::vector<double>> quanta;  // start, then each direction's counts and bytes
  std::vector<uint64_t> totals;
  uint64_t records = 0;
  std::string error;
  bool split = false;
  bool operator==(const Outcome& o) const {
    return quanta == o.quanta && totals == o.totals && records == o.records && error == o.error;
  }
};

Outcome Merge(const std::string& path, MergeOptions options) {
  Outcome out;
  try {
    Merger merger({path}, options);
    merger.Run([&](const MergedQuantum& q) {
      std::vector<double> row = {static_cast<double>(q.start_ms)};
      for (int d = 0; d < kDirectionCount; ++d) {
        row.insert(row.end(), q.counts[d].begin(), q.counts[d].end());
        row.push_back(q.bytes[d]);
      }
      out.quanta.push_back(std::move(row));
    });
    for (int d = 0; d < kDirectionCount && !merger.Empty(); ++d) {
      const auto counts = merger.Total(static_cast<Direction>(d)).counts();
      out.totals.insert(out.totals.end(), counts.begin(), counts.end());
    }
    out.records = merger.records();
    out.split = merger.split_by_time();
  } catch (const LogFormatError& e) {
    out.error = e.what();
  } catch (const UsageError& e) {
    out.error = e.what();
  }
  return out;
}

// The first window split by time between threads (in pieces of any size) gives one thread's
// merge, bit for bit, or its error: 1 s quanta, so that a log of a few records spans several.
void SplitMatchesOneThread(const std::string& path, bool client_sums) {
  MergeOptions options;
  options.quantum_ms = 1000;
  options.undo_client_sums = client_sums;
  options.memory_budget = size_t{64} << 20;  // windows of a few hundred quanta: a split needs one
  options.threads = 1;
  const Outcome one = Merge(path, options);
  options.threads = 3;
  options.split_min_piece_bytes = 1;
  if (!(Merge(path, options) == one)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const int fd = memfd_create("merge_fuzz.log", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  static std::FILE* const sink = std::fopen("/dev/null", "w");
  if (fd < 0 || sink == nullptr) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data + 1, size - 1, 0) != static_cast<ssize_t>(size - 1))
    std::abort();
  const uint8_t flags = data[0];
  if (flags & 8) {
    SplitMatchesOneThread(path, (flags & 2) != 0);
    return 0;
  }
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
