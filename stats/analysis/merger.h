// Merger: aligns the records of any number of histogram logs onto time quanta and adds them up,
// streaming the merged quanta in time order.
//
// Each file is split into sources: one per job segment (see ScanLogSegments; a large file's single
// segment is guessed from its ends, see GuessLogSegment, and checked as it is read: a wrong guess
// is found in the first window, before anything is emitted, and the files are then scanned and
// the merge starts again) and direction, each a
// strictly time-ordered run of records. A window of quanta is filled by all sources in parallel
// (one accumulation buffer per lane, the sources of a file's job segment g always on lane
// g % lanes, so that fractional sums are added in the same order on every run; the lanes are the
// resolved thread count, run by fewer threads for a small input: see threads()), summed, and
// handed to the sink one quantum at a time; then the next window. When the first window holds
// every source's whole segment (the usual case), it is split by time instead (merger_split.cc):
// ranges of its quanta, taken by whichever thread is free, each reading the records that touch
// its quanta from every segment into one shared buffer, so that the sums are those of one thread,
// bit for bit, and a slow core holds up no fixed share. Every quantum that a record
// covers is emitted, from the first to the last, empty ones (records of zero I/Os) included; the
// quanta of a gap (no record covers them: see RecordStart in aligner.h) are not, so the output
// stays proportional to the input whatever its times, and warnings() names the gaps. A segment that
// has not been read yet and ends inside the window (the usual case: a run shorter than the window,
// about a thousand quanta) is read in one pass for all its directions; otherwise each direction's
// source reads the file on its own, skipping the other directions' lines.
//
// Inputs may be many: a source holds no file, buffer or record between its turns, only where to
// carry on (a LogReaderPosition) and the times of its next record, about 200 bytes. In its turn in
// a window, a thread's reader opens the file at that position, reads the source's records up to
// the first that reaches beyond the window, and closes it; that record is read again in the next
// turn. So at most one file per thread is open at once (scan included), and memory is bounded by
// threads x (window x 3 x buckets + one read buffer and record) plus the sources' positions,
// never by the input size.
//
// All files must share a fio generation and a time base (relative or Unix epoch); logs of
// different coarseness are merged at the coarsest. Besides the aligned (fractional) quanta, the
// merger keeps the exact integer whole-run histogram per direction.
//
// Not thread-safe itself; Run() uses `threads` worker threads internally. Errors in any file
// (LogFormatError, std::system_error) stop the run and are rethrown from Run().
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram.h"
#include "stats/core/histogram_layout.h"
#include "stats/util/large_buffer.h"

namespace iotail::stats {

struct MergeOptions {
  int64_t quantum_ms = 1000;
  // For Unix-epoch logs: the log period, to place the first record's start (else inferred).
  std::optional<int64_t> log_hist_msec;
  // Undo the alternating sums of `fio --client` logs.
  bool undo_client_sums = false;
  // Threads for parsing (and lanes: what is added in which order depends on this count); 0: one
  // per Merger::kBytesPerWorker of input, at most one per core. At most 4 per core and 256 in all
  // (each holds at most one file open).
  unsigned threads = 0;
  // Bytes for the per-thread window buffers (about).
  size_t memory_budget = size_t{192} << 20;
  // Guess the single segment of large files from their ends instead of scanning them first
  // (checked as they are read; off: always scan, for tests that compare the two).
  bool guess_segments = true;
  // Split the first window's work between the threads by time rather than by file when it can
  // (see Merger; off: by file only, for tests that compare the two).
  bool split_by_time = true;
  // The least each range of the split reads of a segment, on average (a piece costs an open, a
  // trial read and a start before its share, which a smaller one does not pay back); tests and
  // the fuzzer lower it to split small inputs.
  uint64_t split_min_piece_bytes = uint64_t{512} << 10;
};

struct MergedQuantum {
  int64_t start_ms = 0;  // [start_ms, end_ms) in the logs' time base
  int64_t end_ms = 0;
  // Weighted bucket counts per direction (index DirectionIndex); each has layout().size() entries.
  std::array<std::span<const double>, kDirectionCount> counts;
  // Bytes per direction: each record's I/Os times its bs column (iotail writes the interval's
  // mean bytes per I/O there; fio the size of one I/O), split as its counts are. Meaningful when
  // Merger::bytes_known().
  std::array<double, kDirectionCount> bytes{};
  // Per direction, the smallest non-zero bs column of the records in the quantum (0: none): the bs
  // of a quantum without I/O, as iotail's own logs write the job's smallest block size there.
  std::array<double, kDirectionCount> smallest_bs{};
};

class Merger {
 public:
  // Scans the files (in parallel) and reads every source's first record. Throws UsageError when the
  // files cannot be merged (mixed generations or time bases, no file), LogFormatError or
  // std::system_error.
  Merger(std::vector<std::string> files, MergeOptions options);
  ~Merger();

  const HistogramLayout& layout() const;
  // Whether the logs hold Unix-epoch times.
  bool epoch_times() const { return epoch_; }
  // Whether any record of direction d exists in the input.
  bool HasDirection(Direction d) const { return has_direction_[DirectionIndex(d)]; }
  // Whether the input holds any record at all.
  bool Empty() const;

  // Streams every quantum in time order. May be called once (this or RunBatches).
  void Run(const std::function<void(const MergedQuantum&)>& sink);
  // The same quanta in the same order, in batches of consecutive ones (at most kBatchQuanta; the
  // spans are valid during the call), so that a caller can work on a batch's quanta in parallel.
  // The threads' sums are added per quantum in parallel too, each in a fixed order.
  static constexpr size_t kBatchQuanta = 64;
  void RunBatches(const std::function<void(std::span<const MergedQuantum>)>& sink);
  // The threads that run the work, one per lane (MergeOptions::threads resolved: by default one
  // per kBytesPerWorker of input, at most one per core): below that, a second thread's wake-ups
  // and waits (on a busy machine, for a core) and its lane's window buffer cost more than its
  // share of the work saves.
  static constexpr uint64_t kBytesPerWorker = uint64_t{16} << 20;
  unsigned threads() const { return workers_; }

  // After Run(): the exact whole-run histogram of direction d (integer counts, before alignment);
  // empty for a direction the input does not have.
  const Histogram& Total(Direction d) const { return totals_[DirectionIndex(d)]; }
  // After Run(): records read, and recoverable damage seen (torn last lines), one message each.
  uint64_t records() const { return records_; }
  // The smaller of two bs columns, 0 being none.
  static double SmallestBs(double a, double b) { return a == 0 || (b != 0 && b < a) ? b : a; }

  // After Run(): whether every record had a non-zero bs column, so that MergedQuantum::bytes
  // holds every I/O's bytes (merged logs of older iotail versions wrote 0 there).
  bool bytes_known() const { return bytes_known_; }
  // After Run(): the latest end time of any record, in the logs' time base: where the data ends
  // (the last quantum may reach beyond it: a run's final, partial interval).
  int64_t data_end_ms() const;
  // Files scanned in full before being read (the others were read on a guess that held).
  size_t scanned_files() const { return scanned_files_; }
  // After Run(): whether the first window's work was split between the threads by time.
  bool split_by_time() const { return split_used_; }
  std::vector<std::string> warnings() const;

 private:
  struct Source;
  struct ThreadReader;
  // The sources of one job segment of one file (one per direction): sources_[begin, end).
  struct SegmentSources {
    size_t begin = 0, end = 0;
    int64_t last_end_ms = 0;  // the segment's latest end time (from the scan or the guess)
    // Set when the segment is guessed (GuessLogSegment), not scanned: the longest gap the scan
    // would allow between two records of a direction.
    std::optional<int64_t> guessed_max_gap_ms;
    // Guessed, and a record of a direction ending at `end` after one ending at `prev_end` is a gap
    // the scan would have rejected.
    bool GapBeyondGuess(int64_t prev_end, int64_t end) const {
      return guessed_max_gap_ms && end > prev_end && end - prev_end > *guessed_max_gap_ms;
    }
  };
  // A window slot's state in a thread's buffer: its buckets hold this window's sums (kTouched),
  // old ones (kStale: zeroed before use) or the zeros of a new mapping (kPristine).
  enum class SlotState : uint8_t { kStale, kTouched, kPristine };
  // A unit of a window's work: one source, or every source of a segment read in one pass.
  struct WindowTask {
    size_t index = 0;  // in sources_, or in segments_ when whole_segment
    bool whole_segment = false;
  };
  void BuildSources(bool guess);
  int64_t WindowQuanta() const;
  // Doubles per window slot: the layout's buckets, then the slot's bytes, then its smallest bs.
  size_t SlotStride() const { return layout_->size() + 2; }
  // The window's quantum k has a slot per direction the input has, not per direction there is (a
  // trim slot for logs without trims was a third of the window's pages, faulted in for nothing):
  // its first slot, and that of direction d (one the input has).
  size_t FirstSlot(int64_t k) const { return static_cast<size_t>(k) * slot_directions_; }
  size_t Slot(int64_t k, int d) const {
    return FirstSlot(k) + static_cast<size_t>(slot_of_direction_[d]);
  }
  // The first quantum a pending record reaches (INT64_MAX when every source is done).
  int64_t NextPendingQuantum() const;
  void RunWindows(const std::function<void(std::span<const MergedQuantum>)>& sink);
  // Before a run starts again (GuessFailed, SplitFailed): the readers as new.
  void ResetReaders();
  std::vector<std::vector<WindowTask>> PlanWindow(int64_t w1) const;
  void RunLanes(const std::vector<std::vector<WindowTask>>& tasks, int64_t w0, int64_t w1,
                bool first_window, const std::vector<LargeBuffer>& buffers,
                std::vector<std::vector<SlotState>>& touched);
  void ProcessWindow(Source& source, int64_t w0, int64_t w1, double* buffer, SlotState* touched,
                     ThreadReader& thread);
  void ProcessSegment(const SegmentSources& segment, int64_t w0, int64_t w1, double* buffer,
                      SlotState* touched, ThreadReader& thread);
  // The first window split by time (merger_split.cc): false when the split does not apply (then
  // the caller runs the lanes); throws SplitFailed or GuessFailed when it fails.
  struct RangeResult;
  bool RunSplitWindow(const std::vector<std::vector<WindowTask>>& tasks, int64_t w0, int64_t w1,
                      double* buffer, SlotState* touched);
  void ProcessRange(size_t segment, int64_t qa, int64_t qb, bool first_range, bool last_range,
                    int64_t w1, double* buffer, SlotState* touched, ThreadReader& thread,
                    RangeResult& out);
  // Places the record the reader holds (the source's pending one) into the window's quanta.
  void Place(Source& s, int64_t w0, int64_t w1, double* buffer, SlotState* touched,
             ThreadReader& thread);

  MergeOptions options_;
  std::vector<std::string> files_;
  std::vector<Source> sources_;
  std::vector<SegmentSources> segments_;
  std::vector<ThreadReader> readers_;  // one per thread
  std::optional<HistogramLayout> layout_;
  bool epoch_ = false;
  std::array<bool, kDirectionCount> has_direction_{};
  // Slot(): the directions the input has, numbered in order (-1: not in the input), and how many.
  std::array<int, kDirectionCount> slot_of_direction_{};
  size_t slot_directions_ = 1;
  std::array<Histogram, kDirectionCount> totals_;
  uint64_t records_ = 0;
  bool bytes_known_ = true;
  size_t scanned_files_ = 0;
  unsigned threads_ = 1;       // lanes: the sources of segment g are lane g % threads_'s
  unsigned workers_ = 1;       // threads running the lanes (at most threads_)
  bool split_failed_ = false;  // the split by time failed once: the run does without it
  bool split_used_ = false;    // the first window was split by time (see split_by_time())
};

}  // namespace iotail::stats
