// Worker (engine/worker.h): the replay of a trace (read_iolog), in the open loop. Each I/O of a
// timed trace is issued at its intended time (the replay's start plus its scaled trace time),
// whatever the completions; its lateness (issue minus intended) is recorded apart
// (Recorder::RecordLateness) and its olat counts from the intended time, while clat and lat keep
// fio's meaning (from the issue). A trace without times (v2, or replay_no_stall) is paced by
// completions as fio's: each I/O goes when a slot is free (its intended time is its issue). The
// latency the trace recorded for an I/O (blktrace's dispatch to completion) is counted as it is
// issued (Recorder::RecordRecorded), so in the interval of its trace time on the run's clock. v2's
// waits hold the next I/O until their instant. A sync or datasync waits for the I/Os in flight,
// then syncs its file; a trim is done synchronously (as the closed loop's); open and close change
// nothing (every target is open for the whole replay). Nothing is dropped: an I/O that cannot go
// at its time (no free slot) waits for one and keeps its intended time.
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/clock.h"
#include "engine/worker.h"

namespace iotail::engine {

using replay::TraceEvent;
using replay::TraceOp;

void Worker::LogIssued(const IoChoice& c) {
  plan_.iolog->Log(Clock::NowNs(), c.file,
                   c.dir == stats::Direction::kRead    ? TraceOp::kRead
                   : c.dir == stats::Direction::kWrite ? TraceOp::kWrite
                                                       : TraceOp::kTrim,
                   c.offset, c.bs);
}

void Worker::ReplaySpecial(const TraceEvent& e) {
  if (e.op == TraceOp::kTrim) {
    Trim(IoChoice{stats::Direction::kTrim, e.length, e.device, e.offset});
    return;
  }
  const int fd = plan_.fds[e.device];
  const uint64_t start = Clock::NowNs();
  const int rc = fd < 0 ? 0 : e.op == TraceOp::kDatasync ? fdatasync(fd) : fsync(fd);
  if (rc != 0) {
    recorder_->RecordError(errno);
    return;
  }
  sync_.stats.Add(static_cast<double>(Clock::NowNs() - start));
}

int Worker::ReplayWait(uint64_t until, uint64_t now, bool reap) {
  constexpr uint64_t kMaxWaitNs = 10'000'000;  // see a stop request within 10 ms
  constexpr uint64_t kSpinNs = 20'000;         // the last stretch is polled, not slept
  constexpr uint64_t kMaxSpinNs = 30'000;      // more than this is slept: a poll costs the CPU
  const std::span<IoCompletion> out(queue_.completions.data(), spec_.queue.iodepth);
  uint64_t wait = until > now ? until - now : 0;
  if (wait > kMaxWaitNs) wait = kMaxWaitNs;
  // Sleep until what waking has been taking (oversleep_ns_) plus kSpinNs before the due time,
  // then poll: the I/O leaves on time instead of a timer's latency late.
  const uint64_t spin = std::min<uint64_t>(oversleep_ns_, kMaxSpinNs) + kSpinNs;
  if (wait > spin) {
    const uint64_t sleep = wait - spin;
    int n = 0;
    if (reap) {
      n = engine_->ReapTimeout(out, 1, sleep);
    } else {
      timespec ts{static_cast<time_t>(sleep / 1'000'000'000u),
                  static_cast<long>(sleep % 1'000'000'000u)};
      nanosleep(&ts, nullptr);
    }
    if (n == 0) {
      const uint64_t woke = Clock::NowNs();
      const uint64_t late = woke > now + sleep ? woke - (now + sleep) : 0;
      oversleep_ns_ = std::min(kMaxOversleepNs, (oversleep_ns_ * 7 + late) / 8);
    }
    return n;
  }
  for (;;) {
    if (reap) {
      if (const int n = engine_->ReapTimeout(out, 0, 0); n != 0) return n;
    }
    if (Clock::NowNs() >= until) return 0;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
}

void Worker::RunReplay(const WorkerTimes& times, const std::atomic<bool>& stop) {
  constexpr uint64_t kMaxWaitNs = 10'000'000;
  constexpr uint64_t kTopUpNs = 100'000;  // read ahead when the wait is at least this long
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  replay::ReplayFeed& feed = *plan_.replay;
  const uint32_t depth = spec_.queue.iodepth;
  const uint64_t start = times.start_ns;
  uint32_t in_flight = 0;
  uint64_t hold_until = 0;  // a v2 wait's instant
  bool stopping = false;
  stats::Recorder& rec = *recorder_;
  uint64_t now = Clock::NowNs();

  for (;;) {
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) || Stopped(stop)) stopping = true;
    QueueRedo();
    queue_.new_in_batch = 0;
    uint64_t next_due = 0;  // the next timed I/O's instant, when it is not due yet
    bool drain = false;     // a sync waits for the I/Os in flight
    while (!stopping && queue_.free_count > 0) {
      const TraceEvent* e = feed.Peek();
      if (e == nullptr) break;
      if (e->op == TraceOp::kWait) {
        hold_until = std::max(hold_until, start + e->time_ns);
        feed.Pop();
        continue;
      }
      const bool timed = feed.Timed(*e);
      const uint64_t due = std::max(timed ? start + e->time_ns : now, hold_until);
      if (due > now) {
        next_due = due;
        break;
      }
      if (e->op == TraceOp::kOpen || e->op == TraceOp::kClose) {
        feed.Pop();
        continue;
      }
      if (e->op != TraceOp::kRead && e->op != TraceOp::kWrite) {
        if (in_flight > 0 || queue_.batch_count > 0) {
          drain = true;
          break;
        }
        ReplaySpecial(*e);
        if (now >= times.record_from_ns) {
          if (timed) rec.RecordLateness(now - due);
          if (e->op == TraceOp::kTrim && e->recorded_ns != 0) {
            rec.RecordRecorded(stats::Direction::kTrim, e->recorded_ns);
          }
        }
        feed.Pop();
        now = Clock::NowNs();
        continue;
      }
      const IoChoice c{e->op == TraceOp::kRead ? stats::Direction::kRead : stats::Direction::kWrite,
                       e->length, e->device, e->offset};
      QueueNew(c, due);
      if (now >= times.record_from_ns) {
        if (timed) rec.RecordLateness(now - due);
        if (e->recorded_ns != 0) rec.RecordRecorded(c.dir, e->recorded_ns);
      }
      ++passes_.issued_ios;
      feed.Pop();
    }
    if (queue_.batch_count > 0) {
      if (!SubmitBatch(&in_flight)) return;
    }
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) || Stopped(stop)) stopping = true;
    const bool issuing = !stopping && !feed.ended();
    if (in_flight == 0 && !issuing) break;

    int n = 0;
    if (issuing && next_due != 0 && queue_.free_count > 0 && !drain) {
      // Wait until the next I/O is due (or the run's end), reaping meanwhile; read ahead first
      // when there is time.
      uint64_t until = next_due;
      if (times.stop_at_ns != 0 && times.stop_at_ns < until) until = times.stop_at_ns;
      if (until > now + kTopUpNs) {
        feed.TopUp();
        now = Clock::NowNs();
      }
      n = ReplayWait(until, now, in_flight > 0);
    } else if (in_flight > 0) {
      n = stopping && traits_.can_abandon
              ? ReapStopping(1, depth, &in_flight)
              : engine_->Reap(std::span<IoCompletion>(queue_.completions.data(), depth), 1);
    } else if (issuing && next_due == 0 && hold_until > now) {
      // Held by a v2 wait with nothing in flight.
      const uint64_t sleep = std::min(hold_until - now, kMaxWaitNs);
      timespec ts{0, static_cast<long>(sleep)};
      nanosleep(&ts, nullptr);
    }
    if (n < 0) {
      engine_error_ = -n;
      rec.RecordError(-n);
      return;
    }
    now = Clock::NowNs();
    if (!Complete(n, times.record_from_ns, &in_flight)) stopping = true;
  }
}

}  // namespace iotail::engine
