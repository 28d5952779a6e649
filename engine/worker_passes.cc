// Worker (engine/worker.h): what happens between I/Os: passes over the region (and the page
// cache dropped at each), fio's rate floors, trims, think time, verify and syncs.
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/worker.h"
#include "stats/core/fio_numbers.h"

namespace iotail::engine {

// fio's zonemode=strided, which fio drops for a job with more than one file.
bool Worker::Strided(const JobSpec& spec, const WorkerPlan& plan) {
  return spec.zones.mode == ZoneMode::kStrided && plan.fds.size() == 1;
}

// The region the access pattern runs over: the worker's, or one zone.
PatternRegion Worker::PatternOf(const JobSpec& spec, const WorkerPlan& plan) {
  if (Strided(spec, plan)) return PatternRegion{1, 0, spec.zones.Range(), spec.zones.Range()};
  return PatternRegion{static_cast<uint32_t>(plan.fds.size()), plan.region_offset, plan.region_size,
                       plan.file_end};
}

bool Worker::NextLoopIfDone() {
  if (passes_.issue_over) return false;
  if (spec_.number_ios != 0 && !spec_.time_based &&
      passes_.issued_ios >= spec_.number_ios * uint64_t{spec_.loops}) {
    passes_.issue_over = true;
    return false;
  }
  // In zones the pattern restarts within them (ZoneStride): only the bytes end a loop. The last
  // I/O of a zoned pass may still wait for a zone (zoned_.pending): the pass is not over before it.
  const bool loop_over =
      (!stride_ && pattern_.PassDone() && !zoned_.pending && !overlap_pending_) || zoned_.eof ||
      (!spec_.time_based && plan_.loop_bytes != 0 && passes_.loop_bytes >= plan_.loop_bytes);
  if (!loop_over) {
    passes_.sure_ios = SureIosAfterThis();
    return true;
  }
  if (verify_.each_loop && !verify_.loop_verified) {
    verify_.due = true;  // the closed loop reads the loop's writes back once none is in flight
    return false;
  }
  verify_.loop_verified = false;
  ++passes_.loops_done;
  // A zoned pass that ended with nothing to do (no data to read, no zone to write) is not repeated
  // for io_size or loops, which would spin: only time_based goes on (as fio, over fresh passes).
  const bool idle_pass = zoned_.eof && passes_.loop_bytes == 0 && !spec_.time_based;
  zoned_.eof = false;
  if (idle_pass ||
      (!spec_.time_based && spec_.region.io_size == 0 && passes_.loops_done >= spec_.loops)) {
    passes_.issue_over = true;
    return false;
  }
  pattern_.Restart();
  if (zbd_) zbd_->NewPass();
  passes_.loop_bytes = 0;
  ++passes_.restarts;
  if (lat_.enabled() && !spec_.time_based) {  // fio's next loop starts the search again
    lat_.Start(Clock::NowNs(), lt_.ios);
    lt_.issue_cap = lat_.limit();
  }
  if (plan_.invalidate) InvalidateRegion();
  // fio closes every file at the end of a loop and opens it again in the next: the file and
  // directory operation engines operate on each file once more.
  std::fill(fileops_.operated.begin(), fileops_.operated.end(), 0);
  passes_.sure_ios = SureIosAfterThis();
  return true;
}

// The checks of NextLoopIfDone that can end the job before an I/O, counted ahead: the pass
// (IoPattern::SureIosLeft), number_ios and the loop's bytes (at most the largest block each). An
// I/O this allows has been checked; the count is of those after it. The worker's features that end
// a pass otherwise (zones, strides, overlaps) take FillBatchFeatures, which never uses the count.
uint64_t Worker::SureIosAfterThis() const {
  if (features_.issue) return 0;
  uint64_t sure = pattern_.SureIosLeft();
  if (sure == 0) return 0;
  --sure;  // this I/O
  if (spec_.number_ios != 0 && !spec_.time_based) {
    const uint64_t limit = spec_.number_ios * uint64_t{spec_.loops};
    sure = std::min(sure, limit > passes_.issued_ios + 1 ? limit - passes_.issued_ios - 1 : 0);
  }
  if (!spec_.time_based && plan_.loop_bytes != 0) {
    const uint64_t left =
        plan_.loop_bytes > passes_.loop_bytes ? plan_.loop_bytes - passes_.loop_bytes : 0;
    sure = std::min<uint64_t>(sure, left > 0 ? (left - 1) / spec_.MaxBlockSize() : 0);
  }
  return sure;
}

void Worker::SetFeatureFlags() {
  const bool syncs = spec_.syncs.fsync_every != 0 || spec_.syncs.fdatasync_every != 0;
  // fio's fsync=N is issued before the I/O after the Nth write: the closed loop keeps a due sync
  // for its next I/O (FillBatchFeatures), so none follows the job's last write.
  sync_.deferred = syncs && plan_.schedules.empty();
  features_.issue = flow_.Joined() || spec_.queue.serialize_overlap || zbd_.has_value() ||
                    stride_.has_value() || fileops_.on || spec_.HasTrims() || sync_.deferred ||
                    plan_.iolog != nullptr;
  features_.buffer =
      spec_.verify.kind != VerifyKind::kNone || (spec_.buffers.refill && !data_.content.Fixed());
  features_.completion = zbd_.has_value() || spec_.verify.kind != VerifyKind::kNone ||
                         verify_.each_loop || lat_.enabled() || spec_.region.fill_device || syncs ||
                         floor_.has_value() || trail_ != nullptr;
  features_.round = floor_.has_value() || lat_.enabled() || spec_.thinktime.ns != 0;
  passes_.sure_ios = 0;
}

bool Worker::OverlapsInFlight(const IoChoice& c) const {
  for (const Slot& s : queue_.slots) {
    if (s.taken && s.file == c.file && s.offset < c.offset + c.bs && c.offset < s.offset + s.len) {
      return true;
    }
  }
  return false;
}

bool Worker::OperateOnce(uint32_t file) {
  fileops_.operated[file] = 1;
  const int64_t r = engine_->OperateOn(file);
  if (r < 0) {
    recorder_->RecordError(static_cast<int>(-r));
    failed_io_ = true;
    passes_.issue_over = true;
    return false;
  }
  if (Clock::NowNs() >= record_from_ns_) {
    recorder_->RecordOperation(fileops_.dir, static_cast<uint64_t>(r));
  }
  return true;
}

bool Worker::NextZoned(IoChoice& c) {
  if (zoned_.pending) {
    c = *zoned_.pending;
    zoned_.pending.reset();
  } else {
    const stats::Direction dir = zbd_->Direction(pattern_.NextDirection());
    c = pattern_.Next(dir);
  }
  const uint32_t own_in_flight = spec_.queue.iodepth - static_cast<uint32_t>(queue_.free_count);
  switch (zbd_->Adjust(c, own_in_flight)) {
    case ZbdAccess::Verdict::kAccept:
      pattern_.ContinueAt(zbd_->SequentialNext(c));
      return true;
    case ZbdAccess::Verdict::kWait:
      zoned_.pending = c;
      zoned_.wait = true;
      return false;
    case ZbdAccess::Verdict::kEof:
      zoned_.eof = true;
      return false;
  }
  return false;
}

bool Worker::ZonedIdle(const std::atomic<bool>& stop, uint64_t stop_at_ns) {
  if (Stopped(stop) || (stop_at_ns != 0 && Clock::NowNs() >= stop_at_ns)) return false;
  sched_yield();  // other workers' writes to complete, or a time_based job's next pass
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
  if (!floor_ || floor_->Check(now, record_from_ns_)) return true;
  recorder_->RecordError(EIO);  // fio: td_verror(td, EIO, "check_min_rate")
  return false;
}

// fio's trims: BLKDISCARD on a block device, a punched hole (the size kept) in a file, done on
// the worker's thread whatever the engine (none of them queues discards), timed as clat.
void Worker::Trim(const IoChoice& c) {
  const int fd = plan_.fds[c.file];
  const uint64_t start = Clock::NowNs();
  int rc = 0;
  if (zbd_) {
    // zonemode=zbd: the trim resets its zone (fio's zbd_do_io_u_trim), no discard.
    if (const int err = zbd_->Trim(c.offset); err != 0) {
      recorder_->RecordError(-err);
      if (!spec_.errors.KeepsGoing(stats::Direction::kWrite, -err)) trims_.failed = true;
      return;
    }
  } else if (fd < 0) {
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
    const int err = errno;
    recorder_->RecordError(err);
    const bool goes_on = spec_.errors.KeepsGoing(stats::Direction::kWrite, err);
    if (!goes_on || spec_.errors.dump)
      ReportIoError(c.file, stats::Direction::kTrim, c.offset, c.bs, err);
    if (!goes_on) trims_.failed = true;
    return;
  }
  if (done >= record_from_ns_) recorder_->RecordClat(stats::Direction::kTrim, done - start, c.bs);
}

// fio's thinktime: a stall between I/Os, its first thinktime_spin spent spinning, the rest asleep
// (in slices, so that a stop request is seen).
void Worker::Think(const std::atomic<bool>& stop) {
  const uint64_t start = Clock::NowNs();
  const uint64_t spin_until = start + spec_.thinktime.spin_ns;
  while (Clock::NowNs() < spin_until) {
  }
  const uint64_t until = start + spec_.thinktime.ns;
  for (uint64_t now = Clock::NowNs(); now < until && !Stopped(stop); now = Clock::NowNs()) {
    const uint64_t slice = std::min<uint64_t>(until - now, 10'000'000);
    timespec ts{0, static_cast<long>(slice)};
    nanosleep(&ts, nullptr);
  }
}

void Worker::FlowWait() {
  if (spec_.flow.sleep_ns == 0) {
    sched_yield();  // fio retries at once
    return;
  }
  timespec ts{static_cast<time_t>(spec_.flow.sleep_ns / 1'000'000'000),
              static_cast<long>(spec_.flow.sleep_ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

// fio's error line for a failed I/O (io_u_log_error): every one with error_dump, else those that
// end the job. Formatted on the stack and written at once (no allocation, no stdio lock).
void Worker::ReportIoError(uint32_t file, stats::Direction dir, uint64_t offset, uint32_t len,
                           int err) const {
  static constexpr const char* kDir[] = {"read", "write", "trim"};
  char line[512];
  const char* path = file < plan_.paths.size() ? plan_.paths[file].c_str() : "";
  const auto r = fmt::format_to_n(
      line, sizeof line - 1, "iotail run: I/O error on file {}: {}: {} offset={}, buflen={}\n",
      path, strerrordesc_np(err), kDir[static_cast<size_t>(dir) % 3], offset, len);
  const size_t n = std::min(r.size, sizeof line - 1);
  if (n == sizeof line - 1) line[n - 1] = '\n';
  [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, line, n);
}

// fio's fsync=N / fdatasync=N: the file is synced, synchronously, after every N writes to it.
void Worker::SyncDue() {
  sync_.any_due = false;
  for (uint32_t f = 0; f < sync_.due.size(); ++f) {
    if (sync_.due[f] == 0) continue;
    sync_.due[f] = 0;
    SyncFile(f);
  }
}

void Worker::SyncFile(uint32_t file) {
  const int fd = plan_.fds[file];
  const uint64_t start = Clock::NowNs();
  // The null engine has no file: the sync completes at once (as fio's null engine).
  const int rc = fd < 0 ? 0 : spec_.syncs.fdatasync_every != 0 ? fdatasync(fd) : fsync(fd);
  if (rc != 0) {
    recorder_->RecordError(errno);
    return;
  }
  sync_.stats.Add(static_cast<double>(Clock::NowNs() - start));
}

int Worker::ReapStopping(uint32_t want, size_t max, uint32_t* in_flight) {
  const std::span<IoCompletion> out(queue_.completions.data(), max);
  const uint64_t now = Clock::NowNs();
  if (grace_.give_up_at_ns == 0) grace_.give_up_at_ns = now + kStopGraceNs;
  if (now < grace_.give_up_at_ns)
    return engine_->ReapTimeout(out, want, grace_.give_up_at_ns - now);
  // The grace is over: what has completed is recorded, the rest given up.
  if (const int n = engine_->ReapTimeout(out, 0, 0); n != 0) return n;
  engine_->Abandon();
  for (uint32_t i = 0; i < *in_flight; ++i) recorder_->RecordError(ETIMEDOUT);
  grace_.abandoned += *in_flight;
  *in_flight = 0;
  queue_.redo_count = 0;
  recorder_->SetInFlight(0);
  return 0;
}

}  // namespace iotail::engine
