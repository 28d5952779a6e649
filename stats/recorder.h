// Recorder: one worker's latency and I/O counters, written by that worker alone and read
// concurrently by one other thread (the interval clock) without locks.
//
// Per direction a recorder holds a completion-latency (clat) histogram in fio 3's 1856-bucket
// nanosecond layout, the I/O and byte counts, and exact min/max/sum/sum-of-squares of the
// latencies (so the summary's min, max, mean and stddev are exact, not bucketed). It also counts
// errors per errno. A second histogram per direction (`lat`, intended start to completion, with its
// own exact min/max/sum) is filled in the rate-limited mode only, where the worker also records
// each I/O's issue lag (how long after its intended start it was submitted) as schedule counters.
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
#include <vector>

#include "stats/direction.h"
#include "stats/histogram_layout.h"

namespace iotail::stats {

// Errno values at or above this are counted together in the last slot.
inline constexpr int kMaxCountedErrno = 256;

// A plain copy of one direction's counters.
struct DirectionSnapshot {
  std::vector<uint64_t> clat;  // kFio3Buckets counts
  std::vector<uint64_t> lat;   // kFio3Buckets counts (empty unless lat was recorded)
  uint64_t ios = 0;
  uint64_t bytes = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();  // max() when ios == 0
  uint64_t max_ns = 0;
  uint64_t sum_ns = 0;
  double sum_sq_ns = 0;  // sum of squared latencies, ns^2
  // The same for lat (intended start to completion); lat_ios == 0 outside the rate-limited mode.
  uint64_t lat_ios = 0;
  uint64_t lat_min_ns = std::numeric_limits<uint64_t>::max();
  uint64_t lat_max_ns = 0;
  uint64_t lat_sum_ns = 0;
  double lat_sum_sq_ns = 0;

  double MeanNs() const { return ios ? static_cast<double>(sum_ns) / static_cast<double>(ios) : 0; }
  // Sample standard deviation (n - 1), as fio prints it; 0 for fewer than two samples.
  double StddevNs() const;
  double LatMeanNs() const {
    return lat_ios ? static_cast<double>(lat_sum_ns) / static_cast<double>(lat_ios) : 0;
  }
  double LatStddevNs() const;
  // Adds other's counts; min/max combine.
  void Add(const DirectionSnapshot& other);
};

// Issue lag of the rate-limited mode: submit time minus intended start, over all directions.
struct ScheduleSnapshot {
  uint64_t issued = 0;      // I/Os issued on a schedule (and recorded: after ramp)
  uint64_t late = 0;        // of which issued more than the late threshold after their time
  uint64_t max_lag_ns = 0;  // the largest lag (of the whole run, also in deltas)
  uint64_t sum_lag_ns = 0;
};

struct RecorderSnapshot {
  std::array<DirectionSnapshot, kDirectionCount> dirs;
  ScheduleSnapshot schedule;
  std::array<uint64_t, kMaxCountedErrno> errors{};  // errors[e]: completions failing with -e

  uint64_t TotalErrors() const;
  void Add(const RecorderSnapshot& other);
};

class Recorder {
 public:
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Writer only. One completion of `bytes` in direction d after `clat_ns` nanoseconds.
  void RecordClat(Direction d, uint64_t clat_ns, uint64_t bytes) {
    Dir& dir = dirs_[DirectionIndex(d)];
    Bump(dir.clat[Fio3BucketIndex(clat_ns)]);
    Bump(dir.ios);
    Store(dir.bytes, Load(dir.bytes) + bytes);
    Store(dir.sum_ns, Load(dir.sum_ns) + clat_ns);
    const double x = static_cast<double>(clat_ns);
    dir.sum_sq_ns.store(dir.sum_sq_ns.load(std::memory_order_relaxed) + x * x,
                        std::memory_order_relaxed);
    if (clat_ns < Load(dir.min_ns)) Store(dir.min_ns, clat_ns);
    if (clat_ns > Load(dir.max_ns)) Store(dir.max_ns, clat_ns);
  }
  // Writer only. Schedule latency (intended start to completion) of the same I/O.
  void RecordLat(Direction d, uint64_t lat_ns) {
    Dir& dir = dirs_[DirectionIndex(d)];
    Store(dir.lat_used, 1);
    Bump(dir.lat[Fio3BucketIndex(lat_ns)]);
    Bump(dir.lat_ios);
    Store(dir.lat_sum_ns, Load(dir.lat_sum_ns) + lat_ns);
    const double x = static_cast<double>(lat_ns);
    dir.lat_sum_sq_ns.store(dir.lat_sum_sq_ns.load(std::memory_order_relaxed) + x * x,
                            std::memory_order_relaxed);
    if (lat_ns < Load(dir.lat_min_ns)) Store(dir.lat_min_ns, lat_ns);
    if (lat_ns > Load(dir.lat_max_ns)) Store(dir.lat_max_ns, lat_ns);
  }
  // Writer only. An I/O issued lag_ns after its intended start; late when over late_threshold_ns.
  void RecordIssue(uint64_t lag_ns, uint64_t late_threshold_ns) {
    Bump(schedule_.issued);
    if (lag_ns > late_threshold_ns) Bump(schedule_.late);
    Store(schedule_.sum_lag_ns, Load(schedule_.sum_lag_ns) + lag_ns);
    if (lag_ns > Load(schedule_.max_lag_ns)) Store(schedule_.max_lag_ns, lag_ns);
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

 private:
  using Counter = std::atomic<uint64_t>;
  static uint64_t Load(const Counter& c) { return c.load(std::memory_order_relaxed); }
  static void Store(Counter& c, uint64_t v) { c.store(v, std::memory_order_relaxed); }
  static void Bump(Counter& c) { Store(c, Load(c) + 1); }

  struct Dir {
    std::array<Counter, kFio3Buckets> clat{};
    std::array<Counter, kFio3Buckets> lat{};
    Counter ios{0};
    Counter bytes{0};
    Counter min_ns{std::numeric_limits<uint64_t>::max()};
    Counter max_ns{0};
    Counter sum_ns{0};
    Counter lat_used{0};
    std::atomic<double> sum_sq_ns{0};
    Counter lat_ios{0};
    Counter lat_min_ns{std::numeric_limits<uint64_t>::max()};
    Counter lat_max_ns{0};
    Counter lat_sum_ns{0};
    std::atomic<double> lat_sum_sq_ns{0};
  };
  struct Schedule {
    Counter issued{0};
    Counter late{0};
    Counter max_lag_ns{0};
    Counter sum_lag_ns{0};
  };
  alignas(64) std::array<Dir, kDirectionCount> dirs_;
  alignas(64) Schedule schedule_;
  alignas(64) std::array<Counter, kMaxCountedErrno> errors_{};
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
