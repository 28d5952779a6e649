#include "engine/steady_state_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "engine/clock.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

bool SameSettings(const JobSpec& a, const JobSpec& b) {
  return a.steady.criterion == b.steady.criterion && a.steady.dur_ns == b.steady.dur_ns &&
         a.steady.ramp_ns == b.steady.ramp_ns && a.steady.interval_ns == b.steady.interval_ns;
}

}  // namespace

SteadyStateMonitor::SteadyStateMonitor(std::span<const JobSpec> specs,
                                       const std::vector<std::unique_ptr<Worker>>& workers,
                                       std::span<const size_t> job_of_worker)
    : workers_(workers), unit_of_worker_(workers.size(), -1) {
  std::map<int, size_t> group_unit;  // reporting group -> its unit (ss_group jobs)
  std::map<int, size_t> group_job;   // reporting group -> the job that set its unit up
  for (size_t w = 0; w < workers.size(); ++w) {
    const size_t j = job_of_worker[w];
    const JobSpec& spec = specs[j];
    if (spec.steady.dur_ns == 0) continue;
    if (spec.steady.group) {
      if (const auto it = group_unit.find(spec.report_group); it != group_unit.end()) {
        const JobSpec& first = specs[group_job[spec.report_group]];
        if (!SameSettings(first, spec)) {
          throw stats::UsageError(fmt::format(
              "job '{}': steadystate options must be the same within a reporting group (job "
              "'{}' has others)",
              spec.name, first.name));
        }
        units_[it->second].workers.push_back(w);
        unit_of_worker_[w] = static_cast<int>(it->second);
        continue;
      }
      group_unit[spec.report_group] = units_.size();
      group_job[spec.report_group] = j;
    }
    const uint64_t interval = std::max<uint64_t>(spec.steady.interval_ns, 1);
    const auto size = static_cast<uint32_t>(std::max<uint64_t>(spec.steady.dur_ns / interval, 1));
    unit_of_worker_[w] = static_cast<int>(units_.size());
    units_.push_back(
        Unit{{w},
             spec.steady.ramp_ns,
             interval,
             stats::SteadyStateWindow(spec.steady.criterion, size,
                                      static_cast<uint32_t>(spec.steady.dur_ns / 1'000'000'000)),
             0,
             0,
             0,
             0,
             false});
  }
}

void SteadyStateMonitor::Start(const WorkerThreads& threads) {
  threads_ = &threads;
  if (units_.empty()) return;
  thread_ = std::thread([this] { Body(); });
}

void SteadyStateMonitor::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::optional<stats::SteadyStateResult> SteadyStateMonitor::ResultOf(size_t w) const {
  const int u = unit_of_worker_[w];
  if (u < 0) return std::nullopt;
  return units_[static_cast<size_t>(u)].window.result();
}

void SteadyStateMonitor::Body() {
  // Wakes at the earliest due measurement, and at least every 50 ms (to see units start and end).
  constexpr uint64_t kPollNs = 50'000'000;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const uint64_t now = Clock::NowNs();
    const uint64_t next = std::min(Tick(now), now + kPollNs);
    cv_.wait_for(lock, std::chrono::nanoseconds(next > now ? next - now : 0),
                 [this] { return stopping_; });
  }
}

uint64_t SteadyStateMonitor::Tick(uint64_t now_ns) {
  uint64_t next = UINT64_MAX;
  for (Unit& u : units_) {
    if (u.done) continue;
    bool ended = true;
    uint64_t start = UINT64_MAX;
    for (size_t w : u.workers) {
      ended = ended && threads_->end_ns(w) != 0;
      if (const uint64_t from = threads_->record_from_ns(w); from != 0) {
        start = std::min(start, from);
      }
    }
    if (ended) {
      u.done = true;
      continue;
    }
    if (start == UINT64_MAX) continue;  // not started (a job waiting for another)
    if (u.next_ns == 0) {
      // The counts at the baseline instant start the first measurement: the recording start (the
      // recorders begin empty), or with a ramp one interval after it, as fio begins "one second
      // after ss_ramp".
      const uint64_t base = u.ramp_ns != 0 ? start + u.ramp_ns + u.interval_ns : start;
      if (u.ramp_ns != 0 && now_ns < base) {
        next = std::min(next, base);
        continue;
      }
      u.prev_ns = u.ramp_ns != 0 ? now_ns : start;
      if (u.ramp_ns != 0) {
        const stats::RecorderProgress p = Progress(u);
        u.prev_ios = p.ios;
        u.prev_bytes = p.bytes;
      }
      u.next_ns = u.prev_ns + u.interval_ns;
    }
    if (now_ns >= u.next_ns) {
      Measure(u, now_ns);
      while (u.next_ns <= now_ns) u.next_ns += u.interval_ns;
    }
    if (!u.done) next = std::min(next, u.next_ns);
  }
  return next;
}

stats::RecorderProgress SteadyStateMonitor::Progress(const Unit& u) const {
  stats::RecorderProgress sum;
  for (size_t w : u.workers) {
    const stats::RecorderProgress p = workers_[w]->recorder().Progress();
    sum.ios += p.ios;
    sum.bytes += p.bytes;
    sum.clat_sum_ns += p.clat_sum_ns;
    sum.clat_n += p.clat_n;
  }
  return sum;
}

void SteadyStateMonitor::Measure(Unit& u, uint64_t now_ns) {
  const stats::RecorderProgress sum = Progress(u);
  const uint64_t elapsed = now_ns - u.prev_ns;
  // Per second, truncated, as fio's 1000 * delta / elapsed ms.
  const auto per_second = [elapsed](uint64_t delta) {
    return elapsed ? static_cast<uint64_t>(static_cast<double>(delta) * 1e9 /
                                           static_cast<double>(elapsed))
                   : 0;
  };
  const uint64_t iops = per_second(sum.ios - u.prev_ios);
  const uint64_t bw = per_second(sum.bytes - u.prev_bytes);
  const uint64_t lat = sum.clat_n ? sum.clat_sum_ns / sum.clat_n : 0;
  u.prev_ns = now_ns;
  u.prev_ios = sum.ios;
  u.prev_bytes = sum.bytes;
  if (u.window.Add(iops, bw, lat)) {
    u.done = true;
    for (size_t w : u.workers) workers_[w]->Terminate();
  }
}

}  // namespace iotail::engine
