// The engine table (engine/io/engine_table.h): its rows, and what comes from them.
#include "engine/io/engine_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "engine/io/io_engine.h"
#include "stats/core/errors.h"
#include "stats/util/closest_name.h"

namespace iotail::engine {

using stats::UsageError;

namespace {

template <EngineKind kKind>
std::unique_ptr<IoEngine> MakeFileOperation() {
  return MakeFileOperationEngine(kKind);
}

constexpr uint32_t kSyncTraits = kSynchronousTrait;
constexpr uint32_t kFileOpTraits = kSynchronousTrait | kFileOperationTrait;
constexpr uint32_t kDirOpTraits = kFileOpTraits | kOnDirectoriesTrait;
constexpr uint32_t kChangesTraits = kSynchronousTrait | kChangesFilesTrait;

// One row per engine, in EngineKind's order (checked below). The optional engines' makers are
// nullptr when their library was missing at build time (their files say so).
constexpr EngineRow kEngineRows[] = {
    // kind, name, alias, maker, library, traits, options, preference
    {EngineKind::kSync, "sync", nullptr, MakeSyncEngine, nullptr, kSyncTraits, 0, 0},
    {EngineKind::kPsync, "psync", nullptr, MakePsyncEngine, nullptr, kSyncTraits, 0, 3},
    {EngineKind::kVsync, "vsync", nullptr, MakeVsyncEngine, nullptr,
     kSyncTraits | kCountsIssuedBytesTrait, 0, 0},
    {EngineKind::kPvsync, "pvsync", nullptr, MakePvsyncEngine, nullptr, kSyncTraits, 0, 0},
    {EngineKind::kPvsync2, "pvsync2", nullptr, MakePvsync2Engine, nullptr, kSyncTraits,
     kHipriOption | kNowaitOption | kUncachedOption, 0},
    {EngineKind::kIoUring, "io_uring", "uring", MakeIoUringEngine, "liburing",
     kCountsIssuedBytesTrait, kSqthreadPollOption | kHipriOption | kCmdprioOption, 1},
    {EngineKind::kLibaio, "libaio", nullptr, MakeLibaioEngine, "libaio", kCountsIssuedBytesTrait,
     kCmdprioOption, 2},
    {EngineKind::kPosixAio, "posixaio", nullptr, MakePosixAioEngine, nullptr,
     kCountsIssuedBytesTrait, 0, 0},
    {EngineKind::kMmap, "mmap", nullptr, MakeMmapEngine, nullptr, kSyncTraits, 0, 0},
    {EngineKind::kFalloc, "falloc", nullptr, MakeFallocEngine, nullptr, kChangesTraits, 0, 0},
    {EngineKind::kFtruncate, "ftruncate", nullptr, MakeFtruncateEngine, nullptr, kChangesTraits, 0, 0},
    {EngineKind::kE4defrag, "e4defrag", nullptr, MakeE4defragEngine, nullptr, kChangesTraits,
     kDonorOption, 0},
    {EngineKind::kFileCreate, "filecreate", nullptr, MakeFileOperation<EngineKind::kFileCreate>,
     nullptr, kFileOpTraits, 0, 0},
    {EngineKind::kFileStat, "filestat", nullptr, MakeFileOperation<EngineKind::kFileStat>, nullptr,
     kFileOpTraits, kStatTypeOption, 0},
    {EngineKind::kFileDelete, "filedelete", nullptr, MakeFileOperation<EngineKind::kFileDelete>,
     nullptr, kFileOpTraits, 0, 0},
    {EngineKind::kDirCreate, "dircreate", nullptr, MakeFileOperation<EngineKind::kDirCreate>,
     nullptr, kDirOpTraits, 0, 0},
    {EngineKind::kDirStat, "dirstat", nullptr, MakeFileOperation<EngineKind::kDirStat>, nullptr,
     kDirOpTraits, kStatTypeOption, 0},
    {EngineKind::kDirDelete, "dirdelete", nullptr, MakeFileOperation<EngineKind::kDirDelete>,
     nullptr, kDirOpTraits, 0, 0},
    {EngineKind::kNull, "null", nullptr, MakeNullEngine, nullptr, 0, 0, 0},
    {EngineKind::kNbd, "nbd", nullptr, MakeNbdEngine, "libnbd", kServerTargetTrait, kNbdOption, 0},
};

constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < std::size(kEngineRows); ++i) {
    if (static_cast<size_t>(kEngineRows[i].kind) != i) return false;
  }
  return true;
}
static_assert(RowsInEnumOrder(), "kEngineRows: one row per EngineKind, in the enum's order");

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

const EngineRow* RowNamed(std::string_view name) {
  for (const EngineRow& row : kEngineRows) {
    if (name == row.name || (row.alias != nullptr && name == row.alias)) return &row;
  }
  return nullptr;
}

// ", did you mean X?" for the engine name closest to `text`, or "".
std::string DidYouMeanEngine(std::string_view text) {
  std::vector<std::string_view> names;
  for (const EngineRow& row : kEngineRows) {
    names.push_back(row.name);
    if (row.alias != nullptr) names.push_back(row.alias);
  }
  const std::string closest = stats::ClosestName(text, names);
  return closest.empty() ? "" : ", did you mean " + closest + "?";
}

}  // namespace

std::span<const EngineRow> EngineTable() { return kEngineRows; }

const EngineRow& EngineRowOf(EngineKind kind) {
  const auto i = static_cast<size_t>(kind);
  if (i >= std::size(kEngineRows)) throw std::logic_error("EngineRowOf: an engine without a row");
  return kEngineRows[i];
}

std::string EnginesTaking(EngineOption option, std::string_view last_joint) {
  std::vector<const char*> names;
  for (const EngineRow& row : kEngineRows) {
    if ((row.options & option) != 0) names.push_back(row.name);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last_joint : std::string_view(", ");
    out += names[i];
  }
  return out;
}

std::string EngineNames(std::string_view joint) {
  std::string out;
  for (const EngineRow& row : kEngineRows) {
    if (!out.empty()) out += joint;
    out += row.name;
  }
  return out;
}

std::string OnlyWithEngines(std::string_view flags, EngineOption option, EngineKind engine,
                            std::string_view why) {
  return fmt::format("{}: only with --ioengine={} (not --ioengine={}){}", flags,
                     EnginesTaking(option, " or "), EngineRowOf(engine).name, why);
}

EngineKind ParseEngineKind(const std::string& text) {
  if (const EngineRow* row = RowNamed(text)) return row->kind;
  const std::string supported = EngineNames(", ");
  // fio takes the engine's name up to the first ':' and hands the rest to the engine loader
  // (external:PATH loads a shared object); a name it does not know is loaded as a shared object.
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    const std::string name = text.substr(0, colon);
    if (name == "external") {
      throw UsageError(fmt::format(
          "--ioengine={}: iotail does not support external engines (fio's external:PATH loads an "
          "engine from a shared object); iotail runs {}",
          text, supported));
    }
    throw UsageError(fmt::format(
        "--ioengine={}: iotail does not support fio's NAME:ARGUMENT engine forms (fio runs the "
        "engine '{}' and passes what follows ':' to external engines only){}",
        text, name,
        RowNamed(name) != nullptr ? fmt::format("; write --ioengine={}", name)
                                  : fmt::format("; iotail runs {}", supported)));
  }
  if (text.find('/') != std::string::npos) {
    throw UsageError(fmt::format(
        "--ioengine={}: iotail does not support external engines (fio loads a path as an engine "
        "from a shared object); iotail runs {}",
        text, supported));
  }
  if (std::find(std::begin(kFioOnlyEngines), std::end(kFioOnlyEngines), text) !=
      std::end(kFioOnlyEngines)) {
    throw UsageError(
        fmt::format("--ioengine={}: iotail does not support fio's {} engine; iotail runs {}", text,
                    text, supported));
  }
  throw UsageError(fmt::format(
      "--ioengine={}: iotail does not support engine '{}'{} (not one of fio's engines: fio would "
      "try to load it as an external engine); iotail runs {}",
      text, text, DidYouMeanEngine(text), supported));
}

std::string EngineKindName(EngineKind kind) { return EngineRowOf(kind).name; }

}  // namespace iotail::engine
