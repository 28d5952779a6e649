// The merger's work in a window: a source's turn, a whole segment in one pass, and the plan that
// chooses between them (see merger.h).
#include <algorithm>
#include <array>

#include "stats/analysis/aligner.h"
#include "stats/analysis/merger.h"
#include "stats/analysis/merger_internal.h"
#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"
#include "stats/logs/log_scan.h"

namespace iotail::stats {

using namespace merger_internal;

// Places the pending record of `s` (the reader's current one) into the window's quanta [w0, w1),
// adding it to the totals unless it is counted already.
void Merger::Place(Source& s, int64_t w0, int64_t w1, double* buffer, SlotState* touched,
                   ThreadReader& thread) {
  const Aligner aligner(options_.quantum_ms);
  const size_t buckets = layout_->size();
  const size_t stride = SlotStride();
  const int dir = DirectionIndex(s.direction);
  auto cell = [&](int64_t k) {
    const size_t slot = Slot(k - w0, dir);
    double* out = buffer + slot * stride;
    if (touched[slot] != SlotState::kTouched) {
      if (touched[slot] == SlotState::kStale) std::fill(out, out + stride, 0.0);
      touched[slot] = SlotState::kTouched;
    }
    return out;
  };
  const LogRecord& r = thread.reader.record();
  const bool count = !s.counted;
  s.counted = true;
  if (count && r.block_size == 0) thread.unknown_bytes = true;
  const auto bs = static_cast<double>(r.block_size);
  auto note_bs = [&](double* out) { out[buckets + 1] = SmallestBs(out[buckets + 1], bs); };
  const int64_t first = aligner.FirstQuantum(s.start, s.end);
  const int64_t last = aligner.LastQuantum(s.start, s.end);
  s.last_quantum = std::max(s.last_quantum, last);
  if (s.shift == 0 && first == last && first >= w0 && first < w1) {
    // The whole record in one quantum of the window (weight 1, most records): added straight from
    // the reader's sparse view, the same sums as below without the copy. Its zeros add nothing.
    // The I/Os are added as integers: a line counts at most kMaxIntervalCount (below 2^53), so
    // the sum of its counts as doubles was exact, the same number, through a chain of slower adds.
    double* out = cell(first);
    const uint64_t* in = r.counts.data();
    // The next quantum's cell, over this record's buckets, on its way to the cache while this
    // quantum's records are parsed and placed: the same file's next records go there, and it was
    // last touched by another file's pass over the window (long out of the core's caches).
    if (first + 1 < w1 && thread.prefetched[dir] != first + 1 && !r.nonzero.empty()) {
      thread.prefetched[dir] = first + 1;
      const double* next = buffer + Slot(first + 1 - w0, dir) * stride;
      for (uint32_t i = r.nonzero.front(); i <= r.nonzero.back(); i += 8) {
        __builtin_prefetch(next + i, 1, 3);
      }
    }
    uint64_t ios = 0;
    if (count) {
      ++thread.records;
      auto totals = thread.totals[dir].mutable_counts();
      for (const uint32_t i : r.nonzero) {
        thread.AddToTotal(totals[i], in[i], r);
        out[i] += static_cast<double>(in[i]);
        ios += in[i];
      }
    } else {
      for (const uint32_t i : r.nonzero) {
        out[i] += static_cast<double>(in[i]);
        ios += in[i];
      }
    }
    out[buckets] += static_cast<double>(ios) * bs;
    note_bs(out);
    return;
  }
  thread.Take(r, s.shift, s.direction, count);
  uint64_t record_ios = 0;  // exact, as above (coarsening adds buckets: the same total)
  for (const uint32_t i : r.nonzero) record_ios += r.counts[i];
  const auto ios = static_cast<double>(record_ios);
  aligner.Split(s.start, s.end, w0, w1 - 1, [&](int64_t k, double weight) {
    double* out = cell(k);
    const uint32_t* index = thread.nonzero_index.data();
    const double* in = thread.nonzero_count.data();
    const size_t n = thread.nonzero;
    if (weight == 1.0) {
      for (size_t j = 0; j < n; ++j) out[index[j]] += in[j];
    } else {
      for (size_t j = 0; j < n; ++j) out[index[j]] += in[j] * weight;
    }
    out[buckets] += ios * bs * weight;
    note_bs(out);
  });
}

// The source's turn in the window: places its records that touch quanta [w0, w1) into the window
// buffer, from its pending one to the first that reaches beyond the window (which stays pending,
// to be read again in the source's next turn). A source whose pending record lies beyond the
// window does not open its file.
void Merger::ProcessWindow(Source& s, int64_t w0, int64_t w1, double* buffer, SlotState* touched,
                           ThreadReader& thread) {
  const Aligner aligner(options_.quantum_ms);
  if (s.done || aligner.FirstQuantum(s.start, s.end) >= w1) return;
  LogReader& reader = thread.reader;
  reader.Open(
      files_[s.file],
      ReaderOptions(options_, s.begin_offset, s.end_offset, s.first_line, s.direction, kReadBuffer),
      s.position);
  if (!reader.Next() || reader.record().end_ms != s.end) {
    throw LogFormatError(files_[s.file], s.position.line() + 1,
                         "the file changed while it was being read");
  }
  s.fresh = false;
  while (true) {
    Place(s, w0, w1, buffer, touched, thread);
    if (s.last_quantum >= w1) break;  // the rest of it goes into the next window
    // All placed: the next record becomes the pending one.
    s.prev_end = s.end;
    s.position = reader.Position();
    if (!reader.Next()) {
      s.done = true;
      break;
    }
    s.Pend(reader.record().end_ms, reader.record().line);
    s.counted = false;
    if (aligner.FirstQuantum(s.start, s.end) >= w1) break;
  }
  thread.Release();
}

// A whole segment in one pass (PlanWindow chose it: none of its sources has been read past its
// first record, and the segment ends inside the window): every record goes to the source of its
// direction, which places it as its own turn would have, and every source ends done. A guessed
// segment is checked for what the scan would have found; any difference, or any error, is a
// GuessFailed (the scan then reports the error, if it is one).
void Merger::ProcessSegment(const SegmentSources& segment, int64_t w0, int64_t w1, double* buffer,
                            SlotState* touched, ThreadReader& thread) {
  std::array<Source*, kDirectionCount> of{};
  for (size_t i = segment.begin; i < segment.end; ++i) {
    Source& s = sources_[i];
    if (!s.done) of[DirectionIndex(s.direction)] = &s;
  }
  const Source& first = sources_[segment.begin];
  const std::string& path = files_[first.file];
  const bool guessed = segment.guessed_max_gap_ms.has_value();
  LogReader& reader = thread.reader;
  LogReaderOptions options = ReaderOptions(options_, first.begin_offset, first.end_offset,
                                           first.first_line, first.direction, kReadBuffer);
  options.only_direction.reset();
  std::array<bool, kDirectionCount> seen{};
  // The scan and the first records said otherwise: the file is not what it was (or, guessed,
  // not what the guess said).
  auto changed = [&](uint64_t line) {
    if (guessed) throw GuessFailed();
    throw LogFormatError(path, line, "the file changed while it was being read");
  };
  try {
    reader.Open(path, options);
    uint64_t consumed = 0;
    while (reader.Next()) {
      const LogRecord& r = reader.record();
      const int dir = DirectionIndex(r.direction);
      Source* s = of[dir];
      if (s == nullptr || (!seen[dir] && r.end_ms != s->end) || r.segment != 0) changed(r.line);
      if (guessed) {
        // The scan's checks: no gap beyond the period's limit, no line of 1 MiB or more.
        if ((seen[dir] && segment.GapBeyondGuess(s->end, r.end_ms)) ||
            reader.bytes_consumed() - consumed >= kMaxScanLine) {
          throw GuessFailed();
        }
        consumed = reader.bytes_consumed();
      }
      if (seen[dir]) {
        s->prev_end = s->end;
        s->Pend(r.end_ms, r.line);
        s->counted = false;
      }
      seen[dir] = true;
      Place(*s, w0, w1, buffer, touched, thread);
      if (s->last_quantum >= w1) changed(r.line);
    }
    // A torn last line is skipped with a warning, unchecked: the scan may see more in it.
    if (guessed && !reader.warnings().empty()) throw GuessFailed();
  } catch (const GuessFailed&) {
    throw;
  } catch (...) {
    if (guessed) throw GuessFailed();
    throw;
  }
  for (Source* s : of) {
    if (s == nullptr) continue;
    if (!seen[DirectionIndex(s->direction)]) changed(first.first_line);
    s->prev_end = s->end;
    s->done = true;
    s->fresh = false;
  }
  thread.Release();
}

// The window's work items per thread, in a fixed order: a segment whose sources are all fresh (or
// done) and that ends inside the window is one item, read once for all its directions; any other
// source is an item of its own. Segment g's items are always thread g % threads's, so that each
// window cell gets its sources' additions in the same order whichever way they are read, and the
// sums are the same to the last bit.
std::vector<std::vector<Merger::WindowTask>> Merger::PlanWindow(int64_t w1) const {
  const Aligner aligner(options_.quantum_ms);
  std::vector<std::vector<WindowTask>> tasks(threads_);
  for (size_t g = 0; g < segments_.size(); ++g) {
    const SegmentSources& segment = segments_[g];
    std::vector<WindowTask>& mine = tasks[g % threads_];
    size_t live = 0;
    bool fresh = true;
    for (size_t i = segment.begin; i < segment.end; ++i) {
      const Source& s = sources_[i];
      if (s.done) continue;
      ++live;
      fresh = fresh && s.fresh;
    }
    // One direction too: a guessed segment must be read (and checked) whole, in the first window.
    if (live > 0 && fresh && aligner.LastQuantum(segment.last_end_ms, segment.last_end_ms) < w1) {
      mine.push_back({g, true});
      continue;
    }
    for (size_t i = segment.begin; i < segment.end; ++i) {
      if (!sources_[i].done) mine.push_back({i, false});
    }
  }
  return tasks;
}

}  // namespace iotail::stats
