// The worker's side of --explain and --explain_slowest (engine/worker.h: SetTrail): the record of
// each completion for the explain session, and the depth each I/O was submitted at.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "engine/clock.h"
#include "engine/worker.h"

namespace iotail::engine {

void Worker::SetTrail(IoTrail* trail) {
  trail_ = trail;
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

void Worker::PushTrail(const Slot& slot, uint64_t done_ns) {
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
  trail_->Push(r);
}

}  // namespace iotail::engine
