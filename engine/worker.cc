#include "engine/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "engine/clock.h"
#include "stats/core/errors.h"
#include "stats/core/fio_numbers.h"

namespace iotail::engine {

Worker::Worker(const JobSpec& spec, WorkerPlan plan, std::unique_ptr<IoEngine> engine)
    : spec_(spec),
      plan_(std::move(plan)),
      engine_(std::move(engine)),
      recorder_(std::make_unique<stats::Recorder>()),
      pattern_(spec, PatternOf(spec, plan_),
               spec.randseed + 0x9e3779b97f4a7c15ull * (plan_.index + 1)),
      lat_(spec) {
  if (RateFloor::Enabled(spec)) floor_.emplace(spec, plan_.index);
  ramp_.on = spec.ramp_time_ns != 0;
  if (spec.prio.ioprio >= 0 || spec.prio.ioprio_class >= 0) {
    prio_.job_ioprio =
        IoprioValue(std::max(spec.prio.ioprio_class, 0), std::max(spec.prio.ioprio, 0));
  }
  // A replay of a trace that records each I/O's latency keeps those beside its own.
  if (plan_.replay && spec.replay.trace_recorded > 0) recorder_->KeepRecorded();
  if (spec.prio.cmdprio.Any()) {
    // Before the run (the interval clock reads the recorder from then on).
    prio_.cmdprio.emplace(spec.prio.cmdprio, prio_.job_ioprio, spec.HasReads(), spec.HasWrites());
    for (const stats::Direction d : {stats::Direction::kRead, stats::Direction::kWrite}) {
      recorder_->SetPriorities(d, prio_.cmdprio->Priorities(d));
    }
    prio_.rng = FastRandom(spec.randseed ^ 0x636d647072696full * (plan_.index + 1));
  }
  if (Strided(spec, plan_)) {
    const uint64_t file_end =
        plan_.region_offset + (plan_.file_end ? plan_.file_end : plan_.region_size);
    stride_.emplace(spec.zones.size, spec.zones.Range(), spec.zones.skip, plan_.region_offset,
                    file_end);
  }
  if (plan_.zones) {
    zbd_.emplace(spec, plan_.zones, plan_.region_offset, plan_.region_size, plan_.zoned_file_size);
  }
}

Worker::~Worker() {
  engine_.reset();  // first: I/Os still in flight after an engine failure target the buffers
  std::free(data_.buffers);
  std::free(verify_.backlog_buffer);
}

void Worker::QueueRedos() {
  while (queue_.redo_count > 0) {
    const uint32_t s = queue_.redo[--queue_.redo_count];
    const Slot& slot = queue_.slots[s];
    queue_.batch[queue_.batch_count++] =
        IoRequest{s,
                  slot.dir,
                  slot.file,
                  slot.offset + slot.done,
                  slot.len - slot.done,
                  data_.buffers + static_cast<size_t>(s) * data_.size + slot.done,
                  &redo_stamps_,  // the I/O keeps its first stamps
                  slot.ioprio,
                  slot.cmdprio};
  }
}

void Worker::FillBatch(bool issue_new, uint64_t& issued_bytes, uint64_t bytes_limit) {
  if (features_.issue) {
    FillBatchFeatures(issue_new, issued_bytes, bytes_limit);
    return;
  }
  QueueRedo();
  queue_.new_in_batch = 0;
  while (issue_new && queue_.free_count > 0 &&
         queue_.slots.size() - queue_.free_count < lt_.issue_cap &&
         (bytes_limit == 0 || issued_bytes < bytes_limit) && LoopGoesOn()) {
    const IoChoice c = pattern_.Next();
    issued_bytes += c.bs;
    passes_.loop_bytes += c.bs;
    ++passes_.issued_ios;
    QueueNew(c, 0);
  }
}

void Worker::FillBatchFeatures(bool issue_new, uint64_t& issued_bytes, uint64_t bytes_limit) {
  QueueRedo();
  queue_.new_in_batch = 0;
  zoned_.wait = false;
  trims_.in_batch = 0;
  flow_held_ = false;
  while (issue_new && queue_.free_count > 0 &&
         queue_.slots.size() - queue_.free_count < lt_.issue_cap &&
         (bytes_limit == 0 || issued_bytes < bytes_limit) &&
         trims_.in_batch < spec_.queue.iodepth && NextLoopIfDone()) {
    if (!flow_.MayIssue()) {
      flow_held_ = true;
      break;
    }
    if (sync_.any_due) SyncDue();
    IoChoice c;
    if (overlap_pending_) {
      c = *overlap_pending_;
      overlap_pending_.reset();
    } else if (zbd_) {
      if (!NextZoned(c)) break;
    } else {
      c = stride_ ? stride_->Next(pattern_) : pattern_.Next();
    }
    if (spec_.queue.serialize_overlap && OverlapsInFlight(c)) {
      overlap_pending_ = c;  // after completions (one that overlaps is in flight)
      break;
    }
    if (fileops_.on && !fileops_.operated[c.file] && !OperateOnce(c.file)) break;
    issued_bytes += c.bs;
    passes_.loop_bytes += c.bs;
    ++passes_.issued_ios;
    if (plan_.iolog) LogIssued(c);
    if (c.dir == stats::Direction::kTrim) {
      Trim(c);  // synchronous, no slot
      ++trims_.in_batch;
      continue;
    }
    QueueNew(c, 0);
  }
}

Worker::Slot& Worker::QueueNew(const IoChoice& c, uint64_t intended_ns) {
  const uint32_t s = queue_.free[--queue_.free_count];
  Slot& slot = queue_.slots[s];
  slot.offset = c.offset;
  slot.len = c.bs;
  slot.done = 0;
  slot.file = c.file;
  slot.dir = c.dir;
  slot.intended_ns = intended_ns;
  slot.taken = true;
  CmdPrio::Choice prio{prio_.job_ioprio, 0, false};
  if (prio_.cmdprio) prio = prio_.cmdprio->Choose(c.dir, c.bs, prio_.rng.Below(100));
  slot.prio = prio.index;
  slot.ioprio = prio.ioprio;
  slot.cmdprio = prio.chosen;
  char* buffer = data_.buffers + static_cast<size_t>(s) * data_.size;
  if (features_.buffer && c.dir == stats::Direction::kWrite) FillWriteBuffer(buffer, c);
  queue_.batch[queue_.batch_count++] =
      IoRequest{s, c.dir, c.file, c.offset, c.bs, buffer, &slot.stamps, prio.ioprio, prio.chosen};
  ++queue_.new_in_batch;
  return slot;
}

void Worker::FillWriteBuffer(char* buffer, const IoChoice& c) {
  if (spec_.verify.kind != VerifyKind::kNone) {
    FillVerifiedBlock(buffer, c.bs, c.offset, c.file, verify_.write_seed, spec_.verify.Layout());
  } else if (spec_.buffers.refill && !data_.content.Fixed()) {
    // fio's refill_buffers: new data for every write (no two writes alike).
    if (data_.dedupe) {
      data_.dedupe->Fill(data_.content, buffer, c.bs, data_.refill);
    } else {
      data_.content.Fill(buffer, c.bs, data_.refill);
    }
  }
}

bool Worker::Failed() const {
  return engine_error_ != 0 || failed_io_ || !rate_shortfall().empty();
}

void Worker::Run(const WorkerTimes& times, const std::atomic<bool>& stop) {
  if (!spec_.placement.cpus_allowed.empty() || !numa_cpus_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (spec_.placement.cpus_allowed_split && !spec_.placement.cpus_allowed.empty()) {
      const size_t n = spec_.placement.cpus_allowed.size();
      CPU_SET(spec_.placement.cpus_allowed[static_cast<size_t>(plan_.index) % n], &set);
    } else {
      for (int cpu : spec_.placement.cpus_allowed) CPU_SET(cpu, &set);
    }
    if (!numa_cpus_.empty()) {
      // numa_cpu_nodes: its nodes' CPUs, within cpus_allowed when that is given too.
      cpu_set_t nodes;
      CPU_ZERO(&nodes);
      for (int cpu : numa_cpus_) CPU_SET(cpu, &nodes);
      if (spec_.placement.cpus_allowed.empty()) {
        set = nodes;
      } else {
        CPU_AND(&set, &set, &nodes);
      }
    }
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  // startdelay: wait for this worker's start, in slices so that a stop request is seen.
  for (uint64_t now = Clock::NowNs(); now < times.start_ns && !Stopped(stop);
       now = Clock::NowNs()) {
    const uint64_t slice = std::min<uint64_t>(times.start_ns - now, 10'000'000);
    timespec ts{0, static_cast<long>(slice)};
    nanosleep(&ts, nullptr);
  }
  // fio opens a clone's files when it starts (after its startdelay, or once the job it waits for
  // has ended) and drops their cached pages then: what an earlier job left cached is not read.
  if (plan_.invalidate) InvalidateRegion();
  cpu_.from = SampleCpu();
  record_from_ns_ = times.record_from_ns;
  SetFeatureFlags();  // after JoinFlow
  if (plan_.iolog) plan_.iolog->Opened(Clock::NowNs());
  if (plan_.replay) {
    RunReplay(times, stop);
    EndFsync(spec_.syncs.end_fsync);
  } else if (!plan_.schedules.empty()) {
    RunOpenLoop(times, stop);
    EndFsync(spec_.syncs.end_fsync);
  } else {
    RunClosedLoop(times, stop);
    EndFsync(spec_.syncs.end_fsync);
    // A job that verifies each loop has read back what its loops completed, except the last
    // loop's when the I/O ended otherwise (io_size); not after the runtime ended it, as fio.
    if (spec_.verify.kind != VerifyKind::kNone && spec_.verify.do_verify && spec_.HasWrites() &&
        engine_error_ == 0 && !Stopped(stop) && !spec_.NeverVerifies() &&
        !(verify_.each_loop && (ended_by_time_ || failed_io_))) {
      VerifyPass(stop);
    }
  }
  EndFsync(spec_.syncs.fsync_on_close);  // fio closes the clone's files as it ends
  if (plan_.iolog) plan_.iolog->Close(Clock::NowNs());
  cpu_.used = SampleCpu().Since(cpu_.from);
  flow_.Leave();
}

void Worker::EndFsync(bool wanted) {
  if (!wanted || !spec_.HasWrites()) return;
  for (const int fd : plan_.fds) {
    if (fd >= 0 && fsync(fd) != 0) {
      recorder_->RecordError(errno);
      failed_io_ = true;
    }
  }
}

stats::CpuUsage Worker::SampleCpu() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  auto ns = [](const timeval& tv) {
    return static_cast<uint64_t>(tv.tv_sec) * 1'000'000'000u +
           static_cast<uint64_t>(tv.tv_usec) * 1000u;
  };
  return stats::CpuUsage{ns(ru.ru_utime),
                         ns(ru.ru_stime),
                         Clock::MonotonicNs(),
                         static_cast<uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw),
                         static_cast<uint64_t>(ru.ru_majflt),
                         static_cast<uint64_t>(ru.ru_minflt)};
}

void Worker::RunClosedLoop(const WorkerTimes& times, const std::atomic<bool>& stop) {
  const uint32_t depth = spec_.queue.iodepth;
  const uint32_t complete_min = std::max<uint32_t>(1, spec_.queue.batch_complete_min);
  // fio's default: at most iodepth_batch_complete_min completions per reap (one), so that each
  // is replaced at once and the queue stays full; taking every ready one let a queue of
  // simultaneous completions empty and refill as one batch.
  const uint32_t complete_max = spec_.queue.batch_complete_max != 0
                                    ? std::min(spec_.queue.batch_complete_max, depth)
                                    : std::min(complete_min, depth);
  // fio's iodepth_low: once the queue is full, it drains to this before new I/Os are queued.
  const uint32_t low =
      spec_.queue.iodepth_low != 0 ? std::min(spec_.queue.iodepth_low, depth) : depth;
  uint64_t issued_bytes = 0;
  uint32_t in_flight = 0;
  bool stopping = false, draining = false;
  stats::Recorder& rec = *recorder_;
  uint64_t stop_at_ns = times.stop_at_ns;  // moved by a latency target's statistics reset
  lat_.Start(Clock::NowNs(), lt_.ios);     // fio's lat_target_init
  lt_.issue_cap = lat_.limit();

  for (;;) {
    if (in_flight <= low) draining = false;
    FillBatch(!stopping && !draining, issued_bytes, plan_.bytes_limit);
    if (queue_.batch_count > 0 && !SubmitBatch(&in_flight)) return;
    if (in_flight >= depth && low < depth) draining = true;
    if (in_flight == 0) {
      if (flow_held_ && !stopping) {
        // Held back by its flow: wait for the other jobs of the flow, then try again.
        if ((stop_at_ns != 0 && Clock::NowNs() >= stop_at_ns) || Stopped(stop)) {
          stopping = true;
        } else {
          FlowWait();
        }
        continue;
      }
      if (zbd_ && !stopping && (zoned_.eof || zoned_.wait)) {
        if (!ZonedIdle(stop, stop_at_ns)) stopping = true;
        continue;
      }
      if (verify_.due && !stopping) {
        // fio's do_verify between loops: this loop's writes read back before the next one.
        verify_.due = false;
        verify_.loop_verified = true;
        if (!VerifyWritten(stop, stop_at_ns)) stopping = true;
        continue;
      }
      // Trims are done as they are chosen: nothing in flight, but the job goes on.
      if (trims_.in_batch == 0 || stopping) break;
      if (trims_.failed || (stop_at_ns != 0 && Clock::NowNs() >= stop_at_ns) || Stopped(stop)) {
        stopping = true;
      }
      continue;
    }
    const uint32_t want = in_flight < complete_min ? in_flight : complete_min;
    const int n =
        stopping && traits_.can_abandon
            ? ReapStopping(want, complete_max, &in_flight)
            : engine_->Reap(std::span<IoCompletion>(queue_.completions.data(), complete_max), want);
    if (n < 0) {
      engine_error_ = -n;
      rec.RecordError(-n);
      return;
    }
    const uint64_t now = n > 0 ? queue_.completions[0].done_ns : Clock::NowNs();
    if (!Complete(n, times.record_from_ns, &in_flight)) stopping = true;
    if (features_.round) {
      if (n > 0 && !CheckRateFloor(now)) stopping = true;
      if (lat_.enabled() && !stopping) {
        if (!LatencyRound(now, in_flight)) stopping = true;
        // fio's reset restarts the job's clock: the runtime counts again from it.
        if (lt_.stats_reset_ns != 0 && stop_at_ns != 0) {
          stop_at_ns = lt_.stats_reset_ns + spec_.runtime_ns;
        }
      }
      if (spec_.thinktime.ns != 0 && n > 0 && !stopping) {
        since_think_ += static_cast<uint32_t>(n);
        if (since_think_ >= spec_.thinktime.blocks) {
          since_think_ = 0;
          Think(stop);
        }
      }
    }
    if (stop_at_ns != 0 && now >= stop_at_ns) ended_by_time_ = stopping = true;
    if (Stopped(stop)) stopping = true;
  }
}

bool Worker::SubmitBatch(uint32_t* in_flight) {
  // --iodepth_batch_submit: at most that many requests per submission call (0: the whole batch).
  // By default 1, as fio: each I/O's submission is its own call, so its stamps are its own.
  const size_t chunk =
      spec_.queue.batch_submit != 0 ? spec_.queue.batch_submit : queue_.batch_count;
  for (size_t at = 0; at < queue_.batch_count; at += chunk) {
    const size_t count = std::min(chunk, queue_.batch_count - at);
    const int rc = engine_->Submit(std::span<const IoRequest>(queue_.batch.data() + at, count));
    if (rc < 0) {
      engine_error_ = -rc;
      recorder_->RecordError(-rc);
      return false;
    }
    ++depths_.submit[stats::IoDepthCounts::BatchIndex(count)];
    for (size_t k = 1; k <= count; ++k) {
      ++depths_.level[stats::IoDepthCounts::LevelIndex(*in_flight + at + k)];
    }
    if (trail_ != nullptr) [[unlikely]]
      TrailSubmitted(at, count, *in_flight);
  }
  *in_flight += static_cast<uint32_t>(queue_.new_in_batch);
  recorder_->SetInFlight(*in_flight);
  return true;
}

bool Worker::Complete(int n, uint64_t record_from_ns, uint32_t* in_flight) {
  stats::Recorder& rec = *recorder_;
  if (n > 0) ++depths_.complete[stats::IoDepthCounts::BatchIndex(static_cast<uint64_t>(n))];
  const bool async = traits_.asynchronous;
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    const IoCompletion& c = queue_.completions[static_cast<size_t>(i)];
    Slot& slot = queue_.slots[c.slot];
    int64_t res = c.result;
    // The usual case: the whole (remaining) transfer done.
    if (res <= 0 || slot.done + static_cast<uint64_t>(res) != slot.len) [[unlikely]] {
      if (Resubmits(c.slot, slot, &res)) continue;
    }
    --*in_flight;
    queue_.free[queue_.free_count++] = c.slot;
    slot.taken = false;
    if (zbd_) zbd_->Completed(slot.dir, slot.offset, slot.len);
    if (res < 0) [[unlikely]] {
      if (!CompletionFailed(slot, static_cast<int>(-res))) ok = false;
      continue;
    }
    if (features_.completion && !CompletedBefore(c.slot, slot, c.done_ns, record_from_ns)) {
      ok = false;
    }
    const uint64_t done = c.done_ns;
    if (done < record_from_ns) [[unlikely]] {
      if (ramp_.on) RecordInRamp(slot);
    } else {
      if (floor_) floor_->Count(slot.dir, slot.len);
      const IoStamps& st = slot.stamps;
      if (fileops_.on) {
        rec.RecordUntimed(slot.dir, slot.len);  // fio's FIO_NOSTATS: the file operation is timed
      } else {
        rec.RecordClat(slot.dir, done - st.issued_ns, slot.len);
        if (prio_.cmdprio) rec.RecordPrio(slot.dir, slot.prio, done - st.issued_ns);
        if (async) rec.RecordSlat(slot.dir, st.issued_ns - st.start_ns);
        // lat: from the start when that differs from the issue (asynchronous engines; a
        // synchronous engine's lat is its clat, recorded once), fio's. olat: from the intended
        // start (open loop only), iotail's own.
        if (async) rec.RecordLat(slot.dir, done - st.start_ns);
        if (slot.intended_ns != 0) [[unlikely]] {
          rec.RecordOlat(slot.dir, done > slot.intended_ns ? done - slot.intended_ns : 0);
        }
      }
    }
    if (features_.completion && !CompletedAfter(slot)) ok = false;
  }
  rec.SetInFlight(*in_flight);
  return ok;
}

void Worker::RecordInRamp(const Slot& slot) {
  // fio counts a ramp's I/Os and bytes (which its statistics reset at the ramp's end forgets) but
  // takes no latency sample inside it.
  const auto d = static_cast<size_t>(stats::DirectionIndex(slot.dir));
  ++ramp_.ios[d];
  ramp_.bytes[d] += slot.len;
}

bool Worker::Resubmits(uint32_t slot_index, Slot& slot, int64_t* res) {
  const int64_t r = *res;
  if ((r == -EAGAIN && traits_.retries_eagain) || (r > 0 && slot.done + r < slot.len)) {
    if (r > 0) slot.done += static_cast<uint32_t>(r);
    queue_.redo[queue_.redo_count++] = slot_index;
    return true;
  }
  if (r == 0 && slot.len > 0) {
    // End of file. An asynchronous engine's read completes short with what it brought (fio counts
    // it and goes on: a create_on_open file read before it is written); a synchronous one fails
    // with fio's "full resid" EIO.
    if (traits_.asynchronous && slot.dir == stats::Direction::kRead) {
      slot.len = slot.done;
      *res = slot.done;
      ++short_reads_;
    } else {
      *res = -EIO;
    }
  }
  return false;
}

bool Worker::CompletionFailed(const Slot& slot, int err) {
  const bool goes_on = spec_.errors.KeepsGoing(slot.dir, err);
  if (!goes_on && spec_.region.fill_device && (err == ENOSPC || err == EDQUOT)) {
    return false;  // fio's fill_device: full is the end of the job, not an error
  }
  recorder_->RecordError(err);
  if (!goes_on || spec_.errors.dump) ReportIoError(slot.file, slot.dir, slot.offset, slot.len, err);
  if (!goes_on) failed_io_ = true;
  return goes_on;
}

}  // namespace iotail::engine
