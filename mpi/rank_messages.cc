#include "mpi/rank_messages.h"

#include <stdexcept>

#include "stats/record/snapshot_codec.h"

namespace iotail::mpi {
namespace {

// --explain's totals of a job: each stage as a snapshot whose dirs[d].clat is the stage of
// direction d, then each direction's counts, then the run's.
void EncodeExplain(const stats::ExplainTotals& e, std::vector<uint64_t>& out) {
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    stats::RecorderSnapshot stage;
    for (int d = 0; d < stats::kDirectionCount; ++d) stage.dirs[d].clat = e.dirs[d].stages[s];
    stats::Encode(stage, out);
  }
  for (const stats::ExplainDirection& d : e.dirs)
    out.insert(out.end(), {d.joined, d.not_joined, d.split, d.latency_sum_ns});
  out.insert(out.end(), {e.requests_unmatched, e.records_dropped});
}

void DecodeExplain(std::span<const uint64_t> in, size_t& pos, stats::ExplainTotals& e) {
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    stats::RecorderSnapshot stage;
    stats::Decode(in, pos, stage);
    for (int d = 0; d < stats::kDirectionCount; ++d) e.dirs[d].stages[s] = stage.dirs[d].clat;
  }
  for (stats::ExplainDirection& d : e.dirs) {
    for (uint64_t* word : {&d.joined, &d.not_joined, &d.split, &d.latency_sum_ns})
      *word = stats::DecodeWord(in, pos);
  }
  e.requests_unmatched = stats::DecodeWord(in, pos);
  e.records_dropped = stats::DecodeWord(in, pos);
}

}  // namespace

std::vector<uint64_t> EncodeTotals(const stats::RunSummary& s) {
  std::vector<uint64_t> out = {static_cast<uint64_t>(s.start_skew_ns), s.jobs.size()};
  for (const auto& j : s.jobs) {
    stats::Encode(j.totals, out);
    stats::Encode(j.cpu, out);
    stats::Encode(j.depths, out);
    out.push_back(j.explain ? 1 : 0);
    if (j.explain) EncodeExplain(*j.explain, out);
  }
  out.insert(out.end(), {s.explain.requests_unmatched, s.explain.records_dropped});
  out.insert(out.end(), {s.replay.trace_ios, s.replay.recorded_ios});
  return out;
}

RankTotals DecodeTotals(std::span<const uint64_t> in) {
  RankTotals t;
  size_t pos = 0;
  t.start_skew_ns = static_cast<int64_t>(stats::DecodeWord(in, pos));
  const uint64_t jobs = stats::DecodeWord(in, pos);
  if (jobs > 1'000'000) throw std::runtime_error("totals: job count out of range");
  t.totals.resize(jobs);
  t.cpu.resize(jobs);
  t.depths.resize(jobs);
  t.explain.resize(jobs);
  for (size_t j = 0; j < jobs; ++j) {
    stats::Decode(in, pos, t.totals[j]);
    stats::Decode(in, pos, t.cpu[j]);
    stats::Decode(in, pos, t.depths[j]);
    if (stats::DecodeWord(in, pos) != 0) DecodeExplain(in, pos, t.explain[j].emplace());
  }
  t.requests_unmatched = stats::DecodeWord(in, pos);
  t.records_dropped = stats::DecodeWord(in, pos);
  t.trace_ios = stats::DecodeWord(in, pos);
  t.trace_recorded = stats::DecodeWord(in, pos);
  if (pos != in.size()) throw std::runtime_error("totals: trailing words");
  return t;
}

}  // namespace iotail::mpi
