#include "stats/recorder.h"

#include <cmath>

namespace iotail::stats {

double DirectionSnapshot::StddevNs() const {
  if (ios < 2) return 0;
  const double n = static_cast<double>(ios);
  const double mean = static_cast<double>(sum_ns) / n;
  const double var = (sum_sq_ns - n * mean * mean) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

double DirectionSnapshot::LatStddevNs() const {
  if (lat_ios < 2) return 0;
  const double n = static_cast<double>(lat_ios);
  const double mean = static_cast<double>(lat_sum_ns) / n;
  const double var = (lat_sum_sq_ns - n * mean * mean) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

void DirectionSnapshot::Add(const DirectionSnapshot& other) {
  if (clat.size() < other.clat.size()) clat.resize(other.clat.size(), 0);
  for (size_t i = 0; i < other.clat.size(); ++i) clat[i] += other.clat[i];
  if (lat.size() < other.lat.size()) lat.resize(other.lat.size(), 0);
  for (size_t i = 0; i < other.lat.size(); ++i) lat[i] += other.lat[i];
  ios += other.ios;
  bytes += other.bytes;
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
  sum_ns += other.sum_ns;
  sum_sq_ns += other.sum_sq_ns;
  lat_ios += other.lat_ios;
  lat_min_ns = std::min(lat_min_ns, other.lat_min_ns);
  lat_max_ns = std::max(lat_max_ns, other.lat_max_ns);
  lat_sum_ns += other.lat_sum_ns;
  lat_sum_sq_ns += other.lat_sum_sq_ns;
}

uint64_t RecorderSnapshot::TotalErrors() const {
  uint64_t total = 0;
  for (uint64_t e : errors) total += e;
  return total;
}

void RecorderSnapshot::Add(const RecorderSnapshot& other) {
  for (int d = 0; d < kDirectionCount; ++d) dirs[d].Add(other.dirs[d]);
  schedule.issued += other.schedule.issued;
  schedule.late += other.schedule.late;
  schedule.max_lag_ns = std::max(schedule.max_lag_ns, other.schedule.max_lag_ns);
  schedule.sum_lag_ns += other.schedule.sum_lag_ns;
  for (size_t e = 0; e < errors.size(); ++e) errors[e] += other.errors[e];
}

void Recorder::Snapshot(RecorderSnapshot& out) const {
  for (int d = 0; d < kDirectionCount; ++d) {
    const Dir& dir = dirs_[d];
    DirectionSnapshot& s = out.dirs[d];
    // Scalars first, then buckets: on x86-64 (ordered stores and loads) the histogram total of one
    // snapshot is then >= ios. Exact once the writer has stopped.
    s.ios = Load(dir.ios);
    s.bytes = Load(dir.bytes);
    s.min_ns = Load(dir.min_ns);
    s.max_ns = Load(dir.max_ns);
    s.sum_ns = Load(dir.sum_ns);
    s.sum_sq_ns = dir.sum_sq_ns.load(std::memory_order_relaxed);
    s.lat_ios = Load(dir.lat_ios);
    s.lat_min_ns = Load(dir.lat_min_ns);
    s.lat_max_ns = Load(dir.lat_max_ns);
    s.lat_sum_ns = Load(dir.lat_sum_ns);
    s.lat_sum_sq_ns = dir.lat_sum_sq_ns.load(std::memory_order_relaxed);
    s.clat.resize(kFio3Buckets);
    for (uint32_t i = 0; i < kFio3Buckets; ++i) s.clat[i] = Load(dir.clat[i]);
    if (Load(dir.lat_used) != 0) {
      s.lat.resize(kFio3Buckets);
      for (uint32_t i = 0; i < kFio3Buckets; ++i) s.lat[i] = Load(dir.lat[i]);
    } else {
      s.lat.clear();
    }
  }
  out.schedule.issued = Load(schedule_.issued);
  out.schedule.late = Load(schedule_.late);
  out.schedule.max_lag_ns = Load(schedule_.max_lag_ns);
  out.schedule.sum_lag_ns = Load(schedule_.sum_lag_ns);
  for (size_t e = 0; e < errors_.size(); ++e) out.errors[e] = Load(errors_[e]);
}

namespace {

void Subtract(std::vector<uint64_t>& out, const std::vector<uint64_t>& now,
              const std::vector<uint64_t>& before) {
  out.resize(now.size());
  for (size_t i = 0; i < now.size(); ++i) out[i] = now[i] - (i < before.size() ? before[i] : 0);
}

}  // namespace

void RecorderSampler::Next(RecorderSnapshot& delta) {
  recorder_->Snapshot(current_);
  for (int d = 0; d < kDirectionCount; ++d) {
    const DirectionSnapshot& now = current_.dirs[d];
    const DirectionSnapshot& before = previous_.dirs[d];
    DirectionSnapshot& out = delta.dirs[d];
    Subtract(out.clat, now.clat, before.clat);
    Subtract(out.lat, now.lat, before.lat);
    out.ios = now.ios - before.ios;
    out.bytes = now.bytes - before.bytes;
    out.sum_ns = now.sum_ns - before.sum_ns;
    out.sum_sq_ns = now.sum_sq_ns - before.sum_sq_ns;
    out.min_ns = now.min_ns;
    out.max_ns = now.max_ns;
    out.lat_ios = now.lat_ios - before.lat_ios;
    out.lat_sum_ns = now.lat_sum_ns - before.lat_sum_ns;
    out.lat_sum_sq_ns = now.lat_sum_sq_ns - before.lat_sum_sq_ns;
    out.lat_min_ns = now.lat_min_ns;
    out.lat_max_ns = now.lat_max_ns;
  }
  delta.schedule.issued = current_.schedule.issued - previous_.schedule.issued;
  delta.schedule.late = current_.schedule.late - previous_.schedule.late;
  delta.schedule.sum_lag_ns = current_.schedule.sum_lag_ns - previous_.schedule.sum_lag_ns;
  delta.schedule.max_lag_ns = current_.schedule.max_lag_ns;
  for (size_t e = 0; e < delta.errors.size(); ++e) {
    delta.errors[e] = current_.errors[e] - previous_.errors[e];
  }
  std::swap(previous_, current_);
}

}  // namespace iotail::stats
