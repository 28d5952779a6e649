// Where `--explain` puts what it finds (issue 34): the stages an I/O's latency is split into, the
// per-interval outputs (each stage's histograms as interval deltas, each interval's slowest I/Os)
// and a run's totals per direction, for the summary.
//
// The five stages cover an I/O from its intended start to the moment iotail reaped it, so their sum
// is the latency iotail reports for it (lat: slat + clat, from the intended start in the open
// loop):
//   schedule  intended start to iotail's stamp before the submitting call (the open loop's lag;
//             0 in the closed loop, where an I/O is intended when it is submitted)
//   submit    that stamp to the request entering the block layer (its allocation)
//   queue     entering the block layer to its issue to the driver
//   device    issue to the driver's completion
//   delivery  the driver's completion to iotail seeing it (reaping)
//
// The explain session (engine/explain/explain_session.h) hands each closed interval to the stage
// sinks as one RecorderSnapshot per worker per stage, whose dirs[d].clat is that stage's histogram
// of the interval's joined I/Os (ios and bytes: those I/Os), so that a HistLogSink writes it as a
// fio histogram log and anything that merges recorder deltas merges it. SlowIoSink gets each
// interval's slowest I/Os. Both are called on the session's thread, one call at a time, in time
// order; Close() once after the final interval. Plain data and interfaces; no threads of its own.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "stats/core/direction.h"
#include "stats/record/interval_sink.h"
#include "stats/record/recorder.h"

namespace iotail::stats {

enum class Stage : uint8_t { kSchedule, kSubmit, kQueue, kDevice, kDelivery };
inline constexpr size_t kStageCount = 5;
inline constexpr std::array<std::string_view, kStageCount> kStageNames = {
    "schedule", "submit", "queue", "device", "delivery"};

constexpr std::string_view StageName(Stage s) { return kStageNames[static_cast<size_t>(s)]; }

// Adds one sample of `ns` to `lat` (its histogram in the recorder's layout, min, max, sums).
void AddSample(LatencySnapshot& lat, uint64_t ns);

// One direction's stages over a run (or an interval): the latency of each stage of the joined
// I/Os, and what could not be joined.
struct ExplainDirection {
  std::array<LatencySnapshot, kStageCount> stages;
  uint64_t joined = 0;          // I/Os whose block request was found: every stage known
  uint64_t not_joined = 0;      // I/Os with no request of theirs (page cache, lost record, ...)
  uint64_t split = 0;           // of not_joined: the block layer split or merged their request
  uint64_t latency_sum_ns = 0;  // the joined I/Os' own latencies (for the closure check)

  void Add(const ExplainDirection& other);
};

// One closed interval's stages over every worker: per direction the sum of each stage over the
// joined I/Os and their count (what naming the stage that grew needs, without the histograms).
struct ExplainIntervalSums {
  uint64_t start_ns = 0, end_ns = 0;  // the interval's bounds, epoch ns (as IntervalInfo's)
  std::array<std::array<uint64_t, kStageCount>, kDirectionCount> sum_ns{};
  std::array<uint64_t, kDirectionCount> joined{};
};

// What --explain found in a job (or a group of jobs) over the run.
struct ExplainTotals {
  std::array<ExplainDirection, kDirectionCount> dirs;
  uint64_t requests_unmatched = 0;  // block requests of the traced devices joined to no I/O
  uint64_t records_dropped = 0;     // I/Os or requests lost on the way (a full buffer): counted
  // The nbd engine's own stages (no block layer): submit is the send, device the server's answer
  // (network included), queue and delivery 0.
  bool own_stages = false;

  void Add(const ExplainTotals& other);
  bool Empty() const;
};

// One of an interval's slowest I/Os (--explain_slowest).
struct SlowIo {
  uint64_t time_ms = 0;  // the interval's log time (as the histogram logs')
  int worker = 0;        // the run's worker number, from 1 (as the logs' .N)
  Direction dir = Direction::kRead;
  uint32_t file = 0;  // the worker's file index
  uint64_t offset = 0;
  uint32_t length = 0;
  uint32_t depth = 0;  // I/Os in flight once it was submitted (itself included)
  int32_t cpu = -1;    // the CPU iotail reaped it on
  uint64_t latency_ns = 0;
  bool joined = false;  // stages below known (else only schedule)
  std::array<uint64_t, kStageCount> stages{};
};

class SlowIoSink {
 public:
  virtual ~SlowIoSink() = default;
  // rows: the interval's slowest I/Os of every worker, each worker's slowest first.
  virtual void OnSlowIos(const IntervalInfo& info, std::span<const SlowIo> rows) = 0;
  virtual void Close() {}
};

// The outputs a run gives the explain session (not owned; empty or null: none). stages[s] get
// stage s of every closed interval, with one delta per worker of the batch (workers of jobs
// without --explain: empty).
struct ExplainSinks {
  std::array<std::vector<IntervalSink*>, kStageCount> stages;
  std::vector<SlowIoSink*> slowest;
};

}  // namespace iotail::stats
