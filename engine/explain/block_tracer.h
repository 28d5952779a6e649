// BlockTracer: the kernel's view of a run's I/O, from BPF programs on the block and io_uring
// tracepoints, for `--explain` (issue 34). Each request completed on one of the run's devices is
// written into the request table (engine/explain/request_table.h: the last request at each place,
// with its device, sector, length, operation, error, and the times it entered the block layer, was
// issued to the driver and completed), which the worker that reaps the I/O reads; each io_uring
// submission and completion of the run's process becomes an IoUringEvent carrying the SQE's
// user_data, handed over by Poll and Drain. Other devices' and other processes' events are dropped
// inside the BPF programs.
//
// Attaching: typed raw tracepoints (tp_btf, CO-RE against the kernel's BTF) where they load, else
// plain tracepoints (fields at the offsets of tracefs's format files). Open() is the probe and the
// setup in one: it returns the tracer or, never throwing for what the machine lacks, the reason
// there is none (built without the BPF component, libbpf missing, no rights, no tracepoint, a
// program the kernel refused), which the caller says once.
//
// Times are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns), the clock of iotail's own stamps.
// Nothing is lost silently: a request written over an entry no I/O took is counted, and so is a
// hit the kernel did not run a program for (another BPF program was running on that CPU)
// (Counters()). Costs, per I/O of a traced device: the device compared against a list of up to 8
// (more: a hash lookup) per tracepoint; with typed tracepoints an array slot claimed by
// compare-and-swap at issue (or at insert, on disks whose requests carry no allocation time: only
// there is the insert program attached) and freed at completion (a hash where two requests want one
// slot; the plain tracepoints always use the hash: an update, a lookup and a delete); one table
// entry (a cache line) written at completion. Other devices pay the compare.
//
// Threads: thread-compatible. One thread at a time calls Poll, Drain, Close and the destructor;
// Counters() and Requests()' lookups may be called from any thread concurrently with Poll and
// Drain, not with Close. The consumer is called on the polling thread. Not for the I/O hot path:
// Open loads programs (tens of milliseconds), Poll allocates nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>

#include "engine/explain/request_table.h"

namespace iotail::engine {

struct IoUringEvent {
  enum class Kind : uint8_t { kSubmit, kComplete };
  Kind kind = Kind::kSubmit;
  uint64_t time_ns = 0;
  uint64_t ring = 0;       // the ring's identity (its kernel context's address)
  uint64_t user_data = 0;  // the SQE's user_data, as the CQE carries it
  int32_t res = 0;         // completion: bytes or -errno
  uint8_t opcode = 0;      // submission: IORING_OP_*
  pid_t tid = 0;           // the thread the tracepoint fired on
};

// What Poll and Drain hand the events to, on the polling thread. Its calls come from inside
// libbpf's C code: they must not throw.
class TraceConsumer {
 public:
  virtual ~TraceConsumer() = default;
  virtual void OnIoUring(const IoUringEvent& event) = 0;
};

struct TraceCounters {
  uint64_t block_records = 0;    // requests written into the request table
  uint64_t block_unmatched = 0;  // written over an entry no I/O had taken
  uint64_t uring_records = 0;
  uint64_t uring_dropped = 0;
  uint64_t untracked = 0;   // requests whose insert/issue could not be remembered (map full)
  uint64_t rings_full = 0;  // rings of the process not remembered (map full)
  uint64_t missed = 0;      // tracepoint hits the kernel ran no program for (one was running)
  uint64_t delivered = 0;   // events handed to a consumer
};

enum class TracerAttach {
  kAuto,         // typed raw tracepoints, else plain tracepoints
  kTyped,        // typed raw tracepoints only
  kTracepoints,  // plain tracepoints only (tracefs)
};

struct BlockTracerOptions {
  TracerAttach attach = TracerAttach::kAuto;
  size_t ring_bytes = size_t{4} << 20;  // the ring buffer (rounded up to a power of two pages)
  // The request table's entries (64 bytes each), a power of two from 64 to 1 << 22: many times
  // the requests in flight, so that a request is rarely written over before its I/O is reaped.
  uint32_t request_entries = uint32_t{1} << 14;
};

// Why there is no tracer, in words a user can act on ("built without libbpf's headers...", "no
// rights to load BPF programs (CAP_BPF and CAP_PERFMON, or root)", ...).
struct TracerUnavailable {
  enum class Cause : uint8_t {
    kNotBuilt,
    kNoLibrary,
    kNoRights,
    kNoTracepoint,
    kRefused,
    kBadInput
  };
  Cause cause = Cause::kRefused;
  std::string reason;
};

class BlockTracer {
 public:
  // Traces the requests of `devices`, whole disks as TraceDeviceOf() gives them (a partition's
  // requests are its disk's; a partition or what is no block device is refused, kBadInput), and,
  // when tgid is not 0, the io_uring submissions and completions of process `tgid`. At most 4096
  // devices, a ring buffer of at most 1 GiB; kBadInput for request_entries out of its range.
  static std::variant<std::unique_ptr<BlockTracer>, TracerUnavailable> Open(
      std::span<const dev_t> devices, pid_t tgid, const BlockTracerOptions& options = {});

  ~BlockTracer();
  BlockTracer(const BlockTracer&) = delete;
  BlockTracer& operator=(const BlockTracer&) = delete;

  // The request table (valid until Close: its lookups find nothing after it).
  RequestTable Requests() const;

  // Waits up to `timeout` for io_uring records (woken early when a quarter of the ring buffer is
  // waiting), then hands every waiting one to `consumer`. Returns how many.
  size_t Poll(TraceConsumer& consumer, std::chrono::milliseconds timeout);
  // Hands every waiting io_uring record to `consumer` without waiting. Returns how many.
  size_t Drain(TraceConsumer& consumer);
  // Detaches the programs and frees the maps and the table; records not drained are lost. Also
  // done by the destructor; after it, Poll and Drain return 0.
  void Close();

  TraceCounters Counters() const;
  // "typed raw tracepoints" or "tracepoints": how the programs are attached.
  const char* Attachment() const;

  struct Impl;

 private:
  explicit BlockTracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace iotail::engine
