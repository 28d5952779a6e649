// RequestTable: the block requests the kernel completed on a run's traced disks, as BlockTracer's
// programs leave them (engine/explain/block_tracer.h): a memory-mapped array of entries, one per
// (disk, sector) hash, each holding the last request completed there (trace_record.h:
// iotail_request_entry). The worker that reaps an I/O looks its request up at the I/O's place
// right away (the request's completion is written before its I/O can be reaped), so no thread
// drains records and nothing is queued between the kernel and iotail.
//
// A place is held by one entry at most, one of the IOTAIL_REQUEST_PROBES entries of its hash.
// A lookup copies the entry and checks that no program wrote it meanwhile (its seq, odd while
// written, unchanged): a request is never read half old, half new; one written over by another
// request (all its place's entries held by requests no I/O took yet) is not found.
// Take() also marks the entry taken, which tells the programs that the next request there is no
// rival of this one (trace_record.h: IOTAIL_BLOCK_AMBIGUOUS).
//
// A view: copyable, owning nothing (BlockTracer owns the mapping; a default one finds nothing).
// Lookups are safe from any thread while the tracer is open: a few loads and, for Take, one
// compare-and-swap; no allocation, lock or system call (the worker's completion path calls Take).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "engine/explain/trace_record.h"

namespace iotail::engine {

enum class BlockOp : uint8_t { kRead, kWrite, kTrim, kFlush, kOther };

// A request of a traced device completed (or part of it: `partial`).
struct BlockRequestEvent {
  dev_t dev = 0;        // the whole disk (makedev: as st_rdev), even for a partition's I/O
  uint64_t sector = 0;  // 512-byte sectors from the start of the disk
  uint32_t nr_sector = 0;
  BlockOp op = BlockOp::kOther;
  int32_t error = 0;  // 0 or -errno
  uint32_t cpu = 0;   // the CPU the completion ran on
  // Into the block layer: the request's own allocation time (typed tracepoints, where the kernel
  // sets it), else its insert into a scheduler or software queue, else its issue.
  uint64_t entered_ns = 0;
  uint64_t issue_ns = 0;  // to the driver; 0: not seen (issued before the tracer attached)
  uint64_t complete_ns = 0;
  bool partial = false;    // more of the request completes later (typed tracepoints only)
  bool requeued = false;   // the driver requeued it: issue_ns is the last issue
  bool ambiguous = false;  // another request no I/O took completed at its place just before
};

class RequestTable {
 public:
  RequestTable() = default;
  // `entries`: mask + 1 entries (a power of two), mapped from the programs' table.
  RequestTable(iotail_request_entry* entries, uint32_t mask) : entries_(entries), mask_(mask) {}

  // The request last completed at (dev, sector) of a whole disk, if its entry holds it and was
  // read whole.
  std::optional<BlockRequestEvent> Find(dev_t dev, uint64_t sector) const {
    return Lookup(dev, sector, false);
  }
  // As Find, and marks the entry taken (an I/O has accounted for the request).
  std::optional<BlockRequestEvent> Take(dev_t dev, uint64_t sector) const {
    return Lookup(dev, sector, true);
  }
  // Entries holding a request no I/O took.
  uint64_t Untaken() const;
  bool empty() const { return entries_ == nullptr; }

 private:
  std::optional<BlockRequestEvent> Lookup(dev_t dev, uint64_t sector, bool take) const;
  static std::optional<iotail_request_entry> Read(const iotail_request_entry& entry);
  static void MarkTaken(iotail_request_entry& entry, const iotail_request_entry& copy);
  static BlockRequestEvent Decode(const iotail_request_entry& copy, dev_t dev);
  iotail_request_entry* entries_ = nullptr;
  uint32_t mask_ = 0;
};

}  // namespace iotail::engine
