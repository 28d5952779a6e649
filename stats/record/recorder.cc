#include "stats/record/recorder.h"

#include <algorithm>
#include <cmath>

namespace iotail::stats {

double LatencySnapshot::StddevNs() const {
  if (n < 2) return 0;
  const double count = static_cast<double>(n);
  const double mean = static_cast<double>(sum_ns) / count;
  const double var = (sum_sq_ns - count * mean * mean) / (count - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

void LatencySnapshot::Add(const LatencySnapshot& other) {
  if (hist.size() < other.hist.size()) hist.resize(other.hist.size(), 0);
  for (size_t i = 0; i < other.hist.size(); ++i) hist[i] += other.hist[i];
  n += other.n;
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
  sum_ns += other.sum_ns;
  sum_sq_ns += other.sum_sq_ns;
}

void DirectionSnapshot::Add(const DirectionSnapshot& other) {
  clat.Add(other.clat);
  slat.Add(other.slat);
  lat.Add(other.lat);
  olat.Add(other.olat);
  recorded.Add(other.recorded);
  ios += other.ios;
  bytes += other.bytes;
  // As fio's sum of clat_prio lists: by priority value, new ones appended.
  for (const PrioLatency& p : other.prios) {
    auto it = std::find_if(prios.begin(), prios.end(),
                           [&](const PrioLatency& q) { return q.ioprio == p.ioprio; });
    if (it == prios.end()) {
      prios.push_back({p.ioprio, {}});
      it = prios.end() - 1;
    }
    it->lat.Add(p.lat);
  }
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
  schedule.lateness.Add(other.schedule.lateness);
  for (size_t e = 0; e < errors.size(); ++e) errors[e] += other.errors[e];
  in_flight += other.in_flight;
}

namespace {

void SubtractLatency(LatencySnapshot& l, const LatencySnapshot& before) {
  for (size_t i = 0; i < l.hist.size() && i < before.hist.size(); ++i) l.hist[i] -= before.hist[i];
  l.n -= before.n;
  l.sum_ns -= before.sum_ns;
  l.sum_sq_ns -= before.sum_sq_ns;
}

}  // namespace

void RecorderSnapshot::SubtractCounts(const RecorderSnapshot& before) {
  for (size_t d = 0; d < dirs.size(); ++d) {
    DirectionSnapshot& s = dirs[d];
    const DirectionSnapshot& b = before.dirs[d];
    s.ios -= b.ios;
    s.bytes -= b.bytes;
    SubtractLatency(s.clat, b.clat);
    SubtractLatency(s.slat, b.slat);
    SubtractLatency(s.lat, b.lat);
    SubtractLatency(s.olat, b.olat);
    SubtractLatency(s.recorded, b.recorded);
    for (size_t i = 0; i < s.prios.size() && i < b.prios.size(); ++i) {
      SubtractLatency(s.prios[i].lat, b.prios[i].lat);
    }
  }
  schedule.issued -= before.schedule.issued;
  schedule.late -= before.schedule.late;
  schedule.sum_lag_ns -= before.schedule.sum_lag_ns;
  SubtractLatency(schedule.lateness, before.schedule.lateness);
}

void RecorderSnapshot::ReserveBuckets() {
  for (DirectionSnapshot& s : dirs) {
    for (LatencySnapshot* l : {&s.clat, &s.slat, &s.lat, &s.olat, &s.recorded}) {
      l->hist.reserve(kRecordBuckets);
    }
    for (PrioLatency& p : s.prios) p.lat.hist.reserve(kRecordBuckets);
  }
}

void Recorder::Latency::Snapshot(LatencySnapshot& s) const {
  // Scalars first, then buckets: on x86-64 (ordered stores and loads) the histogram total of one
  // snapshot is then >= n. Exact once the writer has stopped.
  s.n = Load(n);
  s.min_ns = Load(min_ns);
  s.max_ns = Load(max_ns);
  s.sum_ns = Load(sum_ns);
  s.sum_sq_ns = sum_sq_ns.load(std::memory_order_relaxed);
  if (Load(used) != 0) {
    s.hist.resize(kRecordBuckets);
    for (uint32_t i = 0; i < kRecordBuckets; ++i) s.hist[i] = Load(hist[i]);
  } else {
    s.hist.clear();
  }
}

void Recorder::Snapshot(RecorderSnapshot& out) const {
  for (int d = 0; d < kDirectionCount; ++d) {
    const Dir& dir = dirs_[d];
    DirectionSnapshot& s = out.dirs[d];
    s.ios = Load(dir.ios);
    s.bytes = Load(dir.bytes);
    dir.clat.Snapshot(s.clat);
    dir.slat.Snapshot(s.slat);
    dir.lat.Snapshot(s.lat);
    dir.olat.Snapshot(s.olat);
    if (recorded_) {
      (*recorded_)[static_cast<size_t>(d)].Snapshot(s.recorded);
    } else {
      s.recorded = {};
    }
    // clat always has its buckets (the logs write every direction, even idle ones).
    if (s.clat.hist.empty()) s.clat.hist.assign(kRecordBuckets, 0);
    const Prios& p = prios_[static_cast<size_t>(d)];
    s.prios.resize(p.values.size());
    for (size_t i = 0; i < p.values.size(); ++i) {
      s.prios[i].ioprio = p.values[i];
      p.lat[i].Snapshot(s.prios[i].lat);
    }
  }
  out.schedule.issued = Load(schedule_.issued);
  out.schedule.late = Load(schedule_.late);
  out.schedule.max_lag_ns = Load(schedule_.max_lag_ns);
  out.schedule.sum_lag_ns = Load(schedule_.sum_lag_ns);
  schedule_.lateness.Snapshot(out.schedule.lateness);
  for (size_t e = 0; e < errors_.size(); ++e) out.errors[e] = Load(errors_[e]);
  out.in_flight = Load(in_flight_);
}

void Recorder::SetPriorities(Direction d, std::span<const uint16_t> ioprios) {
  Prios& p = prios_[DirectionIndex(d)];
  p.values.assign(ioprios.begin(), ioprios.end());
  p.lat = std::make_unique<Latency[]>(ioprios.size());
}

namespace {

// now - before, for counters that only grow; min/max are those of `now` (the whole run).
void Subtract(LatencySnapshot& out, const LatencySnapshot& now, const LatencySnapshot& before) {
  out.hist.resize(now.hist.size());
  for (size_t i = 0; i < now.hist.size(); ++i) {
    out.hist[i] = now.hist[i] - (i < before.hist.size() ? before.hist[i] : 0);
  }
  out.n = now.n - before.n;
  out.sum_ns = now.sum_ns - before.sum_ns;
  out.sum_sq_ns = now.sum_sq_ns - before.sum_sq_ns;
  out.min_ns = now.min_ns;
  out.max_ns = now.max_ns;
}

}  // namespace

void RecorderSampler::Next(RecorderSnapshot& delta) {
  recorder_->Snapshot(current_);
  for (int d = 0; d < kDirectionCount; ++d) {
    const DirectionSnapshot& now = current_.dirs[d];
    const DirectionSnapshot& before = previous_.dirs[d];
    DirectionSnapshot& out = delta.dirs[d];
    Subtract(out.clat, now.clat, before.clat);
    Subtract(out.slat, now.slat, before.slat);
    Subtract(out.lat, now.lat, before.lat);
    Subtract(out.olat, now.olat, before.olat);
    Subtract(out.recorded, now.recorded, before.recorded);
    out.ios = now.ios - before.ios;
    out.bytes = now.bytes - before.bytes;
  }
  delta.schedule.issued = current_.schedule.issued - previous_.schedule.issued;
  delta.schedule.late = current_.schedule.late - previous_.schedule.late;
  delta.schedule.sum_lag_ns = current_.schedule.sum_lag_ns - previous_.schedule.sum_lag_ns;
  delta.schedule.max_lag_ns = current_.schedule.max_lag_ns;
  Subtract(delta.schedule.lateness, current_.schedule.lateness, previous_.schedule.lateness);
  for (size_t e = 0; e < delta.errors.size(); ++e) {
    delta.errors[e] = current_.errors[e] - previous_.errors[e];
  }
  delta.in_flight = current_.in_flight;  // a level
  std::swap(previous_, current_);
}

}  // namespace iotail::stats
