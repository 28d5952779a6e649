#include "engine/rate_floor.h"

#include <fmt/format.h>

#include "stats/core/fio_numbers.h"

namespace iotail::engine {

RateFloor::RateFloor(const JobSpec& spec, int index) : spec_(spec), index_(index) {}

bool RateFloor::Check(uint64_t now, uint64_t record_from_ns) {
  constexpr uint64_t kSettleNs = 2'000'000'000;  // fio's 2 s settle period
  if (now < record_from_ns + kSettleNs) return true;
  for (size_t d = 0; d < 2; ++d) {
    const RateLimit& floor = spec_.rates.min[d];
    if (!floor.Any() || done_bytes_[d] == 0) continue;
    Base& base = base_[d];
    if (base.set) {
      const uint64_t spent_ms = (now - base.at_ns) / 1'000'000;
      if (spent_ms < spec_.rates.cycle_ms || spent_ms == 0) continue;
      // fio's integer arithmetic: per second over the whole ms spent.
      const bool bytes = floor.bytes_per_s > 0;
      const uint64_t got =
          (bytes ? done_bytes_[d] - base.bytes : done_ios_[d] - base.ios) * 1000 / spent_ms;
      const double want = bytes ? floor.bytes_per_s : floor.iops;
      if (static_cast<double>(got) < want) {
        const char* job = spec_.name.c_str();
        const std::string who =
            spec_.numjobs > 1 ? fmt::format("{} (clone {} of {})", job, index_ + 1, spec_.numjobs)
                              : std::string(job);
        const auto units = bytes ? stats::FioUnits::kBinaryBytes : stats::FioUnits::kCount;
        shortfall_ =
            fmt::format("{}: {}={}{} not met, got {}{} ({}, over {} ms)", who,
                        bytes ? "rate_min" : "rate_iops_min", stats::FioNumber(want, units),
                        bytes ? "/s" : "", stats::FioNumber(static_cast<double>(got), units),
                        bytes ? "/s" : " IOPS", d == 0 ? "reads" : "writes", spent_ms);
      }
      if (!shortfall_.empty()) return false;  // missed now or before: the worker is ending
    }
    base = Base{done_bytes_[d], done_ios_[d], now, true};
  }
  return true;
}

}  // namespace iotail::engine
