// A job's targets (engine/job_targets.h).
#include "engine/job_targets.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

#include "engine/io_scheduler.h"
#include "engine/nbd_target.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

// The zoned model the kernel gives block device `rdev` (/sys/.../queue/zoned: none, host-aware,
// host-managed; a partition's is its disk's); "none" when sysfs does not say.
std::string ZonedModel(dev_t rdev) {
  const std::string dev = fmt::format("/sys/dev/block/{}:{}", major(rdev), minor(rdev));
  for (const char* at : {"/queue/zoned", "/../queue/zoned"}) {
    std::ifstream in(dev + at);
    std::string model;
    if (in >> model) return model;
  }
  return "none";
}

// fio's zbd_init_files for one file of a zonemode=zbd job (before it is opened): the file must
// exist and hold a zone (fio's init_zone_info checks), and a block device must not be zoned
// (iotail emulates zones only). Returns the file's status.
struct stat CheckZonedTarget(const JobSpec& spec, const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw std::system_error(errno, std::generic_category(), "stat " + path);
    throw stats::UsageError(fmt::format(
        "--zonemode=zbd: '{}' does not exist; zones are emulated on an existing file or block "
        "device of at least --zonesize ({} bytes), as fio (file/device size 0 is smaller than "
        "zone size)",
        path, spec.zones.size));
  }
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    throw stats::UsageError(
        fmt::format("--zonemode=zbd: '{}' is neither a regular file nor a block device", path));
  }
  if (S_ISBLK(st.st_mode)) {
    if (const std::string model = ZonedModel(st.st_rdev); model != "none") {
      throw stats::UsageError(fmt::format(
          "--zonemode=zbd: '{}' is a zoned block device ({}): iotail does not support "
          "host-managed or host-aware zones yet (it emulates zones on regular files and "
          "non-zoned block devices only)",
          path, model));
    }
  }
  return st;
}

// The file's emulated zones from the registry, made with this job's settings if it is the first
// on the file; a later job must agree with them, as fio's zbd_setup_files checks.
std::shared_ptr<ZonedFile> ZonesFor(const JobSpec& spec, const std::string& path,
                                    const struct stat& st, uint64_t size, ZoneRegistry& registry) {
  if (size < spec.zones.size) {
    throw stats::UsageError(
        fmt::format("--zonesize: '{}' is smaller than a zone (file/device size {} is smaller "
                    "than zone size {})",
                    path, size, spec.zones.size));
  }
  bool made = false;
  const ZoneRegistry::Settings settings{
      size, spec.zones.size, spec.zones.capacity != 0 ? spec.zones.capacity : spec.zones.size,
      spec.zones.max_open};
  auto zones = registry.Get(st.st_dev, st.st_ino, settings, &made);
  if (zones->zone_size() != spec.zones.size) {
    throw stats::UsageError(
        fmt::format("--zonesize: {} does not match the zone size {} another job gave '{}'",
                    spec.zones.size, zones->zone_size(), path));
  }
  if (spec.zones.max_open > 0 && zones->max_open() != spec.zones.max_open) {
    throw stats::UsageError(fmt::format(
        "--max_open_zones: {} differs from the {} another job gave '{}' (fio: different "
        "'max_open_zones' values)",
        spec.zones.max_open, zones->max_open(), path));
  }
  if (spec.zones.job_max_open != 0 && zones->max_open() == 0) {
    throw stats::UsageError(
        "--job_max_open_zones: not without a global open zones limit (--max_open_zones), as fio");
  }
  return zones;
}

}  // namespace

// Which files of the job worker w does its I/O over (indices into the job's file list): all of
// them, or with files_per_clone its own (fio's NAME.w.k: index k * numjobs + w).
std::vector<size_t> FilesOf(const JobSpec& spec, size_t files, uint32_t w) {
  std::vector<size_t> out;
  if (!spec.files_per_clone) {
    for (size_t f = 0; f < files; ++f) out.push_back(f);
  } else if (spec.numjobs >= files) {
    out.push_back(w % files);
  } else {
    for (size_t f = w; f < files; f += spec.numjobs) out.push_back(f);
  }
  return out;
}

// fio's get_start_offset for clone `clone` on a file of `capacity` bytes: offset (or its
// percentage) plus clone x offset_increment (or its percentage), aligned up to the minimum block
// size when a percentage is involved.
uint64_t CloneOffset(const JobSpec& spec, uint64_t capacity, uint32_t clone) {
  bool align = false;
  uint64_t increment = spec.region.offset_increment;
  if (spec.region.offset_increment_percent > 0) {
    increment = static_cast<uint64_t>(static_cast<double>(capacity) *
                                      spec.region.offset_increment_percent / 100);
    align = true;
  }
  uint64_t offset = spec.region.offset;
  if (spec.region.offset_percent > 0) {
    offset =
        static_cast<uint64_t>(static_cast<double>(capacity) * spec.region.offset_percent / 100);
    align = true;
  }
  offset += increment * clone;
  if (align) {
    const uint64_t unit = spec.MinBlockSize();
    offset = (offset + unit - 1) / unit * unit;
  }
  return offset;
}

namespace {

// What fio prepares for its file and directory operation engines: filecreate and dircreate
// nothing (fio's diskless engines); dirstat and dirdelete each directory (mkdir 0700, one that
// exists kept); filestat and filedelete their files laid out as any job's (with create_on_open,
// nothing), then closed: the operations work on paths. Files alone: fio refuses a device.
void PrepareFileOperations(const JobSpec& spec, const TargetOptions& topt, Targets& t,
                           JobOutcome& out) {
  const EngineKind e = spec.ioengine;
  t.by_path = true;
  const bool lays_out =
      (e == EngineKind::kFileStat || e == EngineKind::kFileDelete) && !spec.files.create_on_open;
  t.diskless = !lays_out;
  for (const std::string& path : spec.filenames) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      throw stats::UsageError(fmt::format(
          "--ioengine={}: '{}' is not a regular file or a directory (fio: \"only files are "
          "supported\")",
          EngineKindName(e), path));
    }
    if (e == EngineKind::kDirStat || e == EngineKind::kDirDelete) {
      if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        throw std::system_error(errno, std::generic_category(),
                                fmt::format("mkdir '{}' (--ioengine={})", path, EngineKindName(e)));
      }
    } else if (lays_out) {
      const Target target(path, topt);
      if (target.created()) out.created_files.push_back(path);
      t.capacity.push_back(target.capacity());
    }
  }
}

}  // namespace

// Opens (creates or safety-checks) every target. A file is laid out to the end of the last region
// in it (--size from the last clone's offset that uses it).
Targets OpenTargets(const JobSpec& spec, JobOutcome& out, const std::atomic<bool>* stop,
                    ZoneRegistry& zones) {
  Targets t;
  t.nbd = spec.ioengine == EngineKind::kNbd;
  t.diskless = spec.ioengine == EngineKind::kNull;
  t.count = t.nbd ? 1 : spec.filenames.size();
  if (t.diskless) return t;
  TargetOptions topt;
  // Trims destroy data as writes do: the same access and the same guard. fio's falloc, ftruncate
  // and e4defrag engines change the file whatever the direction: they open it for writing.
  topt.access = spec.HasWrites() || spec.HasTrims() || spec.ChangesFilesOnly() ? Access::kReadWrite
                                                                               : Access::kRead;
  topt.direct = spec.direct;
  topt.size = spec.region.size;
  topt.file_size = spec.region.file_size;
  topt.allow_destructive = spec.allow_destructive;
  topt.stop = stop;
  topt.sync_flags = spec.syncs.sync_flags;
  topt.invalidate = spec.files.invalidate && !spec.direct;
  topt.fadvise = spec.FadviseAdvice();
  // fio's extend_file: a job that reads (or writes with overwrite) lays its files out with data;
  // a job that only writes just preallocates them.
  topt.fallocate = spec.files.fallocate;
  topt.fill = spec.HasReads() || (spec.HasWrites() && spec.files.overwrite);
  topt.content = spec.buffers.Content();
  topt.allow_create = spec.files.allow_file_create;
  topt.fill_device = spec.region.fill_device;
  topt.create_on_open = spec.files.create_on_open;
  if (spec.FileOperations()) {
    PrepareFileOperations(spec, topt, t, out);
    return t;
  }
  t.files.reserve(spec.filenames.size());
  for (size_t f = 0; f < spec.filenames.size(); ++f) {
    // The last clone that uses this file starts furthest in (offset_increment in bytes; a
    // percentage needs the file's size, so such a file must exist).
    uint32_t last_clone = 0;
    for (uint32_t w = 0; w < spec.numjobs; ++w) {
      for (size_t g : FilesOf(spec, spec.filenames.size(), w)) {
        if (g == f) last_clone = w;
      }
    }
    topt.offset = spec.region.offset + spec.region.offset_increment * last_clone;
    const std::string& path = spec.filenames[f];
    struct stat zoned {};
    if (spec.zones.mode == ZoneMode::kZbd) zoned = CheckZonedTarget(spec, path);
    t.files.emplace_back(path, topt);
    if (t.files.back().created()) out.created_files.push_back(path);
    if (!spec.files.ioscheduler.empty()) {
      if (const std::string note = SwitchIoScheduler(path, spec.files.ioscheduler); !note.empty()) {
        std::fprintf(stderr, "iotail run: note: %s\n", note.c_str());
      }
    }
    t.capacity.push_back(t.files.back().capacity());
    if (spec.zones.mode == ZoneMode::kZbd) {
      // The zones cut the file as it was found (fio's real_file_size before its layout).
      const uint64_t size =
          S_ISBLK(zoned.st_mode) ? t.capacity.back() : static_cast<uint64_t>(zoned.st_size);
      t.zones.push_back(ZonesFor(spec, path, zoned, size, zones));
    }
  }
  if (t.nbd) {
    const uint64_t capacity = ProbeNbdExport(spec, stop).size;
    const uint64_t last = spec.region.offset + spec.region.offset_increment * (spec.numjobs - 1);
    if (last >= capacity || (spec.region.size != 0 && spec.region.size > capacity - last)) {
      throw stats::UsageError(
          fmt::format("--size/--offset: the export at '{}' has only {} bytes", spec.uri, capacity));
    }
    t.capacity.push_back(capacity);
  }
  return t;
}

namespace {

// fio's zbd_zone_align_file_sizes: a job's region starts at a zone's start (its offset rounded up)
// and ends at one (its size rounded down), but for a sequential reader's.
void AlignToZones(const JobSpec& spec, const ZonedFile& zones, uint32_t w, Region& r) {
  // fio aligns every job but a sequential reader (its td_ddir != TD_DDIR_READ).
  if (r.offset >= uint64_t{zones.zones()} * zones.zone_size() || spec.rw == RwMode::kRead) return;
  const auto note = [&](const std::string& what) {
    if (w == 0) std::fprintf(stderr, "iotail run: note: %s: %s\n", spec.name.c_str(), what.c_str());
  };
  const auto too_small = [&] {
    return stats::UsageError(fmt::format(
        "--size: the region of '{}' (from offset {}) holds no whole zone of --zonesize={} (fio: "
        "io_size must be at least one zone)",
        spec.name, r.offset, zones.zone_size()));
  };
  const uint32_t first = zones.ZoneOf(r.offset);
  if (r.offset != zones.Start(first)) {
    const uint64_t at = zones.End(first);
    if (at >= r.offset + r.size) throw too_small();
    note(fmt::format("rounded up offset from {} to {}", r.offset, at));
    r.size -= at - r.offset;
    r.file_end -= at - r.offset;
    r.offset = at;
  }
  const uint64_t end = zones.Start(zones.ZoneOf(r.offset + r.size));
  if (r.offset + r.size != end) {
    if (end <= r.offset) throw too_small();
    note(fmt::format("rounded down io_size from {} to {}", r.size, end - r.offset));
    r.size = end - r.offset;
  }
}

}  // namespace

Region WorkerRegion(const JobSpec& spec, const Targets& targets, const std::vector<size_t>& files,
                    uint32_t w) {
  const uint32_t unit = spec.MinBlockSize();
  Region r;
  if (targets.diskless) {
    r.offset = CloneOffset(spec, 0, w);
    r.size = r.file_end = spec.region.size / unit * unit;
    // fio's filecreate and dircreate take a file without a size as one block long; its other
    // diskless operations need a size.
    const EngineKind e = spec.ioengine;
    if (spec.region.size == 0 && (e == EngineKind::kFileCreate || e == EngineKind::kDirCreate)) {
      r.size = r.file_end = unit;
    } else if (spec.region.size == 0 && spec.FileOperations()) {
      throw stats::UsageError(fmt::format(
          "--size: --ioengine={} needs --size or --filesize (fio: \"you need to specify size=\")",
          EngineKindName(e)));
    }
  } else {
    uint64_t smallest = UINT64_MAX;
    for (size_t f : files) smallest = std::min(smallest, targets.capacity[targets.nbd ? 0 : f]);
    r.offset = CloneOffset(spec, smallest, w);
    uint64_t size = spec.region.size;
    if (spec.region.size_percent > 0) {
      size = static_cast<uint64_t>(static_cast<double>(smallest) * spec.region.size_percent / 100);
    }
    const uint64_t after = smallest > r.offset ? smallest - r.offset : 0;
    if (size == 0 || size > after) size = after;
    // A size that is not a multiple of the block: fio's loop goes on while it has issued less
    // than the size, so its last block ends past it, where the file holds it (a size in percent
    // fio rounds down to the block first).
    const uint64_t up = (size + unit - 1) / unit * unit;
    r.size = up <= after && spec.region.size_percent == 0 ? up : size / unit * unit;
    r.file_end = after;
    if (!targets.zones.empty()) AlignToZones(spec, *targets.zones[files.front()], w, r);
  }
  if (r.size < spec.MaxBlockSize()) {
    throw stats::UsageError(
        fmt::format("--size: the region ({} bytes{}) is smaller than --bs", r.size,
                    w > 0 ? fmt::format(" of clone {}, from offset {}", w, r.offset) : ""));
  }
  return r;
}

void RemoveJobFiles(const JobSpec& spec) {
  if (!spec.files.unlink || spec.ioengine == EngineKind::kNbd ||
      spec.ioengine == EngineKind::kNull) {
    return;
  }
  const bool directories = spec.OnDirectories();
  for (const std::string& path : spec.filenames) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;  // already gone (filedelete, dirdelete)
    if (directories ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) {
      (void)(directories ? rmdir(path.c_str()) : unlink(path.c_str()));
    }
  }
}

}  // namespace iotail::engine
