// CpuUsage: the CPU one worker thread used over its run (getrusage(RUSAGE_THREAD) taken before and
// after, the difference), as fio reports it per job: usr_cpu and sys_cpu are percentages of the
// elapsed wall time the figures cover, ctx counts context switches (voluntary and involuntary),
// majf/minf page faults. A plain value type; Add() sums jobs (the percentages are then the mean
// per job). Recorded by engine::Worker, reported by stats/report/run_summary.
#pragma once

#include <cstdint>

namespace iotail::stats {

struct CpuUsage {
  uint64_t usr_ns = 0, sys_ns = 0, elapsed_ns = 0;
  uint64_t ctx = 0, majf = 0, minf = 0;
  double UsrPct() const { return elapsed_ns ? 100.0 * usr_ns / elapsed_ns : 0; }
  double SysPct() const { return elapsed_ns ? 100.0 * sys_ns / elapsed_ns : 0; }
  void Add(const CpuUsage& o) {
    usr_ns += o.usr_ns;
    sys_ns += o.sys_ns;
    elapsed_ns += o.elapsed_ns;
    ctx += o.ctx;
    majf += o.majf;
    minf += o.minf;
  }
  // What was used between `before` and this (both cumulative samples of one thread).
  CpuUsage Since(const CpuUsage& before) const {
    return {usr_ns - before.usr_ns, sys_ns - before.sys_ns, elapsed_ns - before.elapsed_ns,
            ctx - before.ctx,       majf - before.majf,     minf - before.minf};
  }
};

}  // namespace iotail::stats
