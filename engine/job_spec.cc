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

// fio's names; "uring" is iotail's own alias.
constexpr stats::EnumName<EngineKind> kEngineNames[] = {
    {EngineKind::kIoUring, "io_uring"},
    {EngineKind::kLibaio, "libaio"},
    {EngineKind::kPsync, "psync"},
    {EngineKind::kNull, "null"},
    {EngineKind::kNbd, "nbd"},
    {EngineKind::kSync, "sync"},
    {EngineKind::kVsync, "vsync"},
    {EngineKind::kPvsync, "pvsync"},
    {EngineKind::kPvsync2, "pvsync2"},
    {EngineKind::kPosixAio, "posixaio"},
    {EngineKind::kMmap, "mmap"},
    {EngineKind::kFalloc, "falloc"},
    {EngineKind::kFtruncate, "ftruncate"},
    {EngineKind::kE4defrag, "e4defrag"},
    {EngineKind::kFileCreate, "filecreate"},
    {EngineKind::kFileStat, "filestat"},
    {EngineKind::kFileDelete, "filedelete"},
    {EngineKind::kDirCreate, "dircreate"},
    {EngineKind::kDirStat, "dirstat"},
    {EngineKind::kDirDelete, "dirdelete"},
    {EngineKind::kIoUring, "uring"},
};

constexpr const char* kSupportedEngines =
    "sync, psync, vsync, pvsync, pvsync2, io_uring, libaio, posixaio, mmap, falloc, ftruncate, "
    "e4defrag, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, null, nbd";

// fio's other engines (fio 3.33's, with those of its later releases and the best-known external
// ones): named as fio's engines that iotail does not run, rather than as unknown names.
constexpr std::string_view kFioOnlyEngines[] = {
    "cpuio",
    "splice",
    "netsplice",
    "sg",
    "net",
    "rdma",
    "rados",
    "rbd",
    "exec",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "http",
    "dfs",
    "nfs",
    "xnvme",
    "libiscsi",
    "libcufile",
    "libzbc",
    "libblkio",
    "mtd",
    "io_uring_cmd",
    "solarisaio",
    "windowsaio",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "external",
    "spdk",
    "spdk_bdev",
    "guasi",
    "syslet-rw",
    "binject",
    "sync_file_range",
    "page_fault",
    "skeleton_external",
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

EngineKind ParseEngineKind(const std::string& text) {
  if (const auto kind = stats::ValueNamed(kEngineNames, text)) return *kind;
  // fio takes the engine's name up to the first ':' and hands the rest to the engine loader
  // (external:PATH loads a shared object); a name it does not know is loaded as a shared object.
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    const std::string name = text.substr(0, colon);
    if (name == "external") {
      throw UsageError(fmt::format(
          "--ioengine={}: iotail does not support external engines (fio's external:PATH loads an "
          "engine from a shared object); iotail runs {}",
          text, kSupportedEngines));
    }
    throw UsageError(fmt::format(
        "--ioengine={}: iotail does not support fio's NAME:ARGUMENT engine forms (fio runs the "
        "engine '{}' and passes what follows ':' to external engines only){}",
        text, name,
        stats::ValueNamed(kEngineNames, name)
            ? fmt::format("; write --ioengine={}", name)
            : fmt::format("; iotail runs {}", kSupportedEngines)));
  }
  if (text.find('/') != std::string::npos) {
    throw UsageError(fmt::format(
        "--ioengine={}: iotail does not support external engines (fio loads a path as an engine "
        "from a shared object); iotail runs {}",
        text, kSupportedEngines));
  }
  if (std::find(std::begin(kFioOnlyEngines), std::end(kFioOnlyEngines), text) !=
      std::end(kFioOnlyEngines)) {
    throw UsageError(
        fmt::format("--ioengine={}: iotail does not support fio's {} engine; iotail runs {}", text,
                    text, kSupportedEngines));
  }
  throw UsageError(fmt::format(
      "--ioengine={}: iotail does not support engine '{}'{} (not one of fio's engines: fio would "
      "try to load it as an external engine); iotail runs {}",
      text, text, stats::DidYouMean(kEngineNames, text), kSupportedEngines));
}

std::string EngineKindName(EngineKind kind) {
  return std::string(stats::NameOf(kEngineNames, kind));
}

std::string JobSpec::Normalize() {
  // fio's rate=N (one value) caps each direction the job does at N, as bs=N sets each direction's
  // block size: it becomes the per-direction form.
  if (rate.Any() && !RatePerDirection() && !HasTrims()) {
    if (HasReads()) rate_dir[0] = rate;
    if (HasWrites()) rate_dir[1] = rate;
    rate = RateLimit{};
  }
  // A job that only trims writes nothing to verify: fio's verify does nothing there.
  if (HasTrims() && !HasReads() && !HasWrites()) {
    verify = VerifyKind::kNone;
    verify_backlog = verify_backlog_batch = 0;
    verify_dump = false;
  }
  std::string notes;
  // fio turns time_based off without a runtime, with a warning (an error only with its
  // --warnings-fatal): the job runs to its size.
  if (time_based && runtime_ns == 0) {
    time_based = false;
    notes = fmt::format("note: job '{}': --time_based needs a --runtime; off, as fio turns it off",
                        name);
  }
  if (!Synchronous() || iodepth <= 1) return notes;
  const uint32_t asked = iodepth;
  iodepth = 1;
  iodepth_batch_submit = 1;
  iodepth_batch_complete_min = 1;
  iodepth_batch_complete_max = 0;
  if (!notes.empty()) notes += "\n";
  return notes + fmt::format(
                     "note: --ioengine={} is synchronous (one I/O at a time per job): --iodepth={} "
                     "runs as --iodepth=1; use --numjobs for concurrency",
                     EngineKindName(ioengine), asked);
}

int JobSpec::FadviseAdvice() const {
  if (fadvise != -2) return fadvise;
  return IsRandom() ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL;
}

JobSpec::BlockSizes JobSpec::SizesOf(stats::Direction d) const {
  const bool own = d == stats::Direction::kWrite && bs_write_own;
  const std::vector<BlockSizeShare>& split = own ? bssplit_w : bssplit;
  const uint32_t lo = own ? bs_min_w : bs_min, hi = own ? bs_max_w : bs_max;
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
  return m == UINT32_MAX ? bs : m;
}

uint32_t JobSpec::MaxBlockSize() const {
  uint32_t m = 0;
  if (HasReads()) m = std::max(m, SizesOf(stats::Direction::kRead).max);
  if (HasWrites()) m = std::max(m, SizesOf(stats::Direction::kWrite).max);
  return m == 0 ? bs : m;
}

}  // namespace iotail::engine
