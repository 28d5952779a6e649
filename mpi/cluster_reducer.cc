#include "mpi/cluster_reducer.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "stats/record/snapshot_codec.h"

namespace iotail::mpi {

std::vector<uint64_t> EncodeInterval(const ClusterInterval& interval) {
  std::vector<uint64_t> out = {interval.time_ms,         interval.start_ns,
                               interval.end_ns,          interval.planned_bytes,
                               interval.final ? 1u : 0u, interval.jobs.size()};
  for (const auto& j : interval.jobs) stats::Encode(j, out);
  out.push_back(interval.entry_counts.size());
  out.insert(out.end(), interval.entry_counts.begin(), interval.entry_counts.end());
  out.insert(out.end(), interval.logged_bytes.begin(), interval.logged_bytes.end());
  return out;
}

ClusterInterval DecodeInterval(std::span<const uint64_t> words) {
  ClusterInterval interval;
  size_t pos = 0;
  interval.time_ms = stats::DecodeWord(words, pos);
  interval.start_ns = stats::DecodeWord(words, pos);
  interval.end_ns = stats::DecodeWord(words, pos);
  interval.planned_bytes = stats::DecodeWord(words, pos);
  interval.final = stats::DecodeWord(words, pos) != 0;
  const uint64_t jobs = stats::DecodeWord(words, pos);
  if (jobs > 1'000'000) throw std::runtime_error("interval: job count out of range");
  interval.jobs.resize(jobs);
  for (auto& j : interval.jobs) stats::Decode(words, pos, j);
  const uint64_t counts = stats::DecodeWord(words, pos);
  if (counts % kEntryWords != 0 || counts > words.size() - pos) {
    throw std::runtime_error("interval: entry counts out of range");
  }
  interval.entry_counts.assign(words.begin() + static_cast<ptrdiff_t>(pos),
                               words.begin() + static_cast<ptrdiff_t>(pos + counts));
  pos += counts;
  for (uint64_t& b : interval.logged_bytes) b = stats::DecodeWord(words, pos);
  if (pos != words.size()) throw std::runtime_error("interval: trailing words");
  return interval;
}

ClusterReducer::ClusterReducer(int ranks, size_t jobs, uint64_t period_ms, Emit emit,
                               size_t batches)
    : ranks_(static_cast<size_t>(ranks)),
      jobs_(jobs),
      period_ms_(period_ms == 0 ? 1 : period_ms),
      batches_(batches == 0 ? 1 : batches),
      emit_(std::move(emit)) {}

void ClusterReducer::Add(int rank, ClusterInterval interval) {
  Rank& r = ranks_.at(static_cast<size_t>(rank));
  if (r.done || complete_) return;
  if (interval.jobs.size() != jobs_) throw std::runtime_error("interval: wrong job count");
  r.planned_bytes = interval.planned_bytes;
  r.batch_of.push_back(r.finals);
  if (interval.final) ++r.finals;
  r.queue.push_back(std::move(interval));
  Drain();
}

void ClusterReducer::RankDone(int rank) {
  ranks_.at(static_cast<size_t>(rank)).done = true;
  Drain();
}

void ClusterReducer::Drain() {
  // An interval belongs to the period it ends in: (kP - P, kP] is period k, as `iotail merge`
  // places a record that ends at time t.
  const auto period_of = [this](const ClusterInterval& i) {
    return (i.time_ms + period_ms_ - 1) / period_ms_;
  };
  while (!complete_) {
    // Every rank that may still send in this batch must have something of it queued: it may hold
    // the earliest.
    bool any = false;
    for (const Rank& r : ranks_) {
      const bool in_batch = !r.queue.empty() && r.batch_of.front() == batch_;
      if (!in_batch && !r.done && r.finals <= batch_) return;
      any = any || in_batch;
    }
    if (!any) {  // every rank has ended this batch
      bool over = true;
      for (const Rank& r : ranks_) over = over && r.queue.empty() && (r.done || r.Ended(batches_));
      if (over) {  // every rank has ended its last batch and everything is out
        complete_ = true;
        return;
      }
      // Every rank has ended this batch: the next starts at the boundary after the cluster's last.
      ++batch_;
      offset_ms_ = (last_time_ms_ + period_ms_ - 1) / period_ms_ * period_ms_;
      continue;
    }
    uint64_t k = std::numeric_limits<uint64_t>::max();
    for (const Rank& r : ranks_) {
      if (!r.queue.empty() && r.batch_of.front() == batch_) {
        k = std::min(k, period_of(r.queue.front()));
      }
    }
    ClusterInterval sum;
    sum.jobs.resize(jobs_);
    sum.start_ns = std::numeric_limits<uint64_t>::max();
    for (Rank& r : ranks_) {
      while (!r.queue.empty() && r.batch_of.front() == batch_ && period_of(r.queue.front()) == k) {
        const ClusterInterval& front = r.queue.front();
        for (size_t j = 0; j < jobs_; ++j) sum.jobs[j].Add(front.jobs[j]);
        if (sum.entry_counts.size() < front.entry_counts.size())
          sum.entry_counts.resize(front.entry_counts.size());
        for (size_t k = 0; k < front.entry_counts.size(); ++k)
          sum.entry_counts[k] += front.entry_counts[k];
        for (int d = 0; d < stats::kDirectionCount; ++d)
          sum.logged_bytes[d] += front.logged_bytes[d];
        sum.start_ns = std::min(sum.start_ns, front.start_ns);
        sum.end_ns = std::max(sum.end_ns, front.end_ns);
        sum.time_ms = std::max(sum.time_ms, offset_ms_ + front.time_ms);
        r.queue.pop_front();
        r.batch_of.pop_front();
      }
    }
    sum.final = true;
    for (const Rank& r : ranks_)
      sum.final = sum.final && r.queue.empty() && (r.done || r.Ended(batches_));
    if (emitted_ > 0 && sum.time_ms <= last_time_ms_) sum.time_ms = last_time_ms_ + 1;
    for (const Rank& r : ranks_) sum.planned_bytes += r.planned_bytes;
    last_time_ms_ = sum.time_ms;
    ++emitted_;
    emit_(sum);
    if (sum.final) complete_ = true;
  }
}

}  // namespace iotail::mpi
