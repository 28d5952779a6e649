// A job's options grouped by concept (JobSpec's members, engine/job_spec.h), as leveldb's options
// are: where the job's I/O goes and in what sizes, how deep its queue is, its zones, rates,
// priorities, files, syncs, errors, logs and endings. Each group is a plain value type with fio's
// option names and defaults; checks across options stay in JobSpec::Validate. The groups of verify
// (engine/verify.h: VerifyOptions), of the writes' content (engine/buffer_fill.h: BufferOptions)
// and of flow control (engine/flow_control.h: FlowOptions) sit beside their concepts.
#pragma once

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/cmdprio.h"
#include "engine/numa.h"
#include "engine/target.h"
#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/steady_state.h"

namespace iotail::engine {

// The region of each file a job does its I/O over, and how much of it.
struct RegionOptions {
  uint64_t size = 0;          // --size: bytes per file; 0 = existing file/device size
  uint64_t file_size = 0;     // --filesize: each file's length when longer than size (0: size)
  uint64_t offset = 0;        // --offset: start of the region in each file
  double size_percent = 0;    // --size=N%: of each file's size (0: not given)
  double offset_percent = 0;  // --offset=N%: of each file's size, aligned to the bs
  // --offset_increment: clone i starts at offset + i x increment (bytes, or N% of the file's size;
  // with a percentage the offset is aligned up to the minimum block size, as fio).
  uint64_t offset_increment = 0;
  double offset_increment_percent = 0;
  uint64_t io_size = 0;  // --io_size: bytes per worker (default: size, one pass)
  // --fill_device/--fill_fs: a sequential write job on one regular file writes until the
  // filesystem is full (ENOSPC or EDQUOT ends the job, not an error), from --offset to --size or,
  // without a size, on (engine/target.h: kFillDeviceBytes).
  bool fill_device = false;
};

struct BlockSizeShare {
  uint32_t bs = 4096;
  uint32_t percent = 100;  // share of I/Os with this size (bssplit)
};

// The block sizes of a job's I/Os (JobSpec::BlockSize, SizesOf, MinBlockSize read them with the
// job's directions).
struct BlockOptions {
  uint32_t bs = 4096;                   // --bs
  std::array<uint32_t, 2> bs_dir{};     // --bs=R,W: reads [0], writes [1] (0 = bs)
  uint32_t bs_min = 0, bs_max = 0;      // --bsrange=MIN-MAX (uniform, multiples of MIN)
  std::vector<BlockSizeShare> bssplit;  // --bssplit=4k/50:64k/50
  // Writes' own bsrange/bssplit (the R,W forms); without bs_write_own writes use the above.
  bool bs_write_own = false;
  uint32_t bs_min_w = 0, bs_max_w = 0;
  std::vector<BlockSizeShare> bssplit_w;
  // --blockalign/--ba: random offsets are multiples of it (0: the minimum block size); any other
  // value turns norandommap on, as in fio.
  uint32_t blockalign = 0;
};

// The queue of I/Os in flight per worker.
struct QueueOptions {
  uint32_t iodepth = 1;  // --iodepth: I/Os in flight per worker
  // --iodepth_low: a full queue drains to N before it is refilled (0: iodepth, never drains).
  uint32_t iodepth_low = 0;
  // Batching trade-offs (fio's iodepth_batch_*). Each costs accuracy in exchange for fewer system
  // calls:
  uint32_t batch_submit = 1;        // at most N requests per submit call; 0 = iodepth
  uint32_t batch_complete_min = 1;  // wait for N completions (>1 stamps early ones late)
  uint32_t batch_complete_max = 0;  // take at most N per reap; 0 = complete_min (fio's)
  bool serialize_overlap = false;   // --serialize_overlap: no two overlapping I/Os in flight
};

// fio's latency target mode (engine/latency_target.h): search for the deepest queue, up to
// iodepth, whose latency meets target_ns for percentile % of the I/Os of each window_ns; 0: off.
// run: keep adjusting instead of ending at the depth found.
struct LatencyTargetOptions {
  uint64_t target_ns = 0;  // --latency_target
  uint64_t window_ns = 0;  // --latency_window
  double percentile = 100.0;
  bool run = false;
};

// fio's zonemode: none, strided (engine/zone_stride.h), zbd (fio's emulated zones on files and
// non-zoned block devices: engine/zbd_access.h; zoned block devices are refused when opened).
enum class ZoneMode { kNone, kStrided, kZbd };

// fio's zonemode, zonesize, zonerange (0: zonesize), zoneskip (engine/zone_stride.h).
struct ZoneOptions {
  ZoneMode mode = ZoneMode::kNone;
  uint64_t size = 0;
  uint64_t range = 0;
  uint64_t skip = 0;
  // zonemode=zbd (engine/zbd_access.h): zonecapacity (0: zonesize), max_open_zones per file and
  // job_max_open_zones per clone (0: no limit), zone_reset_threshold and zone_reset_frequency
  // (0: no resets by them), read_beyond_wp, ignore_zone_limits (a device's own limits: emulated
  // zones have none).
  uint64_t capacity = 0;
  uint32_t max_open = 0;
  uint32_t job_max_open = 0;
  double reset_threshold = 0;
  double reset_frequency = 0;
  bool read_beyond_wp = false;
  bool ignore_limits = false;
  uint64_t Range() const { return range != 0 ? range : size; }
};

// --nbd_path: the nbd engine's data path (engine/io/engine_nbd.cc): iotail's own transmission
// phase where it can serve the connection (auto) or always (direct, else refused), or libnbd's.
enum class NbdPath { kAuto, kLibnbd, kDirect };

// The nbd engine's connection (the server is JobSpec::uri).
struct NbdOptions {
  // --nbd_timeout: how long connecting to the NBD server and its handshake may take (0: no limit)
  uint64_t timeout_ns = 10'000'000'000;
  NbdPath path = NbdPath::kAuto;  // --nbd_path
  // --nbd_conns: connections per worker (slot i on connection i % N); more than one with writes
  // needs a server that advertises multi-conn (checked by ProbeNbdExport)
  uint32_t conns = 1;
};

// What an I/O error does to the job.
struct ErrorOptions {
  // fio's continue_on_error and ignore_error, per error type: read [0], write [1] (trims too),
  // verify [2] (a failed check: EILSEQ). An I/O error is counted and the job goes on when its type
  // is continued and its errno is in the type's list (fio's td_non_fatal_error): by default EIO
  // and EILSEQ; ignore_error gives a type its list and continues it.
  std::array<bool, 3> continue_on_error{};
  std::array<std::vector<int>, 3> lists{
      std::vector<int>{EIO, EILSEQ}, std::vector<int>{EIO, EILSEQ}, std::vector<int>{EIO, EILSEQ}};
  // --error_dump (fio's default 0): a line on stderr for every I/O error; 0: only for those that
  // end the job.
  bool dump = false;
  bool KeepsGoing(stats::Direction d, int err) const {
    const size_t type = err == EILSEQ ? 2 : d == stats::Direction::kRead ? 0 : 1;
    if (!continue_on_error[type]) return false;
    for (const int e : lists[type]) {
      if (e == err) return true;
    }
    return false;
  }
};

// fio's exitall (set for every job once any job sets it, as fio's global flag) and
// exitall_on_error: when a clone ends (exitall) or ends with an error (exitall_on_error), the jobs
// of exit_what end too: its reporting group (JobSpec::report_group), or every job running with it.
struct EndingOptions {
  bool exitall = false;
  bool exitall_on_error = false;
  bool exit_what_group = true;  // --exit_what=group; stonewall and all: every running job
};

// fio's steadystate (ss), ss_dur, ss_ramp and ss_interval: every interval_ns after ramp_ns (from
// the job's recording start) the job's rates are measured; once the last dur_ns of them meet the
// criterion (stats/core/steady_state.h) the job ends. With group (group_reporting) the
// measurements are those of its reporting group, which ends as one.
struct SteadyStateOptions {
  stats::SteadyStateCriterion criterion;
  uint64_t dur_ns = 0;  // 0: no steady-state detection
  uint64_t ramp_ns = 0;
  uint64_t interval_ns = 1'000'000'000;
  bool group = false;
};

struct ThinkTimeOptions {
  uint64_t ns = 0;       // --thinktime: stall after each thinktime_blocks I/Os
  uint64_t spin_ns = 0;  // --thinktime_spin: of which spent spinning
  uint32_t blocks = 1;   // --thinktime_blocks
};

// The priorities of a job's I/Os.
struct PrioOptions {
  // fio's prio and prioclass: the I/O priority of each clone's thread (ioprio_set; class 0 or
  // unset with a level is best effort, as fio's); -1: not set.
  int ioprio = -1;
  int ioprio_class = -1;
  // fio's cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit (libaio and io_uring): a
  // share of the reads and writes at a priority of their own (engine/cmdprio.h), with latencies
  // per priority (JobSpec::lat_percentiles as given: fio's per-priority latencies are then lat's,
  // refused).
  CmdPrioOptions cmdprio;
};

// Where a job's clones run.
struct PlacementOptions {
  std::vector<int> cpus_allowed;    // --cpus_allowed: workers pinned to these CPUs
  bool cpus_allowed_split = false;  // --cpus_allowed_policy=split: worker i on CPU i mod n
  // fio's numa_cpu_nodes (the clones run on those nodes' CPUs, within cpus_allowed if given) and
  // numa_mem_policy (set on each clone's thread before its buffers are allocated).
  NumaNodes numa_cpu_nodes;
  NumaMemPolicy numa_mem_policy;
};

// The filestat and dirstat engines' --stat_type: which call they time.
enum class StatType { kStat, kLstat, kStatx };

// Options of particular engines (JobSpec::ioengine; engine/io/engine_table.h says which takes
// which).
struct EngineOptions {
  bool sqthread_poll = false;  // --sqthread_poll (io_uring SQPOLL)
  bool hipri = false;          // --hipri (io_uring IOPOLL; pvsync2 RWF_HIPRI)
  bool nowait = false;         // --nowait (pvsync2 RWF_NOWAIT: EAGAIN is an I/O error, as fio)
  uint32_t uncached = 0;       // --uncached (pvsync2 RWF_UNCACHED: refused unless --direct=1)
  // e4defrag: the donor file (--donorname, in --directory) and --inplace (allocate and free the
  // donor's space around each move instead of once).
  std::string e4defrag_donor;
  bool e4defrag_inplace = false;
  StatType stat_type = StatType::kStat;  // --stat_type (filestat, dirstat)
  bool stat_type_given = false;          // --stat_type was given (refused with other engines)
};

// A job's files: how they are laid out, opened, advised and removed.
struct FileOptions {
  // fio's file layout (engine/target.h): how a missing or short file is made.
  FallocateMode fallocate = FallocateMode::kNative;  // --fallocate
  bool overwrite = false;         // --overwrite: a write job lays its files out with data too
  bool allow_file_create = true;  // --allow_file_create=0: a missing file is an error
  // fio's create_on_open: a file is not laid out before the run but created when it is opened
  // (the engines that move data open theirs before the run: created then, empty, never laid out
  // nor preallocated; engine/target.h).
  bool create_on_open = false;
  // fio's openfiles: how many of a clone's files may be open at once (0: all of them). Only the
  // file and directory operation engines take fewer than their files (the others keep every file
  // open for the whole run).
  uint32_t openfiles = 0;
  bool unlink = false;      // --unlink: remove the job's files (directories) once it has ended
  std::string ioscheduler;  // --ioscheduler: switch the targets' device to this first
  int fadvise = -2;         // --fadvise_hint: POSIX_FADV_*; -2: by rw (fio's 1), -1: off
  // --invalidate: drop the page cache of the region when a pass over it begins (at the start and
  // whenever a loop or a time_based run wraps around it), buffered I/O only (fio: on).
  bool invalidate = true;
};

// When a job's writes reach the medium.
struct SyncOptions {
  bool end_fsync = false;  // --end_fsync: fsync files at the end
  bool fsync_on_close =
      false;                 // --fsync_on_close: fsync each written file when closed (at the end)
  uint32_t fsync_every = 0;  // --fsync=N: fsync a file after every N writes to it (0: never)
  uint32_t fdatasync_every = 0;  // --fdatasync=N: the same with fdatasync
  int sync_flags = 0;            // --sync: O_SYNC (sync, 1) or O_DSYNC (dsync)
};

// A rate limit: I/Os per second or bytes per second (0 = none). At most one of the two is set.
struct RateLimit {
  double iops = 0;
  double bytes_per_s = 0;
  bool Any() const { return iops > 0 || bytes_per_s > 0; }
};

// Rate-limited open loop. Rates are per worker, as fio's are per job clone (numjobs=2 doubles the
// load).
struct RateOptions {
  RateLimit limit;                 // --rate_iops=N / --rate=N: each direction (Normalize)
  std::array<RateLimit, 2> dir{};  // --rate_iops=R,W / --rate=R,W: reads [0], writes [1]
  bool trim_given = false;         // R,W,T: a trims' rate (refused for a job with trims)
  bool poisson = false;            // --rate_process=poisson (default linear)
  // --rate_min / --rate_iops_min: the least each worker must do per direction (reads [0], writes
  // [1]), checked as fio does: from 2 s after the ramp, at completions, over at least cycle_ms
  // since the last check; a worker below it ends with EIO (fio ends that job clone only).
  std::array<RateLimit, 2> min{};
  uint32_t cycle_ms = 1000;  // --ratecycle
  bool Limited() const { return limit.Any() || dir[0].Any() || dir[1].Any(); }
  bool PerDirection() const { return dir[0].Any() || dir[1].Any(); }
};

// A job's logs.
struct LogOptions {
  std::string write_hist_log;  // --write_hist_log=PREFIX ("" = no histogram logs)
  uint32_t hist_msec = 1000;   // --log_hist_msec
  int hist_coarseness = 0;     // --log_hist_coarseness 0..6
  // --log_hist_groups 29 or 59: fio's 29 groups clamp latencies above 17.18 s into the last
  // bucket, as fio does; 59 keeps every latency (fio's readers take --group_nr / --bucket-groups).
  int hist_groups = stats::kFio3Groups;
  bool unix_epoch = false;  // --log_unix_epoch: epoch ms instead of ms since run start
  // fio's windowed value logs (written by cli/ with stats/report/value_log_sink.h), on the
  // interval clock's windows.
  std::string write_bw_log;    // --write_bw_log=PREFIX: PREFIX_bw.N.log (KiB/s)
  std::string write_iops_log;  // --write_iops_log=PREFIX: PREFIX_iops.N.log
  std::string write_lat_log;   // --write_lat_log=PREFIX: PREFIX_{slat,clat,lat}.N.log (ns)
  bool max_value = false;      // --log_max_value: a window's largest latency, not its mean
  bool offset = false;         // --log_offset: the value logs' offset column (0: windowed)
  // --per_job_logs=0: fio's shared log files, PREFIX_TYPE.log without the job number, each
  // clone's log appended after the batch (cli/run_sinks.cc).
  bool per_job = true;
  bool prio = false;  // --log_prio: the priority column as 0x%04x (0 in a window, as fio)
  bool HasValueLogs() const {
    return !write_bw_log.empty() || !write_iops_log.empty() || !write_lat_log.empty();
  }
};

// --explain: each I/O's latency split into stages from the kernel's block tracepoints
// (engine/explain/); --explain_slowest=K: each interval's K slowest I/Os per worker (-1: 16 with
// --explain, none without).
struct ExplainOptions {
  bool on = false;
  int32_t slowest = -1;
  uint32_t SlowestKept() const {
    return slowest >= 0 ? static_cast<uint32_t>(slowest) : on ? 16u : 0u;
  }
  bool Active() const { return on || SlowestKept() > 0; }
};

}  // namespace iotail::engine
