// ClusterReducer: rank 0's merge of every rank's closed intervals into the cluster's intervals, in
// time order, for iotail-mpi (the MPI transport is mpi/main.cc; this part is plain C++).
//
// Every rank closes its intervals on the same epoch-aligned instants (a common start), so the
// intervals of one log time from all ranks add up to the cluster's interval of that time. Each
// rank's intervals arrive in its own order; an interval of time t is emitted once every rank still
// running has delivered t or a later one. A rank's final (partial) interval waits until every rank
// has reached its final; then the finals are summed into one final interval, stamped with the
// latest of their times (so a final never goes back in time). A rank marked done delivers nothing
// more (a rank that failed is marked done so the others are not held up).
//
// The encoding of an interval (EncodeInterval) is what a rank sends: its time, bounds, planned
// bytes and one RecorderSnapshot per job (stats/record/snapshot_codec.h). Not thread-safe.
#pragma once

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
};

std::vector<uint64_t> EncodeInterval(const ClusterInterval& interval);
// Throws std::runtime_error on malformed input.
ClusterInterval DecodeInterval(std::span<const uint64_t> words);

class ClusterReducer {
 public:
  using Emit = std::function<void(const ClusterInterval&)>;
  ClusterReducer(int ranks, size_t jobs, Emit emit);

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
    bool done = false;
    uint64_t planned_bytes = 0;
  };
  std::vector<Rank> ranks_;
  size_t jobs_;
  Emit emit_;
  bool complete_ = false;
  uint64_t last_time_ms_ = 0;
  uint64_t emitted_ = 0;
};

}  // namespace iotail::mpi
