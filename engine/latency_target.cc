#include "engine/latency_target.h"

#include <fmt/format.h>

#include "stats/core/errors.h"

namespace iotail::engine {

void JobSpec::ValidateLatencyTarget() const {
  if (latency_target.target_ns == 0) return;
  if (rates.Limited()) {
    throw stats::UsageError(
        "--latency_target: not supported together with --rate/--rate_iops in iotail (its open "
        "loop issues on a schedule, not at a depth)");
  }
}

LatencySearch::LatencySearch(const JobSpec& spec)
    : target_ns_(spec.latency_target.target_ns),
      window_ns_(spec.latency_target.window_ns),
      percentile_(spec.latency_target.percentile),
      run_(spec.latency_target.run),
      iodepth_(spec.queue.iodepth),
      depth_(spec.queue.iodepth),
      high_(spec.queue.iodepth) {}

void LatencySearch::Start(uint64_t now_ns, uint64_t ios) {
  end_run_ = false;
  if (!enabled()) {
    depth_ = iodepth_;
    return;
  }
  window_from_ns_ = now_ns;
  window_ios_ = ios;
  depth_ = 1;
  high_ = iodepth_;
  low_ = 1;
}

LatencySearch::Step LatencySearch::OnCompletion(uint64_t lat_ns) {
  if (!enabled() || lat_ns <= target_ns_) return Step::kNone;
  if (percentile_ == 100.0) {
    const Step s = Failed();
    return s == Step::kNone ? Step::kFatal : s;  // kNone: at depth 1 already
  }
  ++failed_;
  return Step::kNone;
}

// fio's __lat_target_failed: kNone at depth 1 (nothing changes), else drain at a lower depth.
LatencySearch::Step LatencySearch::Failed() {
  if (depth_ == 1) return Step::kNone;
  high_ = depth_;
  if (depth_ == low_) --low_;
  depth_ = (depth_ + low_) / 2;
  stable_ = 0;
  draining_ = true;
  return Step::kDrain;
}

// fio's lat_target_success.
LatencySearch::Step LatencySearch::Succeeded() {
  const uint32_t before = depth_;
  low_ = depth_;
  if (depth_ + 1 == high_ && ++stable_ >= 3) {
    ++high_;
    stable_ = 0;
  }
  depth_ = high_ != iodepth_ ? (depth_ + high_) / 2 : depth_ * 2;
  if (depth_ > iodepth_) depth_ = iodepth_;
  if (!run_ && depth_ == before) {
    if (end_run_) {
      done_ = true;
      return Step::kDone;
    }
    end_run_ = true;
    draining_ = true;
    return Step::kDrainAndReset;
  }
  return Step::kNone;
}

LatencySearch::Step LatencySearch::Check(uint64_t now_ns, uint64_t ios) {
  if (!enabled() || draining_ || done_) return Step::kNone;
  // fio compares whole microseconds.
  if ((now_ns - window_from_ns_) / 1000 < window_ns_ / 1000) return Step::kNone;
  const uint64_t n = ios - window_ios_;
  // As fio: an empty window is 0/0, not a success; failures counted before a restart still count.
  const double success = static_cast<double>(n - failed_) / static_cast<double>(n) * 100.0;
  if (success >= percentile_) {
    const Step s = Succeeded();
    if (s == Step::kNone) Drained(now_ns, ios);  // fio's new cycle at once
    return s;
  }
  return Failed();  // at depth 1: the window goes on
}

void LatencySearch::Drained(uint64_t now_ns, uint64_t ios) {
  draining_ = false;
  window_from_ns_ = now_ns;
  window_ios_ = ios;
  failed_ = 0;
}

}  // namespace iotail::engine
