// Worker (engine/worker.h): the open loop of a rate-limited job: every I/O issued at its
// scheduled instant, its latency counted from that instant.
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "engine/clock.h"
#include "engine/worker.h"
#include "stats/core/fio_numbers.h"

namespace iotail::engine {

RateSchedule& Worker::NextDue(stats::Direction* dir) {
  if (!plan_.per_direction) return plan_.schedules[0];
  // Reads [0], writes [1]; a direction the job does not do has no schedule.
  if (plan_.schedules.size() == 1) {
    *dir = spec_.HasReads() ? stats::Direction::kRead : stats::Direction::kWrite;
    return plan_.schedules[0];
  }
  const bool write = plan_.schedules[1].next_ns() < plan_.schedules[0].next_ns();
  *dir = write ? stats::Direction::kWrite : stats::Direction::kRead;
  return plan_.schedules[write ? 1 : 0];
}

void Worker::RunOpenLoop(const WorkerTimes& times, const std::atomic<bool>& stop) {
  constexpr uint64_t kMaxWaitNs = 10'000'000;  // see a stop request within 10 ms
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);      // wake on time for the next scheduled I/O
  for (RateSchedule& s : plan_.schedules) s.Start(times.start_ns);
  const uint32_t depth = spec_.queue.iodepth;
  const uint64_t bytes_limit = plan_.bytes_limit;
  uint64_t issued_bytes = 0;
  uint32_t in_flight = 0;
  bool stopping = false;
  stats::Recorder& rec = *recorder_;
  uint64_t now = Clock::NowNs();

  for (;;) {
    // The run's end first (fio checks runtime before issuing): an I/O due at the very end is not
    // issued after it.
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) || Stopped(stop)) {
      stopping = true;
    }
    // Issue every due I/O that has a free slot; all of this round's share one submit stamp.
    QueueRedo();
    queue_.new_in_batch = 0;
    uint64_t next_due = 0;
    const bool more = !stopping && (bytes_limit == 0 || issued_bytes < bytes_limit);
    while (more && queue_.free_count > 0 && (bytes_limit == 0 || issued_bytes < bytes_limit)) {
      stats::Direction dir = stats::Direction::kRead;
      RateSchedule& schedule = NextDue(&dir);
      next_due = schedule.next_ns();
      if (next_due > now || !NextLoopIfDone()) break;
      const IoChoice c = stride_ ? stride_->Next(pattern_, plan_.per_direction ? &dir : nullptr)
                         : plan_.per_direction ? pattern_.Next(dir)
                                               : pattern_.Next();
      if (fileops_.on && !fileops_.operated[c.file] && !OperateOnce(c.file)) break;
      schedule.Advance(c.bs);
      QueueNew(c, next_due);
      if (plan_.iolog) LogIssued(c);
      if (now >= times.record_from_ns) rec.RecordIssue(now - next_due, kLateThresholdNs);
      issued_bytes += c.bs;
      passes_.loop_bytes += c.bs;
      ++passes_.issued_ios;
    }
    if (queue_.batch_count > 0) {
      if (!SubmitBatch(&in_flight)) return;
    }
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) || Stopped(stop)) {
      stopping = true;
    }
    const bool issuing =
        !stopping && !passes_.issue_over && (bytes_limit == 0 || issued_bytes < bytes_limit);
    if (in_flight == 0 && !issuing) break;

    // Wait: for a completion when no slot is free (the next I/O could not start anyway), else
    // until the next I/O is due (or the run's end), reaping whatever completes meanwhile.
    int n = 0;
    if (issuing && queue_.free_count > 0) {
      uint64_t until = next_due > now ? next_due : now;
      if (times.stop_at_ns != 0 && times.stop_at_ns < until) until = times.stop_at_ns;
      uint64_t wait = until > now ? until - now : 0;
      if (wait > kMaxWaitNs) wait = kMaxWaitNs;
      // Sleep until `oversleep_ns_` before the due time (what waking up has been taking on this
      // machine), then poll without sleeping: the I/O leaves on time instead of a timer's
      // latency late. Only when the wait is at least 4x that, so polling costs at most a quarter
      // of the waiting time (at high rates the worker sleeps the whole wait, as before).
      const uint64_t early = wait >= 4 * oversleep_ns_ ? oversleep_ns_ : 0;
      const uint64_t sleep = wait - early;
      if (in_flight > 0 || queue_.batch_count > 0) {
        n = engine_->ReapTimeout(std::span<IoCompletion>(queue_.completions.data(), depth), 1,
                                 sleep);
      } else if (sleep > 0) {
        timespec ts{static_cast<time_t>(sleep / 1'000'000'000u),
                    static_cast<long>(sleep % 1'000'000'000u)};
        nanosleep(&ts, nullptr);
      }
      if (sleep > 0 && n == 0 && early == oversleep_ns_) {
        const uint64_t woke = Clock::NowNs();
        const uint64_t late = woke > now + sleep ? woke - (now + sleep) : 0;
        oversleep_ns_ = std::min(kMaxOversleepNs, (oversleep_ns_ * 7 + late) / 8);
      }
    } else if (in_flight > 0) {
      n = stopping && traits_.can_abandon
              ? ReapStopping(1, depth, &in_flight)
              : engine_->Reap(std::span<IoCompletion>(queue_.completions.data(), depth), 1);
    }
    if (n < 0) {
      engine_error_ = -n;
      rec.RecordError(-n);
      return;
    }
    now = Clock::NowNs();
    if (!Complete(n, times.record_from_ns, &in_flight)) stopping = true;
    if (n > 0 && !CheckRateFloor(now)) stopping = true;
  }
}

}  // namespace iotail::engine
