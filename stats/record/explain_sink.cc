#include "stats/record/explain_sink.h"

#include <algorithm>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

void AddSample(LatencySnapshot& lat, uint64_t ns) {
  if (lat.hist.empty()) lat.hist.assign(kRecordBuckets, 0);
  ++lat.hist[RecordBucketIndex(ns)];
  ++lat.n;
  lat.min_ns = std::min(lat.min_ns, ns);
  lat.max_ns = std::max(lat.max_ns, ns);
  lat.sum_ns += ns;
  lat.sum_sq_ns += static_cast<double>(ns) * static_cast<double>(ns);
}

void ExplainDirection::Add(const ExplainDirection& other) {
  for (size_t s = 0; s < kStageCount; ++s) stages[s].Add(other.stages[s]);
  joined += other.joined;
  not_joined += other.not_joined;
  split += other.split;
  latency_sum_ns += other.latency_sum_ns;
}

void ExplainTotals::Add(const ExplainTotals& other) {
  for (int d = 0; d < kDirectionCount; ++d) dirs[d].Add(other.dirs[d]);
  requests_unmatched += other.requests_unmatched;
  records_dropped += other.records_dropped;
  own_stages = own_stages || other.own_stages;
}

bool ExplainTotals::Empty() const {
  for (const ExplainDirection& d : dirs) {
    if (d.joined != 0 || d.not_joined != 0) return false;
  }
  return requests_unmatched == 0 && records_dropped == 0;
}

}  // namespace iotail::stats
