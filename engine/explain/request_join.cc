#include "engine/explain/request_join.h"

#include <algorithm>

namespace iotail::engine {

namespace {

bool SameDirection(BlockOp op, stats::Direction dir) {
  switch (dir) {
    case stats::Direction::kRead:
      return op == BlockOp::kRead;
    case stats::Direction::kWrite:
      return op == BlockOp::kWrite;
    case stats::Direction::kTrim:
      return op == BlockOp::kTrim;
  }
  return false;
}

}  // namespace

JoinOutcome JoinRequest(IoTrailRecord& io, const BlockRequestEvent& request) {
  const uint64_t entered = request.entered_ns != 0 ? request.entered_ns : request.issue_ns;
  if (request.ambiguous || !SameDirection(request.op, io.dir) ||
      entered + kClockToleranceNs < io.start_ns ||
      request.complete_ns > io.done_ns + kClockToleranceNs) {
    return JoinOutcome::kNotJoined;
  }
  if (request.partial || uint64_t{request.nr_sector} * 512 != io.length) return JoinOutcome::kSplit;
  io.entered_ns = entered;
  io.request_issue_ns = request.issue_ns;
  io.complete_ns = request.complete_ns;
  return JoinOutcome::kJoined;
}

void TrailJoin::Join(IoTrailRecord& io) const {
  io.join = JoinOutcome::kNotJoined;
  if (io.file >= files_.size() || !files_[io.file]) return;
  const std::optional<DevicePlace> place = files_[io.file]->Of(io.offset, io.dir);
  if (!place) return;
  const std::optional<BlockRequestEvent> request = table_.Take(place->dev, place->sector);
  if (request) io.join = JoinRequest(io, *request);
}

std::array<uint64_t, stats::kStageCount> StagesOf(const IoTrailRecord& io) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  // The boundaries in order; each kept between the one before it and the I/O's end.
  std::array<uint64_t, stats::kStageCount + 1> at = {
      from, io.start_ns, io.entered_ns, io.request_issue_ns, io.complete_ns, io.done_ns};
  const uint64_t end = std::max(from, io.done_ns);
  at[5] = end;
  for (size_t i = 1; i < at.size(); ++i) {
    if (at[i] == 0) at[i] = at[i - 1];  // not seen: the stage before it took no time
    at[i] = std::clamp(at[i], at[i - 1], end);
  }
  std::array<uint64_t, stats::kStageCount> stages{};
  for (size_t s = 0; s < stages.size(); ++s) stages[s] = at[s + 1] - at[s];
  return stages;
}

std::array<uint64_t, stats::kStageCount> OwnStagesOf(const IoTrailRecord& io) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  const uint64_t end = std::max(from, io.done_ns);
  const uint64_t start = std::clamp(io.start_ns, from, end);
  const uint64_t issued = std::clamp(io.issued_ns, start, end);
  return {start - from, issued - start, 0, end - issued, 0};
}

}  // namespace iotail::engine
