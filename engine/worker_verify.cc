// Worker (engine/worker.h): verify: the blocks checked as read or read back, fio's verify list
// (verify_backlog, and the written blocks of a mixed or time_based job's loop), the read-back
// pass after the writes and verify_dump.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/worker.h"
#include "stats/util/output_file.h"

namespace iotail::engine {

bool Worker::CheckBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file) {
  ++verify_.verified_blocks;
  VerifyFormat format = spec_.verify.Layout();
  format.check_writer = spec_.HasWrites();
  format.writer_seed = verify_.write_seed;
  const VerifyCheck check = VerifyBlock(buf, len, offset, file, format);
  if (check.ok) return true;
  recorder_->RecordError(EILSEQ);
  if (verify_.failure.empty()) {
    verify_.failure = fmt::format("offset {} of file {}: {}", check.offset, file, check.why);
  }
  if (spec_.verify.dump) DumpBlock(buf, len, offset, file);
  return false;
}

// fio's verify_dump: the block as read and as it was written, in the current directory as
// BASENAME.OFFSET.received and .expected (a failure path: it may allocate).
void Worker::DumpBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file) {
  const std::string& path = file < plan_.paths.size() ? plan_.paths[file] : std::string();
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::vector<char> expected(len);
  FillVerifiedBlock(expected.data(), len, offset, file, verify_.write_seed, spec_.verify.Layout());
  for (const auto& [what, data] :
       {std::pair{"received", buf},
        std::pair{"expected", static_cast<const char*>(expected.data())}}) {
    const std::string name = fmt::format("{}.{}.{}", base, offset, what);
    // As every output of iotail: never through a symlink, never into a device or FIFO
    // (stats::OpenRegularForWriting). A dump that cannot be written is said, not fatal.
    try {
      std::FILE* f = stats::OpenRegularForWriting(name, "--verify_dump");
      const bool ok = std::fwrite(data, 1, len, f) == len;
      if (std::fclose(f) == 0 && ok) {
        verify_.failure += fmt::format("; {} data dumped as {}", what, name);
      } else {
        verify_.failure += fmt::format("; {} data not dumped: writing {} failed", what, name);
      }
    } catch (const std::exception& e) {
      verify_.failure += fmt::format("; {} data not dumped: {}", what, e.what());
    }
  }
}

// fio's do_verify: once the writes are done, every block of the region is read back and checked,
// through the job's engine at its iodepth (ReadBackOnEngine). As fio, the read-backs are the
// job's reads: each is recorded in the read direction (the engine's stamps: slat, clat and lat),
// and the pass's time is the reads' runtime.
void Worker::VerifyPass(const std::atomic<bool>& stop) {
  if (verify_.each_loop) {
    (void)VerifyWritten(stop, 0);  // the last loop's, when its I/O ended before the loop did
    return;
  }
  if (spec_.verify.backlog != 0) {
    // What the backlog has not verified yet (fio keeps only that much to verify at the end).
    size_t i = 0;
    (void)ReadBackOnEngine(
        [&](Written& w) {
          if (i == verify_.backlog.size()) return false;
          w = verify_.backlog[i++];
          return true;
        },
        stop, 0);
    verify_.backlog.clear();
    return;
  }
  const uint32_t bs = spec_.MinBlockSize();
  verify_.start_ns = Clock::NowNs();
  // fill_device: what was written before the filesystem was full (one file, sequential).
  const uint64_t end =
      spec_.region.fill_device
          ? std::min(plan_.region_size, fill_end_ - std::min(fill_end_, plan_.region_offset))
          : plan_.region_size;
  uint32_t f = 0;
  uint64_t off = 0;
  (void)ReadBackOnEngine(
      [&](Written& w) {
        if (off + bs > end) {
          off = 0;
          ++f;
        }
        if (f >= plan_.fds.size() || bs > end) return false;
        w = Written{f, plan_.region_offset + off, bs};
        off += bs;
        return true;
      },
      stop, 0);
}

// The read-back of fio's do_verify on the job's engine, as fio's: the blocks `next` gives are
// read at the job's iodepth, each checked as it completes (CompletedBefore, with
// verify_.reading_back) and recorded as a read by Complete. Before each new read, stop or
// stop_at_ns (0: none) ends it (ended_by_time_ for the latter); an error or a bad block the job
// does not continue past ends it too (failed_io_). What is in flight is reaped before it
// returns. Called with nothing in flight; false when the job must stop.
template <class Next>
bool Worker::ReadBackOnEngine(Next next, const std::atomic<bool>& stop, uint64_t stop_at_ns) {
  const uint32_t complete_min = std::max<uint32_t>(1, spec_.queue.batch_complete_min);
  const uint32_t complete_max = spec_.queue.batch_complete_max != 0
                                    ? std::min(spec_.queue.batch_complete_max, spec_.queue.iodepth)
                                    : std::min(complete_min, spec_.queue.iodepth);
  verify_.reading_back = true;
  uint32_t in_flight = 0;
  bool ok = true, more = true;
  for (;;) {
    QueueRedo();
    queue_.new_in_batch = 0;
    while (ok && more && queue_.free_count > 0) {
      if (Stopped(stop) || (stop_at_ns != 0 && Clock::NowNs() >= stop_at_ns)) {
        ended_by_time_ = stop_at_ns != 0 && !Stopped(stop);
        ok = false;
        break;
      }
      Written w{};
      if (!next(w)) {
        more = false;
        break;
      }
      QueueNew(IoChoice{stats::Direction::kRead, w.len, w.file, w.offset}, 0);
    }
    if (queue_.batch_count > 0 && !SubmitBatch(&in_flight)) {
      ok = false;
      break;
    }
    if (in_flight == 0) break;
    const uint32_t want = std::min(in_flight, complete_min);
    const int n =
        engine_->Reap(std::span<IoCompletion>(queue_.completions.data(), complete_max), want);
    if (n < 0) {
      engine_error_ = -n;
      recorder_->RecordError(-n);
      ok = false;
      break;
    }
    if (!Complete(n, record_from_ns_, &in_flight)) ok = false;
  }
  verify_.reading_back = false;
  return ok;
}

// Whether fio would keep the written blocks in its tree by file and offset (no random map:
// sequential jobs, norandommap) rather than in a list in write order.
bool Worker::VerifyListSorted() const { return !spec_.IsRandom() || spec_.NoRandomMap(); }

// A completed write joins the blocks waiting for verify_backlog. Without a random map a block
// written again replaces the waiting one it overlaps, as fio's sorted verify list does; with one,
// no block is written twice a pass.
void Worker::QueueWritten(const Written& w) {
  if (VerifyListSorted() && !verify_.each_loop) {
    std::erase_if(verify_.backlog, [&](const Written& b) {
      return b.file == w.file && b.offset < w.offset + w.len && w.offset < b.offset + b.len;
    });
  }
  verify_.backlog.push_back(w);
}

// fio's verify_backlog: once that many written blocks wait, verify_backlog_batch of them (all by
// default; the oldest, or without a random map the lowest offsets, as fio's sorted list) are read
// back and checked; the others wait for the next time, or the end.
bool Worker::VerifyBacklog() {
  if (VerifyListSorted()) {
    // fio keeps these in a tree by file and offset, and verifies from its lowest end.
    std::sort(verify_.backlog.begin(), verify_.backlog.end(),
              [](const Written& a, const Written& b) {
                return a.file != b.file ? a.file < b.file : a.offset < b.offset;
              });
  }
  const size_t batch = spec_.verify.backlog_batch != 0
                           ? std::min<size_t>(spec_.verify.backlog_batch, verify_.backlog.size())
                           : verify_.backlog.size();
  bool ok = true;
  size_t done = 0;
  for (; done < batch && ok; ++done) {
    ok = ReadBack(verify_.backlog[done].file, verify_.backlog[done].offset,
                  verify_.backlog[done].len, verify_.backlog_buffer);
  }
  verify_.backlog.erase(verify_.backlog.begin(),
                        verify_.backlog.begin() + static_cast<std::ptrdiff_t>(done));
  return ok;
}

// fio's do_verify after a loop of a mixed or time_based job: the blocks the loop wrote, in the
// order they were written (fio's list with a random map; its tree by offset otherwise, which a
// sequential job's writes already follow within a loop), each read back and checked as a read.
// fio checks its runtime before each read-back: past it, the job ends.
bool Worker::VerifyWritten(const std::atomic<bool>& stop, uint64_t stop_at_ns) {
  if (verify_.backlog.empty()) return true;
  if (VerifyListSorted()) {
    // fio's tree by file and offset: a block written again (norandommap) is read back once.
    std::stable_sort(verify_.backlog.begin(), verify_.backlog.end(),
                     [](const Written& a, const Written& b) {
                       return a.file != b.file ? a.file < b.file : a.offset < b.offset;
                     });
    const auto last = std::unique(verify_.backlog.rbegin(), verify_.backlog.rend(),
                                  [](const Written& a, const Written& b) {
                                    return a.file == b.file && a.offset == b.offset;
                                  });
    verify_.backlog.erase(verify_.backlog.begin(), last.base());
  }
  const uint64_t start = Clock::NowNs();
  if (verify_.start_ns == 0) verify_.start_ns = start;
  ++verify_.phases;
  size_t i = 0;
  const bool ok = ReadBackOnEngine(
      [&](Written& w) {
        if (i == verify_.backlog.size()) return false;
        w = verify_.backlog[i++];
        return true;
      },
      stop, stop_at_ns);
  verify_.backlog.clear();
  verify_.ns += Clock::NowNs() - start;
  return ok;
}

// One block read back (pread) into buf and checked, recorded as a read; false when the job must
// stop (an error or a bad block it does not continue past). verify_backlog's read-backs, between
// the job's own I/Os (the do_verify passes take the engine: ReadBackOnEngine).
bool Worker::ReadBack(uint32_t f, uint64_t at, uint32_t len, char* buf) {
  const uint64_t start = Clock::NowNs();
  const ssize_t got = pread(plan_.fds[f], buf, len, static_cast<off_t>(at));
  const uint64_t done = Clock::NowNs();
  if (got == static_cast<ssize_t>(len) && done >= record_from_ns_) {
    recorder_->RecordClat(stats::Direction::kRead, done - start, len);
  }
  if (got != static_cast<ssize_t>(len)) {
    const int err = got < 0 ? errno : EIO;
    recorder_->RecordError(err);
    if (verify_.failure.empty()) {
      verify_.failure = fmt::format("offset {} of file {}: short read back", at, f);
    }
    return spec_.errors.KeepsGoing(stats::Direction::kRead, err);
  }
  return CheckBlock(buf, len, at, f) || spec_.errors.KeepsGoing(stats::Direction::kRead, EILSEQ);
}

}  // namespace iotail::engine
