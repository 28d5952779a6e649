#include "stats/record/snapshot_codec.h"

#include <bit>
#include <stdexcept>

namespace iotail::stats {

namespace {

void EncodeLatency(const LatencySnapshot& l, std::vector<uint64_t>& out) {
  out.push_back(l.n);
  out.push_back(l.min_ns);
  out.push_back(l.max_ns);
  out.push_back(l.sum_ns);
  out.push_back(std::bit_cast<uint64_t>(l.sum_sq_ns));
  out.push_back(l.hist.empty() ? 0 : 1);
  if (l.hist.empty()) return;
  const size_t at = out.size();
  out.push_back(0);  // pairs, filled below
  uint64_t pairs = 0;
  for (size_t i = 0; i < l.hist.size(); ++i) {
    if (l.hist[i] == 0) continue;
    out.push_back(i);
    out.push_back(l.hist[i]);
    ++pairs;
  }
  out[at] = pairs;
}

void DecodeLatency(std::span<const uint64_t> in, size_t& pos, LatencySnapshot& l) {
  l.n = DecodeWord(in, pos);
  l.min_ns = DecodeWord(in, pos);
  l.max_ns = DecodeWord(in, pos);
  l.sum_ns = DecodeWord(in, pos);
  l.sum_sq_ns = std::bit_cast<double>(DecodeWord(in, pos));
  l.hist.clear();
  if (DecodeWord(in, pos) == 0) return;
  l.hist.assign(kRecordBuckets, 0);
  const uint64_t pairs = DecodeWord(in, pos);
  if (pairs > kRecordBuckets) throw std::runtime_error("snapshot: too many histogram buckets");
  for (uint64_t k = 0; k < pairs; ++k) {
    const uint64_t i = DecodeWord(in, pos);
    if (i >= kRecordBuckets) throw std::runtime_error("snapshot: bucket index out of range");
    l.hist[i] = DecodeWord(in, pos);
  }
}

}  // namespace

uint64_t DecodeWord(std::span<const uint64_t> in, size_t& pos) {
  if (pos >= in.size()) throw std::runtime_error("snapshot: input ends early");
  return in[pos++];
}

void Encode(const RecorderSnapshot& s, std::vector<uint64_t>& out) {
  for (const DirectionSnapshot& d : s.dirs) {
    out.push_back(d.ios);
    out.push_back(d.bytes);
    EncodeLatency(d.clat, out);
    EncodeLatency(d.slat, out);
    EncodeLatency(d.lat, out);
    EncodeLatency(d.olat, out);
    EncodeLatency(d.recorded, out);
  }
  out.push_back(s.schedule.issued);
  out.push_back(s.schedule.late);
  out.push_back(s.schedule.max_lag_ns);
  out.push_back(s.schedule.sum_lag_ns);
  EncodeLatency(s.schedule.lateness, out);
  out.insert(out.end(), s.errors.begin(), s.errors.end());
  out.push_back(s.in_flight);
}

void Decode(std::span<const uint64_t> in, size_t& pos, RecorderSnapshot& s) {
  for (DirectionSnapshot& d : s.dirs) {
    d.ios = DecodeWord(in, pos);
    d.bytes = DecodeWord(in, pos);
    DecodeLatency(in, pos, d.clat);
    DecodeLatency(in, pos, d.slat);
    DecodeLatency(in, pos, d.lat);
    DecodeLatency(in, pos, d.olat);
    DecodeLatency(in, pos, d.recorded);
  }
  s.schedule.issued = DecodeWord(in, pos);
  s.schedule.late = DecodeWord(in, pos);
  s.schedule.max_lag_ns = DecodeWord(in, pos);
  s.schedule.sum_lag_ns = DecodeWord(in, pos);
  DecodeLatency(in, pos, s.schedule.lateness);
  for (uint64_t& e : s.errors) e = DecodeWord(in, pos);
  s.in_flight = DecodeWord(in, pos);
}

void Encode(const CpuUsage& c, std::vector<uint64_t>& out) {
  out.insert(out.end(), {c.usr_ns, c.sys_ns, c.elapsed_ns, c.ctx, c.majf, c.minf});
}

void Decode(std::span<const uint64_t> in, size_t& pos, CpuUsage& c) {
  for (uint64_t* f : {&c.usr_ns, &c.sys_ns, &c.elapsed_ns, &c.ctx, &c.majf, &c.minf}) {
    *f = DecodeWord(in, pos);
  }
}

void Encode(const IoDepthCounts& d, std::vector<uint64_t>& out) {
  out.insert(out.end(), d.level.begin(), d.level.end());
  out.insert(out.end(), d.submit.begin(), d.submit.end());
  out.insert(out.end(), d.complete.begin(), d.complete.end());
}

void Decode(std::span<const uint64_t> in, size_t& pos, IoDepthCounts& d) {
  for (auto* a : {&d.level, &d.submit, &d.complete}) {
    for (uint64_t& v : *a) v = DecodeWord(in, pos);
  }
}

}  // namespace iotail::stats
