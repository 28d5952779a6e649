#include "engine/explain/explain_session.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "engine/clock.h"

namespace iotail::engine {

struct ExplainSession::Interval {
  struct PerWorker {
    std::array<stats::ExplainDirection, stats::kDirectionCount> dirs;
    std::array<uint64_t, stats::kDirectionCount> bytes{};
    std::vector<stats::SlowIo> slow;  // a min-heap by latency, at most options_.slowest
  };
  uint64_t end_ns = 0;  // epoch ns: the boundary it closes at
  std::vector<PerWorker> workers;
};

namespace {

bool Slower(const stats::SlowIo& a, const stats::SlowIo& b) { return a.latency_ns > b.latency_ns; }

// Adds `row` to `heap` (a min-heap by latency) and keeps its `slowest` largest.
void KeepSlowest(std::vector<stats::SlowIo>& heap, const stats::SlowIo& row, size_t slowest) {
  heap.push_back(row);
  std::push_heap(heap.begin(), heap.end(), Slower);
  if (heap.size() > slowest) {
    std::pop_heap(heap.begin(), heap.end(), Slower);
    heap.pop_back();
  }
}

void MergeInto(ExplainSession::Interval& into, ExplainSession::Interval& from,
               std::span<const ExplainedWorker> workers) {
  for (size_t w = 0; w < into.workers.size(); ++w) {
    const size_t slowest = workers[w].slowest;
    auto& a = into.workers[w];
    auto& b = from.workers[w];
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      a.dirs[d].Add(b.dirs[d]);
      a.bytes[d] += b.bytes[d];
    }
    for (const stats::SlowIo& row : b.slow) KeepSlowest(a.slow, row, slowest);
  }
}

}  // namespace

ExplainSession::ExplainSession(std::vector<ExplainedWorker> workers,
                               std::unique_ptr<BlockTracer> tracer, stats::ExplainSinks sinks,
                               ExplainSessionOptions options)
    : workers_(std::move(workers)),
      tracer_(std::move(tracer)),
      sinks_(std::move(sinks)),
      options_(std::move(options)),
      period_ns_(uint64_t{options_.period_ms} * 1'000'000u),
      totals_(workers_.size()) {
  for (size_t w = 0; w < workers_.size(); ++w) totals_[w].own_stages = workers_[w].own_stages;
}

ExplainSession::~ExplainSession() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ExplainSession::Start(uint64_t origin_ns) {
  origin_ns_ = origin_ns;
  mono_to_real_ = static_cast<int64_t>(Clock::RealtimeNs()) - static_cast<int64_t>(Clock::NowNs());
  thread_ = std::thread([this] { Loop(); });
}

void ExplainSession::OnInterval(const stats::IntervalInfo& info,
                                std::span<const stats::RecorderSnapshot>) {
  {
    std::lock_guard lock(mutex_);
    boundaries_.push_back(Boundary{info, Clock::NowNs()});
  }
  cv_.notify_all();
}

void ExplainSession::Close() {
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return finished_ || quit_ || !thread_.joinable(); });
  }
  if (thread_.joinable()) thread_.join();
  auto close = [&](auto& sink) {
    try {
      sink->Close();
    } catch (const std::exception& e) {
      if (options_.on_error) options_.on_error(e.what());
    }
  };
  for (auto& stage : sinks_.stages) {
    for (auto* sink : stage) close(sink);
  }
  for (auto* sink : sinks_.slowest) close(sink);
  if (tracer_) {
    requests_unmatched_ = tracer_->Counters().block_unmatched + tracer_->Requests().Untaken();
    tracer_->Close();  // its counters stay readable (records_dropped)
  }
}

uint64_t ExplainSession::records_dropped() const {
  uint64_t n = 0;
  for (const ExplainedWorker& w : workers_) n += w.trail != nullptr ? w.trail->dropped() : 0;
  if (tracer_) {
    const TraceCounters c = tracer_->Counters();
    n += c.missed;
  }
  return n;
}

void ExplainSession::Loop() {
  for (;;) {
    bool final_due = false;
    {
      std::unique_lock lock(mutex_);
      if (quit_) return;
      final_due = !boundaries_.empty() && boundaries_.back().info.final;
      if (!final_due) {
        cv_.wait_for(lock, std::chrono::milliseconds(5), [&] { return quit_; });
        if (quit_) return;
      }
    }
    if (Round(final_due)) {
      {
        std::lock_guard lock(mutex_);
        finished_ = true;
      }
      cv_.notify_all();
      return;
    }
  }
}

// One round: the I/Os completed so far (joined by their workers), then the intervals due. True once
// the final interval is written.
bool ExplainSession::Round(bool final_round) {
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (workers_[w].trail == nullptr) continue;
    workers_[w].trail->Consume(workers_[w].trail->Mark(),
                               [&](const IoTrailRecord& io) { Account(w, io); });
  }
  const uint64_t now = Clock::NowNs();
  for (;;) {
    Boundary due;
    {
      std::lock_guard lock(mutex_);
      if (boundaries_.empty()) return false;
      const Boundary& front = boundaries_.front();
      if (!front.info.final && front.seen_mono_ns + kGraceMs * 1'000'000u > now) return false;
      if (front.info.final && !final_round) return false;
      due = front;
      boundaries_.pop_front();
    }
    // Every open interval ending by this boundary (all of them for the final one), as one.
    Interval merged;
    merged.workers.resize(workers_.size());
    while (!open_.empty() && (due.info.final || open_.front()->end_ns <= due.info.end_ns)) {
      MergeInto(merged, *open_.front(), workers_);
      open_.erase(open_.begin());
    }
    last_emitted_end_ = std::max(last_emitted_end_, due.info.end_ns);
    Emit(due.info, merged);
    if (due.info.final) return true;
  }
}

ExplainSession::Interval& ExplainSession::IntervalOf(uint64_t done_ns) {
  const uint64_t real = static_cast<uint64_t>(static_cast<int64_t>(done_ns) + mono_to_real_);
  uint64_t end = real;
  if (period_ns_ != 0) {
    end = real <= origin_ns_
              ? origin_ns_
              : origin_ns_ + (real - origin_ns_ + period_ns_ - 1) / period_ns_ * period_ns_;
  }
  if (end <= last_emitted_end_) end = last_emitted_end_ + std::max<uint64_t>(period_ns_, 1);
  auto at = std::lower_bound(open_.begin(), open_.end(), end,
                             [](const auto& i, uint64_t e) { return i->end_ns < e; });
  if (at == open_.end() || (*at)->end_ns != end) {
    auto interval = std::make_unique<Interval>();
    interval->end_ns = end;
    interval->workers.resize(workers_.size());
    at = open_.insert(at, std::move(interval));
  }
  return **at;
}

void ExplainSession::Account(size_t w, const IoTrailRecord& io) {
  const ExplainedWorker& worker = workers_[w];
  JoinOutcome outcome = io.join;
  std::array<uint64_t, stats::kStageCount> stages{};
  if (worker.own_stages) {
    outcome = JoinOutcome::kJoined;
    stages = OwnStagesOf(io);
  } else if (outcome == JoinOutcome::kJoined) {
    stages = StagesOf(io);
  } else if (io.intended_ns != 0 && io.start_ns > io.intended_ns) {
    stages[static_cast<size_t>(stats::Stage::kSchedule)] = io.start_ns - io.intended_ns;
  }
  const uint64_t latency = LatencyOf(io);
  Interval::PerWorker& mine = IntervalOf(io.done_ns).workers[w];
  const int d = stats::DirectionIndex(io.dir);
  stats::ExplainDirection& dir = mine.dirs[d];
  if (outcome == JoinOutcome::kJoined) {
    for (size_t s = 0; s < stats::kStageCount; ++s) stats::AddSample(dir.stages[s], stages[s]);
    ++dir.joined;
    dir.latency_sum_ns += latency;
    mine.bytes[d] += io.length;
  } else {
    ++dir.not_joined;
    if (outcome == JoinOutcome::kSplit) ++dir.split;
  }
  if (worker.slowest == 0) return;
  if (mine.slow.size() == worker.slowest && mine.slow.front().latency_ns >= latency) return;
  stats::SlowIo row;
  row.worker = worker.number;
  row.dir = io.dir;
  row.file = io.file;
  row.offset = io.offset;
  row.length = io.length;
  row.depth = io.depth;
  row.cpu = io.cpu;
  row.latency_ns = latency;
  row.joined = outcome == JoinOutcome::kJoined;
  row.stages = stages;
  KeepSlowest(mine.slow, row, worker.slowest);
}

void ExplainSession::Emit(const stats::IntervalInfo& info, Interval& interval) {
  stats::ExplainIntervalSums sums;
  sums.start_ns = info.start_ns;
  sums.end_ns = info.end_ns;
  for (size_t w = 0; w < workers_.size(); ++w) {
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      const stats::ExplainDirection& dir = interval.workers[w].dirs[d];
      totals_[w].dirs[d].Add(dir);
      for (size_t s = 0; s < stats::kStageCount; ++s) sums.sum_ns[d][s] += dir.stages[s].sum_ns;
      sums.joined[d] += dir.joined;
    }
  }
  history_.push_back(sums);
  auto deliver = [&](auto& list, auto&& call) {
    for (auto it = list.begin(); it != list.end();) {
      try {
        call(*it);
        ++it;
      } catch (const std::exception& e) {
        if (options_.on_error) options_.on_error(e.what());
        it = list.erase(it);
      }
    }
  };
  std::vector<stats::RecorderSnapshot> deltas(workers_.size());
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    if (sinks_.stages[s].empty()) continue;
    for (size_t w = 0; w < workers_.size(); ++w) {
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        stats::DirectionSnapshot& out = deltas[w].dirs[d];
        const Interval::PerWorker& mine = interval.workers[w];
        out.clat = mine.dirs[d].stages[s];
        out.ios = mine.dirs[d].joined;
        out.bytes = mine.bytes[d];
      }
    }
    deliver(sinks_.stages[s], [&](stats::IntervalSink* sink) { sink->OnInterval(info, deltas); });
  }
  if (sinks_.slowest.empty()) return;
  std::vector<stats::SlowIo> rows;
  for (Interval::PerWorker& mine : interval.workers) {
    std::sort(mine.slow.begin(), mine.slow.end(), Slower);
    for (stats::SlowIo& row : mine.slow) {
      row.time_ms = info.time_ms;
      rows.push_back(row);
    }
  }
  deliver(sinks_.slowest, [&](stats::SlowIoSink* sink) { sink->OnSlowIos(info, rows); });
}

}  // namespace iotail::engine
