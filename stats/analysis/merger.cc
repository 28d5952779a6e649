#include "stats/analysis/merger.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "stats/analysis/aligner.h"
#include "stats/core/errors.h"
#include "stats/logs/log_reader.h"
#include "stats/logs/log_scan.h"
#include "stats/util/parallel_for.h"

namespace iotail::stats {
namespace {

constexpr int64_t kNoQuantum = std::numeric_limits<int64_t>::min();
// A thread's read buffer while merging; and while reading first records (one record each, so
// less: the buffer grows if a line is longer).
constexpr size_t kReadBuffer = size_t{256} << 10;
constexpr size_t kFirstRecordBuffer = size_t{64} << 10;
// Each thread holds at most one file open: this bounds the open files, whatever the input count.
constexpr unsigned kMaxThreads = 256;

}  // namespace

// One (file, job segment, direction) run of records. Between its turns it holds no file, buffer
// or record: where its next (pending) record begins, and that record's interval.
struct Merger::Source {
  uint32_t file = 0;  // index in files_
  Direction direction = Direction::kRead;
  int shift = 0;         // coarseness of the merge minus the file's
  bool done = false;     // no pending record: all placed
  bool counted = false;  // the pending record is in the totals already (it is read again)
  int64_t prev_end =
      0;              // end of the record before the pending one (the job start before the first)
  int64_t start = 0;  // the pending record's interval (start, end]: read, not yet all placed
  int64_t end = 0;
  int64_t last_quantum = kNoQuantum;
  // The job segment's bytes in the file, and where the pending record begins.
  uint64_t begin_offset = 0;
  uint64_t end_offset = 0;
  uint64_t first_line = 1;
  LogReaderPosition position;
};

// What a thread reads sources with, one source at a time: its reader (and read buffer), the
// current record in the merge's layout, and its share of the totals.
struct Merger::ThreadReader {
  LogReader reader;
  std::vector<double> counts;  // dense, in the merge's layout (only for a coarser merge)
  // The current record's non-zero buckets (index, count): most buckets of a line are empty, and
  // adding a zero to a window cell changes nothing, so only these are added.
  // Both have layout().size() entries; the first `nonzero` are valid.
  std::vector<uint32_t> nonzero_index;
  std::vector<double> nonzero_count;
  size_t nonzero = 0;
  std::array<Histogram, kDirectionCount> totals;  // integer sums: any order gives the same
  uint64_t records = 0;
  std::vector<std::string> warnings;

  // Makes r the current record, in the merge's layout; adds it to the totals when `count` (a
  // record read again, after a turn that ended on it, is counted already).
  void Take(const LogRecord& r, int shift, Direction direction, bool count) {
    auto totals_of = totals[DirectionIndex(direction)].mutable_counts();
    uint32_t* index = nonzero_index.data();
    double* value = nonzero_count.data();
    if (count) ++records;
    if (shift == 0) {
      // The reader's sparse view: only the buckets that may be non-zero.
      const uint64_t* in = r.counts.data();
      size_t n = 0;
      for (const uint32_t i : r.nonzero) {
        if (count) totals_of[i] += in[i];
        index[n] = i;
        value[n] = static_cast<double>(in[i]);
        n += in[i] != 0;
      }
      nonzero = n;
      return;
    }
    std::fill(counts.begin(), counts.end(), 0.0);
    for (size_t i = 0; i < r.counts.size(); ++i) {
      counts[i >> shift] += static_cast<double>(r.counts[i]);
      if (count) totals_of[i >> shift] += r.counts[i];
    }
    size_t n = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      index[n] = static_cast<uint32_t>(i);
      value[n] = counts[i];
      n += counts[i] != 0;
    }
    nonzero = n;
  }

  // Ends a source's turn: keeps the reader's warnings, lets the file go.
  void Release() {
    warnings.insert(warnings.end(), reader.warnings().begin(), reader.warnings().end());
    reader.Close();
  }
};

namespace {

LogReaderOptions ReaderOptions(const MergeOptions& merge, uint64_t begin_offset,
                               uint64_t end_offset, uint64_t first_line, Direction direction,
                               size_t buffer_size) {
  LogReaderOptions options;
  options.undo_client_sums = merge.undo_client_sums;
  options.begin_offset = begin_offset;
  options.end_offset = end_offset;
  options.first_line = first_line;
  options.only_direction = direction;
  options.buffer_size = buffer_size;
  return options;
}

}  // namespace

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
  for (size_t i = 0; i < files_.size(); ++i) {
    struct stat st {};
    if (::stat(files_[i].c_str(), &st) != 0) continue;  // the scan reports it, naming the file
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

  // Scan every file for its segments and directions, in parallel (each scan opens and closes its
  // file).
  std::vector<std::vector<LogSegment>> segments(files_.size());
  {
    std::vector<std::vector<char>> scan_buffers(threads_);
    ParallelFor(files_.size(), threads_, [&](size_t i, unsigned t) {
      segments[i] = ScanLogSegments(files_[i], scan_buffers[t]);
    });
  }

  std::optional<size_t> epoch_file, relative_file;
  for (size_t f = 0; f < files_.size(); ++f) {
    for (const LogSegment& seg : segments[f]) {
      (IsEpochTime(seg.first_end_ms) ? epoch_file : relative_file) = f;
      const int64_t job_start =
          InferJobStart(seg.first_end_ms, seg.second_end_ms, options_.log_hist_msec);
      for (int d = 0; d < kDirectionCount; ++d) {
        if (!(seg.directions & (1u << d))) continue;
        Source source;
        source.file = static_cast<uint32_t>(f);
        source.direction = static_cast<Direction>(d);
        source.prev_end = job_start;
        source.begin_offset = seg.begin_offset;
        source.end_offset = seg.end_offset;
        source.first_line = seg.first_line;
        sources_.push_back(source);
      }
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
  // interval), then let the file go: the source keeps the position before that record.
  std::vector<std::optional<HistogramLayout>> layouts(sources_.size());
  ParallelFor(sources_.size(), threads_, [&](size_t i, unsigned t) {
    Source& s = sources_[i];
    ThreadReader& thread = readers_[t];
    thread.reader.Open(files_[s.file],
                       ReaderOptions(options_, s.begin_offset, s.end_offset, s.first_line,
                                     s.direction, kFirstRecordBuffer));
    s.position = thread.reader.Position();
    if (thread.reader.Next()) {
      s.end = thread.reader.record().end_ms;
      s.start = std::min(s.prev_end, s.end);
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
  if (!first) return;  // no records at all
  layout_ = layouts[*first]->generation() == FioGeneration::kFio3
                ? HistogramLayout::Fio3(coarseness, groups)
                : HistogramLayout::Fio2(coarseness);
  for (auto& t : totals_) t.Resize(layout_->size());
  for (size_t i = 0; i < sources_.size(); ++i) {
    Source& s = sources_[i];
    if (s.done) continue;
    has_direction_[DirectionIndex(s.direction)] = true;
    s.shift = coarseness - layouts[i]->coarseness();
  }
}

Merger::~Merger() = default;

const HistogramLayout& Merger::layout() const {
  if (!layout_) throw UsageError("the input holds no histogram records");
  return *layout_;
}

bool Merger::Empty() const { return !layout_.has_value(); }

std::vector<std::string> Merger::warnings() const {
  std::set<std::string> unique;
  for (const auto& t : readers_) unique.insert(t.warnings.begin(), t.warnings.end());
  return {unique.begin(), unique.end()};
}

// The source's turn in the window: places its records that touch quanta [w0, w1) into the window
// buffer, from its pending one to the first that reaches beyond the window (which stays pending,
// to be read again in the source's next turn). A source whose pending record lies beyond the
// window does not open its file.
void Merger::ProcessWindow(Source& s, int64_t w0, int64_t w1, double* buffer, bool* touched,
                           ThreadReader& thread) {
  const Aligner aligner(options_.quantum_ms);
  if (s.done || aligner.FirstQuantum(s.start, s.end) >= w1) return;
  const size_t buckets = layout_->size();
  const int dir = DirectionIndex(s.direction);
  LogReader& reader = thread.reader;
  reader.Open(
      files_[s.file],
      ReaderOptions(options_, s.begin_offset, s.end_offset, s.first_line, s.direction, kReadBuffer),
      s.position);
  if (!reader.Next() || reader.record().end_ms != s.end) {
    throw LogFormatError(files_[s.file], s.position.line() + 1,
                         "the file changed while it was being read");
  }
  while (true) {
    thread.Take(reader.record(), s.shift, s.direction, !s.counted);
    s.counted = true;
    aligner.Split(s.start, s.end, w0, w1 - 1, [&](int64_t k, double weight) {
      const size_t slot = static_cast<size_t>(k - w0) * kDirectionCount + dir;
      double* out = buffer + slot * buckets;
      if (!touched[slot]) {
        std::fill(out, out + buckets, 0.0);
        touched[slot] = true;
      }
      const uint32_t* index = thread.nonzero_index.data();
      const double* in = thread.nonzero_count.data();
      const size_t n = thread.nonzero;
      if (weight == 1.0) {
        for (size_t j = 0; j < n; ++j) out[index[j]] += in[j];
      } else {
        for (size_t j = 0; j < n; ++j) out[index[j]] += in[j] * weight;
      }
    });
    const int64_t last = aligner.LastQuantum(s.start, s.end);
    s.last_quantum = std::max(s.last_quantum, last);
    if (last >= w1) break;  // the rest of it goes into the next window
    // All placed: the next record becomes the pending one.
    s.prev_end = s.end;
    s.position = reader.Position();
    if (!reader.Next()) {
      s.done = true;
      break;
    }
    s.end = reader.record().end_ms;
    s.start = std::min(s.prev_end, s.end);
    s.counted = false;
    if (aligner.FirstQuantum(s.start, s.end) >= w1) break;
  }
  thread.Release();
}

void Merger::Run(const std::function<void(const MergedQuantum&)>& sink) {
  RunBatches([&](std::span<const MergedQuantum> batch) {
    for (const MergedQuantum& q : batch) sink(q);
  });
}

void Merger::RunBatches(const std::function<void(std::span<const MergedQuantum>)>& sink) {
  if (!layout_) return;
  const Aligner aligner(options_.quantum_ms);
  const size_t buckets = layout_->size();
  const size_t per_quantum = kDirectionCount * buckets * sizeof(double) * threads_;
  const int64_t window = static_cast<int64_t>(
      std::clamp<size_t>(options_.memory_budget / 2 / per_quantum, 4, size_t{1} << 16));
  const size_t slots = static_cast<size_t>(window) * kDirectionCount;
  // Left uninitialised on purpose: a slot is zeroed when first touched in a window and only
  // touched slots are read, so the pages of slots no window uses are never faulted in.
  std::vector<std::unique_ptr<double[]>> buffers;
  for (unsigned t = 0; t < threads_; ++t)
    buffers.push_back(std::make_unique_for_overwrite<double[]>(slots * buckets));
  std::vector<std::vector<char>> touched(threads_, std::vector<char>(slots));
  std::vector<double> merged(kBatchQuanta * kDirectionCount * buckets);
  for (ThreadReader& t : readers_) {
    t.counts.assign(buckets, 0.0);
    t.nonzero_index.assign(buckets, 0);
    t.nonzero_count.assign(buckets, 0.0);
    for (auto& total : t.totals) total.Resize(buckets);
  }

  auto next_start = [&]() {
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const Source& s : sources_) {
      if (!s.done) next = std::min(next, aligner.FirstQuantum(s.start, s.end));
    }
    return next;
  };
  int64_t w0 = next_start();
  int64_t emitted = w0;  // next quantum to emit
  // A batch of consecutive quanta: their slots in the window (or none), summed over the
  // threads' buffers in parallel (each bucket in thread order: the same sums on every run).
  std::vector<MergedQuantum> batch;
  std::vector<int64_t> batch_slot;  // the quantum's index in the window, or -1
  batch.reserve(kBatchQuanta);
  batch_slot.reserve(kBatchQuanta);
  auto flush = [&]() {
    if (batch.empty()) return;
    ParallelFor(batch.size(), threads_, [&](size_t b, unsigned) {
      for (int d = 0; d < kDirectionCount; ++d) {
        double* out = merged.data() + (b * kDirectionCount + static_cast<size_t>(d)) * buckets;
        std::fill(out, out + buckets, 0.0);
        if (batch_slot[b] >= 0) {
          const size_t slot = static_cast<size_t>(batch_slot[b]) * kDirectionCount + d;
          for (unsigned t = 0; t < threads_; ++t) {
            if (!touched[t][slot]) continue;
            const double* in = buffers[t].get() + slot * buckets;
            for (size_t i = 0; i < buckets; ++i) out[i] += in[i];
          }
        }
        batch[b].counts[d] = std::span<const double>(out, buckets);
      }
    });
    sink(batch);
    batch.clear();
    batch_slot.clear();
  };
  auto emit_through = [&](int64_t last, int64_t w_begin, bool have_window) {
    for (; emitted <= last; ++emitted) {
      const bool in_window = have_window && emitted >= w_begin && emitted < w_begin + window;
      MergedQuantum quantum;
      quantum.start_ms = aligner.QuantumStart(emitted);
      quantum.end_ms = aligner.QuantumStart(emitted + 1);
      batch.push_back(quantum);
      batch_slot.push_back(in_window ? emitted - w_begin : -1);
      if (batch.size() == kBatchQuanta) flush();
    }
    flush();  // before the window's buffers are reused
  };

  while (true) {
    bool any = false;
    for (const Source& s : sources_) any = any || !s.done;
    if (!any) break;
    const int64_t w1 = w0 + window;
    for (auto& t : touched) std::fill(t.begin(), t.end(), 0);
    ParallelFor(sources_.size(), threads_, [&](size_t i, unsigned t) {
      ProcessWindow(sources_[i], w0, w1, buffers[t].get(),
                    reinterpret_cast<bool*>(touched[t].data()), readers_[t]);
    });
    int64_t last = kNoQuantum;
    for (const Source& s : sources_) last = std::max(last, s.last_quantum);
    bool remaining = false;
    for (const Source& s : sources_) remaining = remaining || !s.done;
    emit_through(remaining ? w1 - 1 : std::min(last, w1 - 1), w0, true);
    if (!remaining) break;
    // Skip windows in which no source has anything (the empty quanta are still emitted).
    w0 = std::max(w1, next_start());
    emit_through(w0 - 1, w0, false);
  }
  for (const ThreadReader& t : readers_) {
    records_ += t.records;
    for (int d = 0; d < kDirectionCount; ++d) totals_[d].Merge(t.totals[d]);
  }
}

}  // namespace iotail::stats
