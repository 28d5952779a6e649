#include "stats/analysis/merger.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "stats/analysis/aligner.h"
#include "stats/analysis/merger_internal.h"
#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"
#include "stats/logs/log_scan.h"
#include "stats/util/large_buffer.h"
#include "stats/util/parallel_for.h"

namespace iotail::stats {

using namespace merger_internal;

Merger::Merger(std::vector<std::string> files, MergeOptions options)
    : options_(options), files_(std::move(files)) {
  if (files_.empty()) throw UsageError("no input files");
  if (options_.quantum_ms <= 0) throw UsageError("--time-quantum: must be a positive number of ms");
  // More threads than a few per core only cost window buffers.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  threads_ =
      std::min(options_.threads ? std::min(options_.threads, 4 * cores) : cores, kMaxThreads);
  readers_.resize(threads_);

  // Each file is read twice (the scan, then its sources): a pipe would be drained by the scan
  // and the second open would wait for a writer forever. And the same file named twice (or
  // through another path) would count each of its I/Os twice.
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  uint64_t input_bytes = 0;
  for (size_t i = 0; i < files_.size(); ++i) {
    struct stat st {};
    if (::stat(files_[i].c_str(), &st) != 0) continue;  // the scan reports it, naming the file
    input_bytes += S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
      throw UsageError(fmt::format(
          "'{}' is a pipe or socket: histogram logs are read twice, give a regular file",
          files_[i]));
    }
    if (!S_ISREG(st.st_mode)) continue;
    const auto [it, inserted] = seen.emplace(std::pair{st.st_dev, st.st_ino}, i);
    if (!inserted) {
      throw UsageError(fmt::format("'{}' and '{}' are the same file: its I/Os would count twice",
                                   files_[it->second], files_[i]));
    }
  }

  // Lanes are threads_ (the sums' order), workers the threads that run them, as many: given, or
  // by default one per kBytesPerWorker of input (at most one per core), so a small input runs on
  // the caller's thread alone with one window buffer (a lane more cost its buffer's page faults
  // and a sum per slot even on one thread).
  if (options_.threads == 0) {
    threads_ =
        static_cast<unsigned>(std::clamp<uint64_t>(1 + input_bytes / kBytesPerWorker, 1, threads_));
    readers_.resize(threads_);
  }
  workers_ = threads_;

  // Guess the segments of large files from their ends; if the guess cannot be used, scan.
  try {
    BuildSources(true);
  } catch (...) {
    BuildSources(false);
  }
}

// Makes the sources: from each file's segments (scanned, or with `guess` guessed where
// GuessLogSegment can), and each source's first record. Throws GuessFailed when a guessed segment
// would not be read whole in the first window.
void Merger::BuildSources(bool guess) {
  sources_.clear();
  segments_.clear();
  layout_.reset();
  epoch_ = false;
  has_direction_ = {};
  for (ThreadReader& t : readers_) t.warnings.clear();
  // Scan (or guess) every file's segments and directions, in parallel (each opens and closes its
  // file).
  std::vector<std::vector<LogSegment>> segments(files_.size());
  std::vector<std::optional<int64_t>> guessed_gap(files_.size());
  std::vector<std::optional<SegmentGuess>> guesses(files_.size());
  {
    // The scan reads into the buffer that the thread's reader uses next (a page fault fewer).
    guess = guess && options_.guess_segments;
    ParallelForDynamic(files_.size(), workers_, [&](size_t i, unsigned t) {
      LargeBuffer& buffer = readers_[t].reader.idle_buffer();
      if (guess) {
        if (auto g = GuessLogSegment(files_[i], buffer)) {
          segments[i] = {g->segment};
          guessed_gap[i] = MaxRecordGapMs(g->period_ms);
          guesses[i] = std::move(g);
          return;
        }
      }
      segments[i] = ScanLogSegments(files_[i], buffer);
    });
  }
  scanned_files_ = static_cast<size_t>(std::count_if(guessed_gap.begin(), guessed_gap.end(),
                                                     [](const auto& g) { return !g.has_value(); }));

  std::optional<size_t> epoch_file, relative_file;
  for (size_t f = 0; f < files_.size(); ++f) {
    for (const LogSegment& seg : segments[f]) {
      (IsEpochTime(seg.first_end_ms) ? epoch_file : relative_file) = f;
      const int64_t job_start =
          InferJobStart(seg.first_end_ms, seg.second_end_ms, options_.log_hist_msec);
      segments_.push_back({sources_.size(), sources_.size(), seg.last_end_ms, guessed_gap[f]});
      for (int d = 0; d < kDirectionCount; ++d) {
        if (!(seg.directions & (1u << d))) continue;
        Source source;
        source.file = static_cast<uint32_t>(f);
        source.direction = static_cast<Direction>(d);
        source.prev_end = job_start;
        source.period_ms = options_.log_hist_msec;
        if (!source.period_ms && seg.second_end_ms) {
          source.period_ms = *seg.second_end_ms - seg.first_end_ms;
        }
        source.begin_offset = seg.begin_offset;
        source.end_offset = seg.end_offset;
        source.first_line = seg.first_line;
        sources_.push_back(source);
      }
      segments_.back().end = sources_.size();
    }
    segments[f] = {};
  }
  if (epoch_file && relative_file) {
    throw UsageError(
        fmt::format("cannot merge '{}' (Unix-epoch times) with '{}' (times relative to "
                    "the job start)",
                    files_[*epoch_file], files_[*relative_file]));
  }
  epoch_ = epoch_file.has_value();

  // Read each source's first record (this validates it, detects its layout and gives its
  // interval), then let the file go: the source keeps the position before that record. A guessed
  // segment's first records are guessed too, from its first block, which is read whole in the
  // first window and checked against them there (ProcessSegment): a file less to open and read.
  std::vector<std::optional<HistogramLayout>> layouts(sources_.size());
  std::vector<size_t> to_read;
  for (size_t i = 0; i < sources_.size(); ++i) {
    Source& s = sources_[i];
    const std::optional<SegmentGuess>& guess = guesses[s.file];
    const auto& first = guess ? guess->first[DirectionIndex(s.direction)] : std::nullopt;
    if (!first || !guess->layout) {
      to_read.push_back(i);
      continue;
    }
    s.Pend(first->end_ms, first->line);
    layouts[i] = guess->layout;
  }
  ParallelForDynamic(to_read.size(), workers_, [&](size_t k, unsigned t) {
    const size_t i = to_read[k];
    Source& s = sources_[i];
    ThreadReader& thread = readers_[t];
    thread.reader.Open(files_[s.file],
                       ReaderOptions(options_, s.begin_offset, s.end_offset, s.first_line,
                                     s.direction, kFirstRecordBuffer));
    s.position = thread.reader.Position();
    if (thread.reader.Next()) {
      s.Pend(thread.reader.record().end_ms, thread.reader.record().line);
      layouts[i] = thread.reader.layout();
    } else {
      s.done = true;
    }
    thread.Release();
  });
  std::optional<size_t> first;
  int coarseness = 0;
  int groups = kFio3Groups;
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (sources_[i].done) continue;
    const HistogramLayout& l = *layouts[i];
    if (first && l.generation() != layouts[*first]->generation()) {
      throw UsageError(
          fmt::format("cannot merge '{}' ({}) with '{}' ({}): fio 2 logs count "
                      "microseconds, fio 3 logs nanoseconds",
                      files_[sources_[*first].file], layouts[*first]->Describe(),
                      files_[sources_[i].file], l.Describe()));
    }
    if (!first) first = i;
    coarseness = std::max(coarseness, l.coarseness());
    groups = std::max(groups, l.groups());
  }
  if (!first) {
    if (std::any_of(guessed_gap.begin(), guessed_gap.end(), [](auto& g) { return g.has_value(); }))
      throw GuessFailed();  // a large file without records: let the scan say why
    return;                 // no records at all
  }
  layout_ = layouts[*first]->generation() == FioGeneration::kFio3
                ? HistogramLayout::Fio3(coarseness, groups)
                : HistogramLayout::Fio2(coarseness);
  for (size_t i = 0; i < sources_.size(); ++i) {
    Source& s = sources_[i];
    if (s.done) continue;
    has_direction_[DirectionIndex(s.direction)] = true;
    s.shift = coarseness - layouts[i]->coarseness();
  }
  // Only the directions the input has: the others stay empty (each is pages to fault in).
  slot_directions_ = 0;
  for (int d = 0; d < kDirectionCount; ++d) {
    slot_of_direction_[d] = has_direction_[d] ? static_cast<int>(slot_directions_++) : -1;
    if (has_direction_[d]) totals_[d].Resize(layout_->size());
  }
  // Guessed segments are read whole in the first window, before anything is emitted, so that a
  // wrong guess can still be taken back (RunBatches then scans and starts again).
  const Aligner aligner(options_.quantum_ms);
  const int64_t w0 = NextPendingQuantum();
  for (const SegmentSources& segment : segments_) {
    if (segment.guessed_max_gap_ms &&
        aligner.LastQuantum(segment.last_end_ms, segment.last_end_ms) >= w0 + WindowQuanta()) {
      throw GuessFailed();
    }
  }
}

int64_t Merger::NextPendingQuantum() const {
  const Aligner aligner(options_.quantum_ms);
  int64_t next = std::numeric_limits<int64_t>::max();
  for (const Source& s : sources_) {
    if (!s.done) next = std::min(next, aligner.FirstQuantum(s.start, s.end));
  }
  return next;
}

int64_t Merger::WindowQuanta() const {
  const size_t per_quantum = slot_directions_ * SlotStride() * sizeof(double) * threads_;
  return static_cast<int64_t>(
      std::clamp<size_t>(options_.memory_budget / 2 / per_quantum, 4, size_t{1} << 16));
}

Merger::~Merger() = default;

const HistogramLayout& Merger::layout() const {
  if (!layout_) throw UsageError("the input holds no histogram records");
  return *layout_;
}

bool Merger::Empty() const { return !layout_.has_value(); }

int64_t Merger::data_end_ms() const {
  int64_t end = std::numeric_limits<int64_t>::min();
  for (const Source& s : sources_) end = std::max(end, s.latest_end);
  return end;
}

std::vector<std::string> Merger::warnings() const {
  std::set<std::string> unique;
  for (const auto& t : readers_) unique.insert(t.warnings.begin(), t.warnings.end());
  // Gaps, per file: how many records follow one, and the longest.
  std::map<uint32_t, const Source*> longest;
  std::map<uint32_t, uint64_t> gaps;
  for (const Source& s : sources_) {
    if (s.gaps == 0) continue;
    gaps[s.file] += s.gaps;
    const Source*& l = longest[s.file];
    if (l == nullptr || s.longest_gap_ms > l->longest_gap_ms) l = &s;
  }
  for (const auto& [file, s] : longest) {
    unique.insert(fmt::format(
        "'{}': {} record(s) after a gap of more than {} log periods without one (the longest "
        "{:.3f} s, before line {}): each is taken to cover its last period ({} ms) only, and the "
        "quanta of a gap are not written",
        files_[file], gaps[file], kGapPeriods, static_cast<double>(s->longest_gap_ms) / 1000.0,
        s->longest_gap_line, *s->period_ms));
  }
  return {unique.begin(), unique.end()};
}

void Merger::Run(const std::function<void(const MergedQuantum&)>& sink) {
  RunBatches([&](std::span<const MergedQuantum> batch) {
    for (const MergedQuantum& q : batch) sink(q);
  });
}

void Merger::RunBatches(const std::function<void(std::span<const MergedQuantum>)>& sink) {
  while (true) {
    try {
      RunWindows(sink);
      return;
    } catch (const GuessFailed&) {
      // Thrown in the first window only, before anything was emitted: scan, and start again.
      ResetReaders();
      BuildSources(false);
    } catch (const SplitFailed&) {
      // The same, in the first window: start again without the split (the sources are as they
      // were: the split changes them only once it has succeeded).
      ResetReaders();
      split_failed_ = true;
    }
  }
}

void Merger::ResetReaders() {
  for (ThreadReader& t : readers_) {
    t.reader.Close();
    t.records = 0;
    t.totals = {};            // a thread that takes no work in the next run must add nothing
    t.unknown_bytes = false;  // (warnings stay: a retry finds the same, and they are unique)
  }
}

// The window's tasks on their lanes. An error stops the run with the error that one lane, reading
// the tasks in order, would have met first (the lowest task in sources' order: a file's earlier
// segment, an earlier file), whichever lane meets its error first: the lanes skip the tasks after
// the earliest error known, and finish those before it.
void Merger::RunLanes(const std::vector<std::vector<WindowTask>>& tasks, int64_t w0, int64_t w1,
                      bool first_window, const std::vector<LargeBuffer>& buffers,
                      std::vector<std::vector<SlotState>>& touched) {
  std::atomic<size_t> earliest{std::numeric_limits<size_t>::max()};
  std::vector<std::pair<size_t, std::exception_ptr>> errors(threads_);
  ParallelFor(threads_, workers_, [&](size_t t, unsigned) {
    // Each thread its own, so that their pages are faulted in in parallel.
    if (first_window) readers_[t].Prepare(layout_->size(), has_direction_);
    SlotState* touched_of = touched[t].data();
    for (const WindowTask& task : tasks[t]) {
      // Where the task stands in sources' order (segments hold their sources in order).
      const size_t order = task.whole_segment ? segments_[task.index].begin : task.index;
      if (order > earliest.load(std::memory_order_relaxed)) break;
      try {
        if (task.whole_segment) {
          ProcessSegment(segments_[task.index], w0, w1, buffers[t].get(), touched_of, readers_[t]);
        } else {
          ProcessWindow(sources_[task.index], w0, w1, buffers[t].get(), touched_of, readers_[t]);
        }
      } catch (...) {
        errors[t] = {order, std::current_exception()};
        size_t known = earliest.load(std::memory_order_relaxed);
        while (order < known && !earliest.compare_exchange_weak(known, order)) {
        }
        break;
      }
    }
  });
  const std::pair<size_t, std::exception_ptr>* first = nullptr;
  for (const auto& error : errors) {
    if (error.second && (first == nullptr || error.first < first->first)) first = &error;
  }
  if (first != nullptr) std::rethrow_exception(first->second);
}

// RunBatches, on the sources as they are; a wrong guess is a GuessFailed from the first window.
void Merger::RunWindows(const std::function<void(std::span<const MergedQuantum>)>& sink) {
  if (!layout_) return;
  const Aligner aligner(options_.quantum_ms);
  const size_t buckets = layout_->size();
  const size_t stride = SlotStride();  // a slot: its buckets, then its bytes
  const int64_t window = WindowQuanta();
  const size_t slots = static_cast<size_t>(window) * slot_directions_;
  // Fresh anonymous memory, zero: a slot is zeroed when first touched in a window after an earlier
  // window used it, and only touched slots are read, so the pages of slots no window uses are never
  // faulted in and the first window writes no zeros.
  std::vector<LargeBuffer> buffers;
  for (unsigned t = 0; t < threads_; ++t) buffers.emplace_back(slots * stride);
  std::vector<std::vector<SlotState>> touched(threads_,
                                              std::vector<SlotState>(slots, SlotState::kPristine));
  // One empty row for the directions that the input does not have.
  const std::vector<double> empty(buckets, 0.0);

  int64_t w0 = NextPendingQuantum();
  int64_t emitted = w0;      // next quantum to emit
  bool first_window = true;  // the threads' readers are prepared in the first window
  // A batch of consecutive quanta: their slots in the window, summed over the threads' buffers
  // in parallel, in place: the other threads' slots are added, in thread order, to that of the
  // first thread that touched the slot (the same sums as into zeros, on every run). No buffer of
  // its own: a separate one for the sums cost as many page faults as the window's slots.
  std::vector<MergedQuantum> batch;
  std::vector<int64_t> batch_slot;  // the quantum's index in the window
  batch.reserve(kBatchQuanta);
  batch_slot.reserve(kBatchQuanta);
  auto flush = [&]() {
    if (batch.empty()) return;
    ParallelForDynamic(batch.size(), workers_, [&](size_t b, unsigned) {
      for (int d = 0; d < kDirectionCount; ++d) {
        batch[b].counts[d] = empty;
        batch[b].bytes[d] = 0;
        batch[b].smallest_bs[d] = 0;
        if (!has_direction_[d]) continue;
        const size_t slot = Slot(batch_slot[b], d);
        double* out = nullptr;
        for (unsigned t = 0; t < threads_; ++t) {
          if (touched[t][slot] != SlotState::kTouched) continue;
          double* in = buffers[t].get() + slot * stride;
          if (out == nullptr) {
            out = in;
            continue;
          }
          for (size_t i = 0; i <= buckets; ++i) out[i] += in[i];  // the counts and the bytes
          out[buckets + 1] = SmallestBs(out[buckets + 1], in[buckets + 1]);
        }
        if (out == nullptr) continue;  // no record of this direction covers the quantum
        batch[b].counts[d] = std::span<const double>(out, buckets);
        batch[b].bytes[d] = out[buckets];
        batch[b].smallest_bs[d] = out[buckets + 1];
      }
    });
    sink(batch);
    batch.clear();
    batch_slot.clear();
  };
  // Whether a record covers the window's quantum k (a thread touched one of its slots); in a gap
  // none does (see RecordStart), and that quantum is not emitted.
  auto covered = [&](int64_t k) {
    for (unsigned t = 0; t < threads_; ++t) {
      for (size_t j = 0; j < slot_directions_; ++j) {
        if (touched[t][FirstSlot(k) + j] == SlotState::kTouched) {
          return true;
        }
      }
    }
    return false;
  };
  auto emit_through = [&](int64_t last, int64_t w_begin) {
    for (; emitted <= last; ++emitted) {
      if (!covered(emitted - w_begin)) continue;
      MergedQuantum quantum;
      quantum.start_ms = aligner.QuantumStart(emitted);
      quantum.end_ms = aligner.QuantumStart(emitted + 1);
      batch.push_back(quantum);
      batch_slot.push_back(emitted - w_begin);
      if (batch.size() == kBatchQuanta) flush();
    }
    flush();  // before the window's buffers are reused
  };

  while (true) {
    bool any = false;
    for (const Source& s : sources_) any = any || !s.done;
    if (!any) break;
    const int64_t w1 = w0 + window;
    for (auto& t : touched) {
      for (SlotState& state : t) {
        if (state == SlotState::kTouched) state = SlotState::kStale;
      }
    }
    const std::vector<std::vector<WindowTask>> tasks = PlanWindow(w1);
    // The first window split by time when it can (merger_split.cc), else by lanes.
    const bool split =
        first_window && RunSplitWindow(tasks, w0, w1, buffers[0].get(), touched[0].data());
    if (!split) RunLanes(tasks, w0, w1, first_window, buffers, touched);
    first_window = false;
    int64_t last = kNoQuantum;
    for (const Source& s : sources_) last = std::max(last, s.last_quantum);
    bool remaining = false;
    for (const Source& s : sources_) remaining = remaining || !s.done;
    emit_through(remaining ? w1 - 1 : std::min(last, w1 - 1), w0);
    if (!remaining) break;
    // Skip the windows in which no source has anything: a gap, whose quanta are not emitted.
    w0 = std::max(w1, NextPendingQuantum());
    emitted = w0;
  }
  for (const ThreadReader& t : readers_) {
    records_ += t.records;
    bytes_known_ = bytes_known_ && !t.unknown_bytes;
    for (int d = 0; d < kDirectionCount; ++d) {
      auto into = totals_[d].mutable_counts();
      const auto from = t.totals[d].counts();
      for (size_t i = 0; i < from.size(); ++i) {
        if (__builtin_add_overflow(into[i], from[i], &into[i])) {
          throw UsageError(fmt::format(
              "the counts of one bucket over the {} input(s) add up past 2^64 - 1: more I/Os than "
              "any devices complete; a log is damaged",
              files_.size()));
        }
      }
    }
  }
}

}  // namespace iotail::stats
