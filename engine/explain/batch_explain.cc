#include "engine/explain/batch_explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <variant>

#include "engine/io/engine_table.h"

namespace iotail::engine {

namespace {

// Records a trail holds: about 0.1 s of I/O at 1M IOPS per worker, 48 bytes each (4.5 MiB).
constexpr size_t kTrailRecords = size_t{1} << 17;

// Each explaining job's targets, by file index: its place, or why it has none.
std::vector<std::vector<std::optional<FilePlace>>> PlacesOf(std::span<const JobSpec> specs,
                                                            std::span<const Targets> targets,
                                                            ExplainOutcome& outcome) {
  std::vector<std::vector<std::optional<FilePlace>>> places(specs.size());
  for (size_t j = 0; j < specs.size(); ++j) {
    if (!specs[j].explain.on) continue;
    const Targets& t = targets[j];
    if (t.nbd) continue;  // its own stages, from iotail's stamps (ExplainedWorker::own_stages)
    if (t.diskless || t.by_path) {
      outcome.untraced.push_back(fmt::format("job {}: the {} engine issues no block requests",
                                             specs[j].name, EngineRowOf(specs[j].ioengine).name));
      continue;
    }
    for (const Target& file : t.files) {
      std::variant<FilePlace, std::string> place = PlaceOf(file.fd(), file.path());
      if (auto* why = std::get_if<std::string>(&place)) {
        outcome.untraced.push_back(fmt::format("{}: {}", file.path(), *why));
        places[j].push_back(std::nullopt);
      } else {
        places[j].push_back(std::get<FilePlace>(std::move(place)));
      }
    }
  }
  return places;
}

// The request table's entries: 512 per I/O in flight (a request is written over before its I/O is
// reaped about once in 512 I/Os at most), from 4096 to 1 << 20 (64 MiB).
uint32_t RequestEntriesFor(uint64_t depth) {
  const uint64_t wanted = std::clamp<uint64_t>(depth * 512, 4096, uint64_t{1} << 20);
  return static_cast<uint32_t>(std::bit_ceil(wanted));
}

}  // namespace

std::unique_ptr<BatchExplain> BatchExplain::Make(std::span<const JobSpec> specs,
                                                 std::span<const Targets> targets,
                                                 std::span<const std::unique_ptr<Worker>> workers,
                                                 std::span<const size_t> job_of_worker,
                                                 int first_worker) {
  if (std::none_of(specs.begin(), specs.end(),
                   [](const JobSpec& s) { return s.explain.Active(); })) {
    return nullptr;
  }
  std::unique_ptr<BatchExplain> batch(new BatchExplain());
  ExplainOutcome& outcome = batch->outcome_;
  outcome.asked =
      std::any_of(specs.begin(), specs.end(), [](const JobSpec& s) { return s.explain.on; });
  const auto places = PlacesOf(specs, targets, outcome);
  std::vector<dev_t> disks;
  std::vector<std::vector<std::optional<FilePlace>>> files_of_worker(workers.size());
  uint64_t depth = 0;  // the explained workers' I/Os in flight at most
  bool own_stages = false;
  std::map<size_t, uint32_t> clones;
  for (size_t w = 0; w < workers.size(); ++w) {
    const size_t j = job_of_worker[w];
    const JobSpec& spec = specs[j];
    const uint32_t clone = clones[j]++;
    ExplainedWorker ew;
    ew.number = first_worker + static_cast<int>(w) + 1;
    if (spec.explain.Active()) {
      batch->trails_.push_back(std::make_unique<IoTrail>(kTrailRecords));
      ew.trail = batch->trails_.back().get();
      ew.slowest = spec.explain.SlowestKept();
      ew.own_stages = spec.explain.on && targets[j].nbd;
      if (spec.explain.on && !places[j].empty()) {
        auto& files = files_of_worker[w];
        for (size_t f : FilesOf(spec, targets[j].count, clone)) {
          files.push_back(f < places[j].size() ? places[j][f] : std::nullopt);
          if (files.back()) disks.push_back(files.back()->disk);
        }
        depth += spec.queue.iodepth;
      }
    }
    own_stages = own_stages || ew.own_stages;
    batch->workers_.push_back(std::move(ew));
  }
  if (outcome.asked) {
    std::sort(disks.begin(), disks.end());
    disks.erase(std::unique(disks.begin(), disks.end()), disks.end());
    if (disks.empty() && own_stages) {
      outcome.attachment = "the nbd engine's own stamps";
    } else if (disks.empty()) {
      outcome.why_not = "no target of the run issues block requests";
    } else {
      BlockTracerOptions options;
      options.request_entries = RequestEntriesFor(depth);
      auto opened = BlockTracer::Open(disks, 0, options);
      if (auto* none = std::get_if<TracerUnavailable>(&opened)) {
        outcome.why_not = none->reason;
      } else {
        batch->tracer_ = std::move(std::get<std::unique_ptr<BlockTracer>>(opened));
        outcome.attachment = batch->tracer_->Attachment();
      }
    }
  }
  // Each explained worker's trail; a worker on a traced disk also joins its I/Os to their
  // requests as it reaps them.
  for (size_t w = 0; w < workers.size(); ++w) {
    if (batch->workers_[w].trail == nullptr) continue;
    const TrailJoin* join = nullptr;
    if (batch->tracer_ && !files_of_worker[w].empty()) {
      batch->joins_.push_back(
          std::make_unique<TrailJoin>(batch->tracer_->Requests(), std::move(files_of_worker[w])));
      join = batch->joins_.back().get();
    }
    workers[w]->SetTrail(batch->workers_[w].trail, join);
  }
  return batch;
}

stats::IntervalSink* BatchExplain::Open(stats::ExplainSinks sinks, uint32_t period_ms,
                                        std::function<void(const std::string&)> on_error) {
  ExplainSessionOptions options;
  options.period_ms = period_ms;
  options.on_error = std::move(on_error);
  session_ = std::make_unique<ExplainSession>(std::move(workers_), std::move(tracer_),
                                              std::move(sinks), std::move(options));
  return session_.get();
}

void BatchExplain::Collect(std::span<const size_t> job_of_worker, RunOutcome& out) const {
  if (!session_) return;
  const std::vector<stats::ExplainTotals>& totals = session_->totals();
  for (size_t w = 0; w < totals.size() && w < job_of_worker.size(); ++w) {
    JobOutcome& job = out.jobs[job_of_worker[w]];
    if (session_->Explains(w)) job.explain.push_back(totals[w]);
  }
  out.explain = outcome_;
  out.explain.requests_unmatched = session_->requests_unmatched();
  out.explain.records_dropped = session_->records_dropped();
  out.explain.history = session_->history();
}

}  // namespace iotail::engine
