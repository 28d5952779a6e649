// The completion fixed point's features (engine/worker.h: CompletedBefore, CompletedAfter: verify,
// latency target, fill_device, syncs, the explain trail), and the worker's side of --explain and
// --explain_slowest (SetTrail): the record of each completion for the explain session, and the
// depth each I/O was submitted at.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "engine/clock.h"
#include "engine/explain/request_join.h"
#include "engine/worker.h"

namespace iotail::engine {

void Worker::SetTrail(IoTrail* trail, const TrailJoin* join) {
  trail_ = trail;
  trail_join_ = join;
  const char* delay = std::getenv("IOTAIL_TEST_REAP_DELAY_US");
  test_reap_delay_ns_ = delay != nullptr ? std::strtoull(delay, nullptr, 10) * 1000 : 0;
}

void Worker::TrailSubmitted(size_t at, size_t count, uint32_t in_flight) {
  for (size_t k = 0; k < count; ++k) {
    queue_.slots[queue_.batch[at + k].slot].depth =
        static_cast<uint16_t>(std::min<size_t>(in_flight + at + k + 1, UINT16_MAX));
  }
  if (test_reap_delay_ns_ != 0) SleepAfterSubmit();
}

void Worker::SleepAfterSubmit() {
  const uint64_t until = Clock::MonotonicNs() + test_reap_delay_ns_;
  timespec at{static_cast<time_t>(until / 1'000'000'000u),
              static_cast<long>(until % 1'000'000'000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

void Worker::PushTrail(const Slot& slot, uint64_t done_ns, bool recorded) {
  IoTrailRecord r;
  r.intended_ns = slot.intended_ns;
  r.start_ns = slot.stamps.start_ns;
  r.issued_ns = slot.stamps.issued_ns;
  r.done_ns = done_ns;
  r.offset = slot.offset;
  r.length = slot.len;
  r.file = slot.file;
  r.depth = slot.depth;
  r.cpu = static_cast<int16_t>(sched_getcpu());
  r.dir = slot.dir;
  if (trail_join_ != nullptr) trail_join_->Join(r);
  if (recorded) trail_->Push(r);
}

bool Worker::CompletedBefore(uint32_t slot_index, const Slot& slot, uint64_t done_ns,
                             uint64_t record_from_ns) {
  bool ok = true;
  // Ramp time: not recorded, but its request taken all the same, so that it is neither counted as
  // no I/O's nor a rival of the next request at its place.
  if (trail_ != nullptr && !fileops_.on && (done_ns >= record_from_ns || trail_join_ != nullptr))
    PushTrail(slot, done_ns, done_ns >= record_from_ns);
  // A mixed job's own reads are not checked (fio checks only what its verify list reads, here
  // through the engine: verify_.reading_back).
  if (spec_.verify.kind != VerifyKind::kNone && slot.dir == stats::Direction::kRead &&
      (!spec_.HasWrites() || verify_.reading_back) &&
      !CheckBlock(data_.buffers + static_cast<size_t>(slot_index) * data_.size, slot.len,
                  slot.offset, slot.file) &&
      !spec_.errors.KeepsGoing(stats::Direction::kRead, EILSEQ)) {
    ok = false;
    failed_io_ = true;
  }
  if (lat_.enabled() && !LatencyCompleted(slot, done_ns)) ok = false;
  if (spec_.region.fill_device && slot.dir == stats::Direction::kWrite) {
    fill_end_ = std::max(fill_end_, slot.offset + slot.len);
  }
  return ok;
}

bool Worker::CompletedAfter(const Slot& slot) {
  bool ok = true;
  if (((spec_.verify.backlog != 0 && spec_.verify.do_verify) || verify_.each_loop) &&
      slot.dir == stats::Direction::kWrite) {
    QueueWritten(Written{slot.file, slot.offset, slot.len});
    if (spec_.verify.backlog != 0 && verify_.backlog.size() >= spec_.verify.backlog &&
        !VerifyBacklog()) {
      ok = false;
      failed_io_ = true;
    }
  }
  const uint32_t sync_every =
      spec_.syncs.fsync_every != 0 ? spec_.syncs.fsync_every : spec_.syncs.fdatasync_every;
  if (sync_every != 0 && slot.dir == stats::Direction::kWrite &&
      ++sync_.writes_since[slot.file] >= sync_every) {
    sync_.writes_since[slot.file] = 0;
    if (sync_.deferred) {
      sync_.due[slot.file] = 1;  // before the next I/O, if there is one (FillBatchFeatures)
      sync_.any_due = true;
    } else {
      SyncFile(slot.file);
    }
  }
  return ok;
}

}  // namespace iotail::engine
