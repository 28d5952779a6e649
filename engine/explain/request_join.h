// Joining an I/O to its block request, and the five stages of its latency (stats::Stage).
//
// A request joins an I/O when it is on the I/O's disk at the I/O's first sector, in its direction,
// entered the block layer no earlier than iotail's stamp before the submitting call and completed
// no later than iotail saw the completion (the same clock: kClockToleranceNs), and no rival
// request no I/O took completed at that place just before it (RequestTable: ambiguous). A request
// of another length there, or only part of one, is the I/O's request split or merged by the block
// layer: the I/O is counted as split, never joined.
//
// TrailJoin does it on the worker's thread as the worker reaps the I/O (Worker::PushTrail): the
// request's completion is in the table by then (it is written before the I/O can be reaped), so
// it is found before another request at a place with the same hash can write over it. That costs
// the worker a place lookup (a FIEMAP extent search for a file) and one cache line the
// completion's CPU wrote; nothing allocates, locks or calls the kernel.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/explain/io_places.h"
#include "engine/explain/request_table.h"
#include "engine/io_trail.h"
#include "stats/record/explain_sink.h"

namespace iotail::engine {

// iotail stamps on CLOCK_MONOTONIC in a run with --explain (Clock::UseMonotonic), the clock of
// bpf_ktime_get_ns, so a request's times fall inside its I/O's stamps exactly.
inline constexpr uint64_t kClockToleranceNs = 0;

// Whether `request`, found at `io`'s place, is io's; kJoined sets io's kernel times.
JoinOutcome JoinRequest(IoTrailRecord& io, const BlockRequestEvent& request);

// The stages of a joined I/O from iotail's stamps and its request's kernel times; every boundary
// is clamped between its neighbours, so the stages are never negative and always add up to the
// latency (done - intended start, or done - start in the closed loop).
std::array<uint64_t, stats::kStageCount> StagesOf(const IoTrailRecord& io);

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

// One worker's way to its requests: the request table and the place of each of its files (by the
// worker's file index; none: not on a traced disk). Immutable once built; read by its worker only.
class TrailJoin {
 public:
  TrailJoin(RequestTable table, std::vector<std::optional<FilePlace>> files)
      : table_(table), files_(std::move(files)) {}
  // Joins the reaped `io` to its request, if it can: sets io.join and, joined, its kernel times.
  void Join(IoTrailRecord& io) const;

 private:
  RequestTable table_;
  std::vector<std::optional<FilePlace>> files_;
};

}  // namespace iotail::engine
