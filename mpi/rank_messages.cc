#include "mpi/rank_messages.h"

#include <stdexcept>

#include "stats/record/snapshot_codec.h"

namespace iotail::mpi {

std::vector<uint64_t> EncodeTotals(const stats::RunSummary& s) {
  std::vector<uint64_t> out = {static_cast<uint64_t>(s.start_skew_ns), s.jobs.size()};
  for (const auto& j : s.jobs) {
    stats::Encode(j.totals, out);
    stats::Encode(j.cpu, out);
    stats::Encode(j.depths, out);
  }
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
  for (size_t j = 0; j < jobs; ++j) {
    stats::Decode(in, pos, t.totals[j]);
    stats::Decode(in, pos, t.cpu[j]);
    stats::Decode(in, pos, t.depths[j]);
  }
  return t;
}

}  // namespace iotail::mpi
