// Worker: one thread's closed loop keeping `iodepth` I/Os in flight against its files through its
// own IoEngine, recording every completion into its own Recorder.
//
// The loop (Run) never allocates, locks or throws: all buffers, slots and batches are sized in the
// constructor and Prepare(). Each round it fills free slots from the IoPattern (plus any slots to
// resubmit) and submits them (in calls of at most iodepth_batch_submit requests), then reaps at
// least min(in flight, iodepth_batch_complete_min) and at most iodepth_batch_complete_max (by
// default, as fio, iodepth_batch_complete_min: each completion replaced at once, the queue kept
// full) completions, and records each finished I/O from the engine's stamps (io_engine.h): clat =
// done - issued, slat = issued - start (asynchronous engines), lat = done - start. Short transfers
// and -EAGAIN are resubmitted for the remainder, keeping the I/O's first stamps (a read that meets
// the end of the file fails with EIO on a synchronous engine, and completes short on an
// asynchronous one, counted in short_reads(), as fio); other errors are
// counted per errno in the recorder and stop the worker unless continue_on_error. When stopping,
// in-flight I/Os are reaped and recorded, so the recorder holds every completed I/O. An engine that
// can give up on I/Os (IoEngine::CanAbandon: nbd, whose server may stop answering) is waited for
// only kStopGraceNs from the first reap after the stop (runtime, *stop, an error); then whatever
// has completed is reaped and the rest is abandoned, each I/O counted as an ETIMEDOUT error
// (abandoned()). Other engines are waited for as long as their I/Os take. The worker's CPU use
// (getrusage of its thread over Run) is kept for the summary.
//
// With rate schedules (the rate-limited open loop) Run takes another loop: every I/O has an
// intended start from its RateSchedule, independent of completions. Each round issues every I/O
// that is due and has a free queue slot (stamped with the same submit time; the lag behind its
// intended start is recorded), then waits with ReapTimeout until the next I/O is due while reaping
// completions; the queue is never drained to wait. When every slot is busy, due I/Os wait for a
// slot and keep their intended start, so a backlog shows in lat = completion - intended start
// (recorded beside clat = completion - issue). The wait is capped at 10 ms so that a stop request
// is seen promptly, and ends early by the measured wake-up latency of timed waits (at most
// 200 us, then polled, when the wait is at least 4x as long), so that I/Os leave on time rather
// than a timer's latency late.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cmdprio.h"
#include "engine/dedupe.h"
#include "engine/flow_control.h"
#include "engine/io/io_engine.h"
#include "engine/io_pattern.h"
#include "engine/io_trail.h"
#include "engine/job_spec.h"
#include "engine/latency_target.h"
#include "engine/rate_floor.h"
#include "engine/rate_schedule.h"
#include "engine/replay/iolog_writer.h"
#include "engine/replay/replay_feed.h"
#include "engine/zbd_access.h"
#include "engine/zone_stride.h"
#include "stats/core/sample_stats.h"
#include "stats/record/cpu_usage.h"
#include "stats/record/io_depths.h"
#include "stats/record/recorder.h"

namespace iotail::engine {

class TrailJoin;

struct WorkerPlan {
  int index = 0;                   // 0-based worker number
  std::vector<int> fds;            // this worker's files
  std::vector<std::string> paths;  // their names (verify_dump names its files after them)
  uint64_t region_offset = 0;
  uint64_t region_size = 0;  // bytes per file
  uint64_t file_end = 0;     // bytes from the region's start to its files' end (0: region_size)
  uint64_t bytes_limit = 0;  // stop issuing after this many bytes (0 = no limit)
  uint64_t loop_bytes = 0;   // fio's size: a loop ends after this many bytes (0 = no limit)
  // Drop the region's page cache each time a new loop (pass) over it begins (fio's invalidate
  // with buffered I/O on files and devices).
  bool invalidate = false;
  // Open loop: none (closed loop), one for all I/Os (directions by rwmixread), or two, one per
  // direction (reads [0], writes [1]; only per_direction is set then).
  std::vector<RateSchedule> schedules;
  bool per_direction = false;
  // zonemode=zbd: the emulated zones of the worker's one file (shared with every worker on it)
  // and the file's size; the region is the worker's range of zones.
  std::shared_ptr<ZonedFile> zones;
  uint64_t zoned_file_size = 0;
  // read_iolog: the trace this worker replays (RunReplay; engine/worker_replay.cc), its device d
  // on file d.
  std::shared_ptr<replay::ReplayFeed> replay;
  // write_iolog: where this worker's issued I/Os are logged (an issue feature; closed when Run
  // returns).
  std::shared_ptr<replay::IologWriter> iolog;
};

struct WorkerTimes {
  uint64_t start_ns = 0;        // Clock::NowNs() of the common start (rate schedules begin here)
  uint64_t record_from_ns = 0;  // Clock::NowNs() from which completions are recorded (ramp end)
  uint64_t stop_at_ns = 0;      // stop issuing at this instant (0 = no limit)
};

class Worker {
 public:
  Worker(const JobSpec& spec, WorkerPlan plan, std::unique_ptr<IoEngine> engine);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Allocates buffers and prepares the engine (which gives up, throwing stats::Interrupted, if it
  // waits for a server while *stop is set). Throws std::system_error.
  void Prepare(const std::atomic<bool>* stop = nullptr);
  // The hot loop; returns when done, on an error (unless continue_on_error) or when *stop is set.
  void Run(const WorkerTimes& times, const std::atomic<bool>& stop);

  // fio's exitall: ends the worker as a stop request would (another job it goes with ended); any
  // thread may call it, before or during Run.
  void Terminate() { terminate_.store(true, std::memory_order_relaxed); }
  // fio's flow: joins `flow` with the job's weight (JobSpec::flow.weight); before any worker runs.
  // The worker leaves it when its Run returns.
  void JoinFlow(Flow* flow) { flow_ = FlowShare(flow, spec_.flow.weight); }
  // --explain, --explain_slowest: every recorded completion also goes to `trail` (not owned; it
  // outlives Run), joined first to its block request through `join` if any (not owned); before Run.
  // For the tests of --explain only, the environment's IOTAIL_TEST_REAP_DELAY_US delays each reap
  // of such a worker by that long after its submission (a host that reaps late, on purpose).
  void SetTrail(IoTrail* trail, const TrailJoin* join = nullptr);
  // Whether the worker ended with an error (fio's td->error: an I/O or engine error that stopped
  // it, or a rate floor not met); valid once Run has returned.
  bool Failed() const;

  const stats::Recorder& recorder() const { return *recorder_; }
  // With ramp_time: the I/Os and bytes completed inside the ramp, per direction (no latencies),
  // which the recorder leaves out; fio counts them in a job that ends inside its ramp, whose
  // statistics it never reset. Valid once Run has returned.
  struct RampCounts {
    bool on = false;  // the job has a ramp
    std::array<uint64_t, stats::kDirectionCount> ios{}, bytes{};
  };
  const RampCounts& ramp_counts() const { return ramp_; }
  uint64_t bytes_limit() const { return plan_.bytes_limit; }
  // The first engine-level failure (-errno from Submit/Reap), 0 if none.
  int engine_error() const { return engine_error_; }
  // I/Os still in flight kStopGraceNs after the worker began to stop, given up (each counted as
  // an ETIMEDOUT error); valid once Run has returned.
  uint64_t abandoned() const { return grace_.abandoned; }
  // Reads of an asynchronous engine that met the end of the file and completed short (fio's rule:
  // counted with the bytes they brought, the job goes on).
  uint64_t short_reads() const { return short_reads_; }
  // How long a stopping worker waits for its I/Os in flight when the engine can abandon them.
  static constexpr uint64_t kStopGraceNs = 1'000'000'000;
  // CPU use of the worker's thread over Run(); valid once Run has returned.
  const stats::CpuUsage& cpu() const { return cpu_.used; }
  // Queue depths and batch sizes over Run(); valid once Run has returned.
  const stats::IoDepthCounts& depths() const { return depths_; }
  // --verify: blocks checked (as read, or read back after the writes with do_verify), and the
  // first block that failed a check, "" if none ("offset N of file K: why").
  uint64_t verified_blocks() const { return verify_.verified_blocks; }
  const std::string& verify_failure() const { return verify_.failure; }
  // --rate_min/--rate_iops_min: why this worker ended early ("" if it did not), in fio's words.
  const std::string& rate_shortfall() const {
    static const std::string kNone;
    return floor_ ? floor_->shortfall() : kNone;
  }
  // Loops (passes over the region) begun after the first: each dropped the region's page cache
  // when invalidate is on. Valid once Run has returned.
  uint64_t restarts() const { return passes_.restarts; }
  // zonemode=zbd: zones this worker reset (fio's nr_zone_resets); valid once Run has returned.
  uint64_t zone_resets() const { return zbd_ ? zbd_->resets() : 0; }
  // When the do_verify read-back began (Clock::NowNs()), 0 if there was none; valid once Run has
  // returned. The read-backs are recorded as reads.
  uint64_t verify_start_ns() const { return verify_.start_ns; }
  // The read-back phases done (one per loop for JobSpec::VerifiesWrittenEachLoop) and the time
  // spent in them; valid once Run has returned.
  uint32_t verify_phases() const { return verify_.phases; }
  uint64_t verify_ns() const { return verify_.ns; }
  // fsync/fdatasync calls (--fsync=N, --fdatasync=N) and their latencies in ns.
  const stats::SampleStats& syncs() const { return sync_.stats; }
  // --latency_target: the depth the search ended at (fio's latency_depth; iodepth without it),
  // and, when it reset the statistics for its final window, the recorder's counts at that
  // instant (to subtract from the totals) and when (Clock::NowNs()); nullptr and 0 otherwise.
  // Valid once Run has returned.
  uint32_t latency_depth() const { return lat_.enabled() ? lat_.depth() : spec_.queue.iodepth; }
  const stats::RecorderSnapshot* stats_baseline() const {
    return lt_.stats_reset_ns != 0 ? &lt_.baseline : nullptr;
  }
  uint64_t stats_reset_ns() const { return lt_.stats_reset_ns; }
  std::string DescribeEngine() const { return engine_->Describe(); }
  // Tears the engine down (waiting for anything in flight); call on the worker's thread once Run
  // has returned. DescribeEngine() must not be called after.
  void ReleaseEngine() { engine_.reset(); }

 private:
  static bool Strided(const JobSpec& spec, const WorkerPlan& plan);
  static PatternRegion PatternOf(const JobSpec& spec, const WorkerPlan& plan);
  struct Slot {
    IoStamps stamps;       // written by the engine when the I/O is first submitted
    uint64_t intended_ns;  // intended start (open loop); 0 in the closed loop
    uint64_t offset;
    uint32_t len;
    uint32_t done;
    uint32_t file;
    stats::Direction dir;
    uint16_t prio;    // cmdprio: the index of its priority (Recorder::RecordPrio)
    uint16_t ioprio;  // the request's priority value (IoRequest::ioprio)
    uint16_t depth;   // with a trail: in flight once it was submitted (itself included)
    bool cmdprio;     // and whether cmdprio chose it (IoRequest::cmdprio)
    bool taken;       // queued or in flight (from QueueNew until its completion frees it)
  };
  // The closed loop's batch: resubmissions, then new I/Os while slots are free and the job goes
  // on. A job without issue features (features_.issue) takes the pattern's next I/O and nothing
  // else; FillBatchFeatures is the same loop with them (flow, serialize_overlap, zones, strides,
  // file operations, trims).
  void FillBatch(bool issue_new, uint64_t& issued_bytes, uint64_t bytes_limit);
  [[gnu::noinline]] void FillBatchFeatures(bool issue_new, uint64_t& issued_bytes,
                                           uint64_t bytes_limit);
  // Takes a free slot for a new I/O (intended start, or 0 in the closed loop) and appends it to
  // the batch. A free slot must exist.
  Slot& QueueNew(const IoChoice& c, uint64_t intended_ns);
  // A new batch, beginning with the resubmissions (short transfers, -EAGAIN).
  void QueueRedo() {
    queue_.batch_count = 0;
    if (queue_.redo_count > 0) QueueRedos();
  }
  [[gnu::noinline]] void QueueRedos();
  // What a write's buffer is given before it leaves (features_.buffer): verify's header and
  // pattern, or refill_buffers' (and dedupe's) new data.
  [[gnu::noinline]] void FillWriteBuffer(char* buffer, const IoChoice& c);
  // The fixed points of the optional behaviours. Each flag is set once in Prepare from what the
  // job asks for; a job that asks for none (the default job) runs the loop and nothing else.
  //   features_.issue: flow, serialize_overlap, zonemode (zbd, strided), file operations, trims
  //   features_.buffer: verify's or refill_buffers' write contents
  //   features_.completion: zbd, verify (reads checked, backlog, each loop), latency target,
  //     fill_device, fsync/fdatasync, the rate floor's counts, the explain trail
  //   features_.round: the latency target's round, think time, the rate floor's check
  void SetFeatureFlags();
  // fio's loop checks before each new I/O (NextLoopIfDone), skipped while passes_.sure_ios I/Os are
  // known to be allowed (the pass, number_ios and the loop's bytes all have room for them).
  bool LoopGoesOn() {
    if (passes_.sure_ios > 0) {
      --passes_.sure_ios;
      return true;
    }
    return NextLoopIfDone();
  }
  // After NextLoopIfDone allowed an I/O: how many more are sure to be allowed (passes_.sure_ios).
  uint64_t SureIosAfterThis() const;
  // A completion that did not transfer its whole remainder: true when it is resubmitted (a short
  // transfer or -EAGAIN); else *res becomes the error it ends with (end of file: -EIO).
  [[gnu::noinline]] bool Resubmits(uint32_t slot_index, Slot& slot, int64_t* res);
  // A failed completion (-err): counted, reported, and whether the worker goes on.
  [[gnu::noinline]] bool CompletionFailed(const Slot& slot, int err);
  // A successful completion's features before it is recorded (verify's read check, the latency
  // target, fill_device) and after (verify's written list, syncs); false when the worker stops.
  [[gnu::noinline]] bool CompletedBefore(uint32_t slot_index, const Slot& slot, uint64_t done_ns,
                                         uint64_t record_from_ns);
  // A completion's explain record: joined to its request, pushed to the trail when `recorded`.
  void PushTrail(const Slot& slot, uint64_t done_ns, bool recorded);
  // With a trail: the depth each I/O of the batch was submitted at (and the tests' delay).
  [[gnu::noinline, gnu::cold]] void TrailSubmitted(size_t at, size_t count, uint32_t in_flight);
  void SleepAfterSubmit();
  [[gnu::noinline]] bool CompletedAfter(const Slot& slot);
  // Flattened: the round's calls (FillBatch, QueueNew, SubmitBatch, Complete) inlined into it, so
  // the default job pays no call for them; what is cold is marked noinline.
  [[gnu::flatten]] void RunClosedLoop(const WorkerTimes& times, const std::atomic<bool>& stop);
  void RunOpenLoop(const WorkerTimes& times, const std::atomic<bool>& stop);
  // read_iolog: the trace's I/Os, each at its intended time (engine/worker_replay.cc).
  void RunReplay(const WorkerTimes& times, const std::atomic<bool>& stop);
  // write_iolog: an issued I/O into the log (the issue features' fixed point).
  void LogIssued(const IoChoice& c);
  // Waits until `until` (reaping when `reap`): sleeps, then polls the last stretch; returns as
  // Reap.
  int ReplayWait(uint64_t until, uint64_t now, bool reap);
  // A replayed sync or trim (synchronous, nothing in flight).
  void ReplaySpecial(const replay::TraceEvent& e);
  // This thread's cumulative CPU use, elapsed_ns being the monotonic clock.
  static stats::CpuUsage SampleCpu();
  // The schedule whose I/O is due first, and its direction (per-direction schedules).
  RateSchedule& NextDue(stats::Direction* dir);
  // Submits the batch; on an engine failure records it and returns false (the worker stops).
  bool SubmitBatch(uint32_t* in_flight);
  // Records a reaped batch; returns false when the worker must stop issuing (an error).
  bool Complete(int n, uint64_t record_from_ns, uint32_t* in_flight);
  // A stopping worker's reap when the engine can abandon I/Os: waits for `want` completions until
  // the stop grace ends, then reaps what has completed and abandons the rest (*in_flight becomes
  // 0, each counted as ETIMEDOUT). Returns as Reap (0 once abandoned).
  [[gnu::noinline]] int ReapStopping(uint32_t want, size_t max, uint32_t* in_flight);

  const JobSpec& spec_;
  WorkerPlan plan_;
  std::unique_ptr<IoEngine> engine_;
  std::unique_ptr<stats::Recorder> recorder_;
  RampCounts ramp_;  // ramp_time: the ramp's completions
  // A completion inside the ramp, into ramp_: counted, no latency (as fio).
  [[gnu::noinline]] void RecordInRamp(const Slot& slot);
  IoPattern pattern_;
  std::optional<ZoneStride> stride_;  // zonemode=strided
  // zonemode=zbd (engine/zbd_access.h): NextZoned gives the next I/O moved onto the zones, or
  // false when none may be issued now: the pass is over (zoned_.eof, taken by NextLoopIfDone) or
  // the I/O must wait for completions (zoned_.wait; kept in zoned_.pending for the next try).
  std::optional<ZbdAccess> zbd_;
  bool NextZoned(IoChoice& c);
  // fio's serialize_overlap: an I/O that overlaps one of this worker's in flight waits in
  // overlap_pending_ until completions free its range.
  std::optional<IoChoice> overlap_pending_;
  bool OverlapsInFlight(const IoChoice& c) const;
  // The closed loop found nothing in flight after a zoned FillBatch that issued nothing: whether
  // the worker goes on (waiting for other workers' writes, or over a new pass).
  bool ZonedIdle(const std::atomic<bool>& stop, uint64_t stop_at_ns);
  // The I/O buffers (a slot's at buffers + slot * size) and what writes carry: fio's buffer
  // contents, refill_buffers' generator, dedupe_percentage's filler.
  struct Data {
    char* buffers = nullptr;
    uint32_t size = 0;
    BufferContent content;
    FastRandom refill{0};
    std::optional<DedupeFiller> dedupe;
  } data_;
  // fio's cmdprio_*: each read or write's priority, drawn from rng (engine/cmdprio.h); job_ioprio:
  // prio/prioclass as an ioprio value (0: not set), set on every request.
  struct Priorities {
    std::optional<CmdPrio> cmdprio;
    FastRandom rng{0};
    uint16_t job_ioprio = 0;
  } prio_;
  // The queue: a slot per I/O of the depth (taken from the free stack when queued, back when it
  // completes), the slots to resubmit, the batch being built and the completions reaped.
  struct Queue {
    std::vector<Slot> slots;
    std::vector<uint32_t> free;  // free slot stack (free_count of them)
    std::vector<uint32_t> redo;  // slots to resubmit (redo_count of them)
    std::vector<IoRequest> batch;
    std::vector<IoCompletion> completions;
    size_t free_count = 0;
    size_t redo_count = 0;
    size_t batch_count = 0;
    size_t new_in_batch = 0;
  } queue_;
  struct Grace {                 // a stopping worker's wait for an engine that can abandon I/Os
    uint64_t give_up_at_ns = 0;  // when the grace ends (0: not stopping yet)
    uint64_t abandoned = 0;      // I/Os given up when the grace ended
  } grace_;
  int engine_error_ = 0;
  uint64_t short_reads_ = 0;            // short_reads()
  std::atomic<bool> terminate_{false};  // Terminate()
  uint64_t fill_end_ = 0;   // fill_device: where the written bytes end (the read-back's end)
  bool failed_io_ = false;  // an I/O error (or a failed check) stopped the worker
  bool Stopped(const std::atomic<bool>& stop) const {
    return stop.load(std::memory_order_relaxed) || terminate_.load(std::memory_order_relaxed);
  }
  IoStamps redo_stamps_;  // where resubmissions' stamps go (an I/O keeps its first ones)
  // Open loop: how late a timed wait has been waking (moving average); waits end that much early.
  static constexpr uint64_t kMaxOversleepNs = 200'000;
  uint64_t oversleep_ns_ = 0;
  struct Cpu {
    stats::CpuUsage used;  // over Run
    stats::CpuUsage from;  // at the start of Run, or at the latency target's stats reset
  } cpu_;
  stats::IoDepthCounts depths_;
  // fio's latency target mode (engine/latency_target.h; engine/worker_latency.cc); its state in
  // lt_ (LatencyTargetState).
  LatencySearch lat_;
  // A completion's total latency against the target; false when it ends the worker (fio's
  // "max latency exceeded", ETIMEDOUT).
  bool LatencyCompleted(const Slot& slot, uint64_t done_ns);
  // After a round of the closed loop: the drain, the window check, the ramp's end. False when the
  // search has ended the job.
  bool LatencyRound(uint64_t now, uint32_t in_flight);
  void ApplyLatencyStep(LatencySearch::Step step);
  void ResetStats(uint64_t now);
  // --thinktime: I/Os completed since the last stall.
  uint32_t since_think_ = 0;
  std::vector<int> numa_cpus_;  // numa_cpu_nodes' CPUs (Prepare)
  // A written block waiting to be read back (VerifyState::backlog).
  struct Written {
    uint32_t file;
    uint64_t offset;
    uint32_t len;
  };
  FlowShare flow_;            // fio's flow control (none unless JoinFlow)
  IoTrail* trail_ = nullptr;  // --explain: each recorded completion's record (SetTrail)
  const TrailJoin* trail_join_ = nullptr;  // and the way to its block request (SetTrail)
  uint64_t test_reap_delay_ns_ = 0;        // IOTAIL_TEST_REAP_DELAY_US (SetTrail)
  bool flow_held_ = false;  // the last FillBatch stopped because the flow held it back
  void SyncFile(uint32_t file);
  void Trim(const IoChoice& c);
  std::vector<bool> is_block_;  // per file: a block device (BLKDISCARD) or a file (punch hole)
  uint64_t record_from_ns_ = 0;
  // Checks a block read (or read back); on a failure counts EILSEQ and keeps the first one.
  void ReportIoError(uint32_t file, stats::Direction dir, uint64_t offset, uint32_t len,
                     int err) const;
  bool CheckBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file);
  // do_verify: reads back every block of this worker's files and checks it.
  void VerifyPass(const std::atomic<bool>& stop);
  // The runtime ended the I/O (fio's terminate: no read-back after it).
  bool ended_by_time_ = false;
  // Reads back and checks the blocks in verify_.backlog (sorted first for a sequential job, as
  // fio's tree), clearing it, until stop or stop_at_ns (0: none); false when the job must stop.
  bool VerifyWritten(const std::atomic<bool>& stop, uint64_t stop_at_ns);
  void Think(const std::atomic<bool>& stop);
  // Held back by the flow with nothing in flight: sleeps flow_sleep (or yields).
  void FlowWait();
  bool VerifyBacklog();
  void QueueWritten(const Written& w);
  bool VerifyListSorted() const;
  void DumpBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file);
  bool ReadBack(uint32_t file, uint64_t at, uint32_t len, char* buf);
  // do_verify's read-back through the engine at the job's depth, of the blocks next(Written&)
  // gives until it returns false (engine/worker_verify.cc).
  template <class Next>
  bool ReadBackOnEngine(Next next, const std::atomic<bool>& stop, uint64_t stop_at_ns);

  // fio's loops: before each new I/O, whether the job issues one. A loop ends when its pass over
  // the region is over or (not time_based) it has issued fio's size; the job then goes on over a
  // new pass (time_based, io_size, loops left; the region's page cache dropped with invalidate)
  // or ends. number_ios ends it too (not time_based, as fio 3.33).
  bool NextLoopIfDone();
  // fio's file and directory operation engines (IoEngine::OperatesOnFiles): before file `file`'s
  // first I/O of a pass, its operation, timed and recorded as a completion latency of
  // fileops_.dir (fio's: reads if the job reads, else writes). False when it failed: the error
  // is counted and the worker issues no more (fio's job error).
  bool OperateOnce(uint32_t file);
  void InvalidateRegion();

  // fio's rate floor (engine/rate_floor.h), only when the job sets one: at a round's end, false
  // when the floor was missed (the worker ends, with EIO as fio's job error).
  std::optional<RateFloor> floor_;
  bool CheckRateFloor(uint64_t now);
  // The worker's state by concept (issue 35: one group per feature, so that the loop's own
  // members stay few and a feature's fields sit together).
  struct Features {  // the fixed points' flags (SetFeatureFlags)
    bool issue = false;
    bool buffer = false;
    bool completion = false;
    bool round = false;
  } features_;
  struct EngineTraits {          // what the engine said in Prepare
    bool asynchronous = false;   // Asynchronous(): record slat
    bool retries_eagain = true;  // RetriesEagain(): resubmit -EAGAIN
    bool can_abandon = false;    // CanAbandon(): a stopping worker waits a grace only
  } traits_;
  struct Passes {  // fio's loops (NextLoopIfDone)
    bool issue_over = false;
    uint64_t loop_bytes = 0;  // bytes issued in this loop
    uint32_t loops_done = 0;
    uint64_t issued_ios = 0;
    uint64_t restarts = 0;
    uint64_t sure_ios = 0;  // I/Os sure to be allowed before the next check (LoopGoesOn)
  } passes_;
  struct Zoned {  // zonemode=zbd's waits (NextZoned)
    std::optional<IoChoice> pending;
    bool eof = false;
    bool wait = false;
  } zoned_;
  struct LatencyTargetState {         // fio's latency target (engine/worker_latency.cc)
    uint32_t issue_cap = UINT32_MAX;  // the depth FillBatch fills to (0 while the queue drains)
    uint64_t ios = 0;        // I/Os completed without an error, ramp included (fio's io_blocks)
    bool reset_due = false;  // the drain under way ends in a statistics reset
    bool ramp_seen = false;  // the end of ramp_time has been handled
    stats::RecorderSnapshot baseline;
    uint64_t stats_reset_ns = 0;
  } lt_;
  struct Syncs {  // --fsync/--fdatasync: writes per file since its last sync, and the syncs done
    std::vector<uint32_t> writes_since;
    stats::SampleStats stats;
    bool deferred = false;     // the closed loop: a due sync waits for the next I/O, as fio's
    std::vector<uint8_t> due;  // per file: a sync due before the next I/O
    bool any_due = false;
  } sync_;
  void SyncDue();  // the due syncs, before an I/O
  // fio's end_fsync (after the clone's I/O, before its read-back) and fsync_on_close (as it ends):
  // its files synced on its own thread, within its time, when `wanted` and the job writes.
  void EndFsync(bool wanted);
  struct Trims {  // trims of this batch, and whether one failed
    uint32_t in_batch = 0;
    bool failed = false;
  } trims_;
  struct FileOps {  // the file and directory operation engines (OperateOnce)
    bool on = false;
    std::vector<uint8_t> operated;  // per file: operated on in this pass
    stats::Direction dir = stats::Direction::kRead;
  } fileops_;
  // verify: the written blocks waiting to be read back (verify_backlog, or each loop's with
  // JobSpec::VerifiesWrittenEachLoop: a loop whose I/O is over waits (due) for its I/Os in
  // flight, then they are read back (loop_verified) before the next loop begins), the read-back
  // buffer, what was checked, and the seed in the headers of the blocks this worker writes (the
  // job's randseed, or for a clone other than the first sharing its files, its own, so that a
  // block another clone wrote over fails its read-back, as fio's header check).
  struct VerifyState {
    std::vector<Written> backlog;
    char* backlog_buffer = nullptr;
    uint64_t verified_blocks = 0;
    uint64_t start_ns = 0;
    uint32_t phases = 0;
    uint64_t ns = 0;
    uint64_t write_seed = 0;
    bool each_loop = false;
    bool reading_back = false;  // ReadBackOnEngine's reads are the ones completing: check them
    bool due = false;
    bool loop_verified = false;
    std::string failure;
  } verify_;
};

}  // namespace iotail::engine
