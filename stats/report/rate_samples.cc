#include "stats/report/rate_samples.h"

namespace iotail::stats {

RateSampleSink::RateSampleSink(std::vector<size_t> entry_of_worker, size_t entries,
                               uint32_t period_ms, size_t first_delta)
    : entry_of_worker_(std::move(entry_of_worker)),
      first_delta_(first_delta),
      period_ns_(uint64_t{period_ms} * 1'000'000u),
      samples_(entries),
      active_(entries),
      totals_(entries) {}

void RateSampleSink::OnInterval(const IntervalInfo& info,
                                std::span<const RecorderSnapshot> deltas) {
  const uint64_t length = info.end_ns - info.start_ns;
  if (length == 0 || 2 * length < period_ns_) return;  // a sliver at the start or the end
  const double seconds = static_cast<double>(length) / 1e9;
  auto& totals = totals_;
  for (auto& t : totals) t.fill(0);
  for (size_t w = 0; w < entry_of_worker_.size() && first_delta_ + w < deltas.size(); ++w) {
    const size_t e = entry_of_worker_[w];
    for (int d = 0; d < kDirectionCount; ++d) {
      totals[e][2 * d] += deltas[first_delta_ + w].dirs[d].ios;
      totals[e][2 * d + 1] += deltas[first_delta_ + w].dirs[d].bytes;
    }
  }
  for (size_t e = 0; e < samples_.size(); ++e) {
    for (int d = 0; d < kDirectionCount; ++d) {
      const uint64_t ios = totals[e][2 * d], bytes = totals[e][2 * d + 1];
      if (ios != 0) active_[e][d] = true;
      if (!active_[e][d]) continue;
      samples_[e].iops[d].Add(static_cast<double>(ios) / seconds);
      samples_[e].bw_kib[d].Add(static_cast<double>(bytes) / 1024 / seconds);
    }
  }
}

}  // namespace iotail::stats
