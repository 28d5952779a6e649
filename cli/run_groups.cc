#include "cli/run_groups.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "engine/rate_schedule.h"
#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

std::string RateText(const engine::RateLimit& r) {
  return r.iops > 0 ? fmt::format("{:.{}f} IOPS", r.iops, r.iops == std::floor(r.iops) ? 0 : 2)
                    : fmt::format("{:.1f} MiB/s", r.bytes_per_s / (1 << 20));
}

}  // namespace

stats::RunMode Mode(std::span<const engine::JobSpec> specs) {
  stats::RunMode m;
  const engine::JobSpec* limited = nullptr;
  for (const auto& spec : specs) {
    if (spec.rates.Limited() && limited == nullptr) limited = &spec;
  }
  for (const auto& spec : specs) {
    if (!spec.replay.Active()) continue;
    m.description = fmt::format(
        "replay of {} ({}, iodepth {})", spec.replay.read_iolog,
        spec.replay.span_ns > 0 ? "open loop at the trace's times" : "paced by completions",
        spec.queue.iodepth);
    return m;
  }
  if (limited == nullptr) {
    std::string depths;
    for (const auto& spec : specs) {
      if (depths.find(fmt::format("iodepth {} ", spec.queue.iodepth)) == std::string::npos)
        depths += fmt::format("{}iodepth {} ", depths.empty() ? "" : ", ", spec.queue.iodepth);
    }
    depths.pop_back();
    m.description = fmt::format("burst (closed loop, {} per worker)", depths);
    return m;
  }
  m.rate_limited = true;
  m.process = limited->rates.poisson ? "poisson" : "linear";
  m.late_threshold_ns = engine::kLateThresholdNs;
  // The targets are per worker (fio's rate is per job clone); the run's are their sums.
  std::string targets;
  for (const auto& spec : specs) {
    if (!spec.rates.Limited()) continue;
    const double n = spec.numjobs;
    m.target_iops += spec.rates.limit.iops * n;
    m.target_bw += spec.rates.limit.bytes_per_s * n;
    std::string target = RateText(spec.rates.limit);
    if (spec.rates.PerDirection()) {
      target.clear();
      for (int d = 0; d < 2; ++d) {
        m.dir_target_iops[d] += spec.rates.dir[d].iops * n;
        m.dir_target_bw[d] += spec.rates.dir[d].bytes_per_s * n;
        if (spec.rates.dir[d].Any()) {
          target += fmt::format("{}{} {}", target.empty() ? "" : ", ", d == 0 ? "read" : "write",
                                RateText(spec.rates.dir[d]));
        }
      }
    }
    targets +=
        fmt::format("{}{} per worker x {}", targets.empty() ? "" : "; ", target, spec.numjobs);
  }
  m.description = fmt::format("rate-limited open loop ({}, {}, at most iodepth {} in flight)",
                              m.process, targets, limited->queue.iodepth);
  return m;
}

std::string Header(const engine::JobSpec& spec, const engine::JobOutcome& job,
                   const std::string& clock_source, int groupid) {
  std::string bs = fmt::format("{}", spec.blocks.bs);
  if (spec.blocks.bs_min != 0) bs = fmt::format("{}-{}", spec.blocks.bs_min, spec.blocks.bs_max);
  if (!spec.blocks.bssplit.empty()) bs = "split";
  std::string files;
  for (const auto& f : spec.filenames) files += (files.empty() ? "" : ":") + f;
  if (!spec.uri.empty()) files = spec.uri;
  return fmt::format(
      "iotail run '{}' (g={}): rw={}, bs={}, iodepth={}, numjobs={}, direct={}, target={} ({} "
      "bytes used), engine={}, clock={}",
      spec.name, groupid, engine::RwModeName(spec.rw), bs, spec.queue.iodepth, spec.numjobs,
      spec.direct ? 1 : 0, files, job.region_size, job.engine_description, clock_source);
}

Groups PlanGroups(const std::vector<RunOptions>& jobs) {
  Groups g;
  int id = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (const std::string& waitee = jobs[j].spec.wait_for; !waitee.empty()) {
      size_t found = 0;
      for (size_t k = 0; k < j; ++k) found += jobs[k].spec.name == waitee ? 1 : 0;
      if (found != 1) {
        throw stats::UsageError(fmt::format(
            "--wait_for: job '{}' waits for '{}', {} (it must name exactly one earlier job)",
            jobs[j].spec.name, waitee,
            found == 0 ? "which is not an earlier job" : "a name several earlier jobs have"));
      }
    }
    if (j > 0 && (jobs[j].stonewall || jobs[j].new_group)) ++id;
    g.groupid.push_back(id);
    if (j == 0 || jobs[j].stonewall) g.batches.emplace_back();
    g.batches.back().push_back(j);
  }
  return g;
}

// The summary's entries: one per worker (fio's clones) or, for jobs with group_reporting, one per
// reporting group, named after its first job. entry[j][w]: the entry of job j's worker w.
Entries PlanEntries(const std::vector<RunOptions>& jobs, const Groups& groups) {
  Entries e;
  std::map<int, size_t> group_entry;  // groupid -> its entry (group_reporting)
  for (size_t j = 0; j < jobs.size(); ++j) {
    std::vector<size_t>& of = e.entry.emplace_back();
    for (uint32_t w = 0; w < jobs[j].spec.numjobs; ++w) {
      if (jobs[j].group_reporting) {
        const auto [it, fresh] = group_entry.try_emplace(groups.groupid[j], e.count);
        if (fresh) ++e.count;
        of.push_back(it->second);
      } else {
        of.push_back(e.count++);
      }
    }
  }
  return e;
}

std::vector<stats::JobTotals> SummaryJobs(const std::vector<RunOptions>& jobs,
                                          std::vector<engine::JobOutcome>& outcomes,
                                          const Groups& groups, const Entries& entries,
                                          const std::vector<stats::RateSamples>& samples) {
  std::vector<stats::JobTotals> out(entries.count);
  std::vector<bool> filled(entries.count, false);
  for (size_t j = 0; j < jobs.size(); ++j) {
    engine::JobOutcome& o = outcomes[j];
    for (size_t w = 0; w < o.per_worker.size(); ++w) {
      stats::JobTotals& t = out[entries.entry[j][w]];
      const stats::CpuUsage cpu = w < o.cpu.size() ? o.cpu[w] : stats::CpuUsage{};
      if (filled[entries.entry[j][w]]) {
        ++t.members;
        t.totals.Add(o.per_worker[w]);
        if (o.latency_depth != 0) t.iodepth = o.latency_depth;  // fio's: the last clone's
        t.cpu.Add(cpu);
        t.runtime_s = std::max(t.runtime_s, o.runtime_s);
        if (t.runtime_sum_ms >= 0 && o.runtime_s >= 0)
          t.runtime_sum_ms += std::llround(o.runtime_s * 1000);
        for (size_t d = 0; d < t.dir_runtime_s.size(); ++d) {
          t.dir_runtime_s[d] = std::max(t.dir_runtime_s[d], o.dir_runtime_s[d]);
        }
      } else {
        filled[entries.entry[j][w]] = true;
        // fio makes a job's clones after the first from its section, under the section's name:
        // a name= inside the section names the first clone only.
        t.name = w > 0 && !jobs[j].section.empty() ? jobs[j].section : jobs[j].spec.name;
        t.totals = std::move(o.per_worker[w]);
        t.cpu = cpu;
        t.groupid = groups.groupid[j];
        t.runtime_s = o.runtime_s;
        t.runtime_sum_ms = o.runtime_s >= 0 ? std::llround(o.runtime_s * 1000) : -1;
        t.dir_runtime_s = o.dir_runtime_s;
        t.options = jobs[j].own;
        t.description = jobs[j].description;  // a group's is its first job's, as fio's
        t.iodepth = o.latency_depth != 0 ? o.latency_depth : jobs[j].spec.queue.iodepth;
        t.latency_target_ns = jobs[j].spec.latency_target.target_ns;
        t.latency_window_us = jobs[j].spec.latency_target.window_ns / 1000;
        t.latency_percentile = jobs[j].spec.latency_target.percentile;
        t.datasyncs = jobs[j].spec.syncs.fdatasync_every != 0;
        t.no_total_latency = jobs[j].spec.FileOperations();
        t.samples = samples[entries.entry[j][w]];
        if (w < o.steady_state.size()) t.steady_state = o.steady_state[w];
      }
      if (w < o.depths.size()) t.depths.Add(o.depths[w]);
      if (w < o.syncs.size()) t.syncs.Merge(o.syncs[w]);
      if (w < o.zone_resets.size()) t.zone_resets += o.zone_resets[w];
      if (w < o.explain.size()) {
        if (!t.explain) t.explain.emplace();
        t.explain->Add(o.explain[w]);
      }
    }
  }
  // Entries whose jobs never ran (a signal ended the run before their batch) are not reported.
  std::vector<stats::JobTotals> ran;
  for (size_t e = 0; e < out.size(); ++e) {
    if (filled[e]) ran.push_back(std::move(out[e]));
  }
  return ran;
}

}  // namespace iotail::cli
