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

std::array<uint64_t, stats::kStageCount> OwnStagesOf(const IoTrailRecord& io) {
  const uint64_t from = io.intended_ns != 0 ? io.intended_ns : io.start_ns;
  const uint64_t end = std::max(from, io.done_ns);
  const uint64_t start = std::clamp(io.start_ns, from, end);
  const uint64_t issued = std::clamp(io.issued_ns, start, end);
  return {start - from, issued - start, 0, end - issued, 0};
}

namespace {
constexpr size_t kSmallestTable = 1024;
}  // namespace

RequestJoiner::RequestJoiner() : table_(kSmallestTable) {}

RequestJoiner::Slot RequestJoiner::SlotOf(const BlockRequestEvent& r) {
  Slot slot;
  slot.sector = r.sector;
  slot.entered_ns = EnteredNs(r);
  slot.issue_ns = r.issue_ns != 0 ? r.issue_ns : r.kernel_issue_ns;
  slot.complete_ns = r.complete_ns;
  slot.dev = r.dev;
  slot.nr_sector = r.nr_sector;
  slot.op = r.op;
  slot.partial = r.partial;
  slot.used = true;
  return slot;
}

size_t RequestJoiner::Home(dev_t dev, uint64_t sector) const {
  // A full mix (murmur3's finalizer): the places of one round follow the job's offset generator
  // (a permutation of the blocks, a linear recurrence), which a plain multiplication keeps in
  // step, filling runs of the table.
  uint64_t key = sector ^ (static_cast<uint64_t>(dev) << 32);
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 33;
  return static_cast<size_t>(key) & (table_.size() - 1);
}

void RequestJoiner::Insert(const Slot& slot) {
  const size_t mask = table_.size() - 1;
  size_t i = Home(slot.dev, slot.sector);
  while (table_[i].used) i = (i + 1) & mask;
  table_[i] = slot;
  ++size_;
}

void RequestJoiner::AddRequest(const BlockRequestEvent& request) {
  if ((size_ + 1) * 2 > table_.size()) Resize(table_.size() * 2);
  Insert(SlotOf(request));
}

void RequestJoiner::Resize(size_t slots) {
  scratch_.clear();
  for (const Slot& slot : table_) {
    if (slot.used) scratch_.push_back(slot);
  }
  table_.assign(slots, Slot{});
  size_ = 0;
  for (const Slot& slot : scratch_) Insert(slot);
}

// Backward-shift deletion: each later entry of the run that may move into the hole does.
void RequestJoiner::Erase(size_t at) {
  const size_t mask = table_.size() - 1;
  size_t hole = at;
  for (size_t j = (at + 1) & mask; table_[j].used; j = (j + 1) & mask) {
    const size_t home = Home(table_[j].dev, table_[j].sector);
    // j's entry may fill the hole when its home is not cyclically within (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    table_[hole] = table_[j];
    hole = j;
  }
  table_[hole].used = false;
  --size_;
}

JoinResult RequestJoiner::Join(const IoTrailRecord& io, const DevicePlace& place) {
  JoinResult result;
  if (io.intended_ns != 0 && io.start_ns > io.intended_ns) {
    result.stages[static_cast<size_t>(stats::Stage::kSchedule)] = io.start_ns - io.intended_ns;
  }
  const size_t mask = table_.size() - 1;
  size_t found = 0;
  int matches = 0;
  for (size_t i = Home(place.dev, place.sector); table_[i].used; i = (i + 1) & mask) {
    const Slot& r = table_[i];
    if (r.sector == place.sector && r.dev == place.dev && SameDirection(r.op, io.dir) &&
        r.entered_ns != 0 && r.entered_ns + kClockToleranceNs >= io.start_ns &&
        r.complete_ns <= io.done_ns + kClockToleranceNs) {
      if (++matches == 1) found = i;
    }
  }
  if (matches != 1) return result;  // none, or more than one: never guessed
  const Slot slot = table_[found];
  Erase(found);
  if (uint64_t{slot.nr_sector} * 512 != io.length || slot.partial) {
    result.outcome = JoinOutcome::kSplit;
    return result;
  }
  // StagesOf's request, as far as it reads it.
  BlockRequestEvent request;
  request.alloc_ns = slot.entered_ns;
  request.issue_ns = slot.issue_ns;
  request.complete_ns = slot.complete_ns;
  result.outcome = JoinOutcome::kJoined;
  result.stages = StagesOf(io, request);
  return result;
}

uint64_t RequestJoiner::Expire(uint64_t completed_before_ns) {
  const size_t before = size_;
  for (Slot& slot : table_) {
    if (slot.used && slot.complete_ns < completed_before_ns) {
      slot.used = false;
      --size_;
    }
  }
  // Rebuilt (runs restored), and smaller when few wait: a table in the cache costs the least.
  size_t slots = kSmallestTable;
  while (slots < size_ * 4) slots *= 2;
  Resize(std::min(slots, table_.size()));
  return before - size_;
}

}  // namespace iotail::engine
