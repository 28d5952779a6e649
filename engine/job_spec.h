// JobSpec: everything `iotail run` needs to drive one job (numjobs identical workers), as plain
// fields with fio's option names and documented defaults. Built by cli/run from options and checked
// by Validate(), which throws UsageError naming the offending option. A value type; thread-safe to
// read once built.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/buffer_fill.h"
#include "engine/cmdprio.h"
#include "engine/io/engine_table.h"
#include "engine/numa.h"
#include "engine/random_distribution.h"
#include "engine/replay/replay_spec.h"
#include "engine/target.h"
#include "engine/verify.h"
#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/steady_state.h"

namespace iotail::engine {

enum class RwMode {
  kRead,
  kWrite,
  kRandRead,
  kRandWrite,
  kReadWrite,
  kRandReadWrite,
  kTrim,      // fio's trim: sequential discards
  kRandTrim,  // randtrim
};
// The filestat and dirstat engines' --stat_type: which call they time.
enum class StatType { kStat, kLstat, kStatx };
// fio's random_generator. iotail draws offsets with its own generators whichever is named (so the
// offsets are not fio's); what the name changes is fio's coverage rule: tausworthe and
// tausworthe64 keep fio's random map (every block once a pass, I/Os of mixed sizes trimmed to the
// free blocks; none with norandommap), lfsr visits every block once a pass with no map, even with
// norandommap, and does not trim I/Os of mixed sizes (as fio's LFSR).
enum class RandomGenerator { kTausworthe, kLfsr, kTausworthe64 };

// fio's zonemode: none, strided (engine/zone_stride.h), zbd (fio's emulated zones on files and
// non-zoned block devices: engine/zbd_access.h; zoned block devices are refused when opened).
enum class ZoneMode { kNone, kStrided, kZbd };

// A rate limit: I/Os per second or bytes per second (0 = none). At most one of the two is set.
struct RateLimit {
  double iops = 0;
  double bytes_per_s = 0;
  bool Any() const { return iops > 0 || bytes_per_s > 0; }
};

// --nbd_path: the nbd engine's data path (engine/io/engine_nbd.cc): iotail's own transmission
// phase where it can serve the connection (auto) or always (direct, else refused), or libnbd's.
enum class NbdPath { kAuto, kLibnbd, kDirect };

struct BlockSizeShare {
  uint32_t bs = 4096;
  uint32_t percent = 100;  // share of I/Os with this size (bssplit)
};

struct JobSpec {
  std::string name = "iotail";         // --name: job name in the summary
  std::vector<std::string> filenames;  // --filename a:b:c; empty = default benchmark file
  // The files are the clones' own (fio's NAME.CLONE.FILE): worker w takes files w, w + numjobs,
  // ...; otherwise (a --filename list, as fio) every worker does its I/O over every file.
  bool files_per_clone = false;
  // --nbd_timeout: how long connecting to the NBD server and its handshake may take (0: no limit)
  uint64_t nbd_timeout_ns = 10'000'000'000;
  NbdPath nbd_path = NbdPath::kAuto;  // --nbd_path
  // --nbd_conns: connections per worker (slot i on connection i % N); more than one with writes
  // needs a server that advertises multi-conn (checked by ProbeNbdExport)
  uint32_t nbd_conns = 1;
  std::string uri;            // --uri: NBD server (--ioengine=nbd), no filenames
  uint64_t size = 0;          // --size: bytes per file; 0 = existing file/device size
  uint64_t file_size = 0;     // --filesize: each file's length when longer than size (0: size)
  uint64_t offset = 0;        // --offset: start of the region in each file
  double size_percent = 0;    // --size=N%: of each file's size (0: not given)
  double offset_percent = 0;  // --offset=N%: of each file's size, aligned to the bs
  // --offset_increment: clone i starts at offset + i x increment (bytes, or N% of the file's size;
  // with a percentage the offset is aligned up to the minimum block size, as fio).
  uint64_t offset_increment = 0;
  double offset_increment_percent = 0;
  RwMode rw = RwMode::kRead;  // --rw
  uint32_t rwmixread = 50;    // --rwmixread: % reads for rw/randrw
  // --rw=MODE:N: sequential: bytes from the end of one I/O to the next (negative: backwards, fio's
  // rw=read:-8k); random: I/Os per random offset (0: none).
  int64_t rw_modifier = 0;
  uint32_t bs = 4096;                   // --bs
  std::array<uint32_t, 2> bs_dir{};     // --bs=R,W: reads [0], writes [1] (0 = bs)
  uint32_t bs_min = 0, bs_max = 0;      // --bsrange=MIN-MAX (uniform, multiples of MIN)
  std::vector<BlockSizeShare> bssplit;  // --bssplit=4k/50:64k/50
  // Writes' own bsrange/bssplit (the R,W forms); without bs_write_own writes use the above.
  bool bs_write_own = false;
  uint32_t bs_min_w = 0, bs_max_w = 0;
  std::vector<BlockSizeShare> bssplit_w;
  bool direct = false;   // --direct: O_DIRECT
  uint32_t iodepth = 1;  // --iodepth: I/Os in flight per worker
  // --iodepth_low: a full queue drains to N before it is refilled (0: iodepth, never drains).
  uint32_t iodepth_low = 0;
  bool serialize_overlap = false;  // --serialize_overlap: no two overlapping I/Os in flight
  // fio's latency target mode (engine/latency_target.h): search for the deepest queue, up to
  // iodepth, whose latency meets latency_target_ns for latency_percentile % of the I/Os of each
  // latency_window_ns; 0: off. latency_run: keep adjusting instead of ending at the depth found.
  uint64_t latency_target_ns = 0;
  uint64_t latency_window_ns = 0;
  double latency_percentile = 100.0;
  bool latency_run = false;
  // Batching trade-offs (fio's names). Each costs accuracy in exchange for fewer system calls:
  uint32_t iodepth_batch_submit = 1;        // at most N requests per submit call; 0 = iodepth
  uint32_t iodepth_batch_complete_min = 1;  // wait for N completions (>1 stamps early ones late)
  uint32_t iodepth_batch_complete_max = 0;  // take at most N per reap; 0 = complete_min (fio's)
  uint32_t numjobs = 1;                     // --numjobs: workers, each over the whole region
  std::vector<int> cpus_allowed;            // --cpus_allowed: workers pinned to these CPUs
  bool cpus_allowed_split = false;          // --cpus_allowed_policy=split: worker i on CPU i mod n
  uint64_t randseed = 0x1f2e3d4c5b6a7988;   // --randseed: worker i uses randseed + i
  DistributionSpec random_distribution;     // --random_distribution (engine/random_distribution.h)
  bool norandommap = false;                 // --norandommap: random offsets with replacement
  // --blockalign/--ba: random offsets are multiples of it (0: the minimum block size); any other
  // value turns norandommap on, as in fio.
  uint32_t blockalign = 0;
  RandomGenerator random_generator = RandomGenerator::kTausworthe;  // --random_generator
  VerifyKind verify = VerifyKind::kNone;  // --verify: checksummed blocks (engine/verify.h)
  bool do_verify = true;                  // --do_verify: read the written blocks back after
  // --verify_backlog: once N written blocks wait, read back and check the oldest
  // verify_backlog_batch (0: all) of them; at the end, what is left (each block once). Only with
  // do_verify, as fio.
  bool verify_dump = false;  // --verify_dump: a bad block as read and as written, to files
  uint64_t verify_backlog = 0;
  uint64_t verify_backlog_batch = 0;
  // --verify_interval: a header every N bytes of a block (0: fio's default, the block size; one
  // that does not divide the block size is the block size too, as fio), and --verify_pattern: the
  // blocks' data (engine/verify.h; empty: random).
  uint32_t verify_interval = 0;
  VerifyPattern verify_pattern;
  // The blocks' format (refers to verify_pattern: valid as long as this spec).
  VerifyFormat VerifyLayout() const {
    VerifyFormat f(verify);
    f.interval = verify_interval;
    f.pattern = &verify_pattern;
    return f;
  }
  // --fill_device/--fill_fs: a sequential write job on one regular file writes until the
  // filesystem is full (ENOSPC or EDQUOT ends the job, not an error), from --offset to --size or,
  // without a size, on (engine/target.h: kFillDeviceBytes).
  bool fill_device = false;
  // --verify_async: fio's verification threads (accepted, the blocks are checked inline: see
  // cli/run_options_files.cc); kept for the summary.
  uint32_t verify_async = 0;
  // --error_dump (fio's default 0): a line on stderr for every I/O error; 0: only for those that
  // end the job.
  bool error_dump = false;
  bool zero_buffers = false;    // --zero_buffers: write zeros (default random data)
  bool refill_buffers = false;  // --refill_buffers: new random data for every write
  // --buffer_compress_percentage/_chunk, --buffer_pattern (engine/buffer_fill.h), zero_buffers.
  uint32_t buffer_compress_percentage = 0;
  uint32_t buffer_compress_chunk = 512;
  std::string buffer_pattern;
  DedupeSpec dedupe;  // --dedupe_percentage and its options (engine/dedupe.h)
  BufferContent Content() const {
    return {buffer_compress_percentage, buffer_compress_chunk, buffer_pattern, zero_buffers};
  }
  uint64_t runtime_ns = 0;     // --runtime: stop after this long (0 = no limit)
  bool time_based = false;     // --time_based: run for runtime, looping over the region
  uint64_t io_size = 0;        // --io_size: bytes per worker (default: size, one pass)
  uint64_t ramp_time_ns = 0;   // --ramp_time: run but record nothing for this long
  uint64_t startdelay_ns = 0;  // --startdelay: start this long after the group's common start
  uint32_t loops = 1;          // --loops: passes over the region (not time_based)
  uint64_t number_ios = 0;     // --number_ios: end after this many I/Os x loops (0: no limit)
  std::string wait_for;        // --wait_for: start when this earlier job of the group has ended
  // fio's exitall (set for every job once any job sets it, as fio's global flag) and
  // exitall_on_error: when a clone ends (exitall) or ends with an error (exitall_on_error), the
  // jobs of exit_what end too: its reporting group (report_group), or every job running with it.
  bool exitall = false;
  bool exitall_on_error = false;
  bool exit_what_group = true;  // --exit_what=group; stonewall and all: every running job
  int report_group = 0;         // fio's groupid, set when the run is planned
  // fio's steadystate (ss), ss_dur, ss_ramp and ss_interval: every ss_interval after ss_ramp (from
  // the job's recording start) the job's rates are measured; once the last ss_dur of them meet the
  // criterion (stats/core/steady_state.h) the job ends. With ss_group (group_reporting) the
  // measurements are those of its reporting group, which ends as one.
  stats::SteadyStateCriterion ss;
  uint64_t ss_dur_ns = 0;  // 0: no steady-state detection
  uint64_t ss_ramp_ns = 0;
  uint64_t ss_interval_ns = 1'000'000'000;
  bool ss_group = false;
  bool end_fsync = false;  // --end_fsync: fsync files at the end
  bool fsync_on_close =
      false;  // --fsync_on_close: fsync each written file when closed (at the end)
  // fio's create_on_open: a file is not laid out before the run but created when it is opened
  // (the engines that move data open theirs before the run: created then, empty, never laid out
  // nor preallocated; engine/target.h).
  bool create_on_open = false;
  // fio's openfiles: how many of a clone's files may be open at once (0: all of them). Only the
  // file and directory operation engines take fewer than their files (the others keep every file
  // open for the whole run).
  uint32_t openfiles = 0;
  bool unlink = false;  // --unlink: remove the job's files (directories) once it has ended
  StatType stat_type = StatType::kStat;  // --stat_type (filestat, dirstat)
  bool stat_type_given = false;          // --stat_type was given (refused with other engines)
  // fio's file layout (engine/target.h): how a missing or short file is made.
  FallocateMode fallocate = FallocateMode::kNative;  // --fallocate
  bool overwrite = false;         // --overwrite: a write job lays its files out with data too
  bool allow_file_create = true;  // --allow_file_create=0: a missing file is an error
  std::string ioscheduler;        // --ioscheduler: switch the targets' device to this first
  uint32_t fsync_every = 0;       // --fsync=N: fsync a file after every N writes to it (0: never)
  uint32_t fdatasync_every = 0;   // --fdatasync=N: the same with fdatasync
  int sync_flags = 0;             // --sync: O_SYNC (sync, 1) or O_DSYNC (dsync)
  int fadvise = -2;               // --fadvise_hint: POSIX_FADV_*; -2: by rw (fio's 1), -1: off
  // --invalidate: drop the page cache of the region when a pass over it begins (at the start and
  // whenever a loop or a time_based run wraps around it), buffered I/O only (fio: on).
  bool invalidate = true;
  uint64_t thinktime_ns = 0;       // --thinktime: stall after each thinktime_blocks I/Os
  uint64_t thinktime_spin_ns = 0;  // --thinktime_spin: of which spent spinning
  uint32_t thinktime_blocks = 1;   // --thinktime_blocks
  // fio's read_iolog and replay_* (engine/replay/replay_spec.h): the job replays a trace.
  replay::ReplaySpec replay;
  // fio's flow control (engine/flow_control.h): each clone's weight among the jobs of its flow_id
  // (0: none), and how long a held-back clone sleeps once its I/Os have completed (0: it yields).
  // fio's zonemode, zonesize, zonerange (0: zonesize), zoneskip (engine/zone_stride.h).
  ZoneMode zone_mode = ZoneMode::kNone;
  uint64_t zone_size = 0;
  uint64_t zone_range = 0;
  uint64_t zone_skip = 0;
  // zonemode=zbd (engine/zbd_access.h): zonecapacity (0: zonesize), max_open_zones per file and
  // job_max_open_zones per clone (0: no limit), zone_reset_threshold and zone_reset_frequency
  // (0: no resets by them), read_beyond_wp, ignore_zone_limits (a device's own limits: emulated
  // zones have none).
  uint64_t zone_capacity = 0;
  uint32_t max_open_zones = 0;
  uint32_t job_max_open_zones = 0;
  double zone_reset_threshold = 0;
  double zone_reset_frequency = 0;
  bool read_beyond_wp = false;
  bool ignore_zone_limits = false;
  uint64_t ZoneRange() const { return zone_range != 0 ? zone_range : zone_size; }
  ZoneMode Zones() const { return zone_mode; }
  uint32_t flow = 0;
  // fio's prio and prioclass: the I/O priority of each clone's thread (ioprio_set; class 0 or unset
  // with a level is best effort, as fio's); -1: not set.
  int ioprio = -1;
  // fio's numa_cpu_nodes (the clones run on those nodes' CPUs, within cpus_allowed if given) and
  // numa_mem_policy (set on each clone's thread before its buffers are allocated).
  NumaNodes numa_cpu_nodes;
  NumaMemPolicy numa_mem_policy;
  int ioprio_class = -1;
  // fio's cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit (libaio and io_uring): a
  // share of the reads and writes at a priority of their own (engine/cmdprio.h), with latencies
  // per priority; lat_percentiles as given (fio's per-priority latencies are then lat's: refused).
  CmdPrioOptions cmdprio;
  bool lat_percentiles = false;
  uint32_t flow_id = 0;
  uint64_t flow_sleep_ns = 0;
  // --ioengine: psync unless given, as fio (cli/run_plan.cc: the default benchmark takes the best
  // engine available, a --uri nbd).
  EngineKind ioengine = EngineKind::kPsync;
  bool sqthread_poll = false;  // --sqthread_poll (io_uring SQPOLL)
  bool hipri = false;          // --hipri (io_uring IOPOLL; pvsync2 RWF_HIPRI)
  bool nowait = false;         // --nowait (pvsync2 RWF_NOWAIT: EAGAIN is an I/O error, as fio)
  uint32_t uncached = 0;       // --uncached (pvsync2 RWF_UNCACHED: refused unless --direct=1)
  // e4defrag: the donor file (--donorname, in --directory) and --inplace (allocate and free the
  // donor's space around each move instead of once).
  std::string e4defrag_donor;
  bool e4defrag_inplace = false;
  // fio's continue_on_error and ignore_error, per error type: read [0], write [1] (trims too),
  // verify [2] (a failed check: EILSEQ). An I/O error is counted and the job goes on when its type
  // is continued and its errno is in the type's list (fio's td_non_fatal_error): by default EIO
  // and EILSEQ; ignore_error gives a type its list and continues it.
  std::array<bool, 3> continue_on_error{};
  std::array<std::vector<int>, 3> error_lists{
      std::vector<int>{EIO, EILSEQ}, std::vector<int>{EIO, EILSEQ}, std::vector<int>{EIO, EILSEQ}};
  bool KeepsGoing(stats::Direction d, int err) const {
    const size_t type = err == EILSEQ ? 2 : d == stats::Direction::kRead ? 0 : 1;
    if (!continue_on_error[type]) return false;
    for (const int e : error_lists[type]) {
      if (e == err) return true;
    }
    return false;
  }
  bool allow_destructive = false;  // --allow-destructive: write over a signature/mounted device

  // Rate-limited open loop. Rates are per worker, as fio's are per job clone (numjobs=2 doubles
  // the load).
  RateLimit rate;                       // --rate_iops=N / --rate=N: each direction (Normalize)
  std::array<RateLimit, 2> rate_dir{};  // --rate_iops=R,W / --rate=R,W: reads [0], writes [1]
  bool trim_rate_given = false;         // R,W,T: a trims' rate (refused for a job with trims)
  bool rate_poisson = false;            // --rate_process=poisson (default linear)
  // --rate_min / --rate_iops_min: the least each worker must do per direction (reads [0], writes
  // [1]), checked as fio does: from 2 s after the ramp, at completions, over at least ratecycle
  // since the last check; a worker below it ends with EIO (fio ends that job clone only).
  std::array<RateLimit, 2> rate_min{};
  uint32_t ratecycle_ms = 1000;  // --ratecycle
  uint64_t start_at_ms = 0;      // --start_at: Unix epoch ms of the common start (0 = now)

  // Logs.
  std::string write_hist_log;     // --write_hist_log=PREFIX ("" = no histogram logs)
  uint32_t log_hist_msec = 1000;  // --log_hist_msec
  int log_hist_coarseness = 0;    // --log_hist_coarseness 0..6
  // --log_hist_groups 29 or 59: fio's 29 groups clamp latencies above 17.18 s into the last
  // bucket, as fio does; 59 keeps every latency (fio's readers take --group_nr / --bucket-groups).
  int log_hist_groups = stats::kFio3Groups;
  bool log_unix_epoch = false;  // --log_unix_epoch: epoch ms instead of ms since run start
  // fio's windowed value logs (written by cli/ with stats/report/value_log_sink.h), on the
  // interval clock's windows.
  std::string write_bw_log;    // --write_bw_log=PREFIX: PREFIX_bw.N.log (KiB/s)
  std::string write_iops_log;  // --write_iops_log=PREFIX: PREFIX_iops.N.log
  std::string write_lat_log;   // --write_lat_log=PREFIX: PREFIX_{slat,clat,lat}.N.log (ns)
  bool log_max_value = false;  // --log_max_value: a window's largest latency, not its mean
  bool log_offset = false;     // --log_offset: the value logs' offset column (0: windowed)
  // --per_job_logs=0: fio's shared log files, PREFIX_TYPE.log without the job number, each
  // clone's log appended after the batch (cli/run_sinks.cc).
  bool per_job_logs = true;
  bool log_prio = false;  // --log_prio: the priority column as 0x%04x (0 in a window, as fio)
  // --explain: each I/O's latency split into stages from the kernel's block tracepoints
  // (engine/explain/); --explain_slowest=K: each interval's K slowest I/Os per worker (-1: 16 with
  // --explain, none without).
  bool explain = false;
  int32_t explain_slowest = -1;
  uint32_t SlowestKept() const {
    return explain_slowest >= 0 ? static_cast<uint32_t>(explain_slowest) : explain ? 16u : 0u;
  }
  bool Explains() const { return explain || SlowestKept() > 0; }
  bool HasValueLogs() const {
    return !write_bw_log.empty() || !write_iops_log.empty() || !write_lat_log.empty();
  }

  bool HasTrims() const { return rw == RwMode::kTrim || rw == RwMode::kRandTrim; }
  bool HasReads() const { return rw != RwMode::kWrite && rw != RwMode::kRandWrite && !HasTrims(); }
  bool HasWrites() const { return rw != RwMode::kRead && rw != RwMode::kRandRead && !HasTrims(); }
  bool IsRandom() const {
    return rw == RwMode::kRandRead || rw == RwMode::kRandWrite || rw == RwMode::kRandReadWrite ||
           rw == RwMode::kRandTrim;
  }
  bool RateLimited() const { return rate.Any() || rate_dir[0].Any() || rate_dir[1].Any(); }
  bool RatePerDirection() const { return rate_dir[0].Any() || rate_dir[1].Any(); }
  // The engine's traits (engine/io/engine_table.h). fio's FIO_SYNCIO engines: each I/O is done
  // inside its call, so they run at depth 1.
  bool Synchronous() const { return HasTrait(ioengine, kSynchronousTrait); }
  // fio's engines that change the file whatever the direction (falloc, ftruncate, e4defrag): they
  // open it for writing, and they transfer no data (no verify).
  bool ChangesFilesOnly() const { return HasTrait(ioengine, kChangesFilesTrait); }
  // fio's file and directory operation engines (filecreate, filestat, filedelete, dircreate,
  // dirstat, dirdelete: its FIO_FAKEIO | FIO_NOSTATS engines): each file's operation is timed
  // (as a completion latency of the job's direction, once per file per pass); the I/Os are
  // counted, move nothing and have no latency.
  bool FileOperations() const { return HasTrait(ioengine, kFileOperationTrait); }
  // dircreate, dirstat, dirdelete: the job's "files" are directories.
  bool OnDirectories() const { return HasTrait(ioengine, kOnDirectoriesTrait); }
  // Whether fio counts this engine's I/Os as issued bytes when they are queued (its
  // io_queue_event with FIO_Q_QUEUED: libaio, io_uring, posixaio, vsync). Its synchronous
  // engines complete each I/O inside the call and count none, so a time_based loop of theirs
  // never ends at `size` (below).
  bool CountsIssuedBytes() const { return HasTrait(ioengine, kCountsIssuedBytesTrait); }
  // fio's verify list without verify_backlog, for a job that mixes reads and writes or runs
  // time_based: each loop's written blocks are kept (in write order; a sequential job's are in
  // offset order anyway) and read back and checked once the loop's I/O is over, before the next
  // loop (fio's do_io then do_verify, per loop). The mixed job's own reads are not checked. A
  // time_based loop ends after `size` bytes issued, which fio counts only with CountsIssuedBytes
  // engines: with the others its loop never ends, and the runtime ends the job unverified
  // (NeverVerifies).
  bool VerifiesWrittenEachLoop() const {
    return verify != VerifyKind::kNone && do_verify && HasWrites() && verify_backlog == 0 &&
           (HasReads() || time_based || (IsRandom() && NoRandomMap())) && !NeverVerifies();
  }
  bool NeverVerifies() const {
    return verify != VerifyKind::kNone && verify_backlog == 0 && time_based && !CountsIssuedBytes();
  }
  // The POSIX_FADV_* advice given for the job's files (fio's fadvise_hint), -1 for none.
  int FadviseAdvice() const;
  // The block size of direction d (plain bs or bs=R,W; bsrange and bssplit choose per I/O).
  uint32_t BlockSize(stats::Direction d) const {
    const uint32_t b = bs_dir[d == stats::Direction::kRead ? 0 : 1];
    return b != 0 ? b : bs;
  }
  // Direction d's block sizes: a split (cumulative or not, as given), a range, or one size.
  struct BlockSizes {
    const std::vector<BlockSizeShare>* split;  // nullptr: none
    uint32_t min, max;                         // the range (min == max: one size)
  };
  BlockSizes SizesOf(stats::Direction d) const;
  uint32_t MinBlockSize() const;
  uint32_t MaxBlockSize() const;
  // Random offsets come in multiples of this: blockalign, or the minimum block size.
  uint32_t BlockAlign() const { return blockalign != 0 ? blockalign : MinBlockSize(); }
  // Whether random offsets are drawn with replacement (no pass covering every block once):
  // norandommap, or a blockalign other than the minimum block size (fio), unless lfsr.
  bool NoRandomMap() const {
    return random_generator != RandomGenerator::kLfsr &&
           (norandommap || BlockAlign() != MinBlockSize());
  }

  // Throws UsageError naming the first option with a bad value.
  void Validate() const;

 private:
  // Validate's parts, by concept.
  void ValidateSizes() const;
  void ValidateLogs() const;
  void ValidateEngine() const;
  void ValidateRates() const;
  void ValidateWorkload() const;
  void ValidateVerify() const;
  void ValidateTargets() const;
  void ValidateFileOperations() const;
  void ValidateZbd() const;
  void ValidateLatencyTarget() const;  // engine/latency_target.cc

 public:
  // Settles what depends on the engine: a synchronous engine does one I/O at a time, so iodepth > 1
  // becomes 1 (as fio does). Returns a one-line note for the user when something changed, else "".
  std::string Normalize();
};

RwMode ParseRwMode(const std::string& text);  // UsageError naming --rw
std::string RwModeName(RwMode mode);
RandomGenerator ParseRandomGenerator(const std::string& text);  // UsageError naming the option
std::string RandomGeneratorName(RandomGenerator generator);

}  // namespace iotail::engine
