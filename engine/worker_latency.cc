// The worker's side of fio's latency target mode (engine/latency_target.h): each completion's
// total latency, the window checks after each round, the drains and the statistics reset.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/clock.h"
#include "engine/worker.h"

namespace iotail::engine {

bool Worker::LatencyCompleted(const Slot& slot, uint64_t done_ns) {
  ++lt_.ios;
  const uint64_t lat = done_ns - slot.stamps.start_ns;
  const LatencySearch::Step step = lat_.OnCompletion(lat);
  if (step != LatencySearch::Step::kFatal) {
    ApplyLatencyStep(step);
    return true;
  }
  // fio's lat_fatal: at depth 1 an I/O over the target with latency_percentile=100.
  recorder_->RecordError(ETIMEDOUT);
  if (spec_.errors.KeepsGoing(slot.dir, ETIMEDOUT)) return true;
  static constexpr const char* kDir[] = {"read", "write", "trim"};
  char line[512];
  const char* path = slot.file < plan_.paths.size() ? plan_.paths[slot.file].c_str() : "";
  const auto r = fmt::format_to_n(
      line, sizeof line - 1,
      "iotail run: latency of {} nsec exceeds --latency_target ({} nsec) at depth 1: {} {} "
      "offset={}, buflen={}\n",
      lat, spec_.latency_target.target_ns, path, kDir[static_cast<size_t>(slot.dir) % 3],
      slot.offset, slot.len);
  const size_t n = std::min(r.size, sizeof line - 1);
  [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, line, n);
  failed_io_ = true;
  return false;
}

void Worker::ApplyLatencyStep(LatencySearch::Step step) {
  if (step == LatencySearch::Step::kDrainAndReset) lt_.reset_due = true;
  lt_.issue_cap = lat_.limit();
}

bool Worker::LatencyRound(uint64_t now, uint32_t in_flight) {
  if (!lt_.ramp_seen && now >= record_from_ns_) {
    lt_.ramp_seen = true;
    // fio's statistics reset at the end of ramp_time starts the search again.
    if (spec_.ramp_time_ns != 0) lat_.RampOver(now, lt_.ios);
  }
  if (lat_.limit() == 0) {  // draining
    if (in_flight != 0) return true;
    if (lt_.reset_due) ResetStats(now);
    lt_.reset_due = false;
    lat_.Drained(now, lt_.ios);
    lt_.issue_cap = lat_.limit();
    return true;
  }
  if (now < record_from_ns_) return true;  // fio checks no window during the ramp
  const LatencySearch::Step step = lat_.Check(now, lt_.ios);
  if (step == LatencySearch::Step::kDone) return false;
  ApplyLatencyStep(step);
  if (lat_.limit() == 0 && in_flight == 0) return LatencyRound(now, in_flight);
  return true;
}

// fio's reset_all_stats and reset_io_stats before the final window: what the summary reports
// counts from here (the logs and live lines go on as they were).
void Worker::ResetStats(uint64_t now) {
  recorder_->Snapshot(lt_.baseline);
  recorder_->RestartExtremes();
  depths_ = stats::IoDepthCounts{};
  sync_.stats = stats::SampleStats{};
  cpu_.from = SampleCpu();
  lt_.stats_reset_ns = now;
}

}  // namespace iotail::engine
