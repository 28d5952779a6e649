// The plain-tracepoint programs of BlockTracer (engine/explain/block_tracer.h), its fallback where
// the typed ones do not load (no kernel BTF, other prototypes). No CO-RE: each field is read at
// the offset user space found in the tracepoint's format file (tracefs) and wrote into `layout`
// before loading. A request in flight is keyed by its device and sector, so two requests at the
// same sector of one device at once share an entry (the typed programs key by request).
// vmlinux.h first (the kernel's types), then libbpf's headers, then ours.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "trace_record.h"
// clang-format on

struct inflight_key {
  __u32 dev;
  __u32 reserved;
  __u64 sector;
};
#define IOTAIL_INFLIGHT_KEY struct inflight_key

#include "trace_common.bpf.h"

// Offsets in the tracepoints' records, set by user space (trace_record.h).
const volatile struct tracepoint_layout layout = {};

#define READ_FIELD(type, ctx, offset)                                         \
  ({                                                                          \
    type value_ = 0;                                                          \
    bpf_probe_read_kernel(&value_, sizeof(value_), (char *)(ctx) + (offset)); \
    value_;                                                                   \
  })

static __always_inline int key_of(void *ctx, __u32 dev_offset, __u32 sector_offset,
                                  struct inflight_key *key) {
  key->dev = READ_FIELD(__u32, ctx, dev_offset);
  if (!traced_device(key->dev)) return 0;
  key->reserved = 0;
  key->sector = READ_FIELD(__u64, ctx, sector_offset);
  return 1;
}

// The operation from rwbs (blk_fill_rwbs): an optional 'F' (preflush), then the operation's
// letter: R read, W write, D discard (DE secure erase), F flush, N anything else.
static __always_inline __u8 rwbs_op(const char *rwbs) {
  char c = rwbs[0];
  if (c == 'F' &&
      (rwbs[1] == 'R' || rwbs[1] == 'W' || rwbs[1] == 'D' || rwbs[1] == 'N' || rwbs[1] == 'F')) {
    c = rwbs[1];
  }
  switch (c) {
    case 'R':
      return IOTAIL_OP_READ;
    case 'W':
      return IOTAIL_OP_WRITE;
    case 'D':
      return IOTAIL_OP_TRIM;
    case 'F':
      return IOTAIL_OP_FLUSH;
    default:
      return IOTAIL_OP_OTHER;
  }
}

SEC("tracepoint/block/block_rq_insert")
int block_insert(void *ctx) {
  struct inflight_key key;
  if (!key_of(ctx, layout.insert_dev, layout.insert_sector, &key)) return 0;
  track_insert(&key, bpf_ktime_get_ns());
  return 0;
}

SEC("tracepoint/block/block_rq_issue")
int block_issue(void *ctx) {
  struct inflight_key key;
  if (!key_of(ctx, layout.issue_dev, layout.issue_sector, &key)) return 0;
  track_issue(&key, bpf_ktime_get_ns());
  return 0;
}

SEC("tracepoint/block/block_rq_requeue")
int block_requeue(void *ctx) {
  struct inflight_key key;
  if (!key_of(ctx, layout.requeue_dev, layout.requeue_sector, &key)) return 0;
  track_requeue(&key);
  return 0;
}

SEC("tracepoint/block/block_rq_complete")
int block_complete(void *ctx) {
  struct inflight_key key;
  if (!key_of(ctx, layout.complete_dev, layout.complete_sector, &key)) return 0;
  struct iotail_request_entry r = {};
  char rwbs[8] = {};
  bpf_probe_read_kernel(rwbs, sizeof(rwbs), (char *)ctx + layout.complete_rwbs);
  r.dev = key.dev;
  r.sector = key.sector;
  r.nr_sector = READ_FIELD(__u32, ctx, layout.complete_nr_sector);
  r.op = rwbs_op(rwbs);
  r.flags = 0;  // the tracepoint does not say whether more of the request remains
  r.error = READ_FIELD(__s32, ctx, layout.complete_error);
  r.cpu = bpf_get_smp_processor_id();
  r.complete_ns = bpf_ktime_get_ns();
  fill_tracked(&r, &key, 1);
  publish_request(&r);
  return 0;
}

SEC("tracepoint/io_uring/io_uring_submit_req")
int uring_submit(void *ctx) {
  if (!target_tgid || (bpf_get_current_pid_tgid() >> 32) != target_tgid) return 0;
  __u64 now = bpf_ktime_get_ns();
  emit_uring(IOTAIL_TRACE_URING_SUBMIT, now, READ_FIELD(__u64, ctx, layout.submit_ctx),
             READ_FIELD(__u64, ctx, layout.submit_user_data), 0,
             READ_FIELD(__u8, ctx, layout.submit_opcode), 1);
  return 0;
}

SEC("tracepoint/io_uring/io_uring_complete")
int uring_complete(void *ctx) {
  if (!target_tgid) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 ring = READ_FIELD(__u64, ctx, layout.cqe_ctx);
  if (!our_ring(ring)) return 0;
  emit_uring(IOTAIL_TRACE_URING_COMPLETE, now, ring, READ_FIELD(__u64, ctx, layout.cqe_user_data),
             READ_FIELD(__s32, ctx, layout.cqe_res), 0, 0);
  return 0;
}
