// ClusterReducer: rank 0's merge of every rank's closed intervals into the cluster's intervals, in
// time order, for iotail-mpi (the MPI transport is mpi/main.cc; this part is plain C++).
//
// Every rank closes its intervals on the same epoch-aligned instants (a common start), so the
// intervals that end in one log period (kP - P, kP] from all ranks add up to the cluster's interval
// of that period, exactly as `iotail merge --time-quantum=P` places the ranks' own log records:
// full intervals end on kP, a final partial one inside the period after the last boundary (or on
// it, when a rank's clock closed its last boundary late). Each rank's intervals arrive in its own
// order; period k is emitted once every rank that may still send has delivered something of
// period k or later. The cluster interval is stamped with the latest time among its parts and is
// final when every rank has sent its last final: a run of several batches (stonewalls) closes an
// interval clock, and sends a final, per batch, so a rank's stream ends at its `batches`-th final
// (an earlier batch's final is a partial interval like any other). Each batch's times count from
// its own start (as fio's, and each rank's, per-job logs do); the cluster's log is one time line,
// so a batch is placed from the first period boundary after the cluster's previous batch ended
// (its times plus that boundary), once every rank has ended the batch before. A rank marked done
// delivers nothing more (a rank that failed, or stopped before its last batch, is marked done so
// the others are not held up).
//
// The encoding of an interval (EncodeInterval) is what a rank sends: its time, bounds, planned
// bytes, one RecorderSnapshot per job (stats/record/snapshot_codec.h), the entries' counts and the
// logged bytes.
// Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "stats/record/recorder.h"

namespace iotail::mpi {

struct ClusterInterval {
  uint64_t time_ms = 0;  // the logs' time column (the interval's end)
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t planned_bytes = 0;
  bool final = false;
  std::vector<stats::RecorderSnapshot> jobs;  // one per job of the run
  // Per summary entry (a clone, or a group with group_reporting), per direction: I/Os, bytes
  // (kEntryWords words each): what the summary's bw/iops samples of each entry are made of.
  std::vector<uint64_t> entry_counts;
  // Per direction, the bytes its histogram logs account for: each worker's I/Os times its logged
  // bs (the interval's mean bytes per I/O, rounded to a byte), summed. What `iotail merge` of the
  // ranks' own logs counts, so the cluster's log, whose bs column is this over the I/Os, equals
  // that merge in every column.
  std::array<uint64_t, stats::kDirectionCount> logged_bytes{};
};
inline constexpr size_t kEntryWords = 2 * stats::kDirectionCount;

std::vector<uint64_t> EncodeInterval(const ClusterInterval& interval);
// Throws std::runtime_error on malformed input.
ClusterInterval DecodeInterval(std::span<const uint64_t> words);

class ClusterReducer {
 public:
  using Emit = std::function<void(const ClusterInterval&)>;
  // period_ms: the log period P (every rank's); batches: the run's batches (finals per rank).
  ClusterReducer(int ranks, size_t jobs, uint64_t period_ms, Emit emit, size_t batches = 1);

  // The next interval of `rank`.
  void Add(int rank, ClusterInterval interval);
  // `rank` delivers no more intervals.
  void RankDone(int rank);
  // Whether the final interval has been emitted (or every rank is done).
  bool Complete() const { return complete_; }
  uint64_t emitted() const { return emitted_; }

 private:
  void Drain();
  struct Rank {
    std::deque<ClusterInterval> queue;
    std::deque<size_t> batch_of;  // the batch of each queued interval
    bool done = false;
    size_t finals = 0;  // its batches' final intervals arrived: at `batches_`, nothing after it
    bool Ended(size_t batches) const { return finals >= batches; }
    uint64_t planned_bytes = 0;
  };
  std::vector<Rank> ranks_;
  size_t jobs_;
  uint64_t period_ms_;
  size_t batches_;
  size_t batch_ = 0;        // the batch being placed
  uint64_t offset_ms_ = 0;  // its times' place on the cluster's time line
  Emit emit_;
  bool complete_ = false;
  uint64_t last_time_ms_ = 0;
  uint64_t emitted_ = 0;
};

}  // namespace iotail::mpi
