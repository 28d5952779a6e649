// The floor under --explain's cost (scripts/bench-explain.sh): BPF programs that do nothing,
// attached to the block tracepoints --explain's typed programs use. What a run pays with these
// attached is what any tracer of every request pays on this kernel before doing any work.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/block_rq_insert")
int BPF_PROG(floor_insert, struct request *rq) { return 0; }

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue, struct request *rq) { return 0; }

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete, struct request *rq, int error, unsigned int nr_bytes) { return 0; }
