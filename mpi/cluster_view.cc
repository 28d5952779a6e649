#include "mpi/cluster_view.h"

#include <stdexcept>

#include "stats/record/explain_sink.h"

namespace iotail::mpi {
namespace {

// The interval summed over its jobs, one delta, with the bytes its ranks' logs account for: the bs
// column is then what `iotail merge` of those logs writes.
stats::RecorderSnapshot LoggedSum(const ClusterInterval& i) {
  stats::RecorderSnapshot all;
  for (const stats::RecorderSnapshot& job : i.jobs) all.Add(job);
  for (int d = 0; d < stats::kDirectionCount; ++d) all.dirs[d].bytes = i.logged_bytes[d];
  return all;
}

}  // namespace

ClusterView::ClusterView(int ranks, size_t jobs, uint64_t period_ms, size_t batches)
    : reducer_(
          ranks, jobs, period_ms, [this](const ClusterInterval& i) { Emit(i); }, batches) {
  explain_.reserve(stats::kStageCount);
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    explain_.emplace_back(
        ranks, jobs, period_ms, [this, s](const ClusterInterval& i) { EmitStage(s, i); }, batches);
  }
}

ClusterReducer& ClusterView::explain(uint64_t stage) {
  if (stage >= explain_.size()) throw std::runtime_error("explain: stage out of range");
  return explain_[stage];
}

void ClusterView::RankDone(int rank) {
  reducer_.RankDone(rank);
  ExplainDone(rank);
}

void ClusterView::ExplainDone(int rank) {
  for (ClusterReducer& r : explain_) r.RankDone(rank);
}

void ClusterView::EmitStage(size_t stage, const ClusterInterval& i) {
  std::lock_guard lock(mu_);
  stats::IntervalSink* log = view_.explain_logs[stage];
  if (log == nullptr) return;
  const stats::IntervalInfo info{i.time_ms, i.start_ns, i.end_ns, i.final, i.planned_bytes};
  const stats::RecorderSnapshot all = LoggedSum(i);
  log->OnInterval(info, std::span<const stats::RecorderSnapshot>(&all, 1));
  if (i.final) log->Close();
}

void ClusterView::SetView(const cli::ViewSinks& view) {
  std::lock_guard lock(mu_);
  view_ = view;
}

std::vector<stats::RateSamples> ClusterView::samples() {
  std::lock_guard lock(mu_);
  if (view_.per_entry == nullptr) return {};
  return view_.per_entry->samples();
}

void ClusterView::Emit(const ClusterInterval& i) {
  std::lock_guard lock(mu_);
  const stats::IntervalInfo info{i.time_ms, i.start_ns, i.end_ns, i.final, i.planned_bytes};
  for (stats::IntervalSink* sink : view_.per_job) sink->OnInterval(info, i.jobs);
  if (!view_.hist_logs.empty()) {
    const stats::RecorderSnapshot all = LoggedSum(i);
    for (stats::IntervalSink* log : view_.hist_logs) {
      log->OnInterval(info, std::span<const stats::RecorderSnapshot>(&all, 1));
    }
  }
  if (view_.per_entry != nullptr) {
    // Each entry's counts, as the deltas of as many workers (all a rate sample needs).
    const size_t entries = i.entry_counts.size() / kEntryWords;
    entry_deltas_.resize(entries);
    for (size_t e = 0; e < entries; ++e) {
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        entry_deltas_[e].dirs[d].ios = i.entry_counts[e * kEntryWords + 2 * d];
        entry_deltas_[e].dirs[d].bytes = i.entry_counts[e * kEntryWords + 2 * d + 1];
      }
    }
    view_.per_entry->OnInterval(info, entry_deltas_);
  }
  if (!i.final) return;
  // The last interval: the sinks close (the log's file, the live report's last line), as a
  // run's interval clock closes them.
  for (stats::IntervalSink* sink : view_.per_job) sink->Close();
  for (stats::IntervalSink* log : view_.hist_logs) log->Close();
  if (view_.per_entry != nullptr) view_.per_entry->Close();
}

}  // namespace iotail::mpi
