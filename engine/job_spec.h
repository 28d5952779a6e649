// JobSpec: everything `iotail run` needs to drive one job (numjobs identical workers), as fields
// with fio's option names and documented defaults: the job's identity, direction and timing at the
// top, the rest in groups by concept (engine/job_options.h: region, blocks, queue, zones, rates,
// ...; verify, buffers and flow beside their concepts). Built by cli/run from options and checked
// by Validate(), which throws UsageError naming the offending option. A value type; thread-safe to
// read once built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/buffer_fill.h"
#include "engine/flow_control.h"
#include "engine/io/engine_table.h"
#include "engine/job_options.h"
#include "engine/random_distribution.h"
#include "engine/replay/replay_spec.h"
#include "engine/target.h"
#include "engine/verify.h"
#include "stats/core/direction.h"

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
// fio's random_generator. iotail draws offsets with its own generators whichever is named (so the
// offsets are not fio's); what the name changes is fio's coverage rule: tausworthe and
// tausworthe64 keep fio's random map (every block once a pass, I/Os of mixed sizes trimmed to the
// free blocks; none with norandommap), lfsr visits every block once a pass with no map, even with
// norandommap, and does not trim I/Os of mixed sizes (as fio's LFSR).
enum class RandomGenerator { kTausworthe, kLfsr, kTausworthe64 };

struct JobSpec {
  std::string name = "iotail";         // --name: job name in the summary
  std::vector<std::string> filenames;  // --filename a:b:c; empty = default benchmark file
  // The files are the clones' own (fio's NAME.CLONE.FILE): worker w takes files w, w + numjobs,
  // ...; otherwise (a --filename list, as fio) every worker does its I/O over every file.
  bool files_per_clone = false;
  std::string uri;  // --uri: NBD server (--ioengine=nbd), no filenames
  NbdOptions nbd;
  RegionOptions region;
  RwMode rw = RwMode::kRead;  // --rw
  uint32_t rwmixread = 50;    // --rwmixread: % reads for rw/randrw
  // --rw=MODE:N: sequential: bytes from the end of one I/O to the next (negative: backwards, fio's
  // rw=read:-8k); random: I/Os per random offset (0: none).
  int64_t rw_modifier = 0;
  BlockOptions blocks;
  bool direct = false;  // --direct: O_DIRECT
  QueueOptions queue;
  LatencyTargetOptions latency_target;
  uint32_t numjobs = 1;                    // --numjobs: workers, each over the whole region
  PlacementOptions placement;              // cpus_allowed, numa_*
  uint64_t randseed = 0x1f2e3d4c5b6a7988;  // --randseed: worker i uses randseed + i
  DistributionSpec random_distribution;    // --random_distribution (engine/random_distribution.h)
  bool norandommap = false;                // --norandommap: random offsets with replacement
  RandomGenerator random_generator = RandomGenerator::kTausworthe;  // --random_generator
  VerifyOptions verify;   // --verify and its options (engine/verify.h)
  BufferOptions buffers;  // what the writes carry, dedupe too (engine/buffer_fill.h)
  ErrorOptions errors;
  uint64_t runtime_ns = 0;     // --runtime: stop after this long (0 = no limit)
  bool time_based = false;     // --time_based: run for runtime, looping over the region
  uint64_t ramp_time_ns = 0;   // --ramp_time: run but record nothing for this long
  uint64_t startdelay_ns = 0;  // --startdelay: start this long after the group's common start
  uint64_t start_at_ms = 0;    // --start_at: Unix epoch ms of the common start (0 = now)
  uint32_t loops = 1;          // --loops: passes over the region (not time_based)
  uint64_t number_ios = 0;     // --number_ios: end after this many I/Os x loops (0: no limit)
  std::string wait_for;        // --wait_for: start when this earlier job of the group has ended
  EndingOptions ending;        // exitall and its kin
  int report_group = 0;        // fio's groupid, set when the run is planned
  SteadyStateOptions steady;   // fio's steadystate (ss_*)
  FileOptions files;           // layout, opening, advice, unlink
  SyncOptions syncs;           // fsync, fdatasync, sync
  ThinkTimeOptions thinktime;  // thinktime_*
  // fio's read_iolog and replay_* (engine/replay/replay_spec.h): the job replays a trace.
  replay::ReplaySpec replay;
  ZoneOptions zones;
  FlowOptions flow;  // fio's flow control (engine/flow_control.h)
  PrioOptions prio;  // prio, prioclass, cmdprio_*
  // --lat_percentiles: with cmdprio, fio's per-priority latencies are then lat's (refused).
  bool lat_percentiles = false;
  // --ioengine: psync unless given, as fio (cli/run_plan.cc: the default benchmark takes the best
  // engine available, a --uri nbd).
  EngineKind ioengine = EngineKind::kPsync;
  EngineOptions engine_options;    // the options of particular engines
  bool allow_destructive = false;  // --allow-destructive: write over a signature/mounted device
  RateOptions rates;
  LogOptions logs;
  ExplainOptions explain;

  bool HasTrims() const { return rw == RwMode::kTrim || rw == RwMode::kRandTrim; }
  bool HasReads() const { return rw != RwMode::kWrite && rw != RwMode::kRandWrite && !HasTrims(); }
  bool HasWrites() const { return rw != RwMode::kRead && rw != RwMode::kRandRead && !HasTrims(); }
  bool IsRandom() const {
    return rw == RwMode::kRandRead || rw == RwMode::kRandWrite || rw == RwMode::kRandReadWrite ||
           rw == RwMode::kRandTrim;
  }
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
    return verify.kind != VerifyKind::kNone && verify.do_verify && HasWrites() &&
           verify.backlog == 0 && (HasReads() || time_based || (IsRandom() && NoRandomMap())) &&
           !NeverVerifies();
  }
  bool NeverVerifies() const {
    return verify.kind != VerifyKind::kNone && verify.backlog == 0 && time_based &&
           !CountsIssuedBytes();
  }
  // The POSIX_FADV_* advice given for the job's files (fio's fadvise_hint), -1 for none.
  int FadviseAdvice() const;
  // The block size of direction d (plain bs or bs=R,W; bsrange and bssplit choose per I/O).
  uint32_t BlockSize(stats::Direction d) const {
    const uint32_t b = blocks.bs_dir[d == stats::Direction::kRead ? 0 : 1];
    return b != 0 ? b : blocks.bs;
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
  uint32_t BlockAlign() const {
    return blocks.blockalign != 0 ? blocks.blockalign : MinBlockSize();
  }
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
