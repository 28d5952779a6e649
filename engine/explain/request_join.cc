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

size_t RequestJoiner::pending() const { return pending_.size() - taken_ + incoming_.size(); }

std::array<uint64_t, stats::kStageCount> OwnStagesOf(const IoTrailRecord& io) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  const uint64_t end = std::max(from, io.done_ns);
  const uint64_t start = std::clamp(io.start_ns, from, end);
  const uint64_t issued = std::clamp(io.issued_ns, start, end);
  return {start - from, issued - start, 0, end - issued, 0};
}

void RequestJoiner::Settle() {
  if (taken_ != 0) {
    std::erase_if(pending_, [](const Pending& p) { return p.taken; });
    taken_ = 0;
  }
  for (const BlockRequestEvent& r : incoming_) pending_.push_back(Pending{r, false});
  incoming_.clear();
  std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return a.request.dev != b.request.dev ? a.request.dev < b.request.dev
                                          : a.request.sector < b.request.sector;
  });
}

JoinResult RequestJoiner::Join(const IoTrailRecord& io, const DevicePlace& place) {
  JoinResult result;
  if (io.intended_ns != 0 && io.start_ns > io.intended_ns) {
    result.stages[static_cast<size_t>(stats::Stage::kSchedule)] = io.start_ns - io.intended_ns;
  }
  if (!incoming_.empty()) Settle();
  auto first = std::lower_bound(
      pending_.begin(), pending_.end(), place, [](const Pending& p, const DevicePlace& at) {
        return p.request.dev != at.dev ? p.request.dev < at.dev : p.request.sector < at.sector;
      });
  Pending* found = nullptr;
  int matches = 0;
  for (auto it = first;
       it != pending_.end() && it->request.dev == place.dev && it->request.sector == place.sector;
       ++it) {
    if (!it->taken && SameDirection(it->request.op, io.dir) && InWindow(io, it->request)) {
      if (++matches == 1) found = &*it;
    }
  }
  if (matches != 1) return result;  // none, or more than one: never guessed
  found->taken = true;
  ++taken_;
  const BlockRequestEvent& request = found->request;
  if (uint64_t{request.nr_sector} * 512 != io.length || request.partial) {
    result.outcome = JoinOutcome::kSplit;
    return result;
  }
  result.outcome = JoinOutcome::kJoined;
  result.stages = StagesOf(io, request);
  return result;
}

uint64_t RequestJoiner::Expire(uint64_t completed_before_ns) {
  Settle();
  const size_t before = pending_.size();
  std::erase_if(pending_,
                [&](const Pending& p) { return p.request.complete_ns < completed_before_ns; });
  return before - pending_.size();
}

}  // namespace iotail::engine
