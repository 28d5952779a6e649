// RequestJoiner: joins the block requests BlockTracer saw (engine/explain/block_tracer.h) to the
// I/Os iotail completed (engine/io_trail.h), and splits each joined I/O's latency into the five
// stages of stats::Stage.
//
// A request joins an I/O when it is on the I/O's device at the I/O's first sector, in its
// direction, entered the block layer no earlier than iotail's stamp before the submitting call and
// completed no later than iotail saw the completion (the same clock: kClockToleranceNs), and is the
// only such request. A request of
// another length at that place is the I/O's request split or merged by the block layer: the I/O is
// counted as split, never joined; two candidates are never guessed between (not joined). Requests
// no I/O took are forgotten by Expire() and counted there (other processes' I/O on the traced
// devices, readahead, writeback, metadata).
//
// The caller feeds every request before the I/Os that completed after it (a request's record is
// written before iotail can reap its I/O: drain the I/Os first, then the tracer, then join).
// Not thread-safe: one thread (the explain session's).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/explain/block_tracer.h"
#include "engine/io_trail.h"
#include "stats/record/explain_sink.h"

namespace iotail::engine {

// iotail stamps on CLOCK_MONOTONIC in a run with --explain (Clock::UseMonotonic), the clock of
// bpf_ktime_get_ns, so a request's times fall inside its I/O's stamps exactly.
inline constexpr uint64_t kClockToleranceNs = 0;

// Where an I/O lies on a traced disk.
struct DevicePlace {
  dev_t dev = 0;
  uint64_t sector = 0;  // 512-byte sectors from the start of the whole disk
};

enum class JoinOutcome : uint8_t { kJoined, kNotJoined, kSplit };

struct JoinResult {
  JoinOutcome outcome = JoinOutcome::kNotJoined;
  // Each stage in ns (stats::Stage order); with kJoined they add up to the I/O's latency
  // (done - intended start, or done - start in the closed loop). Otherwise only schedule is set.
  std::array<uint64_t, stats::kStageCount> stages{};
};

// The stages of an I/O from iotail's stamps and its request's kernel times; every boundary is
// clamped between its neighbours, so the stages are never negative and always add up to the
// latency.
std::array<uint64_t, stats::kStageCount> StagesOf(const IoTrailRecord& io,
                                                  const BlockRequestEvent& request);

// The stages of an I/O of the nbd engine, which has no block layer, from iotail's own stamps in the
// same form: schedule (intended start to the send), submit (the send: start to issued), device
// (the server, network included: sent to the reply seen), queue and delivery 0 (the reply is
// taken as it is read).
std::array<uint64_t, stats::kStageCount> OwnStagesOf(const IoTrailRecord& io);

// The I/O's latency as iotail reports it: done - intended start (open loop) or done - start.
inline uint64_t LatencyOf(const IoTrailRecord& io) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  return io.done_ns > from ? io.done_ns - from : 0;
}

class RequestJoiner {
 public:
  RequestJoiner();
  void AddRequest(const BlockRequestEvent& request);
  JoinResult Join(const IoTrailRecord& io, const DevicePlace& place);
  // Forgets the requests that completed before completed_before_ns; returns how many.
  uint64_t Expire(uint64_t completed_before_ns);
  size_t pending() const { return size_; }

 private:
  // An open-addressing table (linear probing, backward-shift deletion) keyed by device and
  // sector, at most half full and shrunk back when the waiting requests are few: a join is a probe
  // or two in a table that stays in the cache (48-byte slots holding what a join needs), and
  // nothing allocates once the table has its size.
  struct Slot {
    uint64_t sector = 0;
    uint64_t entered_ns = 0;  // EnteredNs
    uint64_t issue_ns = 0;    // issue_ns, else kernel_issue_ns
    uint64_t complete_ns = 0;
    dev_t dev = 0;
    uint32_t nr_sector = 0;
    BlockOp op = BlockOp::kOther;
    bool partial = false;
    bool used = false;
  };
  static_assert(sizeof(Slot) == 48, "48-byte slots, as said above");
  static Slot SlotOf(const BlockRequestEvent& request);
  size_t Home(dev_t dev, uint64_t sector) const;
  void Insert(const Slot& slot);
  void Erase(size_t at);
  void Resize(size_t slots);
  std::vector<Slot> table_;
  std::vector<Slot> scratch_;  // Resize's and Expire's survivors
  size_t size_ = 0;
};

}  // namespace iotail::engine
