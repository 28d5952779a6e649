#include "engine/job_spec.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "stats/core/errors.h"
#include "stats/core/histogram_layout.h"
#include "stats/util/closest_name.h"
#include "stats/util/enum_names.h"

namespace iotail::engine {

using stats::UsageError;

namespace {

// Each mode's fio name first, then the aliases fio also accepts.
constexpr stats::EnumName<RwMode> kRwNames[] = {
    {RwMode::kRead, "read"},           {RwMode::kWrite, "write"},
    {RwMode::kRandRead, "randread"},   {RwMode::kRandWrite, "randwrite"},
    {RwMode::kReadWrite, "rw"},        {RwMode::kRandReadWrite, "randrw"},
    {RwMode::kTrim, "trim"},           {RwMode::kRandTrim, "randtrim"},
    {RwMode::kReadWrite, "readwrite"},
};

constexpr stats::EnumName<RandomGenerator> kGeneratorNames[] = {
    {RandomGenerator::kTausworthe, "tausworthe"},
    {RandomGenerator::kLfsr, "lfsr"},
    {RandomGenerator::kTausworthe64, "tausworthe64"},
};

}  // namespace

RandomGenerator ParseRandomGenerator(const std::string& text) {
  if (const auto g = stats::ValueNamed(kGeneratorNames, text)) return *g;
  throw UsageError(
      fmt::format("--random_generator: expected tausworthe, lfsr or tausworthe64, got '{}'{}", text,
                  stats::DidYouMean(kGeneratorNames, text)));
}

std::string RandomGeneratorName(RandomGenerator generator) {
  return std::string(stats::NameOf(kGeneratorNames, generator));
}

RwMode ParseRwMode(const std::string& text) {
  if (const auto mode = stats::ValueNamed(kRwNames, text)) return *mode;
  throw UsageError(fmt::format(
      "--rw: expected read, write, randread, randwrite, rw, randrw, trim or randtrim, got '{}'{}",
      text, stats::DidYouMean(kRwNames, text)));
}

std::string RwModeName(RwMode mode) { return std::string(stats::NameOf(kRwNames, mode)); }

std::string JobSpec::Normalize() {
  // fio's rate=N (one value) caps each direction the job does at N, as bs=N sets each direction's
  // block size: it becomes the per-direction form.
  if (rates.limit.Any() && !rates.PerDirection() && !HasTrims()) {
    if (HasReads()) rates.dir[0] = rates.limit;
    if (HasWrites()) rates.dir[1] = rates.limit;
    rates.limit = RateLimit{};
  }
  // A job that only trims writes nothing to verify: fio's verify does nothing there.
  if (HasTrims() && !HasReads() && !HasWrites()) {
    verify.kind = VerifyKind::kNone;
    verify.backlog = verify.backlog_batch = 0;
    verify.dump = false;
  }
  std::string notes;
  // fio turns time_based off without a runtime, with a warning (an error only with its
  // --warnings-fatal): the job runs to its size.
  if (time_based && runtime_ns == 0) {
    time_based = false;
    notes = fmt::format("note: job '{}': --time_based needs a --runtime; off, as fio turns it off",
                        name);
  }
  if (!Synchronous() || queue.iodepth <= 1) return notes;
  const uint32_t asked = queue.iodepth;
  queue.iodepth = 1;
  queue.batch_submit = 1;
  queue.batch_complete_min = 1;
  queue.batch_complete_max = 0;
  if (!notes.empty()) notes += "\n";
  return notes + fmt::format(
                     "note: --ioengine={} is synchronous (one I/O at a time per job): --iodepth={} "
                     "runs as --iodepth=1; use --numjobs for concurrency",
                     EngineKindName(ioengine), asked);
}

int JobSpec::FadviseAdvice() const {
  if (files.fadvise != -2) return files.fadvise;
  return IsRandom() ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL;
}

JobSpec::BlockSizes JobSpec::SizesOf(stats::Direction d) const {
  const bool own = d == stats::Direction::kWrite && blocks.bs_write_own;
  const std::vector<BlockSizeShare>& split = own ? blocks.bssplit_w : blocks.bssplit;
  const uint32_t lo = own ? blocks.bs_min_w : blocks.bs_min,
                 hi = own ? blocks.bs_max_w : blocks.bs_max;
  if (!split.empty()) {
    uint32_t mn = UINT32_MAX, mx = 0;
    for (const auto& s : split) {
      mn = std::min(mn, s.bs);
      mx = std::max(mx, s.bs);
    }
    return {&split, mn, mx};
  }
  if (lo != 0) return {nullptr, lo, hi};
  return {nullptr, BlockSize(d), BlockSize(d)};
}

uint32_t JobSpec::MinBlockSize() const {
  uint32_t m = UINT32_MAX;
  if (HasReads()) m = std::min(m, SizesOf(stats::Direction::kRead).min);
  if (HasWrites()) m = std::min(m, SizesOf(stats::Direction::kWrite).min);
  return m == UINT32_MAX ? blocks.bs : m;
}

uint32_t JobSpec::MaxBlockSize() const {
  uint32_t m = 0;
  if (HasReads()) m = std::max(m, SizesOf(stats::Direction::kRead).max);
  if (HasWrites()) m = std::max(m, SizesOf(stats::Direction::kWrite).max);
  return m == 0 ? blocks.bs : m;
}

}  // namespace iotail::engine
