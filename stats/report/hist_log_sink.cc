#include "stats/report/hist_log_sink.h"

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

HistLogSink::HistLogSink(HistLogSinkOptions options) : options_(std::move(options)) {
  if (options_.sum) {
    options_.workers = 1;
    options_.first_number = 1;
    options_.first_delta = 0;
  }
  for (int w = options_.first_number; w < options_.first_number + options_.workers; ++w) {
    clat_.push_back(
        std::make_unique<HistLogWriter>(HistLogWriter::LogPath(options_.prefix, options_.kind, w),
                                        options_.coarseness, options_.groups));
    if (options_.lat_logs) {
      lat_.push_back(std::make_unique<HistLogWriter>(HistLogWriter::LatLogPath(options_.prefix, w),
                                                     options_.coarseness, options_.groups));
    }
  }
}

void HistLogSink::OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) {
  if (options_.sum) {
    // Not the I/O path: a cluster's interval, summed on its driver's thread.
    RecorderSnapshot all;
    for (const RecorderSnapshot& d : deltas) all.Add(d);
    deltas = std::span<const RecorderSnapshot>(&all, 1);
    Write(info, deltas);
    return;
  }
  Write(info, deltas);
}

void HistLogSink::Write(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) {
  for (size_t w = 0; options_.first_delta + w < deltas.size() && w < clat_.size(); ++w) {
    for (Direction d : options_.directions) {
      const DirectionSnapshot& dir = deltas[options_.first_delta + w].dirs[DirectionIndex(d)];
      // The bs column: the interval's mean bytes per I/O, so that bytes = I/Os x bs whatever the
      // block sizes (bssplit, bsrange); the job's smallest block size in an idle interval.
      const uint64_t bs =
          dir.ios != 0 ? (dir.bytes + dir.ios / 2) / dir.ios : uint64_t{options_.bs};
      clat_[w]->Write(info.time_ms, d, bs, (dir.*options_.latency).hist);
      if (w < lat_.size()) {
        lat_[w]->Write(info.time_ms, d, bs, dir.olat.hist);
      }
    }
  }
  // Every closed interval reaches the kernel: a run killed with SIGKILL loses only the open one,
  // and a full filesystem shows at once.
  for (auto& log : clat_) log->Flush();
  for (auto& log : lat_) log->Flush();
}

void HistLogSink::Close() {
  for (auto& log : clat_) log->Close();
  for (auto& log : lat_) log->Close();
}

std::vector<std::string> HistLogSink::clat_paths() const {
  std::vector<std::string> out;
  for (const auto& log : clat_) out.push_back(log->path());
  return out;
}

uint64_t HistLogSink::clamped() const {
  uint64_t n = 0;
  for (const auto& log : clat_) n += log->clamped();
  for (const auto& log : lat_) n += log->clamped();
  return n;
}

std::vector<std::string> HistLogSink::lat_paths() const {
  std::vector<std::string> out;
  for (const auto& log : lat_) out.push_back(log->path());
  return out;
}

}  // namespace iotail::stats
