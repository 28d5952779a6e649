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
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "engine/clock.h"
#include "stats/core/fio_numbers.h"

namespace iotail::engine {

Worker::Worker(const JobSpec& spec, WorkerPlan plan, std::unique_ptr<IoEngine> engine)
    : spec_(spec),
      plan_(std::move(plan)),
      engine_(std::move(engine)),
      recorder_(std::make_unique<stats::Recorder>()),
      pattern_(spec,
               PatternRegion{static_cast<uint32_t>(plan_.fds.size()), plan_.region_offset,
                             plan_.region_size, plan_.file_end},
               spec.randseed + 0x9e3779b97f4a7c15ull * (plan_.index + 1)),
      has_floor_(spec.rate_min[0].Any() || spec.rate_min[1].Any()) {}

Worker::~Worker() {
  engine_.reset();  // first: I/Os still in flight after an engine failure target the buffers
  std::free(buffers_);
}

void Worker::Prepare(const std::atomic<bool>* stop) {
  const uint32_t depth = spec_.iodepth;
  writes_since_sync_.assign(plan_.fds.size(), 0);
  is_block_.assign(plan_.fds.size(), false);
  for (size_t f = 0; f < plan_.fds.size(); ++f) {
    struct stat st {};
    is_block_[f] = plan_.fds[f] >= 0 && fstat(plan_.fds[f], &st) == 0 && S_ISBLK(st.st_mode);
  }
  buffer_size_ = (spec_.MaxBlockSize() + 4095) / 4096 * 4096;
  const size_t total = static_cast<size_t>(buffer_size_) * depth;
  buffers_ = static_cast<char*>(std::aligned_alloc(4096, total));
  if (buffers_ == nullptr) throw std::system_error(ENOMEM, std::generic_category(), "I/O buffers");
  if (spec_.zero_buffers) {
    std::memset(buffers_, 0, total);
  } else {
    FastRandom rng(spec_.randseed ^ static_cast<uint64_t>(plan_.index));
    for (size_t i = 0; i + 8 <= total; i += 8) {
      const uint64_t v = rng.Next();
      std::memcpy(buffers_ + i, &v, 8);
    }
  }
  slots_.assign(depth, Slot{});
  free_.resize(depth);
  for (uint32_t i = 0; i < depth; ++i) free_[i] = depth - 1 - i;
  free_count_ = depth;
  redo_.resize(depth);
  batch_.resize(depth);
  completions_.resize(depth);
  EngineSetup setup;
  setup.fds = plan_.fds;
  setup.depth = depth;
  setup.buffers = buffers_;
  setup.buffer_size = buffer_size_;
  setup.sqthread_poll = spec_.sqthread_poll;
  setup.hipri = spec_.hipri;
  setup.nowait = spec_.nowait;
  setup.random_access = spec_.IsRandom();
  setup.fadvise = spec_.FadviseAdvice();
  setup.uri = spec_.uri;
  setup.nbd_timeout_ns = spec_.nbd_timeout_ns;
  setup.stop = stop;
  engine_->Prepare(setup);
  asynchronous_ = engine_->Asynchronous();
  retries_eagain_ = engine_->RetriesEagain();
  can_abandon_ = engine_->CanAbandon();
}

void Worker::QueueRedo() {
  batch_count_ = 0;
  // Resubmissions first: the remainder of short transfers and -EAGAIN.
  while (redo_count_ > 0) {
    const uint32_t s = redo_[--redo_count_];
    const Slot& slot = slots_[s];
    batch_[batch_count_++] = IoRequest{s,
                                       slot.dir,
                                       slot.file,
                                       slot.offset + slot.done,
                                       slot.len - slot.done,
                                       buffers_ + static_cast<size_t>(s) * buffer_size_ + slot.done,
                                       &redo_stamps_};  // the I/O keeps its first stamps
  }
}

void Worker::FillBatch(bool issue_new, uint64_t& issued_bytes, uint64_t bytes_limit) {
  QueueRedo();
  new_in_batch_ = 0;
  trims_in_batch_ = 0;
  while (issue_new && free_count_ > 0 && (bytes_limit == 0 || issued_bytes < bytes_limit) &&
         trims_in_batch_ < spec_.iodepth && NextLoopIfDone()) {
    const IoChoice c = pattern_.Next();
    issued_bytes += c.bs;
    loop_bytes_ += c.bs;
    ++issued_ios_;
    if (c.dir == stats::Direction::kTrim) {
      Trim(c);  // synchronous, no slot
      ++trims_in_batch_;
      continue;
    }
    QueueNew(c, 0);
  }
}

bool Worker::NextLoopIfDone() {
  if (issue_over_) return false;
  if (spec_.number_ios != 0 && !spec_.time_based &&
      issued_ios_ >= spec_.number_ios * uint64_t{spec_.loops}) {
    issue_over_ = true;
    return false;
  }
  const bool loop_over = pattern_.PassDone() || (!spec_.time_based && plan_.loop_bytes != 0 &&
                                                 loop_bytes_ >= plan_.loop_bytes);
  if (!loop_over) return true;
  ++loops_done_;
  if (!spec_.time_based && spec_.io_size == 0 && loops_done_ >= spec_.loops) {
    issue_over_ = true;
    return false;
  }
  pattern_.Restart();
  loop_bytes_ = 0;
  ++restarts_;
  if (plan_.invalidate) InvalidateRegion();
  return true;
}

// fio's loop_cache_invalidate (and its invalidate on reopening a file for the next loop): the
// region's cached pages dropped, so the next pass reads the device rather than memory. Only a
// hint, as in fio: a failure changes nothing else.
void Worker::InvalidateRegion() {
  for (size_t f = 0; f < plan_.fds.size(); ++f) {
    const int fd = plan_.fds[f];
    if (fd < 0) continue;
    if (is_block_[f]) {
      (void)ioctl(fd, BLKFLSBUF, 0);
    } else {
      (void)posix_fadvise(fd, static_cast<off_t>(plan_.region_offset),
                          static_cast<off_t>(plan_.region_size), POSIX_FADV_DONTNEED);
    }
  }
}

bool Worker::CheckRateFloor(uint64_t now) {
  constexpr uint64_t kSettleNs = 2'000'000'000;  // fio's 2 s settle period
  if (!has_floor_ || now < record_from_ns_ + kSettleNs) return true;
  for (size_t d = 0; d < 2; ++d) {
    const RateLimit& floor = spec_.rate_min[d];
    if (!floor.Any() || done_bytes_[d] == 0) continue;
    FloorBase& base = floor_base_[d];
    if (base.set) {
      const uint64_t spent_ms = (now - base.at_ns) / 1'000'000;
      if (spent_ms < spec_.ratecycle_ms || spent_ms == 0) continue;
      const char* job = spec_.name.c_str();
      const std::string who = spec_.numjobs > 1 ? fmt::format("{} (clone {} of {})", job,
                                                              plan_.index + 1, spec_.numjobs)
                                                : std::string(job);
      // fio's integer arithmetic: per second over the whole ms spent.
      if (floor.bytes_per_s > 0) {
        const uint64_t got = (done_bytes_[d] - base.bytes) * 1000 / spent_ms;
        if (static_cast<double>(got) < floor.bytes_per_s) {
          rate_shortfall_ =
              fmt::format("{}: rate_min={}/s not met, got {}/s ({}, over {} ms)", who,
                          stats::FioNumber(floor.bytes_per_s, stats::FioUnits::kBinaryBytes),
                          stats::FioNumber(static_cast<double>(got), stats::FioUnits::kBinaryBytes),
                          d == 0 ? "reads" : "writes", spent_ms);
        }
      } else {
        const uint64_t got = (done_ios_[d] - base.ios) * 1000 / spent_ms;
        if (static_cast<double>(got) < floor.iops) {
          rate_shortfall_ =
              fmt::format("{}: rate_iops_min={} not met, got {} IOPS ({}, over {} ms)", who,
                          stats::FioNumber(floor.iops, stats::FioUnits::kCount),
                          stats::FioNumber(static_cast<double>(got), stats::FioUnits::kCount),
                          d == 0 ? "reads" : "writes", spent_ms);
        }
      }
      if (!rate_shortfall_.empty()) {
        recorder_->RecordError(EIO);  // fio: td_verror(td, EIO, "check_min_rate")
        return false;
      }
    }
    base = FloorBase{done_bytes_[d], done_ios_[d], now, true};
  }
  return true;
}

// fio's trims: BLKDISCARD on a block device, a punched hole (the size kept) in a file, done on
// the worker's thread whatever the engine (none of them queues discards), timed as clat.
void Worker::Trim(const IoChoice& c) {
  const int fd = plan_.fds[c.file];
  const uint64_t start = Clock::NowNs();
  int rc = 0;
  if (fd < 0) {
    // The null engine: nothing to trim, done at once.
  } else if (is_block_[c.file]) {
    uint64_t range[2] = {c.offset, c.bs};
    rc = ioctl(fd, BLKDISCARD, range);
  } else {
    rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(c.offset),
                   static_cast<off_t>(c.bs));
  }
  const uint64_t done = Clock::NowNs();
  if (rc != 0) {
    recorder_->RecordError(errno);
    if (!spec_.ContinueOnError(stats::Direction::kWrite)) trim_failed_ = true;
    return;
  }
  if (done >= record_from_ns_) recorder_->RecordClat(stats::Direction::kTrim, done - start, c.bs);
}

Worker::Slot& Worker::QueueNew(const IoChoice& c, uint64_t intended_ns) {
  const uint32_t s = free_[--free_count_];
  Slot& slot = slots_[s];
  slot.offset = c.offset;
  slot.len = c.bs;
  slot.done = 0;
  slot.file = c.file;
  slot.dir = c.dir;
  slot.intended_ns = intended_ns;
  char* buffer = buffers_ + static_cast<size_t>(s) * buffer_size_;
  if (spec_.verify != VerifyKind::kNone && c.dir == stats::Direction::kWrite) {
    FillVerifiedBlock(buffer, c.bs, c.offset, c.file, spec_.randseed, spec_.verify);
  }
  batch_[batch_count_++] = IoRequest{s, c.dir, c.file, c.offset, c.bs, buffer, &slot.stamps};
  ++new_in_batch_;
  return slot;
}

void Worker::Run(const WorkerTimes& times, const std::atomic<bool>& stop) {
  if (!spec_.cpus_allowed.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (spec_.cpus_allowed_split) {
      const size_t n = spec_.cpus_allowed.size();
      CPU_SET(spec_.cpus_allowed[static_cast<size_t>(plan_.index) % n], &set);
    } else {
      for (int cpu : spec_.cpus_allowed) CPU_SET(cpu, &set);
    }
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  // startdelay: wait for this worker's start, in slices so that a stop request is seen.
  for (uint64_t now = Clock::NowNs(); now < times.start_ns && !stop.load(); now = Clock::NowNs()) {
    const uint64_t slice = std::min<uint64_t>(times.start_ns - now, 10'000'000);
    timespec ts{0, static_cast<long>(slice)};
    nanosleep(&ts, nullptr);
  }
  const stats::CpuUsage before = SampleCpu();
  record_from_ns_ = times.record_from_ns;
  if (!plan_.schedules.empty()) {
    RunOpenLoop(times, stop);
  } else {
    RunClosedLoop(times, stop);
    if (spec_.verify != VerifyKind::kNone && spec_.do_verify && spec_.HasWrites() &&
        engine_error_ == 0 && !stop.load()) {
      VerifyPass(stop);
    }
  }
  cpu_ = SampleCpu().Since(before);
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
  const uint32_t depth = spec_.iodepth;
  const uint32_t complete_min = std::max<uint32_t>(1, spec_.iodepth_batch_complete_min);
  const uint32_t complete_max = spec_.iodepth_batch_complete_max != 0
                                    ? std::min(spec_.iodepth_batch_complete_max, depth)
                                    : depth;
  uint64_t issued_bytes = 0;
  uint32_t in_flight = 0;
  bool stopping = false;
  stats::Recorder& rec = *recorder_;

  for (;;) {
    FillBatch(!stopping, issued_bytes, plan_.bytes_limit);
    if (batch_count_ > 0 && !SubmitBatch(&in_flight)) return;
    if (in_flight == 0) {
      // Trims are done as they are chosen: nothing in flight, but the job goes on.
      if (trims_in_batch_ == 0 || stopping) break;
      if (trim_failed_ || (times.stop_at_ns != 0 && Clock::NowNs() >= times.stop_at_ns) ||
          stop.load(std::memory_order_relaxed)) {
        stopping = true;
      }
      continue;
    }
    const uint32_t want = in_flight < complete_min ? in_flight : complete_min;
    const int n =
        stopping && can_abandon_
            ? ReapStopping(want, complete_max, &in_flight)
            : engine_->Reap(std::span<IoCompletion>(completions_.data(), complete_max), want);
    if (n < 0) {
      engine_error_ = -n;
      rec.RecordError(-n);
      return;
    }
    const uint64_t now = n > 0 ? completions_[0].done_ns : Clock::NowNs();
    if (!Complete(n, times.record_from_ns, &in_flight)) stopping = true;
    if (n > 0 && !CheckRateFloor(now)) stopping = true;
    if (spec_.thinktime_ns != 0 && n > 0 && !stopping) {
      since_think_ += static_cast<uint32_t>(n);
      if (since_think_ >= spec_.thinktime_blocks) {
        since_think_ = 0;
        Think(stop);
      }
    }
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) ||
        stop.load(std::memory_order_relaxed)) {
      stopping = true;
    }
  }
}

// fio's thinktime: a stall between I/Os, its first thinktime_spin spent spinning, the rest asleep
// (in slices, so that a stop request is seen).
void Worker::Think(const std::atomic<bool>& stop) {
  const uint64_t start = Clock::NowNs();
  const uint64_t spin_until = start + spec_.thinktime_spin_ns;
  while (Clock::NowNs() < spin_until) {
  }
  const uint64_t until = start + spec_.thinktime_ns;
  for (uint64_t now = Clock::NowNs(); now < until && !stop.load(std::memory_order_relaxed);
       now = Clock::NowNs()) {
    const uint64_t slice = std::min<uint64_t>(until - now, 10'000'000);
    timespec ts{0, static_cast<long>(slice)};
    nanosleep(&ts, nullptr);
  }
}

bool Worker::CheckBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file) {
  char why[64];
  ++verified_blocks_;
  if (CheckVerifiedBlock(buf, len, offset, file, spec_.verify, why)) return true;
  recorder_->RecordError(EILSEQ);
  if (verify_failure_.empty()) {
    verify_failure_ = fmt::format("offset {} of file {}: {}", offset, file, why);
  }
  return false;
}

// fio's do_verify: once the writes are done, every block of the region is read back (pread) and
// checked. As fio, the read-backs are the job's reads: each is recorded in the read direction
// (clat from around the call, so its lat too), and the pass's time is the reads' runtime.
void Worker::VerifyPass(const std::atomic<bool>& stop) {
  const uint32_t bs = spec_.MinBlockSize();
  char* buf = buffers_;  // the I/O is over: slot 0's buffer is free (aligned for O_DIRECT)
  verify_start_ns_ = Clock::NowNs();
  for (uint32_t f = 0; f < plan_.fds.size(); ++f) {
    for (uint64_t off = 0; off + bs <= plan_.region_size && !stop.load(); off += bs) {
      const uint64_t at = plan_.region_offset + off;
      const uint64_t start = Clock::NowNs();
      const ssize_t got = pread(plan_.fds[f], buf, bs, static_cast<off_t>(at));
      const uint64_t done = Clock::NowNs();
      if (got == static_cast<ssize_t>(bs) && done >= record_from_ns_) {
        recorder_->RecordClat(stats::Direction::kRead, done - start, bs);
      }
      if (got != static_cast<ssize_t>(bs)) {
        recorder_->RecordError(got < 0 ? errno : EIO);
        if (verify_failure_.empty()) {
          verify_failure_ = fmt::format("offset {} of file {}: short read back", at, f);
        }
        if (!spec_.ContinueOnError(stats::Direction::kRead)) return;
        continue;
      }
      if (!CheckBlock(buf, bs, at, f) && !spec_.ContinueOnError(stats::Direction::kRead)) return;
    }
  }
}

// fio's fsync=N / fdatasync=N: the file is synced, synchronously, after every N writes to it.
void Worker::SyncFile(uint32_t file) {
  const int fd = plan_.fds[file];
  const uint64_t start = Clock::NowNs();
  // The null engine has no file: the sync completes at once (as fio's null engine).
  const int rc = fd < 0 ? 0 : spec_.fdatasync_every != 0 ? fdatasync(fd) : fsync(fd);
  if (rc != 0) {
    recorder_->RecordError(errno);
    return;
  }
  syncs_.Add(static_cast<double>(Clock::NowNs() - start));
}

bool Worker::SubmitBatch(uint32_t* in_flight) {
  // --iodepth_batch_submit: at most that many requests per submission call (0: the whole batch).
  // By default 1, as fio: each I/O's submission is its own call, so its stamps are its own.
  const size_t chunk = spec_.iodepth_batch_submit != 0 ? spec_.iodepth_batch_submit : batch_count_;
  for (size_t at = 0; at < batch_count_; at += chunk) {
    const size_t count = std::min(chunk, batch_count_ - at);
    const int rc = engine_->Submit(std::span<const IoRequest>(batch_.data() + at, count));
    if (rc < 0) {
      engine_error_ = -rc;
      recorder_->RecordError(-rc);
      return false;
    }
    ++depths_.submit[stats::IoDepthCounts::BatchIndex(count)];
    for (size_t k = 1; k <= count; ++k) {
      ++depths_.level[stats::IoDepthCounts::LevelIndex(*in_flight + at + k)];
    }
  }
  *in_flight += static_cast<uint32_t>(new_in_batch_);
  recorder_->SetInFlight(*in_flight);
  return true;
}

bool Worker::Complete(int n, uint64_t record_from_ns, uint32_t* in_flight) {
  stats::Recorder& rec = *recorder_;
  if (n > 0) ++depths_.complete[stats::IoDepthCounts::BatchIndex(static_cast<uint64_t>(n))];
  const bool async = asynchronous_;
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    const IoCompletion& c = completions_[static_cast<size_t>(i)];
    Slot& slot = slots_[c.slot];
    int64_t res = c.result;
    if ((res == -EAGAIN && retries_eagain_) || (res > 0 && slot.done + res < slot.len)) {
      if (res > 0) slot.done += static_cast<uint32_t>(res);
      redo_[redo_count_++] = c.slot;
      continue;
    }
    if (res == 0 && slot.len > 0) res = -ENODATA;  // end of file: no progress possible
    --*in_flight;
    free_[free_count_++] = c.slot;
    if (res < 0) {
      rec.RecordError(static_cast<int>(-res));
      if (!spec_.ContinueOnError(slot.dir)) ok = false;
      continue;
    }
    if (spec_.verify != VerifyKind::kNone && slot.dir == stats::Direction::kRead &&
        !CheckBlock(buffers_ + static_cast<size_t>(c.slot) * buffer_size_, slot.len, slot.offset,
                    slot.file) &&
        !spec_.ContinueOnError(stats::Direction::kRead)) {
      ok = false;
    }
    const uint64_t done = c.done_ns;
    if (done >= record_from_ns) {
      if (slot.dir != stats::Direction::kTrim) {
        const size_t d = slot.dir == stats::Direction::kRead ? 0 : 1;
        done_bytes_[d] += slot.len;
        ++done_ios_[d];
      }
      const IoStamps& st = slot.stamps;
      rec.RecordClat(slot.dir, done - st.issued_ns, slot.len);
      if (async) rec.RecordSlat(slot.dir, st.issued_ns - st.start_ns);
      // lat: from the intended start (open loop), or from the start when that differs from the
      // issue (asynchronous engines); a synchronous engine's lat is its clat, recorded once.
      if (slot.intended_ns != 0) {
        rec.RecordLat(slot.dir, done > slot.intended_ns ? done - slot.intended_ns : 0);
      } else if (async) {
        rec.RecordLat(slot.dir, done - st.start_ns);
      }
    }
    const uint32_t sync_every = spec_.fsync_every != 0 ? spec_.fsync_every : spec_.fdatasync_every;
    if (sync_every != 0 && slot.dir == stats::Direction::kWrite &&
        ++writes_since_sync_[slot.file] >= sync_every) {
      writes_since_sync_[slot.file] = 0;
      SyncFile(slot.file);
    }
  }
  rec.SetInFlight(*in_flight);
  return ok;
}

int Worker::ReapStopping(uint32_t want, size_t max, uint32_t* in_flight) {
  const std::span<IoCompletion> out(completions_.data(), max);
  const uint64_t now = Clock::NowNs();
  if (give_up_at_ns_ == 0) give_up_at_ns_ = now + kStopGraceNs;
  if (now < give_up_at_ns_) return engine_->ReapTimeout(out, want, give_up_at_ns_ - now);
  // The grace is over: what has completed is recorded, the rest given up.
  if (const int n = engine_->ReapTimeout(out, 0, 0); n != 0) return n;
  engine_->Abandon();
  for (uint32_t i = 0; i < *in_flight; ++i) recorder_->RecordError(ETIMEDOUT);
  abandoned_ += *in_flight;
  *in_flight = 0;
  redo_count_ = 0;
  recorder_->SetInFlight(0);
  return 0;
}

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
  const uint32_t depth = spec_.iodepth;
  const uint64_t bytes_limit = plan_.bytes_limit;
  uint64_t issued_bytes = 0;
  uint32_t in_flight = 0;
  bool stopping = false;
  stats::Recorder& rec = *recorder_;
  uint64_t now = Clock::NowNs();

  for (;;) {
    // The run's end first (fio checks runtime before issuing): an I/O due at the very end is not
    // issued after it.
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) ||
        stop.load(std::memory_order_relaxed)) {
      stopping = true;
    }
    // Issue every due I/O that has a free slot; all of this round's share one submit stamp.
    QueueRedo();
    new_in_batch_ = 0;
    uint64_t next_due = 0;
    const bool more = !stopping && (bytes_limit == 0 || issued_bytes < bytes_limit);
    while (more && free_count_ > 0 && (bytes_limit == 0 || issued_bytes < bytes_limit)) {
      stats::Direction dir = stats::Direction::kRead;
      RateSchedule& schedule = NextDue(&dir);
      next_due = schedule.next_ns();
      if (next_due > now || !NextLoopIfDone()) break;
      const IoChoice c = plan_.per_direction ? pattern_.Next(dir) : pattern_.Next();
      schedule.Advance(c.bs);
      QueueNew(c, next_due);
      if (now >= times.record_from_ns) rec.RecordIssue(now - next_due, kLateThresholdNs);
      issued_bytes += c.bs;
      loop_bytes_ += c.bs;
      ++issued_ios_;
    }
    if (batch_count_ > 0) {
      if (!SubmitBatch(&in_flight)) return;
    }
    if ((times.stop_at_ns != 0 && now >= times.stop_at_ns) ||
        stop.load(std::memory_order_relaxed)) {
      stopping = true;
    }
    const bool issuing =
        !stopping && !issue_over_ && (bytes_limit == 0 || issued_bytes < bytes_limit);
    if (in_flight == 0 && !issuing) break;

    // Wait: for a completion when no slot is free (the next I/O could not start anyway), else
    // until the next I/O is due (or the run's end), reaping whatever completes meanwhile.
    int n = 0;
    if (issuing && free_count_ > 0) {
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
      if (in_flight > 0 || batch_count_ > 0) {
        n = engine_->ReapTimeout(std::span<IoCompletion>(completions_.data(), depth), 1, sleep);
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
      n = stopping && can_abandon_
              ? ReapStopping(1, depth, &in_flight)
              : engine_->Reap(std::span<IoCompletion>(completions_.data(), depth), 1);
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
