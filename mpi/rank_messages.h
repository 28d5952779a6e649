// The messages between iotail-mpi's threads and ranks, without MPI: the Mailbox where the run
// thread (and the explain session's) posts (the main thread sends), the ForwardSink that posts each
// closed interval summed per job (the interval clock's, or with --explain one stage's), and a
// rank's whole-run totals (RankTotals) with their exact encoding
// (stats/record/snapshot_codec.h). The Mailbox is thread-safe (a mutex held for a push or a take);
// the sink follows IntervalSink's contract.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "mpi/cluster_reducer.h"
#include "stats/record/cpu_usage.h"
#include "stats/record/explain_sink.h"
#include "stats/record/interval_sink.h"
#include "stats/record/io_depths.h"
#include "stats/report/run_summary.h"

namespace iotail::mpi {

inline constexpr int kTagInterval = 1;  // an encoded ClusterInterval
inline constexpr int kTagTotals = 2;    // a rank's whole-run totals (after its run)
inline constexpr int kTagDone = 3;      // [exit status]: the rank's run has ended
inline constexpr int kTagPing = 4;      // clock-offset ping-pong
inline constexpr int kTagReady = 5;     // [batch]: the rank is ready to start that batch
inline constexpr int kTagStart = 6;     // [batch, epoch ms]: rank 0's start of that batch
// [stage, an encoded ClusterInterval]: --explain's stage histograms (as clat) of an interval; a
// rank sends them all before its totals.
inline constexpr int kTagExplain = 7;

struct Message {
  int tag;
  std::vector<uint64_t> words;
};

// The run thread's outbox, emptied by the main thread.
class Mailbox {
 public:
  void Push(Message m) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(m));
  }
  std::deque<Message> TakeAll() {
    std::lock_guard lock(mu_);
    return std::exchange(queue_, {});
  }

 private:
  std::mutex mu_;
  std::deque<Message> queue_;
};

// On every rank: sums each closed interval per job (and counts it per summary entry) and posts it,
// under kTagInterval, or with a stage (one of --explain's stage sinks) under kTagExplain.
class ForwardSink final : public stats::IntervalSink {
 public:
  ForwardSink(Mailbox& mailbox, size_t jobs, int stage = -1)
      : mailbox_(mailbox), jobs_(jobs), stage_(stage) {}
  void SetWorkers(std::span<const size_t> job_of_worker, std::span<const size_t> entry_of_worker,
                  size_t entries) {
    job_of_worker_.assign(job_of_worker.begin(), job_of_worker.end());
    entry_of_worker_.assign(entry_of_worker.begin(), entry_of_worker.end());
    entries_ = entries;
  }
  void OnInterval(const stats::IntervalInfo& info,
                  std::span<const stats::RecorderSnapshot> deltas) override {
    ClusterInterval interval{info.time_ms,
                             info.start_ns,
                             info.end_ns,
                             info.planned_bytes,
                             info.final,
                             std::vector<stats::RecorderSnapshot>(jobs_),
                             std::vector<uint64_t>(entries_ * kEntryWords)};
    for (size_t w = 0; w < deltas.size() && w < job_of_worker_.size(); ++w) {
      interval.jobs[job_of_worker_[w]].Add(deltas[w]);
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        const stats::DirectionSnapshot& dir = deltas[w].dirs[d];
        if (dir.ios != 0)
          interval.logged_bytes[d] += dir.ios * ((dir.bytes + dir.ios / 2) / dir.ios);
      }
      if (w >= entry_of_worker_.size() || entry_of_worker_[w] >= entries_) continue;
      uint64_t* counts = interval.entry_counts.data() + entry_of_worker_[w] * kEntryWords;
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        counts[2 * d] += deltas[w].dirs[d].ios;
        counts[2 * d + 1] += deltas[w].dirs[d].bytes;
      }
    }
    if (stage_ < 0) {
      mailbox_.Push({kTagInterval, EncodeInterval(interval)});
      return;
    }
    std::vector<uint64_t> words = {static_cast<uint64_t>(stage_)};
    const std::vector<uint64_t> encoded = EncodeInterval(interval);
    words.insert(words.end(), encoded.begin(), encoded.end());
    mailbox_.Push({kTagExplain, std::move(words)});
  }

 private:
  Mailbox& mailbox_;
  size_t jobs_;
  int stage_;
  std::vector<size_t> job_of_worker_, entry_of_worker_;
  size_t entries_ = 0;
};

// A rank's whole-run totals per job, for the cluster summary.
struct RankTotals {
  int64_t start_skew_ns = 0;
  std::vector<stats::RecorderSnapshot> totals;
  std::vector<stats::CpuUsage> cpu;
  std::vector<stats::IoDepthCounts> depths;
  std::vector<std::optional<stats::ExplainTotals>> explain;  // --explain: the job's stages
  uint64_t requests_unmatched = 0, records_dropped = 0;      // --explain: the run's (its note)
  // A replay (read_iolog): the I/Os of this rank's trace, and of them those with a recorded
  // latency (each rank may replay a trace of its own: --read_iolog=t.{rank}.iolog).
  uint64_t trace_ios = 0, trace_recorded = 0;
};

std::vector<uint64_t> EncodeTotals(const stats::RunSummary& s);
// Throws std::runtime_error on malformed input.
RankTotals DecodeTotals(std::span<const uint64_t> in);

}  // namespace iotail::mpi
