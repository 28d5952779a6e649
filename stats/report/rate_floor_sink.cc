#include "stats/report/rate_floor_sink.h"

#include <fmt/format.h>

namespace iotail::stats {

void RateFloorSink::OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) {
  if (!shortfall_.empty() || info.final || info.end_ns - info.start_ns < period_ns_) return;
  const double seconds = static_cast<double>(info.end_ns - info.start_ns) / 1e9;
  for (const RateFloor& f : floors_) {
    for (int d = 0; d < 2; ++d) {
      const double floor_iops = f.iops[d] * static_cast<double>(f.workers);
      const double floor_bw = f.bytes_per_s[d] * static_cast<double>(f.workers);
      if (floor_iops <= 0 && floor_bw <= 0) continue;
      uint64_t ios = 0, bytes = 0;
      for (size_t w = f.first_worker; w < f.first_worker + f.workers && w < deltas.size(); ++w) {
        ios += deltas[w].dirs[static_cast<size_t>(d)].ios;
        bytes += deltas[w].dirs[static_cast<size_t>(d)].bytes;
      }
      const double iops = static_cast<double>(ios) / seconds;
      const double bw = static_cast<double>(bytes) / seconds;
      const char* dir = d == 0 ? "reads" : "writes";
      if (floor_iops > 0 && iops < floor_iops) {
        shortfall_ =
            fmt::format("job '{}': {} at {:.0f} IOPS, below rate_iops_min {:.0f} ({} x {:.0f})",
                        f.job, dir, iops, floor_iops, f.workers, f.iops[d]);
      } else if (floor_bw > 0 && bw < floor_bw) {
        shortfall_ = fmt::format(
            "job '{}': {} at {:.1f} MiB/s, below rate_min {:.1f} MiB/s ({} x {:.1f})", f.job, dir,
            bw / (1 << 20), floor_bw / (1 << 20), f.workers, f.bytes_per_s[d] / (1 << 20));
      }
      if (!shortfall_.empty()) {
        if (stop_ != nullptr) stop_->store(true);
        return;
      }
    }
  }
}

}  // namespace iotail::stats
