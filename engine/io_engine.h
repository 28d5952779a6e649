// IoEngine: the I/O interface a worker drives. One instance per worker thread, never shared.
//
// Life cycle: Prepare() once (files, buffers and queue depth are known; may register them with the
// kernel; throws std::system_error on failure), then any number of Submit()/Reap() rounds from the
// worker's hot path. Submit() takes a batch of requests (it may only queue them: io_uring defers
// the system call to Reap(), which submits and waits in one io_uring_enter). Reap() makes sure all
// submitted requests are on their way and returns at least `min_complete` completions (fewer only
// on an engine failure), each with the request's slot and a result of bytes transferred or -errno.
// ReapTimeout() is Reap() bounded in time, for the rate-limited loop: it returns as soon as
// `min_complete` completions are ready or `timeout_ns` has passed (then possibly with fewer, even
// none), so a worker can wait for its next scheduled I/O while still reaping completions. The
// default (for engines that complete inside Submit) sleeps only when nothing is ready.
// Neither Submit() nor Reap() allocates or throws; they return -errno for engine-level failures.
//
// Engines are built by MakeEngine(); ProbeEngine() performs the same setup on a tiny ring/context
// so that an unavailable engine is reported before the run starts.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/job_spec.h"
#include "stats/direction.h"

namespace iotail::engine {

struct IoRequest {
  uint32_t slot;  // 0..depth-1: identifies the request and its buffer
  stats::Direction dir;
  uint32_t file;  // index into EngineSetup::fds
  uint64_t offset;
  uint32_t len;
  char* buf;  // inside slot's registered buffer
};

struct IoCompletion {
  uint32_t slot;
  int64_t result;  // bytes or -errno
};

struct EngineSetup {
  std::vector<int> fds;
  uint32_t depth = 1;
  char* buffers = nullptr;  // depth * buffer_size bytes, slot i at buffers + i * buffer_size
  uint32_t buffer_size = 0;
  bool sqthread_poll = false;
  bool hipri = false;
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
};

// Throws UsageError naming --ioengine (with the engines that are available) if `kind` cannot run
// here: not built in, or refused by the kernel.
std::unique_ptr<IoEngine> MakeEngine(EngineKind kind);
// The engine without the probe (nullptr when not built in): for workers of a run that has already
// probed with MakeEngine().
std::unique_ptr<IoEngine> ConstructEngine(EngineKind kind);
// Engines that can run here, in order of preference.
std::vector<EngineKind> AvailableEngines();
// "" if the engine can run here, else why not.
std::string ProbeEngine(EngineKind kind);

// Per-engine factories (engine_*.cc); return nullptr when not built in.
std::unique_ptr<IoEngine> MakeIoUringEngine();
std::unique_ptr<IoEngine> MakeLibaioEngine();
std::unique_ptr<IoEngine> MakePsyncEngine();
std::unique_ptr<IoEngine> MakeNullEngine();

}  // namespace iotail::engine
