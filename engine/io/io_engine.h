// IoEngine: the I/O interface a worker drives. One instance per worker thread, never shared.
//
// Life cycle: Prepare() once (targets, buffers and queue depth are known; may register them with
// the kernel or connect to a server; throws std::system_error or UsageError on failure), then any
// number of Submit()/Reap() rounds from the worker's hot path.
//
// Time stamps are the engine's job, because only the engine knows when an I/O really leaves and
// when its completion is seen. For every request, Submit() writes into *request.stamps:
//   start_ns  right before the system call (or library call) that hands this request over,
//   issued_ns right after that call returns (asynchronous engines; equal to start_ns for the
//             synchronous ones, where the call is the whole I/O),
// and every completion carries done_ns, the clock read right after the completion was seen (one
// read may serve all completions seen together). So slat = issued - start is the submission call,
// clat = done - issued is what the device and the kernel took after it, and lat = done - start.
// Submit() hands over the whole batch (one system call for io_uring and libaio; one per request
// for posixaio, nbd and the synchronous engines, which complete it inside). Reap() returns at least
// `min_complete` completions (fewer only on an engine failure), at most out.size(), each with the
// request's slot and a result of bytes transferred or -errno. ReapTimeout() is Reap() bounded in
// time, for the rate-limited loop: it returns as soon as `min_complete` completions are ready or
// `timeout_ns` has passed (then possibly with fewer, even none). The default (for engines that
// complete inside Submit) sleeps only when nothing is ready. Neither Submit() nor Reap() allocates
// or throws; they return -errno for engine-level failures (the engine cannot go on: the worker
// stops).
//
// Engines are built by MakeEngine(); ProbeEngine() performs the same setup on a tiny ring/context
// so that an unavailable engine is reported before the run starts.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/io/engine_table.h"
#include "engine/job_spec.h"
#include "stats/core/direction.h"

namespace iotail::engine {

// Where an engine writes a request's submission stamps (Clock::NowNs()).
struct IoStamps {
  uint64_t start_ns = 0;
  uint64_t issued_ns = 0;
};

struct IoRequest {
  uint32_t slot;  // 0..depth-1: identifies the request and its buffer
  stats::Direction dir;
  uint32_t file;  // index into EngineSetup::fds
  uint64_t offset;
  uint32_t len;
  char* buf;         // inside slot's registered buffer
  IoStamps* stamps;  // written by Submit()
  // The request's I/O priority (class << 13 | level; 0: the thread's): io_uring's SQE ioprio,
  // libaio's aio_reqprio (fio's prio/prioclass and cmdprio); the other engines ignore it.
  uint16_t ioprio = 0;
  bool cmdprio = false;  // cmdprio chose it (libaio sets aio_reqprio only then, as fio)
};

struct IoCompletion {
  uint32_t slot;
  int64_t result;    // bytes or -errno
  uint64_t done_ns;  // when the completion was seen
};

struct EngineSetup {
  std::vector<int> fds;
  uint32_t depth = 1;
  char* buffers = nullptr;  // depth * buffer_size bytes, slot i at buffers + i * buffer_size
  uint32_t buffer_size = 0;
  bool sqthread_poll = false;
  bool hipri = false;   // io_uring IOPOLL; pvsync2 RWF_HIPRI
  bool nowait = false;  // pvsync2 RWF_NOWAIT
  // The job's access pattern (mmap's madvise) and the POSIX_FADV_* advice given for its files (-1:
  // none), which engines that open the files again (sync, vsync, posixaio) give their own.
  bool random_access = false;
  int fadvise = -1;
  // The file and directory operation engines: each file's path (fds are then -1), and the call
  // filestat and dirstat time.
  std::vector<std::string> paths;
  StatType stat_type = StatType::kStat;
  std::string uri;  // nbd: the server's URI (fds is then empty)
  // nbd: how long connecting and the handshake may take (0: no limit), and the flag that, once set
  // while Prepare() waits for the server, makes it give up (stats::Interrupted).
  uint64_t nbd_timeout_ns = 0;
  NbdPath nbd_path = NbdPath::kAuto;  // nbd: the data path (engine/io/engine_nbd.cc)
  uint32_t nbd_conns = 1;             // nbd: connections (slot i on connection i % nbd_conns)
  // e4defrag: the donor file (empty: a probe, nothing opened), inplace, and the range preallocated
  // in it once when not inplace (fio's: from the job's offset to the end of its file size).
  std::string donor_path;
  bool donor_inplace = false;
  uint64_t donor_offset = 0;
  uint64_t donor_len = 0;
  const std::atomic<bool>* stop = nullptr;
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual void Prepare(const EngineSetup& setup) = 0;
  // Returns the number of requests accepted (all of them unless the engine failed) or -errno.
  virtual int Submit(std::span<const IoRequest> requests) = 0;
  // Returns the number of completions written to `out` (at most out.size()) or -errno.
  virtual int Reap(std::span<IoCompletion> out, uint32_t min_complete) = 0;
  // Returns the number of completions written to `out` (0 on timeout) or -errno.
  virtual int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete, uint64_t timeout_ns);
  // A short description of the setup actually used (flags the kernel accepted).
  virtual std::string Describe() const = 0;
  // True when Submit() only hands requests over (slat is then worth recording); false for the
  // synchronous engines, whose Submit() does the whole I/O.
  virtual bool Asynchronous() const = 0;
  // True when a -EAGAIN result only means "try again" (a full queue), so the worker resubmits the
  // request; false when it is the I/O's own result (pvsync2 with RWF_NOWAIT: it would have
  // blocked), an error as in fio.
  virtual bool RetriesEagain() const { return true; }
  // True when the engine can give up on I/Os in flight (Abandon): a stopping worker then waits
  // for them only a bounded grace. False by default: io_uring and libaio I/Os against a kernel
  // file or device cannot be abandoned safely (the kernel owns their buffers until it completes
  // them, and a cancellation is not guaranteed), so the worker waits for them as long as they
  // take; the synchronous engines have nothing in flight between calls.
  virtual bool CanAbandon() const { return false; }
  // Gives up on every I/O in flight: none of them completes or touches its buffer afterwards, and
  // the engine takes no more requests (Submit and Reap return -ENOTCONN). Completions already
  // seen and not yet reaped are lost with them: reap those first. Only when CanAbandon().
  virtual void Abandon() {}
  // True for fio's file and directory operation engines (JobSpec::FileOperations): their I/Os
  // move nothing and complete inside Submit(), to be counted without a latency; what is timed is
  // each file's operation, OperateOn(file), which the worker calls once per file per pass before
  // the file's first I/O of that pass (where fio opens the file).
  virtual bool OperatesOnFiles() const { return false; }
  // Performs file `file`'s operation (create, stat or delete the file or directory at
  // EngineSetup::paths[file]); returns how long the system call took in ns, or -errno. Neither
  // allocates nor throws.
  virtual int64_t OperateOn(uint32_t /*file*/) { return -EOPNOTSUPP; }

 protected:
  // Stamps every request of a batch handed over in one call: started at `start`, the call
  // returned at `issued`.
  static void StampBatch(std::span<const IoRequest> requests, uint64_t start, uint64_t issued) {
    for (const IoRequest& r : requests) {
      r.stamps->start_ns = start;
      r.stamps->issued_ns = issued;
    }
  }
};

// An engine whose completions are waited for in bounded slices (the nbd engines: a server may
// stop answering): Reap and ReapTimeout wait at most kMaxWaitNs, through the engine's Wait.
class BoundedWaitEngine : public IoEngine {
 public:
  static constexpr uint64_t kMaxWaitNs = 100'000'000;  // a Reap returns within 100 ms
  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    return Wait(out, min_complete, kMaxWaitNs);
  }
  int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete,
                  uint64_t timeout_ns) override {
    return Wait(out, min_complete, timeout_ns < kMaxWaitNs ? timeout_ns : kMaxWaitNs);
  }

 protected:
  // Up to out.size() completions, waiting at most timeout_ns for min_complete of them.
  virtual int Wait(std::span<IoCompletion> out, uint32_t min_complete, uint64_t timeout_ns) = 0;

  // The completions seen and not yet reaped: a fixed ring (sized in Prepare), filled by Push.
  void Push(uint32_t slot, int64_t result, uint64_t done_ns) {
    if (count_ < done_.size()) done_[count_++] = IoCompletion{slot, result, done_ns};
  }
  // Returns what the ring holds (up to out.size()), or `error` (< 0) when it holds nothing.
  int Drain(std::span<IoCompletion> out, int error) {
    if (count_ == 0 && error < 0) return error;
    const size_t n = count_ < out.size() ? count_ : out.size();
    for (size_t i = 0; i < n; ++i) out[i] = done_[i];
    for (size_t i = n; i < count_; ++i) done_[i - n] = done_[i];
    count_ -= n;
    return static_cast<int>(n);
  }
  std::vector<IoCompletion> done_;
  size_t count_ = 0;
};

// Throws UsageError naming --ioengine (with the engines that are available) if `kind` cannot run
// here: not built in, or refused by the kernel.
std::unique_ptr<IoEngine> MakeEngine(EngineKind kind);
// The engine without the probe (nullptr when not built in), by its row's maker
// (engine/io/engine_table.h): for workers of a run that has already probed with MakeEngine().
std::unique_ptr<IoEngine> ConstructEngine(EngineKind kind);
// Engines that can run here: the default benchmark's choices in the table's order of preference
// (the first is what it runs), then the others in table order; not those whose target is a
// server (nbd), which only connecting can probe.
std::vector<EngineKind> AvailableEngines();
// "" if the engine can run here, else why not.
std::string ProbeEngine(EngineKind kind);

// Per-engine factories (engine_*.cc), the makers of the engine table's rows; those of optional
// engines return nullptr when not built in (IOTAIL_HAVE_LIBURING, _LIBAIO, _LIBNBD): call
// ConstructEngine() instead.
std::unique_ptr<IoEngine> MakeIoUringEngine();
std::unique_ptr<IoEngine> MakeLibaioEngine();
std::unique_ptr<IoEngine> MakePsyncEngine();
std::unique_ptr<IoEngine> MakeSyncEngine();  // engine_sync.cc: sync, vsync, pvsync, pvsync2
std::unique_ptr<IoEngine> MakeVsyncEngine();
std::unique_ptr<IoEngine> MakePvsyncEngine();
std::unique_ptr<IoEngine> MakePvsync2Engine();
std::unique_ptr<IoEngine> MakePosixAioEngine();   // engine_posixaio.cc
std::unique_ptr<IoEngine> MakeMmapEngine();       // engine_mmap.cc
std::unique_ptr<IoEngine> MakeFallocEngine();     // engine_fileop.cc
std::unique_ptr<IoEngine> MakeFtruncateEngine();  // engine_fileop.cc
std::unique_ptr<IoEngine> MakeE4defragEngine();   // engine_e4defrag.cc
// engine_fileop.cc: filecreate, filestat, filedelete, dircreate, dirstat, dirdelete.
std::unique_ptr<IoEngine> MakeFileOperationEngine(EngineKind kind);
std::unique_ptr<IoEngine> MakeNullEngine();
std::unique_ptr<IoEngine> MakeNbdEngine();

}  // namespace iotail::engine
