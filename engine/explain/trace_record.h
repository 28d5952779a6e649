// What the BPF programs of engine/explain/ (block_trace_btf.bpf.c, block_trace_tp.bpf.c) write:
// each completed block request into the request table (a memory-mapped array iotail's workers
// read), io_uring records into their ring buffer, and the counters in their .bss: one layout, read
// by the programs (C, clang -target bpf, with vmlinux.h) and by BlockTracer (C++), so both include
// this file and nothing else defines it. Plain data, fixed-width fields, no padding left implicit;
// a change here changes both sides at the next build. Times are bpf_ktime_get_ns():
// CLOCK_MONOTONIC. Devices are the kernel's dev_t (major << 20 | minor), as the block tracepoints
// give them.
#pragma once

#ifndef __bpf__
#include <linux/types.h>
#endif

// Devices the programs compare inline (more: a hash map decides).
#define IOTAIL_DEVICE_LIST 8

enum iotail_trace_kind {
  IOTAIL_TRACE_URING_SUBMIT = 2,    // struct iotail_uring_record
  IOTAIL_TRACE_URING_COMPLETE = 3,  // struct iotail_uring_record
};

enum iotail_block_op {
  IOTAIL_OP_READ = 0,
  IOTAIL_OP_WRITE = 1,
  IOTAIL_OP_TRIM = 2,  // discard or secure erase
  IOTAIL_OP_FLUSH = 3,
  IOTAIL_OP_OTHER = 4,  // write zeroes, zone management, driver-private...
};

enum iotail_block_flags {
  IOTAIL_BLOCK_PARTIAL = 1,       // a completion of part of the request (more follow)
  IOTAIL_BLOCK_REQUEUED = 2,      // the driver requeued it at least once; issue is the last one
  IOTAIL_BLOCK_STATUS = 4,        // `error` holds a blk_status_t (typed path), not -errno
  IOTAIL_BLOCK_ISSUE_UNSEEN = 8,  // no issue was seen (issued before the tracer attached)
  // An earlier request at the same place that no I/O took completed less than a second before:
  // which of the two an I/O issued is not known, and neither is joined.
  IOTAIL_BLOCK_AMBIGUOUS = 16,
};

// The request table: entries holding the last requests completed, each in one of the
// IOTAIL_REQUEST_PROBES entries of its (device, sector) hash's aligned group (128 bytes: the pair
// of cache lines a CPU fetches together), the first free one (a request its I/O has not yet taken
// is not written over while another entry of the group is free). A program writes an entry between
// two increments of `seq` (odd while it writes); a reader copies it and checks `seq` did not move.
// iotail sets `taken` when an I/O took the request. One cache line an entry: the completion's CPU
// writes it, the worker that reaps the I/O reads it.
struct iotail_request_entry {
  __u32 seq;
  __u32 taken;
  __u32 dev;
  __u32 nr_sector;
  __u64 sector;       // 512-byte sectors from the start of the whole disk
  __u64 entered_ns;   // into the block layer: request->start_time_ns, else insert, else issue
  __u64 issue_ns;     // block_rq_issue, 0 when unseen
  __u64 complete_ns;  // block_rq_complete
  __s32 error;        // 0, -errno (tracepoints) or a blk_status_t (typed, with IOTAIL_BLOCK_STATUS)
  __u32 cpu;          // CPU the completion ran on
  __u8 op;            // enum iotail_block_op
  __u8 flags;         // enum iotail_block_flags
  __u8 reserved[6];
};

#define IOTAIL_REQUEST_PROBES 2

// The group of (dev, sector) (its first entry) in a table of mask + 1 entries (a power of two):
// murmur3's finalizer, so that a job's offsets (a permutation of its blocks) spread over the table.
static inline __u32 iotail_request_index(__u32 dev, __u64 sector, __u32 mask) {
  __u64 key = sector ^ ((__u64)dev << 40);
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 33;
  return (__u32)key & mask & ~(__u32)(IOTAIL_REQUEST_PROBES - 1);
}

// io_uring_submit_req or io_uring_complete of the traced process's rings.
struct iotail_uring_record {
  __u32 kind;  // IOTAIL_TRACE_URING_SUBMIT or IOTAIL_TRACE_URING_COMPLETE
  __u32 tid;   // the thread the tracepoint fired on
  __u64 time_ns;
  __u64 ring;  // the io_ring_ctx's address: an opaque identity of the ring
  __u64 user_data;
  __s32 res;    // completion: bytes or -errno; submission: 0
  __u8 opcode;  // submission: IORING_OP_*; completion: 0 (the tracepoint does not carry it)
  __u8 reserved[3];
};

// Kept by the programs in .bss (memory-mapped: user space reads them without a syscall), one
// cache line per slice, the slice of CPU c being c % IOTAIL_COUNTER_SLICES: CPUs counting at once
// do not pass one line back and forth (the sum over the slices is the count).
#define IOTAIL_COUNTER_SLICES 64
struct iotail_trace_counters {
  __u64 block_records;    // requests written into the request table
  __u64 block_unmatched;  // entries overwritten that no I/O had taken
  __u64 uring_records;
  __u64 uring_dropped;
  __u64 inflight_full;  // requests not tracked between insert/issue and complete: map full
  __u64 rings_full;     // rings of the process not remembered: map full
  __u64 reserved[2];    // to a cache line
};

// Where the plain-tracepoint programs read each field (offsets in the tracepoints' records, from
// tracefs's events/<group>/<name>/format), written by user space before loading.
struct tracepoint_layout {
  __u32 insert_dev, insert_sector;
  __u32 issue_dev, issue_sector;
  __u32 requeue_dev, requeue_sector;
  __u32 complete_dev, complete_sector, complete_nr_sector, complete_error, complete_rwbs;
  __u32 submit_ctx, submit_user_data, submit_opcode;
  __u32 cqe_ctx, cqe_user_data, cqe_res;
};
