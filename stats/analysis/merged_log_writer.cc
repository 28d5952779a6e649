#include "stats/analysis/merged_log_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <system_error>

#include "stats/logs/hist_log_writer.h"

namespace iotail::stats {

MergedLogWriter::MergedLogWriter(std::FILE* out, std::string name, const Merger& merger,
                                 MergedDirections directions)
    : out_(out),
      name_(std::move(name)),
      directions_(directions),
      buckets_(merger.layout().size()),
      combined_(buckets_),
      columns_(buckets_) {
  for (int d = 0; d < kDirectionCount; ++d) {
    present_[d] = merger.HasDirection(static_cast<Direction>(d));
  }
  for (Running& r : running_) {
    r.exact.assign(buckets_, 0.0);
    r.emitted.assign(buckets_, 0);
  }
}

void MergedLogWriter::Write(const MergedQuantum& quantum) {
  if (directions_ == MergedDirections::kCombined) {
    std::fill(combined_.begin(), combined_.end(), 0.0);
    double bytes = 0, smallest_bs = 0;
    for (int d = 0; d < kDirectionCount; ++d) {
      for (size_t i = 0; i < buckets_; ++i) combined_[i] += quantum.counts[d][i];
      bytes += quantum.bytes[d];
      smallest_bs = Merger::SmallestBs(smallest_bs, quantum.smallest_bs[d]);
    }
    WriteLine(quantum.end_ms, Direction::kRead, combined_, bytes, smallest_bs);
    return;
  }
  for (int d = 0; d < kDirectionCount; ++d) {
    if (present_[d]) {
      WriteLine(quantum.end_ms, static_cast<Direction>(d), quantum.counts[d], quantum.bytes[d],
                quantum.smallest_bs[d]);
    }
  }
}

void MergedLogWriter::WriteLine(int64_t time_ms, Direction dir, std::span<const double> counts,
                                double bytes, double smallest_bs) {
  Running& r = running_[DirectionIndex(dir)];
  double ios = 0;
  for (size_t i = 0; i < buckets_; ++i) {
    ios += counts[i];
    r.exact[i] += counts[i];
    const auto target = static_cast<uint64_t>(std::llround(r.exact[i]));
    const uint64_t n = target > r.emitted[i] ? target - r.emitted[i] : 0;
    r.emitted[i] += n;
    columns_[i] = n;
  }
  line_.clear();
  // The quantum's mean bytes per I/O, as iotail's logs carry it; without I/O, the smallest bs of
  // its lines, as iotail's logs write the job's smallest block size in an idle interval (0: none).
  const auto bs = ios > 0 && bytes > 0 ? static_cast<uint64_t>(std::llround(bytes / ios))
                  : ios > 0            ? 0
                                       : static_cast<uint64_t>(smallest_bs);
  FormatHistLogColumns(line_, time_ms, dir, bs, columns_);
  if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) {
    throw std::system_error(errno, std::generic_category(), "write '" + name_ + "'");
  }
}

void MergedLogWriter::Flush() {
  if (std::fflush(out_) != 0) {
    throw std::system_error(errno, std::generic_category(), "write '" + name_ + "'");
  }
}

}  // namespace iotail::stats
