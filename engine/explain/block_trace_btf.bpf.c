// The typed-raw-tracepoint programs of BlockTracer (engine/explain/block_tracer.h): CO-RE against
// the kernel's BTF (vmlinux.h generated at build time). Block requests of the devices in `devices`
// are followed from insert (when they carry no allocation time) and issue (a slot chosen by the
// request's name) to completion, where the request is written into the request table with its own
// start_time_ns as its entry into the block layer;
// io_uring submissions of the process `target_tgid` (0: none) and completions on its rings. Every
// record that the ring buffer cannot take is counted in `counters`, never lost silently.
// vmlinux.h first (the kernel's types), then libbpf's headers, then ours.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "trace_record.h"
#include "trace_common.bpf.h"
// clang-format on

// Kernels before 5.16 named the request's disk rq->rq_disk (now rq->q->disk).
struct request___old {
  struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 request_dev(struct request *rq) {
  struct gendisk *disk;
  // Direct loads through the typed pointers (CO-RE relocated, fault-safe), not
  // bpf_probe_read_kernel: a tenth of the cost on every block tracepoint hit.
  if (bpf_core_field_exists(((struct request___old *)0)->rq_disk)) {
    disk = ((struct request___old *)rq)->rq_disk;
  } else {
    disk = rq->q->disk;
  }
  if (!disk) return 0;
  return ((__u32)disk->major << 20) | (__u32)disk->first_minor;
}

// REQ_OP_* (the low 8 bits of cmd_flags): READ 0, WRITE 1, FLUSH 2, DISCARD 3, SECURE_ERASE 5.
static __always_inline __u8 request_op(__u32 cmd_flags) {
  switch (cmd_flags & 0xff) {
    case 0:
      return IOTAIL_OP_READ;
    case 1:
      return IOTAIL_OP_WRITE;
    case 2:
      return IOTAIL_OP_FLUSH;
    case 3:
    case 5:
      return IOTAIL_OP_TRIM;
    default:
      return IOTAIL_OP_OTHER;
  }
}

// Requests in flight, first in an array: a request in flight is named by its device, hardware
// queue and tag (the scheduler's tag while it has one: it holds it from allocation to completion,
// where the driver's tag comes only at dispatch), which no other request in flight shares; its
// slot comes from that name and is claimed by compare-and-swap. One whose slot another request
// holds goes to the `inflight` hash, keyed by the request's address. An array slot costs a few
// loads where the hash costs a locked bucket and a free list.
#define IOTAIL_SLOT_BITS 14
struct inflight_slot {
  __u64 name;  // the request holding the slot (request_name), 0: free
  struct inflight_request times;
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1 << IOTAIL_SLOT_BITS);
  __type(key, __u32);
  __type(value, struct inflight_slot);
} slots SEC(".maps");

// 0 for a request without a tag (it goes to the hash).
static __always_inline __u64 request_name(struct request *rq, __u32 dev) {
  int internal_tag = rq->internal_tag;
  int tag = rq->tag;
  __u32 name;
  if (internal_tag >= 0 && internal_tag < 0xffff) {
    name = (1 << 16) | internal_tag;
  } else if (tag >= 0 && tag < 0xffff) {
    name = tag;
  } else {
    return 0;
  }
  __u32 queue = rq->mq_hctx ? rq->mq_hctx->queue_num & 0x7fff : 0;
  return ((__u64)dev << 32) | ((__u64)queue << 17) | (__u64)name;
}

static __always_inline struct inflight_slot *slot_of(__u64 name) {
  if (name == 0) return 0;
  __u32 index = (__u32)((name * 0x9E3779B97F4A7C15ull) >> (64 - IOTAIL_SLOT_BITS));
  return bpf_map_lookup_elem(&slots, &index);
}

// The slot `name` holds, else 0 (its times are then in the hash, or nowhere).
static __always_inline struct inflight_slot *held_slot(__u64 name) {
  struct inflight_slot *slot = slot_of(name);
  return slot && slot->name == name ? slot : 0;
}

// The request's slot if it holds it or could claim it (*fresh: it was free), else 0.
static __always_inline struct inflight_slot *claim_slot(__u64 name, int *fresh) {
  struct inflight_slot *slot = slot_of(name);
  if (!slot) return 0;
  __u64 holder = __sync_val_compare_and_swap(&slot->name, 0, name);
  *fresh = holder == 0;
  return holder == 0 || holder == name ? slot : 0;
}

static __always_inline void slot_insert(struct request *rq, __u32 dev, __u64 now) {
  int fresh = 0;
  struct inflight_slot *slot = claim_slot(request_name(rq, dev), &fresh);
  if (!slot) {
    __u64 key = (__u64)rq;
    track_insert(&key, now);
    return;
  }
  slot->times.insert_ns = now;
  slot->times.issue_ns = 0;
  slot->times.requeued = 0;
}

static __always_inline void slot_issue(struct request *rq, __u32 dev, __u64 now) {
  int fresh = 0;
  struct inflight_slot *slot = claim_slot(request_name(rq, dev), &fresh);
  if (!slot) {
    __u64 key = (__u64)rq;
    track_issue(&key, now);
    return;
  }
  if (fresh) {
    slot->times.insert_ns = 0;
    slot->times.requeued = 0;
  }
  slot->times.issue_ns = now;
}

static __always_inline void slot_requeue(struct request *rq, __u32 dev) {
  struct inflight_slot *slot = held_slot(request_name(rq, dev));
  if (slot) {
    slot->times.requeued = 1;
  } else {
    __u64 key = (__u64)rq;
    track_requeue(&key);
  }
}

// As fill_tracked, from the request's slot or else the hash; its final completion frees the slot.
static __always_inline void slot_fill(struct iotail_request_entry *r, struct request *rq,
                                      __u32 dev, int final) {
  struct inflight_slot *slot = held_slot(request_name(rq, dev));
  if (!slot) {
    __u64 key = (__u64)rq;
    fill_tracked(r, &key, final);
    return;
  }
  r->issue_ns = slot->times.issue_ns;
  if (!r->entered_ns) r->entered_ns = slot->times.insert_ns ? slot->times.insert_ns : r->issue_ns;
  if (slot->times.requeued) r->flags |= IOTAIL_BLOCK_REQUEUED;
  if (!r->issue_ns) r->flags |= IOTAIL_BLOCK_ISSUE_UNSEEN;
  if (final) {
    asm volatile("" ::: "memory");  // the times are read before the slot is given up
    slot->name = 0;
  }
}

// Whether the requests' allocation time (start_time_ns) marks their entry into the block layer:
// set by user space when every traced disk's requests carry it (queue/iostats, or a scheduler:
// blk_mq_need_time_stamp). Otherwise the kernel leaves a reused request's old value in place, so
// it is not read at all, and this insert hook (attached only then) marks the entry instead.
const volatile __u32 use_alloc_time = 0;

SEC("tp_btf/block_rq_insert")
int BPF_PROG(block_insert, struct request *rq) {
  __u32 dev = request_dev(rq);
  if (!traced_device(dev)) return 0;
  slot_insert(rq, dev, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_issue, struct request *rq) {
  __u32 dev = request_dev(rq);
  if (!traced_device(dev)) return 0;
  slot_issue(rq, dev, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(block_requeue, struct request *rq) {
  __u32 dev = request_dev(rq);
  if (!traced_device(dev)) return 0;
  slot_requeue(rq, dev);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes) {
  __u32 dev = request_dev(rq);
  if (!traced_device(dev)) return 0;
  // blk_update_request fires this for each part completed: the request ends with the part that
  // covers what remains of it.
  int final = nr_bytes >= rq->__data_len;
  struct iotail_request_entry r = {};
  r.dev = dev;
  r.sector = rq->__sector;
  r.nr_sector = nr_bytes >> 9;
  r.op = request_op(rq->cmd_flags);
  r.flags = IOTAIL_BLOCK_STATUS | (final ? 0 : IOTAIL_BLOCK_PARTIAL);
  r.error = error;
  r.cpu = bpf_get_smp_processor_id();
  r.complete_ns = bpf_ktime_get_ns();
  // The request's own allocation time, where the kernel sets it, is its entry into the block layer.
  r.entered_ns = use_alloc_time ? rq->start_time_ns : 0;
  slot_fill(&r, rq, dev, final);
  publish_request(&r);
  return 0;
}

// io_uring (6.3 and later prototypes; an older kernel fails to load these and BlockTracer falls
// back to the plain tracepoints).
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit, struct io_kiocb *req) {
  if (!target_tgid || (bpf_get_current_pid_tgid() >> 32) != target_tgid) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 ring = (__u64)req->ctx;
  emit_uring(IOTAIL_TRACE_URING_SUBMIT, now, ring, req->cqe.user_data, 0, req->opcode, 1);
  return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(uring_complete, struct io_ring_ctx *ring_ctx, void *req, struct io_uring_cqe *cqe) {
  if (!target_tgid) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 ring = (__u64)ring_ctx;
  if (!our_ring(ring)) return 0;
  emit_uring(IOTAIL_TRACE_URING_COMPLETE, now, ring, cqe->user_data, cqe->res, 0, 0);
  return 0;
}
