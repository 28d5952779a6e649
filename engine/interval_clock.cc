#include "engine/interval_clock.h"

#include <chrono>

#include "engine/clock.h"

namespace iotail::engine {

IntervalClock::IntervalClock(std::vector<const stats::Recorder*> recorders,
                             std::vector<stats::IntervalSink*> sinks, IntervalClockOptions options)
    : sinks_(std::move(sinks)), options_(std::move(options)) {
  last_end_ns_ = options_.start_realtime_ns;
  if (options_.from_start && !options_.unix_epoch) origin_ns_ = options_.start_realtime_ns;
  samplers_.reserve(recorders.size());
  for (const stats::Recorder* r : recorders) samplers_.emplace_back(*r);
  deltas_.resize(recorders.size());
}

IntervalClock::~IntervalClock() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
}

void IntervalClock::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void IntervalClock::Loop() {
  try {
    std::unique_lock lock(mu_);
    // Started ahead of the recording (before the workers, so that a thread that cannot be
    // created fails the run before it begins): wait for it.
    const auto start = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(options_.start_realtime_ns)));
    if (cv_.wait_until(lock, start, [this] { return stop_; })) return;
    for (;;) {
      const uint64_t boundary = NextBoundaryNs(Clock::RealtimeNs(), options_.period_ms, origin_ns_);
      const auto deadline = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::nanoseconds(boundary)));
      if (cv_.wait_until(lock, deadline, [this] { return stop_; })) return;
      if (Clock::RealtimeNs() < boundary) continue;  // woke early (clock step): wait again
      Close(boundary, false, boundary);
    }
  } catch (...) {
    failure_ = std::current_exception();
  }
}

void IntervalClock::Close(uint64_t end_ns, bool final, uint64_t stamp_ns) {
  uint64_t time_ms =
      origin_ns_ != 0
          ? (stamp_ns > origin_ns_ ? (stamp_ns - origin_ns_ + 500'000u) / 1'000'000u : 0)
          : LogTimeMs(stamp_ns, options_.start_realtime_ns, options_.period_ms,
                      options_.unix_epoch);
  // Times strictly increase: a final partial interval ending within half a millisecond of the
  // last boundary would round to that boundary's time (a duplicate line time, once in ~50 runs).
  if (intervals_ > 0 && time_ms <= last_time_ms_) time_ms = last_time_ms_ + 1;
  last_time_ms_ = time_ms;
  for (size_t w = 0; w < samplers_.size(); ++w) samplers_[w].Next(deltas_[w]);
  ++intervals_;
  const IntervalInfo info{time_ms, last_end_ns_, end_ns, final, options_.planned_bytes, origin_ns_};
  last_end_ns_ = end_ns;
  for (size_t i = 0; i < sinks_.size(); ++i) {
    if (sinks_[i] == nullptr) continue;
    try {
      sinks_[i]->OnInterval(info, deltas_);
    } catch (const std::exception& e) {
      Drop(i, e.what());
    }
  }
}

void IntervalClock::Finish(uint64_t end_realtime_ns) {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (failure_) std::rethrow_exception(failure_);
  // A run that ends just after a boundary the clock thread had not closed yet (it wakes a little
  // late, more so on a loaded machine) would otherwise end with one interval of more than a period
  // stamped after that boundary, which `iotail merge` and the cluster's merge then split or place
  // differently. Such a final interval is that boundary's close, late by a little, exactly as the
  // clock's own late closes are: stamped with the boundary, its rates over its real length.
  const uint64_t period_ns = static_cast<uint64_t>(options_.period_ms) * 1'000'000u;
  uint64_t stamp_ns = end_realtime_ns;
  if (period_ns != 0) {
    const uint64_t boundary = end_realtime_ns < origin_ns_
                                  ? origin_ns_
                                  : end_realtime_ns - (end_realtime_ns - origin_ns_) % period_ns;
    if (boundary > last_end_ns_ && boundary - last_end_ns_ <= period_ns &&
        end_realtime_ns - boundary <= period_ns / kLateCloseFraction) {
      stamp_ns = boundary;
    }
  }
  Close(end_realtime_ns, true, stamp_ns);
  for (size_t i = 0; i < sinks_.size(); ++i) {
    if (sinks_[i] == nullptr) continue;
    try {
      sinks_[i]->Close();
    } catch (const std::exception& e) {
      Drop(i, e.what());
    }
  }
}

void IntervalClock::Drop(size_t i, const std::string& why) {
  sinks_[i] = nullptr;
  sink_errors_.push_back(why);
  if (options_.on_sink_error) options_.on_sink_error(why);
}

std::vector<stats::RecorderSnapshot> IntervalClock::Totals() const {
  std::vector<stats::RecorderSnapshot> out;
  out.reserve(samplers_.size());
  for (const auto& s : samplers_) out.push_back(s.cumulative());
  return out;
}

}  // namespace iotail::engine
