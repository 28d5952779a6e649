// What both BPF objects of BlockTracer share (included by block_trace_btf.bpf.c and
// block_trace_tp.bpf.c after vmlinux.h and trace_record.h): the maps, the counters, the settings
// user space writes before loading (.rodata), the request tracking from insert/issue to
// completion, and the request table each completion is written into. IOTAIL_INFLIGHT_KEY, the key
// of a request in flight, may be defined first (the typed programs key by the request's address,
// the plain ones by device and sector).
#pragma once

#ifndef IOTAIL_INFLIGHT_KEY
#define IOTAIL_INFLIGHT_KEY __u64
#endif

char LICENSE[] SEC("license") = "Dual MIT/GPL";

// Set by user space before loading.
const volatile __u32 target_tgid = 0;         // the process whose io_uring events are kept; 0: none
const volatile __u64 wakeup_bytes = 1 << 20;  // wake the reader when this much is waiting

struct iotail_trace_counters counters[IOTAIL_COUNTER_SLICES] __attribute__((aligned(64))) = {};

// This CPU's slice of the counters.
static __always_inline struct iotail_trace_counters *slice(void) {
  return &counters[bpf_get_smp_processor_id() & (IOTAIL_COUNTER_SLICES - 1)];
}

// The traced devices (kernel dev_t); max_entries set by user space to their number.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u8);
} devices SEC(".maps");

struct inflight_request {
  __u64 insert_ns;
  __u64 issue_ns;
  __u32 requeued;
  __u32 reserved;
};

// Requests of the traced devices between insert (or issue) and completion.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, IOTAIL_INFLIGHT_KEY);
  __type(value, struct inflight_request);
} inflight SEC(".maps");

// The io_uring rings (io_ring_ctx addresses) the process submitted to.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u64);
  __type(value, __u8);
} rings SEC(".maps");

// The last request completed at each (device, sector) hash (trace_record.h), memory-mapped by
// iotail: the worker that reaps an I/O reads its request there. Sized by user space (a power of
// two: request_mask + 1 entries).
const volatile __u32 request_mask = 0;
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct iotail_request_entry);
} requests SEC(".maps");

// An earlier request at the same place that no I/O took is a rival for a second; an entry no I/O
// took for longer is free again.
#define IOTAIL_RIVAL_NS 1000000000ull

// Writes the completed request `r` into the request table: into the entry of its place's
// IOTAIL_REQUEST_PROBES entries (trace_record.h) that holds the same place (a rival when no I/O
// took it), else into the first that is free (taken, empty or stale), else over the first (counted:
// no I/O took what it held). So a place is held by one entry at most, which the reader's first
// match finds. The entry is written between two increments of its seq (locked adds: they order the
// stores for the reader on x86 and arm64 alike).
static __always_inline void publish_request(const struct iotail_request_entry *r) {
  __u32 home = iotail_request_index(r->dev, r->sector, request_mask);
  struct iotail_request_entry *first = 0, *free = 0, *same = 0;
#pragma unroll
  for (__u32 k = 0; k < IOTAIL_REQUEST_PROBES; ++k) {
    __u32 index = home + k;
    struct iotail_request_entry *at = bpf_map_lookup_elem(&requests, &index);
    if (!at) return;
    if (k == 0) first = at;
    if (at->dev == r->dev && at->sector == r->sector) {
      same = at;
      break;
    }
    int held =
        at->complete_ns != 0 && !at->taken && r->complete_ns - at->complete_ns < IOTAIL_RIVAL_NS;
    if (!held && !free) free = at;
  }
  struct iotail_request_entry *e = same ? same : free ? free : first;
  if (!e) return;
  __u8 flags = r->flags;
  if (!e->taken && e->complete_ns != 0) {
    if (e == same && r->complete_ns - e->complete_ns < IOTAIL_RIVAL_NS)
      flags |= IOTAIL_BLOCK_AMBIGUOUS;
    __sync_fetch_and_add(&slice()->block_unmatched, 1);
  }
  __u32 seq = __sync_fetch_and_add(&e->seq, 1);
  e->taken = 0;
  e->dev = r->dev;
  e->nr_sector = r->nr_sector;
  e->sector = r->sector;
  e->entered_ns = r->entered_ns;
  e->issue_ns = r->issue_ns;
  e->complete_ns = r->complete_ns;
  e->error = r->error;
  e->cpu = r->cpu;
  e->op = r->op;
  e->flags = flags;
  // seq + 2: even again (the fetched value keeps the add a fetching, ordered one; another program
  // writing the same entry at once makes the request ambiguous rather than half another's).
  if (__sync_fetch_and_add(&e->seq, 1) != seq + 1) e->flags |= IOTAIL_BLOCK_AMBIGUOUS;
  __sync_fetch_and_add(&slice()->block_records, 1);
}

// The io_uring records; its size is set by user space (a power of two, a multiple of the page
// size).
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 22);
} events SEC(".maps");

// Up to IOTAIL_DEVICE_LIST devices are also listed here, and compared inline (a run traces one or
// a few disks: a hash lookup on every block tracepoint hit costs more than the compares); with more
// device_count is 0 and the map decides (IOTAIL_DEVICE_LIST: trace_record.h).
const volatile __u32 device_count = 0;
const volatile __u32 device_list[IOTAIL_DEVICE_LIST] = {};

static __always_inline int traced_device(__u32 dev) {
  if (device_count != 0) {
#pragma unroll
    for (int i = 0; i < IOTAIL_DEVICE_LIST; ++i) {
      if (i < device_count && device_list[i] == dev) return 1;
    }
    return 0;
  }
  return bpf_map_lookup_elem(&devices, &dev) != 0;
}

static __always_inline void track_insert(IOTAIL_INFLIGHT_KEY *key, __u64 now) {
  struct inflight_request value = {.insert_ns = now};
  if (bpf_map_update_elem(&inflight, key, &value, BPF_ANY) != 0) {
    __sync_fetch_and_add(&slice()->inflight_full, 1);
  }
}

// Most requests are issued directly (no scheduler: no insert), so the issue tries to add the
// request first and looks up the entry only when it is there already (inserted, or requeued).
static __always_inline void track_issue(IOTAIL_INFLIGHT_KEY *key, __u64 now) {
  struct inflight_request value = {.issue_ns = now};
  const long added = bpf_map_update_elem(&inflight, key, &value, BPF_NOEXIST);
  if (added == 0) return;
  struct inflight_request *tracked = bpf_map_lookup_elem(&inflight, key);
  if (tracked) {
    tracked->issue_ns = now;
  } else {
    __sync_fetch_and_add(&slice()->inflight_full, 1);
  }
}

static __always_inline void track_requeue(IOTAIL_INFLIGHT_KEY *key) {
  struct inflight_request *tracked = bpf_map_lookup_elem(&inflight, key);
  if (tracked) tracked->requeued = 1;
}

// Sets the issue time of `r` (and its entry, when it has none yet: the insert, else the issue)
// and forgets the request once it is complete.
static __always_inline void fill_tracked(struct iotail_request_entry *r, IOTAIL_INFLIGHT_KEY *key,
                                         int final) {
  struct inflight_request *tracked = bpf_map_lookup_elem(&inflight, key);
  __u64 insert_ns = 0;
  r->issue_ns = 0;
  if (tracked) {
    insert_ns = tracked->insert_ns;
    r->issue_ns = tracked->issue_ns;
    if (tracked->requeued) r->flags |= IOTAIL_BLOCK_REQUEUED;
    if (final) bpf_map_delete_elem(&inflight, key);
  }
  if (!r->entered_ns) r->entered_ns = insert_ns ? insert_ns : r->issue_ns;
  if (!r->issue_ns) r->flags |= IOTAIL_BLOCK_ISSUE_UNSEEN;
}

// Submits a reserved record, waking the reader only once wakeup_bytes are waiting (a wakeup per
// record would cost more than the record).
static __always_inline void submit_record(void *record, __u64 *counter) {
  __sync_fetch_and_add(counter, 1);
  __u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                              : BPF_RB_NO_WAKEUP;
  bpf_ringbuf_submit(record, flags);
}

// A completion belongs to the process when its ring is one the process submitted to (completions
// may be posted from other tasks), or when it runs in the process.
static __always_inline int our_ring(__u64 ring) {
  if (bpf_map_lookup_elem(&rings, &ring)) return 1;
  return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

static __always_inline void emit_uring(__u32 kind, __u64 now, __u64 ring, __u64 user_data,
                                       __s32 res, __u8 opcode, int remember_ring) {
  if (remember_ring && !bpf_map_lookup_elem(&rings, &ring)) {
    __u8 one = 1;
    if (bpf_map_update_elem(&rings, &ring, &one, BPF_NOEXIST) == -7 /* -E2BIG */) {
      __sync_fetch_and_add(&slice()->rings_full, 1);
    }
  }
  struct iotail_uring_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
  if (!r) {
    __sync_fetch_and_add(&slice()->uring_dropped, 1);
    return;
  }
  r->kind = kind;
  r->tid = (__u32)bpf_get_current_pid_tgid();
  r->time_ns = now;
  r->ring = ring;
  r->user_data = user_data;
  r->res = res;
  r->opcode = opcode;
  r->reserved[0] = r->reserved[1] = r->reserved[2] = 0;
  submit_record(r, &slice()->uring_records);
}
