// The first window's work split by time (see merger.h): the window's quanta are cut into ranges,
// and whichever thread is free takes the next range and reads, from every segment, the records
// that touch its quanta. Each window cell is written by one range only, so the threads share one
// window buffer, no sums are added across threads, a slow core holds up no fixed half of the work,
// and every cell gets its additions in the order one thread would make them (segment by segment,
// each in file order): the sums are those of a single thread, to the last bit.
//
// Who does what. A record is counted (totals, records, the checks, its gap) by the range that owns
// it: the one whose share of the segment's bytes holds the start of its line. Its interval is
// placed by every range whose quanta it touches. The shares are cut at the times where the ranges'
// quanta start, by interpolation between the segment's first and last times: any cut is right, a
// close one reads less.
//
// Where a range reads. The times of a segment never go back, across directions (the reader checks
// that between any two records it reads; the ranges' reads overlap, so every two neighbouring
// records are read together by some range). So a range starts a little before its share, at a
// point after which, for each direction, the first record ends before the range's first quantum:
// that record gives the next one's interval (RecordStart) and no record before it touches the
// range (the start is found by a short trial read, moved back until it holds; from the segment's
// first byte it always holds). It stops after its share once every direction has had a record
// beyond its quanta, or a record ends kGapPeriods log periods beyond them (no interval is longer).
//
// Anything unusual (an error, a warning, a guess that does not hold, a start that would have to
// move back far) is a SplitFailed, or a GuessFailed for a guessed input; the run then starts again
// without the split (or after a scan), before anything was emitted, and reports what it finds.
#include <algorithm>
#include <array>
#include <limits>

#include "stats/analysis/aligner.h"
#include "stats/analysis/merger.h"
#include "stats/analysis/merger_internal.h"
#include "stats/logs/log_reader.h"
#include "stats/logs/log_scan.h"
#include "stats/util/parallel_for.h"

namespace iotail::stats {

using namespace merger_internal;

namespace {

// Ranges per thread: enough that a thread on a slower core takes fewer of them.
constexpr size_t kRangesPerWorker = 4;

// The first trial start before a share, and how far back a start may move (at least; or eight
// shares) before the split is given up.
constexpr uint64_t kFirstPreroll = uint64_t{16} << 10;
constexpr uint64_t kMaxPreroll = uint64_t{1} << 20;
// The trial read's buffer: it reads a few lines.
constexpr size_t kTrialBuffer = size_t{64} << 10;

}  // namespace

// What one range did with one segment: its copies of the segment's sources (per direction), as it
// left them, and how many records of each it owned.
struct Merger::RangeResult {
  std::array<Source, kDirectionCount> sources;
  std::array<uint64_t, kDirectionCount> owned{};
  // The sources' gap lines are byte offsets: the range did not read from the segment's start, so
  // it did not know its line numbers.
  bool lines_are_offsets = false;
};

bool Merger::RunSplitWindow(const std::vector<std::vector<WindowTask>>& tasks, int64_t w0,
                            int64_t w1, double* buffer, SlotState* touched) {
  if (!options_.split_by_time || split_failed_ || workers_ < 2 || options_.undo_client_sums) {
    return false;
  }
  std::vector<size_t> segments;
  for (const auto& lane : tasks) {
    for (const WindowTask& task : lane) {
      if (!task.whole_segment) return false;
      segments.push_back(task.index);
    }
  }
  std::sort(segments.begin(), segments.end());
  const Aligner aligner(options_.quantum_ms);
  int64_t last = w0;
  uint64_t bytes = 0;
  for (const size_t g : segments) {
    last = std::max(last, aligner.LastQuantum(segments_[g].last_end_ms, segments_[g].last_end_ms));
    const Source& head = sources_[segments_[g].begin];
    bytes += head.end_offset - head.begin_offset;
  }
  const int64_t span = std::min(last, w1 - 1) - w0 + 1;
  // At least MergeOptions::split_min_piece_bytes of each segment per range, on average: each piece
  // costs tens of microseconds (a hundred files of 0.8 MB took 59 ms split eight ways, 34 ms in
  // lanes).
  const uint64_t most =
      bytes / (std::max<uint64_t>(options_.split_min_piece_bytes, 1) * segments.size());
  const auto ranges = static_cast<size_t>(
      std::min<uint64_t>({kRangesPerWorker * workers_, static_cast<uint64_t>(span), most}));
  if (ranges < 2) return false;
  // Range r: quanta [q[r], q[r + 1]); the last takes the rest of the window.
  std::vector<int64_t> q(ranges + 1);
  for (size_t r = 0; r < ranges; ++r)
    q[r] = w0 + span * static_cast<int64_t>(r) / static_cast<int64_t>(ranges);
  q[ranges] = w1;

  const size_t stride = SlotStride();
  std::vector<RangeResult> results(ranges * segments.size());
  std::vector<char> prepared(workers_, 0);
  const bool guessed = std::any_of(segments.begin(), segments.end(), [&](size_t g) {
    return segments_[g].guessed_max_gap_ms.has_value();
  });
  try {
    ParallelForDynamic(ranges, workers_, [&](size_t r, unsigned t) {
      ThreadReader& thread = readers_[t];
      if (!prepared[t]) {
        thread.Prepare(layout_->size(), has_direction_);
        prepared[t] = 1;
      }
      const size_t slot = FirstSlot(q[r] - w0);
      for (size_t k = 0; k < segments.size(); ++k) {
        ProcessRange(segments[k], q[r], q[r + 1], r == 0, r + 1 == ranges, w1,
                     buffer + slot * stride, touched + slot, thread,
                     results[r * segments.size() + k]);
      }
    });
    // Every source has records (its first was read, or guessed: its owner checked it).
    for (size_t k = 0; k < segments.size(); ++k) {
      const SegmentSources& segment = segments_[segments[k]];
      for (size_t i = segment.begin; i < segment.end; ++i) {
        const int d = DirectionIndex(sources_[i].direction);
        uint64_t owned = 0;
        for (size_t r = 0; r < ranges; ++r) owned += results[r * segments.size() + k].owned[d];
        if (owned == 0 && !sources_[i].done) throw SplitFailed();
      }
    }
  } catch (...) {
    if (guessed) throw GuessFailed();
    throw SplitFailed();
  }

  // The sources as one reader would have left them: done, their gaps noted in file order.
  for (size_t k = 0; k < segments.size(); ++k) {
    const SegmentSources& segment = segments_[segments[k]];
    for (size_t i = segment.begin; i < segment.end; ++i) {
      Source& s = sources_[i];
      const int d = DirectionIndex(s.direction);
      bool offset_line = false;
      for (size_t r = 0; r < ranges; ++r) {
        const RangeResult& result = results[r * segments.size() + k];
        const Source& part = result.sources[d];
        s.last_quantum = std::max(s.last_quantum, part.last_quantum);
        s.gaps += part.gaps;
        if (part.gaps > 0 && part.longest_gap_ms > s.longest_gap_ms) {
          s.longest_gap_ms = part.longest_gap_ms;
          s.longest_gap_line = part.longest_gap_line;
          offset_line = result.lines_are_offsets;
        }
      }
      if (offset_line) {
        s.longest_gap_line =
            s.first_line + CountNewlines(files_[s.file], s.begin_offset, s.longest_gap_line);
      }
      s.prev_end = s.end;
      s.done = true;
      s.fresh = false;
    }
  }
  split_used_ = true;
  return true;
}

// Range [qa, qb) of the window (ending at w1) in segment g: places the records that touch it (the
// window buffer and its slot states are given from quantum qa on), counts those it owns into
// `out` and the thread's totals. Throws SplitFailed (or anything) when the split cannot be used.
void Merger::ProcessRange(size_t g, int64_t qa, int64_t qb, bool first_range, bool last_range,
                          int64_t w1, double* buffer, SlotState* touched, ThreadReader& thread,
                          RangeResult& out) {
  const SegmentSources& segment = segments_[g];
  const Source& head = sources_[segment.begin];
  const std::string& path = files_[head.file];
  const uint64_t b = head.begin_offset;
  const uint64_t e = head.end_offset;
  const Aligner aligner(options_.quantum_ms);
  std::array<Source*, kDirectionCount> of{};
  int64_t first_end = std::numeric_limits<int64_t>::max();
  int64_t first_touched = std::numeric_limits<int64_t>::max();
  // No record's interval is longer (-1: some direction's period is not known).
  int64_t reach = 0;
  size_t live = 0;
  for (size_t i = segment.begin; i < segment.end; ++i) {
    const int d = DirectionIndex(sources_[i].direction);
    Source& s = out.sources[d];
    s = sources_[i];
    s.gaps = 0;
    s.longest_gap_ms = 0;
    s.longest_gap_line = 0;
    s.last_quantum = kNoQuantum;
    if (s.done) continue;
    of[d] = &s;
    ++live;
    first_end = std::min(first_end, s.end);
    first_touched = std::min(first_touched, aligner.FirstQuantum(s.start, s.end));
    const bool period = s.period_ms && *s.period_ms > 0;
    reach = reach >= 0 && period ? std::max(reach, kGapPeriods * *s.period_ms) : -1;
  }
  // The byte at which the range starting at quantum q owns records.
  auto cut = [&](int64_t quantum) -> uint64_t {
    const int64_t t = aligner.QuantumStart(quantum);
    if (segment.last_end_ms <= first_end || t <= first_end) return b;
    const double f = std::min(1.0, static_cast<double>(t - first_end) /
                                       static_cast<double>(segment.last_end_ms - first_end));
    return b + static_cast<uint64_t>(f * static_cast<double>(e - b));
  };
  const uint64_t lo = first_range ? b : cut(qa);
  const uint64_t hi = last_range ? e : cut(qb);
  const int64_t t_qa = aligner.QuantumStart(qa);
  const int64_t t_qb = aligner.QuantumStart(qb);
  // Nothing to own, nothing that touches the range (no record ends after its start; the first
  // records start beyond it): an owner fails on a record after the segment's last time.
  if (lo == hi && (segment.last_end_ms <= t_qa || first_touched >= qb)) return;

  LogReader& reader = thread.reader;
  LogReaderOptions options =
      ReaderOptions(options_, b, e, head.first_line, head.direction, kReadBuffer);
  options.only_direction.reset();
  // Whether, from `from`, each direction's first record before `lo` ends by the range's start.
  auto anchored = [&](uint64_t from) {
    LogReaderOptions trial = options;
    trial.begin_offset = from;
    trial.begin_inside_line = true;
    trial.buffer_size = kTrialBuffer;
    trial.read_hint_end = lo;
    reader.Open(path, trial);
    std::array<bool, kDirectionCount> seen{}, ok{};
    while (reader.Next()) {
      const LogRecord& r = reader.record();
      if (r.offset >= lo) break;
      const int d = DirectionIndex(r.direction);
      if (!seen[d]) ok[d] = r.end_ms <= t_qa;
      seen[d] = true;
    }
    for (int d = 0; d < kDirectionCount; ++d) {
      if (of[d] != nullptr && !ok[d]) return false;
    }
    return true;
  };
  uint64_t from = lo;
  if (lo > b) {
    const uint64_t most = std::max(kMaxPreroll, 8 * (hi - lo));
    for (uint64_t preroll = kFirstPreroll;; preroll *= 4) {
      from = lo - std::min(preroll, lo - b);
      if (from == b || anchored(from)) break;
      if (preroll > most) throw SplitFailed();
    }
  }
  options.begin_offset = from;
  options.begin_inside_line = from > b;
  if (!last_range) options.read_hint_end = hi;
  if (from > b) options.first_line = 1;  // not known: no line number leaves the range
  out.lines_are_offsets = from > b;
  reader.Open(path, options);

  const bool guessed = segment.guessed_max_gap_ms.has_value();
  std::array<bool, kDirectionCount> seen{}, beyond{};
  size_t beyond_count = 0;
  uint64_t consumed = 0;
  while (reader.Next()) {
    const LogRecord& r = reader.record();
    const int d = DirectionIndex(r.direction);
    Source* s = of[d];
    if (s == nullptr || r.segment != 0) throw SplitFailed();
    if (!last_range && r.offset >= hi &&
        (beyond_count == live || (reach >= 0 && r.end_ms - reach >= t_qb))) {
      break;  // neither this record nor any later touches the range
    }
    const bool owned = r.offset >= lo && (last_range || r.offset < hi);
    if (owned && (r.end_ms > segment.last_end_ms ||
                  (guessed && reader.bytes_consumed() - consumed >= kMaxScanLine))) {
      throw SplitFailed();  // what the scan or the guess did not see
    }
    consumed = reader.bytes_consumed();
    if (!seen[d]) {
      seen[d] = true;
      if (from > b) {
        // The anchor: it ends before the range (the trial said so), and gives the next interval.
        if (owned || r.end_ms > t_qa) throw SplitFailed();
        s->end = r.end_ms;
        continue;
      }
      if (r.end_ms != s->end) throw SplitFailed();  // the segment's first (pending already)
    } else {
      if (owned && segment.GapBeyondGuess(s->end, r.end_ms)) throw SplitFailed();
      s->prev_end = s->end;
      s->Pend(r.end_ms, out.lines_are_offsets ? r.offset : r.line, owned);
    }
    s->counted = !owned;  // Place counts it only then
    Place(*s, qa, qb, buffer, touched, thread);
    if (owned) {
      ++out.owned[d];
      if (aligner.LastQuantum(s->start, s->end) >= w1) throw SplitFailed();
    }
    if (!beyond[d] && aligner.FirstQuantum(s->start, s->end) >= qb) {
      beyond[d] = true;
      ++beyond_count;
    }
  }
  // A torn last line: fine from the segment's start (the lines are right), else let a reader say.
  if (!reader.warnings().empty() && (guessed || from > b)) throw SplitFailed();
  thread.Release();
}

}  // namespace iotail::stats
