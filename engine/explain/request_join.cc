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

// When the request entered the block layer: its allocation, else its insertion, else its issue.
uint64_t EnteredNs(const BlockRequestEvent& r) {
  if (r.alloc_ns != 0) return r.alloc_ns;
  if (r.insert_ns != 0) return r.insert_ns;
  return r.issue_ns;
}

bool InWindow(const IoTrailRecord& io, const BlockRequestEvent& r) {
  const uint64_t entered = EnteredNs(r);
  return entered != 0 && entered + kClockToleranceNs >= io.start_ns &&
         r.complete_ns <= io.done_ns + kClockToleranceNs;
}

}  // namespace

std::array<uint64_t, stats::kStageCount> StagesOf(const IoTrailRecord& io,
                                                  const BlockRequestEvent& request) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  const uint64_t issue = request.issue_ns != 0 ? request.issue_ns : request.kernel_issue_ns;
  // The boundaries in order; each kept between the one before it and the I/O's end.
  std::array<uint64_t, stats::kStageCount + 1> at = {from,  io.start_ns,         EnteredNs(request),
                                                     issue, request.complete_ns, io.done_ns};
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

void RequestJoiner::AddRequest(const BlockRequestEvent& request) {
  pending_[Key{request.dev, request.sector}].push_back(request);
  ++pending_count_;
}

JoinResult RequestJoiner::Join(const IoTrailRecord& io, const DevicePlace& place) {
  JoinResult result;
  if (io.intended_ns != 0 && io.start_ns > io.intended_ns) {
    result.stages[static_cast<size_t>(stats::Stage::kSchedule)] = io.start_ns - io.intended_ns;
  }
  auto it = pending_.find(Key{place.dev, place.sector});
  if (it == pending_.end()) return result;
  std::vector<BlockRequestEvent>& candidates = it->second;
  size_t found = candidates.size();
  int matches = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (SameDirection(candidates[i].op, io.dir) && InWindow(io, candidates[i])) {
      if (++matches == 1) found = i;
    }
  }
  if (matches != 1) return result;  // none, or more than one: never guessed
  const BlockRequestEvent request = candidates[found];
  candidates.erase(candidates.begin() + static_cast<ptrdiff_t>(found));
  --pending_count_;
  if (candidates.empty()) pending_.erase(it);
  if (uint64_t{request.nr_sector} * 512 != io.length || request.partial) {
    result.outcome = JoinOutcome::kSplit;
    return result;
  }
  result.outcome = JoinOutcome::kJoined;
  result.stages = StagesOf(io, request);
  return result;
}

uint64_t RequestJoiner::Expire(uint64_t completed_before_ns) {
  uint64_t expired = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    std::vector<BlockRequestEvent>& v = it->second;
    const size_t before = v.size();
    std::erase_if(v,
                  [&](const BlockRequestEvent& r) { return r.complete_ns < completed_before_ns; });
    expired += before - v.size();
    it = v.empty() ? pending_.erase(it) : std::next(it);
  }
  pending_count_ -= expired;
  return expired;
}

}  // namespace iotail::engine
