// Recorder: one worker's latency and I/O counters, written by that worker alone and read
// concurrently by one other thread (the interval clock) without locks.
//
// Per direction a recorder holds the I/O and byte counts and three latencies, each a histogram in
// fio 3's nanosecond layout widened to 59 groups (HistogramLayout::Recorded(): fio's 1856 buckets
// and 1920 more above its 17.18 s top, so no latency is clamped) with exact min/max/sum/
// sum-of-squares (so the summary's min, max, mean and stddev are exact, not bucketed): clat (issued
// to completed), slat (the submission call, asynchronous engines only), lat (start to completion,
// fio's lat) and, in the rate-limited mode only, olat (iotail's open-loop latency: intended start
// to completion, which fio does not measure). It also counts errors per errno, and in the
// rate-limited mode each I/O's issue lag (how long after its intended start it was submitted) as
// schedule counters.
//
// Threading contract: exactly one writer thread calls the Record* methods; every field is a
// std::atomic updated by a relaxed load and a relaxed store (no read-modify-write, no fence, no
// lock, no allocation), which on x86-64 compiles to plain moves. Any number of threads may call
// Snapshot(), which reads every field with relaxed loads. Because each field only grows (min only
// shrinks, max only grows), a snapshot never loses a completed count and the difference of two
// snapshots is exact: RecorderSampler keeps its previous snapshot and returns deltas. Fields of one
// snapshot may come from slightly different instants (the histogram may hold a sample that the I/O
// counter does not yet show); after the writer has stopped (joined), a snapshot is exact.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"

namespace iotail::stats {

// Errno values at or above this are counted together in the last slot.
inline constexpr int kMaxCountedErrno = 256;

// A plain copy of one latency's counters (clat, slat or lat of one direction).
struct LatencySnapshot {
  std::vector<uint64_t> hist;  // kRecordBuckets counts; empty when this latency was never recorded
  uint64_t n = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();  // max() when n == 0
  uint64_t max_ns = 0;
  uint64_t sum_ns = 0;
  double sum_sq_ns = 0;  // sum of squared latencies, ns^2

  double MeanNs() const { return n ? static_cast<double>(sum_ns) / static_cast<double>(n) : 0; }
  // Sample standard deviation (n - 1), as fio prints it; 0 for fewer than two samples.
  double StddevNs() const;
  uint64_t MinOrZero() const { return n ? min_ns : 0; }
  // Adds other's counts; min/max combine.
  void Add(const LatencySnapshot& other);
};

// One I/O priority's latencies (fio's clat_prio entry): its ioprio value (class << 13 | level)
// and the latency of the I/Os issued at it.
struct PrioLatency {
  uint32_t ioprio = 0;
  LatencySnapshot lat;
};

// A plain copy of one direction's counters. Every completed I/O counts in ios, bytes and clat
// (issue to completion), except with the file and directory operation engines: their I/Os count
// in ios and bytes only, and clat holds one sample per file operation (fio's FIO_NOSTATS). slat
// (start of submission to its return) is recorded by the asynchronous engines only; lat is start
// to completion (fio's lat), recorded by asynchronous engines (a synchronous engine's lat is its
// clat: n == 0); olat is the intended start to completion, recorded in the open loop only (the
// rate-limited mode: iotail's measure without coordinated omission; n == 0 otherwise).
// recorded, in a replay only: the latency the trace itself recorded for the I/Os replayed
// (blktrace's dispatch to completion, device time), counted when each I/O is issued, that is at its
// trace time on the run's clock (n == 0 when the trace records none).
struct DirectionSnapshot {
  LatencySnapshot clat, slat, lat, olat, recorded;
  uint64_t ios = 0;
  uint64_t bytes = 0;
  // Per I/O priority (fio's cmdprio): the latency of each priority's I/Os, the job's own first;
  // empty when the direction has no per-command priorities. In the cumulative snapshot only
  // (a sampler's deltas leave it empty). Add merges entries of the same ioprio.
  std::vector<PrioLatency> prios;
  // The total latency as reported: lat, or clat for a synchronous engine (recorded once).
  const LatencySnapshot& TotalLatency() const { return lat.n > 0 ? lat : clat; }
  // What a user of a rate-limited load sees: olat when recorded (the open loop), else the total.
  const LatencySnapshot& OlatOrTotal() const { return olat.n > 0 ? olat : TotalLatency(); }
  void Add(const DirectionSnapshot& other);
};

// Issue lag of the rate-limited mode: submit time minus intended start, over all directions.
struct ScheduleSnapshot {
  uint64_t issued = 0;      // I/Os issued on a schedule (and recorded: after ramp)
  uint64_t late = 0;        // of which issued more than the late threshold after their time
  uint64_t max_lag_ns = 0;  // the largest lag (of the whole run, also in deltas)
  uint64_t sum_lag_ns = 0;
  // Replay only (read_iolog): each I/O's lateness (issue minus its intended time from the trace),
  // a histogram in the recorded layout (n == 0 and no buckets otherwise).
  LatencySnapshot lateness;
};

struct RecorderSnapshot {
  std::array<DirectionSnapshot, kDirectionCount> dirs;
  ScheduleSnapshot schedule;
  std::array<uint64_t, kMaxCountedErrno> errors{};  // errors[e]: completions failing with -e
  // I/Os submitted and not yet completed when the snapshot was taken: a level, not a count (a
  // sampler's delta carries the current value; Add sums workers, meaningful for one instant).
  uint64_t in_flight = 0;

  uint64_t TotalErrors() const;
  void Add(const RecorderSnapshot& other);
  // Takes away what `before` (an earlier snapshot of the same recorder) had counted: I/Os, bytes,
  // latency buckets and sums, schedule counts; min/max and the errors stay this snapshot's (fio's
  // statistics reset of the latency target mode keeps the job's error count).
  void SubtractCounts(const RecorderSnapshot& before);
  // Makes every latency histogram hold its buckets (capacity for kRecordBuckets), so that a later
  // Snapshot into this one allocates nothing.
  void ReserveBuckets();
};

// A cheap reading of a recorder (no histogram copied): completions and bytes over every direction,
// and the sum and count of their completion latencies.
struct RecorderProgress {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  uint64_t clat_sum_ns = 0;
  uint64_t clat_n = 0;
};

class Recorder {
 public:
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Writer only. One completion of `bytes` in direction d after `clat_ns` nanoseconds.
  void RecordClat(Direction d, uint64_t clat_ns, uint64_t bytes) {
    Dir& dir = dirs_[DirectionIndex(d)];
    Bump(dir.ios);
    Store(dir.bytes, Load(dir.bytes) + bytes);
    dir.clat.Record(clat_ns);
  }
  // Writer only. A completion of `bytes` in direction d counted without a latency (fio's
  // FIO_NOSTATS engines: the file and directory operations, whose I/Os move nothing).
  void RecordUntimed(Direction d, uint64_t bytes) {
    Dir& dir = dirs_[DirectionIndex(d)];
    Bump(dir.ios);
    Store(dir.bytes, Load(dir.bytes) + bytes);
  }
  // Writer only. A completion latency that is no I/O of its own: a file or directory operation
  // (create, stat, delete) of those engines, counted in direction d's clat as fio does.
  void RecordOperation(Direction d, uint64_t ns) { dirs_[DirectionIndex(d)].clat.Record(ns); }
  // Writer only. Submission latency of the same I/O (asynchronous engines).
  void RecordSlat(Direction d, uint64_t slat_ns) { dirs_[DirectionIndex(d)].slat.Record(slat_ns); }
  // Writer only. Total latency of the same I/O: from its start to its completion (fio's lat).
  void RecordLat(Direction d, uint64_t lat_ns) { dirs_[DirectionIndex(d)].lat.Record(lat_ns); }
  // Writer only. Open-loop latency of the same I/O: from its intended start to its completion.
  void RecordOlat(Direction d, uint64_t ns) { dirs_[DirectionIndex(d)].olat.Record(ns); }
  // Before the run (not thread-safe): the recorder keeps a replay's recorded latencies (their
  // histograms are allocated here, so that a recorder that never replays carries none).
  void KeepRecorded() {
    if (!recorded_) recorded_ = std::make_unique<std::array<Latency, kDirectionCount>>();
  }
  // Writer only, after KeepRecorded (else nothing is kept). A replayed I/O of direction d whose
  // trace recorded a latency of ns (blktrace's dispatch to completion), counted when it is issued.
  void RecordRecorded(Direction d, uint64_t ns) {
    if (recorded_) (*recorded_)[DirectionIndex(d)].Record(ns);
  }
  // Before the run (not thread-safe): direction d keeps a latency per I/O priority, for these
  // ioprio values (index 0 the job's own); RecordPrio then records by index.
  void SetPriorities(Direction d, std::span<const uint16_t> ioprios);
  // Writer only. The latency of an I/O of direction d issued at priority `index` (of those set).
  void RecordPrio(Direction d, uint32_t index, uint64_t ns) {
    Prios& p = prios_[DirectionIndex(d)];
    if (index < p.values.size()) p.lat[index].Record(ns);
  }
  // Writer only. An I/O issued lag_ns after its intended start; late when over late_threshold_ns.
  void RecordIssue(uint64_t lag_ns, uint64_t late_threshold_ns) {
    Bump(schedule_.issued);
    if (lag_ns > late_threshold_ns) Bump(schedule_.late);
    Store(schedule_.sum_lag_ns, Load(schedule_.sum_lag_ns) + lag_ns);
    if (lag_ns > Load(schedule_.max_lag_ns)) Store(schedule_.max_lag_ns, lag_ns);
  }
  // Writer only. A replayed I/O issued lateness_ns after its intended time (RecordIssue counts it
  // in the schedule's counters too).
  void RecordLateness(uint64_t lateness_ns) {
    RecordIssue(lateness_ns, kLateNoticeNs);
    schedule_.lateness.Record(lateness_ns);
  }
  static constexpr uint64_t kLateNoticeNs = 100'000;
  // Writer only. The I/Os now in flight (after a submission or a batch of completions).
  void SetInFlight(uint64_t n) { Store(in_flight_, n); }
  // Writer only. Min and max start again from this instant (fio's statistics reset in the latency
  // target mode); the counts go on (the caller keeps a snapshot to subtract).
  void RestartExtremes() {
    for (Dir& d : dirs_) {
      for (Latency* l : {&d.clat, &d.slat, &d.lat, &d.olat}) l->RestartExtremes();
    }
    for (Prios& p : prios_) {
      for (size_t i = 0; i < p.values.size(); ++i) p.lat[i].RestartExtremes();
    }
  }
  // Writer only. A completion that failed with -err (err > 0).
  void RecordError(int err) {
    const int slot = err > 0 && err < kMaxCountedErrno ? err : kMaxCountedErrno - 1;
    Bump(errors_[static_cast<size_t>(slot)]);
  }

  // Any thread. A copy of every counter; `out` is reused to avoid allocation after the first call.
  void Snapshot(RecorderSnapshot& out) const;
  RecorderSnapshot Snapshot() const {
    RecorderSnapshot s;
    Snapshot(s);
    return s;
  }
  // Any thread. The counts alone, with relaxed loads (as Snapshot's).
  RecorderProgress Progress() const {
    RecorderProgress p;
    for (const Dir& d : dirs_) {
      p.ios += Load(d.ios);
      p.bytes += Load(d.bytes);
      p.clat_sum_ns += Load(d.clat.sum_ns);
      p.clat_n += Load(d.clat.n);
    }
    return p;
  }

 private:
  using Counter = std::atomic<uint64_t>;
  static uint64_t Load(const Counter& c) { return c.load(std::memory_order_relaxed); }
  static void Store(Counter& c, uint64_t v) { c.store(v, std::memory_order_relaxed); }
  static void Bump(Counter& c) { Store(c, Load(c) + 1); }

  // One latency: histogram and exact moments. `used` tells a snapshot whether to copy buckets.
  struct Latency {
    std::array<Counter, kRecordBuckets> hist{};
    Counter n{0};
    Counter min_ns{std::numeric_limits<uint64_t>::max()};
    Counter max_ns{0};
    Counter sum_ns{0};
    Counter used{0};
    std::atomic<double> sum_sq_ns{0};
    void Record(uint64_t ns) {
      if (Load(used) == 0) Store(used, 1);
      Bump(hist[RecordBucketIndex(ns)]);
      Bump(n);
      Store(sum_ns, Load(sum_ns) + ns);
      const double x = static_cast<double>(ns);
      sum_sq_ns.store(sum_sq_ns.load(std::memory_order_relaxed) + x * x, std::memory_order_relaxed);
      if (ns < Load(min_ns)) Store(min_ns, ns);
      if (ns > Load(max_ns)) Store(max_ns, ns);
    }
    void Snapshot(LatencySnapshot& out) const;
    void RestartExtremes() {
      Store(min_ns, std::numeric_limits<uint64_t>::max());
      Store(max_ns, 0);
    }
  };
  struct Dir {
    Counter ios{0};
    Counter bytes{0};
    Latency clat, slat, lat, olat;
  };
  struct Prios {
    std::vector<uint16_t> values;
    std::unique_ptr<Latency[]> lat;
  };
  struct Schedule {
    Counter issued{0};
    Counter late{0};
    Counter max_lag_ns{0};
    Counter sum_lag_ns{0};
    Latency lateness;
  };
  alignas(64) std::array<Dir, kDirectionCount> dirs_;
  alignas(64) Schedule schedule_;
  alignas(64) std::array<Counter, kMaxCountedErrno> errors_{};
  Counter in_flight_{0};
  std::array<Prios, kDirectionCount> prios_;
  std::unique_ptr<std::array<Latency, kDirectionCount>> recorded_;  // KeepRecorded's
};

// The single reader's view of one recorder: each Next() returns what was recorded since the
// previous Next() (the first covers everything since the recorder was created). Not thread-safe;
// one sampler per recorder, used by one thread. Min/max in a delta are those of the whole run.
class RecorderSampler {
 public:
  explicit RecorderSampler(const Recorder& recorder) : recorder_(&recorder) {}
  // Fills `delta` with the counts recorded since the previous call.
  void Next(RecorderSnapshot& delta);
  // Everything recorded up to the last Next() call.
  const RecorderSnapshot& cumulative() const { return previous_; }

 private:
  const Recorder* recorder_;
  RecorderSnapshot previous_;
  RecorderSnapshot current_;
};

}  // namespace iotail::stats
