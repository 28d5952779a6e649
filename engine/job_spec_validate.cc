// JobSpec::Validate (engine/job_spec.h): every check of one job's settings, by concept, each
// throwing UsageError naming the option.
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "engine/job_spec.h"
#include "stats/core/errors.h"
#include "stats/core/histogram_layout.h"
#include "stats/util/closest_name.h"
#include "stats/util/enum_names.h"

namespace iotail::engine {

using stats::UsageError;

namespace {

// "0-1,3" for a CPU set.
std::string CpuListText(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += fmt::format("{}{}", out.empty() ? "" : ",", c);
    if (last > c) out += fmt::format("-{}", last);
    c = last;
  }
  return out;
}

// An engine option given to a job (engine/io/engine_table.h: the rows that take it): its flags
// in messages, whether the job gives it, and why it belongs to those engines.
struct EngineOptionCheck {
  EngineOption option;
  const char* flags;
  bool (*given)(const JobSpec&);
  const char* why;
};
constexpr EngineOptionCheck kEngineOptionChecks[] = {
    {kCmdprioOption, "--cmdprio_percentage/--cmdprio_bssplit",
     [](const JobSpec& s) { return s.prio.cmdprio.Any(); }, ", as in fio"},
    {kHipriOption, "--hipri", [](const JobSpec& s) { return s.engine_options.hipri; },
     ": polled I/O (io_uring's IOPOLL, pvsync2's RWF_HIPRI), on a block device with poll queues "
     "or a file system on one"},
    {kNowaitOption, "--nowait", [](const JobSpec& s) { return s.engine_options.nowait; },
     "; fio also has it for io_uring and libaio"},
    {kUncachedOption, "--uncached", [](const JobSpec& s) { return s.engine_options.uncached != 0; },
     ""},
    {kSqthreadPollOption, "--sqthread_poll",
     [](const JobSpec& s) { return s.engine_options.sqthread_poll; }, ""},
    {kNbdOption, "--uri", [](const JobSpec& s) { return !s.uri.empty(); }, ""},
    {kNbdOption, "--nbd_conns", [](const JobSpec& s) { return s.nbd.conns > 1; }, ""},
    {kStatTypeOption, "--stat_type",
     [](const JobSpec& s) { return s.engine_options.stat_type_given; },
     ": the call those engines time, as fio's"},
};

}  // namespace

void JobSpec::Validate() const {
  ValidateSizes();
  ValidateLogs();
  ValidateEngine();
  ValidateRates();
  ValidateWorkload();
  ValidateFileOperations();
  ValidateVerify();
  ValidateLatencyTarget();
  if (ioengine != EngineKind::kNbd) ValidateTargets();  // the export at --uri is the target
}

// Validate: block sizes, sizes, offsets and times.
void JobSpec::ValidateSizes() const {
  if (blocks.bs == 0) throw UsageError("--bs: must be greater than 0");
  if ((blocks.bs_dir[0] != 0 || blocks.bs_dir[1] != 0) &&
      (blocks.bs_min != 0 || !blocks.bssplit.empty() || blocks.bs_min_w != 0 ||
       !blocks.bssplit_w.empty())) {
    throw UsageError("--bs=R,W: not with --bsrange or --bssplit");
  }
  auto check_range = [](uint32_t lo, uint32_t hi) {
    if (lo == 0 && hi == 0) return;
    if (lo == 0 || hi < lo || hi % lo != 0) {
      throw UsageError("--bsrange: expected MIN-MAX with 0 < MIN <= MAX and MAX a multiple of MIN");
    }
  };
  check_range(blocks.bs_min, blocks.bs_max);
  check_range(blocks.bs_min_w, blocks.bs_max_w);
  auto check_split = [this](const std::vector<BlockSizeShare>& split) {
    if (split.empty()) return;
    uint32_t total = 0;
    for (const auto& s : split) {
      if (s.bs == 0) throw UsageError("--bssplit: block sizes must be greater than 0");
      if (s.percent > 100) throw UsageError("--bssplit: each percentage must be 0..100");
      if (direct && s.bs % 512 != 0) {
        throw UsageError("--bssplit: with --direct=1 block sizes must be multiples of 512");
      }
      total += s.percent;
    }
    if (total != 100) {
      throw UsageError(fmt::format("--bssplit: percentages must add up to 100, got {}", total));
    }
  };
  check_split(blocks.bssplit);
  check_split(blocks.bssplit_w);
  if (direct && MinBlockSize() % 512 != 0) {
    throw UsageError("--bs: with --direct=1 block sizes must be multiples of 512");
  }
  // Reads and writes need a buffer of the block size per I/O in flight; trims carry no data (a
  // zoned trim is a whole zone: fio's zbd examples trim 256 MiB).
  if (!HasTrims() && MaxBlockSize() > (64u << 20)) throw UsageError("--bs: at most 64 MiB");
  if (rwmixread > 100) throw UsageError("--rwmixread: expected 0..100");
  if (queue.iodepth == 0 || queue.iodepth > 65536) throw UsageError("--iodepth: expected 1..65536");
  if (numjobs == 0 || numjobs > 4096) throw UsageError("--numjobs: expected 1..4096");
  if (region.size != 0 && region.size < MaxBlockSize()) {
    throw UsageError("--size: smaller than the largest block size");
  }
  if (region.size > UINT64_MAX - region.offset) {
    throw UsageError(fmt::format("--size/--offset: offset {} + size {} is past 2^64 bytes",
                                 region.offset, region.size));
  }
  if (runtime_ns > UINT64_MAX / 4 || ramp_time_ns > UINT64_MAX / 4) {
    throw UsageError("--runtime/--ramp_time: too long");
  }
  if (direct && region.offset % 512 != 0) {
    throw UsageError("--offset: with --direct=1 must be a multiple of 512");
  }
}

// Validate: the log options.
void JobSpec::ValidateLogs() const {
  if (logs.hist_msec == 0) throw UsageError("--log_hist_msec: must be greater than 0");
  if (logs.hist_coarseness < 0 || logs.hist_coarseness > stats::kMaxCoarseness) {
    throw UsageError("--log_hist_coarseness: expected 0..6");
  }
  if (logs.hist_groups != stats::kFio3Groups && logs.hist_groups != stats::kWideGroups) {
    throw UsageError(fmt::format(
        "--log_hist_groups: expected {} (fio's layout, latencies above 17.18 s clamped) or {} "
        "(every latency kept), got {}",
        stats::kFio3Groups, stats::kWideGroups, logs.hist_groups));
  }
}

// Validate: what each engine takes.
void JobSpec::ValidateEngine() const {
  // The engine options given with an engine whose row does not take them (engine_table.h).
  for (const EngineOptionCheck& check : kEngineOptionChecks) {
    if (check.given(*this) && !TakesOption(ioengine, check.option)) {
      throw UsageError(OnlyWithEngines(check.flags, check.option, ioengine, check.why));
    }
  }
  if (prio.cmdprio.Any()) {
    if (prio.cmdprio.bssplit_given &&
        (prio.cmdprio.percentage[0] != 0 || prio.cmdprio.percentage[1] != 0)) {
      throw UsageError("--cmdprio_percentage and --cmdprio_bssplit are mutually exclusive");
    }
    if (lat_percentiles) {
      throw UsageError(
          "--lat_percentiles=1 with cmdprio: fio then reports each priority's total latency; "
          "iotail keeps each priority's clat only (not built yet)");
    }
  }
  // Polled completions: io_uring's IOPOLL, or pvsync2's RWF_HIPRI. IOPOLL exists for O_DIRECT I/O
  // only (buffered I/O fails every I/O with EOPNOTSUPP), so say so before the run. They really
  // poll on a block device with poll queues, or a file system on one; a file the kernel cannot
  // poll at all (FUSE, NFS, tmpfs) fails at run time, and the run's end says why.
  if (engine_options.hipri && !direct && ioengine == EngineKind::kIoUring) {
    throw UsageError(
        "--hipri: polled I/O needs --direct=1 (buffered I/O cannot be polled), on a block device "
        "with poll queues or a file system on one");
  }
  // fio 3.33 ignores --uncached with direct=1, and so does iotail.
  if (engine_options.uncached != 0) {
    if (!direct) {
      throw UsageError(
          "--uncached: iotail does not support it: fio 3.33 sets RWF_UNCACHED (0x40), a flag of a "
          "kernel proposal that Linux never merged (since Linux 6.11, 0x40 is RWF_ATOMIC, and "
          "fio's buffered I/Os with it fail with EOPNOTSUPP)");
    }
  }
  if (ioengine == EngineKind::kMmap &&
      (direct || syncs.fsync_every != 0 || syncs.fdatasync_every != 0)) {
    const auto page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
    if (MinBlockSize() % page != 0) {
      throw UsageError(fmt::format(
          "--bs: with --direct, --fsync or --fdatasync the mmap engine needs block sizes that are "
          "multiples of the page size ({} bytes), as fio",
          page));
    }
  }
  if (ioengine == EngineKind::kE4defrag && engine_options.e4defrag_donor.empty()) {
    throw UsageError("--donorname: --ioengine=e4defrag needs a donor file, as fio's");
  }
  if ((syncs.fsync_every != 0 || syncs.fdatasync_every != 0) && ioengine == EngineKind::kNbd) {
    throw UsageError("--fsync/--fdatasync: not with --ioengine=nbd");
  }
  if (ioengine == EngineKind::kNbd) {
    if (uri.empty()) throw UsageError("--uri: --ioengine=nbd needs the server's --uri");
    if (!filenames.empty()) {
      throw UsageError("--filename: not with --ioengine=nbd (the target is the export at --uri)");
    }
    if (direct) throw UsageError("--direct: not with --ioengine=nbd (there is no page cache)");
    if (syncs.end_fsync) throw UsageError("--end_fsync: not with --ioengine=nbd");
    return;
  }
}

// Validate: the file and directory operation engines, and fio's options about opening files.
void JobSpec::ValidateFileOperations() const {
  const std::string engine = EngineKindName(ioengine);
  if (!FileOperations()) {
    // The other engines' files are opened before the run and stay open (with create_on_open
    // they are created then, not laid out: engine/target.h).
    const uint64_t per_clone =
        files_per_clone ? (filenames.size() + numjobs - 1) / numjobs : filenames.size();
    if (files.openfiles != 0 && files.openfiles < per_clone) {
      throw UsageError(fmt::format(
          "--openfiles={}: iotail keeps every file of a clone open ({} here) with --ioengine={}, "
          "where fio would service them {} at a time; only the file and directory operation "
          "engines take fewer",
          files.openfiles, per_clone, engine, files.openfiles));
    }
    return;
  }
  if (HasTrims()) throw UsageError(fmt::format("--rw: no trims with --ioengine={}", engine));
  if (verify.kind != VerifyKind::kNone) {
    throw UsageError(fmt::format("--verify: not with --ioengine={} (it moves no data)", engine));
  }
  if (syncs.fsync_every != 0 || syncs.fdatasync_every != 0 || syncs.end_fsync ||
      syncs.fsync_on_close) {
    throw UsageError(fmt::format(
        "--fsync/--fdatasync/--end_fsync/--fsync_on_close: not with --ioengine={} (it keeps no "
        "file open)",
        engine));
  }
  if (!files.ioscheduler.empty()) {
    throw UsageError(fmt::format("--ioscheduler: not with --ioengine={}", engine));
  }
}

// Validate: rates and rate floors.
void JobSpec::ValidateRates() const {
  if (rates.Limited() &&
      ((queue.iodepth_low != 0 && queue.iodepth_low < queue.iodepth) || queue.serialize_overlap)) {
    throw UsageError(fmt::format(
        "--{}: not with --rate/--rate_iops (iotail's rate-limited loop issues at the schedule's "
        "times)",
        queue.serialize_overlap ? "serialize_overlap" : "iodepth_low"));
  }
  if (rates.Limited()) {
    auto both = [](const RateLimit& r) { return r.iops > 0 && r.bytes_per_s > 0; };
    if (both(rates.limit) || both(rates.dir[0]) || both(rates.dir[1]) ||
        (rates.limit.Any() && rates.PerDirection())) {
      throw UsageError("--rate_iops/--rate: give one of --rate_iops and --rate, as N or as R,W");
    }
    if (rates.PerDirection()) {
      if (HasReads() && !rates.dir[0].Any()) {
        throw UsageError(
            fmt::format("--rate_iops/--rate: --rw={} reads, so the R,W form needs a read rate (R)",
                        RwModeName(rw)));
      }
      if (HasWrites() && !rates.dir[1].Any()) {
        throw UsageError(fmt::format(
            "--rate_iops/--rate: --rw={} writes, so the R,W form needs a write rate (W)",
            RwModeName(rw)));
      }
      if ((!HasReads() && rates.dir[0].Any()) || (!HasWrites() && rates.dir[1].Any())) {
        throw UsageError(
            fmt::format("--rate_iops/--rate: a rate is given for a direction --rw={} does not do",
                        RwModeName(rw)));
      }
    }
  }
  if (rates.cycle_ms == 0) throw UsageError("--ratecycle: must be at least 1 ms");
  // fio's rules (init.c): one kind of floor, and no floor above the rate.
  const bool byte_floor = rates.min[0].bytes_per_s > 0 || rates.min[1].bytes_per_s > 0;
  const bool iops_floor = rates.min[0].iops > 0 || rates.min[1].iops > 0;
  if (byte_floor && iops_floor) {
    throw UsageError("--rate_min/--rate_iops_min: give one of them (fio: mutually exclusive)");
  }
  for (int d = 0; d < 2; ++d) {
    const RateLimit& cap = rates.PerDirection() ? rates.dir[static_cast<size_t>(d)] : rates.limit;
    const RateLimit& floor = rates.min[static_cast<size_t>(d)];
    if ((cap.bytes_per_s > 0 && cap.bytes_per_s < floor.bytes_per_s) ||
        (cap.iops > 0 && cap.iops < floor.iops)) {
      throw UsageError(fmt::format("--{}: above the {} rate it may not exceed",
                                   floor.iops > 0 ? "rate_iops_min" : "rate_min",
                                   d == 0 ? "read" : "write"));
    }
  }
}

// Validate: queue, batches, trims, offsets, think time and CPUs.
void JobSpec::ValidateWorkload() const {
  if (zones.mode == ZoneMode::kZbd) ValidateZbd();
  if (zones.mode == ZoneMode::kNone && zones.size != 0) {
    throw UsageError("--zonesize: not with --zonemode=none, its default (fio refuses it too)");
  }
  if (zones.mode == ZoneMode::kStrided) {
    if (zones.size == 0) throw UsageError("--zonesize: must be given with --zonemode=strided");
    if (zones.Range() < MaxBlockSize()) {
      throw UsageError("--zonerange: a zone must hold the largest block (--bs)");
    }
  }
  if (flow.weight != 0 && rates.Limited()) {
    throw UsageError("--flow: not with a rate (iotail holds back the closed loop only)");
  }
  if (steady.dur_ns != 0) {
    constexpr uint64_t kSecond = 1'000'000'000;
    if (steady.interval_ns == 0 || steady.interval_ns % kSecond != 0) {
      throw UsageError("--ss_interval: a whole number of seconds, at least 1");
    }
    if (steady.dur_ns < steady.interval_ns) {
      throw UsageError("--ss_dur: at least one --ss_interval (the window holds whole intervals)");
    }
  }
  if (queue.batch_submit > queue.iodepth) {
    throw UsageError("--iodepth_batch_submit: at most --iodepth");
  }
  if (queue.batch_complete_min > queue.iodepth) {
    throw UsageError("--iodepth_batch_complete_min: at most --iodepth");
  }
  if (queue.batch_complete_max != 0 && queue.batch_complete_max < queue.batch_complete_min) {
    throw UsageError("--iodepth_batch_complete_max: at least --iodepth_batch_complete_min");
  }
  if (loops == 0) throw UsageError("--loops: must be at least 1");
  if (HasTrims()) {
    if (rates.Limited() || rates.trim_given) {
      throw UsageError("--rw=trim/randtrim: not with --rate/--rate_iops");
    }
    if (ioengine == EngineKind::kNbd)
      throw UsageError("--rw=trim/randtrim: not with the nbd engine");
    if (verify.kind != VerifyKind::kNone && (HasReads() || HasWrites())) {
      throw UsageError("--verify: not with trims");
    }
  }
  if (rw_modifier != 0 && !IsRandom() && rw_modifier % static_cast<int64_t>(MinBlockSize()) != 0) {
    throw UsageError(
        fmt::format("--rw={}:{}: iotail skips whole blocks: give a multiple of the block size ({})",
                    RwModeName(rw), rw_modifier, MinBlockSize()));
  }
  if (rw_modifier < 0 && IsRandom()) {
    throw UsageError("--rw: a random mode's :N is a count of I/Os, not a negative gap");
  }
  if (direct && blocks.blockalign % 512 != 0) {
    throw UsageError("--blockalign: with --direct=1 must be a multiple of 512");
  }
  if (region.offset_increment != 0 && region.offset_increment_percent > 0) {
    throw UsageError("--offset_increment: give bytes or a percentage, not both");
  }
  if (direct && region.offset_increment % 512 != 0) {
    throw UsageError("--offset_increment: with --direct=1 must be a multiple of 512");
  }
  if (thinktime.blocks == 0) throw UsageError("--thinktime_blocks: must be at least 1");
  if (thinktime.spin_ns > thinktime.ns) {
    throw UsageError("--thinktime_spin: at most --thinktime");
  }
  if (thinktime.ns != 0 && rates.Limited()) {
    throw UsageError("--thinktime: not with --rate/--rate_iops (the schedule sets the pace)");
  }
  if (thinktime.ns > UINT64_MAX / 4) throw UsageError("--thinktime: too long");
  if (startdelay_ns > UINT64_MAX / 4) throw UsageError("--startdelay: too long");
  if (!placement.cpus_allowed.empty()) {
    cpu_set_t usable;
    CPU_ZERO(&usable);
    if (sched_getaffinity(0, sizeof(usable), &usable) == 0) {
      for (int cpu : placement.cpus_allowed) {
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &usable)) {
          throw UsageError(fmt::format(
              "--cpus_allowed: CPU {} is not one this process may use here ({} of {} online: {})",
              cpu, CPU_COUNT(&usable), sysconf(_SC_NPROCESSORS_ONLN), CpuListText(usable)));
        }
      }
    }
  }
}

// Validate: the targets.
void JobSpec::ValidateTargets() const {
  if ((region.size_percent > 0 || region.offset_percent > 0) &&
      (region.size != 0 || region.offset != 0)) {
    throw UsageError("--size/--offset: give both as percentages or both as sizes");
  }
  if (ioengine == EngineKind::kNull && region.size == 0) {
    throw UsageError(
        "--size: the null engine needs it (it opens no file; fio: \"you need to specify size=\")");
  }
  if (filenames.empty()) throw UsageError("--filename: no target given");
  for (const auto& f : filenames) {
    if (f.empty()) throw UsageError("--filename: empty file name in the list");
  }
}

}  // namespace iotail::engine
