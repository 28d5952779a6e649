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

}  // namespace

struct Merger::Source {
  Source(std::string path, LogReaderOptions options) : reader(std::move(path), options) {}

  LogReader reader;
  Direction direction = Direction::kRead;
  int64_t prev_end = 0;  // job start until the first record
  int shift = 0;         // coarseness of the merge minus the file's
  bool pending = false;  // reader.record() is loaded into start/end/counts, not yet all placed
  bool done = false;
  int64_t start = 0;
  int64_t end = 0;
  std::vector<double> counts;  // dense, in the merge's layout (only for a coarser merge)
  // The pending record's non-zero buckets (index, count): most buckets of a line are empty, and
  // adding a zero to a window cell changes nothing, so only these are added.
  // Both have layout().size() entries; the first `nonzero` are valid.
  std::vector<uint32_t> nonzero_index;
  std::vector<double> nonzero_count;
  size_t nonzero = 0;
  Histogram total;
  uint64_t records = 0;
  int64_t last_quantum = kNoQuantum;

  // Reads the next record into the pending slot; false at the end of the source.
  bool Load() {
    if (!reader.Next()) {
      done = true;
      pending = false;
      return false;
    }
    Take();
    return true;
  }

  // Makes the reader's current record the pending one, in the merge's layout.
  void Take() {
    const LogRecord& r = reader.record();
    end = r.end_ms;
    start = std::min(prev_end, end);
    prev_end = end;
    ++records;
    auto totals = total.mutable_counts();
    uint32_t* index = nonzero_index.data();
    double* value = nonzero_count.data();
    size_t n = 0;
    if (shift == 0) {
      const uint64_t* in = r.counts.data();
      uint64_t* sum = totals.data();
      const size_t size = r.counts.size();
      // Skip blocks of empty buckets; add up and compact the others without branches (their
      // non-zero buckets are scattered).
      constexpr size_t kBlock = 8;
      for (size_t b = 0; b < size; b += kBlock) {
        const size_t stop = std::min(b + kBlock, size);
        uint64_t any = 0;
        for (size_t i = b; i < stop; ++i) any |= in[i];
        if (any == 0) continue;
        for (size_t i = b; i < stop; ++i) {
          sum[i] += in[i];
          index[n] = static_cast<uint32_t>(i);
          value[n] = static_cast<double>(in[i]);
          n += in[i] != 0;
        }
      }
    } else {
      std::fill(counts.begin(), counts.end(), 0.0);
      for (size_t i = 0; i < r.counts.size(); ++i) {
        counts[i >> shift] += static_cast<double>(r.counts[i]);
        totals[i >> shift] += r.counts[i];
      }
      for (size_t i = 0; i < counts.size(); ++i) {
        index[n] = static_cast<uint32_t>(i);
        value[n] = counts[i];
        n += counts[i] != 0;
      }
    }
    nonzero = n;
    pending = true;
  }
};

Merger::Merger(std::vector<std::string> files, MergeOptions options) : options_(options) {
  if (files.empty()) throw UsageError("no input files");
  if (options_.quantum_ms <= 0) throw UsageError("--time-quantum: must be a positive number of ms");
  // More threads than a few per core only cost window buffers.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  threads_ = options_.threads ? std::min(options_.threads, 4 * cores) : cores;

  // Each file is read twice (the scan, then its sources): a pipe would be drained by the scan
  // and the second open would wait for a writer forever. And the same file named twice (or
  // through another path) would count each of its I/Os twice.
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    if (::stat(files[i].c_str(), &st) != 0) continue;  // the scan reports it, naming the file
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
      throw UsageError(fmt::format(
          "'{}' is a pipe or socket: histogram logs are read twice, give a regular file",
          files[i]));
    }
    if (!S_ISREG(st.st_mode)) continue;
    const auto [it, inserted] = seen.emplace(std::pair{st.st_dev, st.st_ino}, i);
    if (!inserted) {
      throw UsageError(fmt::format("'{}' and '{}' are the same file: its I/Os would count twice",
                                   files[it->second], files[i]));
    }
  }

  // Scan every file for its segments and directions, in parallel.
  std::vector<std::vector<LogSegment>> segments(files.size());
  ParallelFor(files.size(), threads_,
              [&](size_t i, unsigned) { segments[i] = ScanLogSegments(files[i]); });
  size_t source_count = 0;
  for (const auto& s : segments) {
    for (const auto& seg : s)
      source_count += static_cast<size_t>(__builtin_popcount(seg.directions));
  }
  const size_t read_buffer =
      std::clamp<size_t>(options_.memory_budget / 2 / std::max<size_t>(source_count, 1),
                         size_t{64} << 10, size_t{256} << 10);

  std::optional<size_t> epoch_file, relative_file;
  for (size_t f = 0; f < files.size(); ++f) {
    for (const LogSegment& seg : segments[f]) {
      (IsEpochTime(seg.first_end_ms) ? epoch_file : relative_file) = f;
      const int64_t job_start =
          InferJobStart(seg.first_end_ms, seg.second_end_ms, options_.log_hist_msec);
      for (int d = 0; d < kDirectionCount; ++d) {
        if (!(seg.directions & (1u << d))) continue;
        LogReaderOptions reader_options;
        reader_options.undo_client_sums = options_.undo_client_sums;
        reader_options.begin_offset = seg.begin_offset;
        reader_options.end_offset = seg.end_offset;
        reader_options.first_line = seg.first_line;
        reader_options.only_direction = static_cast<Direction>(d);
        reader_options.buffer_size = read_buffer;
        auto source = std::make_unique<Source>(files[f], reader_options);
        source->direction = static_cast<Direction>(d);
        source->prev_end = job_start;
        sources_.push_back(std::move(source));
      }
    }
  }
  if (epoch_file && relative_file) {
    throw UsageError(
        fmt::format("cannot merge '{}' (Unix-epoch times) with '{}' (times relative to "
                    "the job start)",
                    files[*epoch_file], files[*relative_file]));
  }
  epoch_ = epoch_file.has_value();

  // Read each source's first record (this validates it and detects its layout).
  ParallelFor(sources_.size(), threads_, [&](size_t i, unsigned) {
    Source& s = *sources_[i];
    s.done = !s.reader.Next();
  });
  const Source* first = nullptr;
  int coarseness = 0;
  for (const auto& s : sources_) {
    if (s->done) continue;
    const HistogramLayout& l = *s->reader.layout();
    if (first && l.generation() != first->reader.layout()->generation()) {
      throw UsageError(
          fmt::format("cannot merge '{}' ({}) with '{}' ({}): fio 2 logs count "
                      "microseconds, fio 3 logs nanoseconds",
                      first->reader.path(), first->reader.layout()->Describe(), s->reader.path(),
                      l.Describe()));
    }
    if (!first) first = s.get();
    coarseness = std::max(coarseness, l.coarseness());
  }
  if (!first) return;  // no records at all
  layout_ = first->reader.layout()->generation() == FioGeneration::kFio3
                ? HistogramLayout::Fio3(coarseness)
                : HistogramLayout::Fio2(coarseness);
  for (auto& t : totals_) t.Resize(layout_->size());
  for (auto& s : sources_) {
    s->counts.assign(layout_->size(), 0.0);
    s->nonzero_index.assign(layout_->size(), 0);
    s->nonzero_count.assign(layout_->size(), 0.0);
    s->total.Resize(layout_->size());
    if (s->done) continue;
    has_direction_[DirectionIndex(s->direction)] = true;
    s->shift = coarseness - s->reader.layout()->coarseness();
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
  for (const auto& s : sources_)
    unique.insert(s->reader.warnings().begin(), s->reader.warnings().end());
  return {unique.begin(), unique.end()};
}

// Places the source's records that touch quanta [w0, w1) into the window buffer; stops at the
// first record that reaches beyond the window (it stays pending for the next window).
void Merger::ProcessWindow(Source& s, int64_t w0, int64_t w1, double* buffer, bool* touched) {
  const Aligner aligner(options_.quantum_ms);
  const size_t buckets = layout_->size();
  const int dir = DirectionIndex(s.direction);
  while (!s.done) {
    if (!s.pending && !s.Load()) break;
    if (aligner.FirstQuantum(s.start, s.end) >= w1) break;
    aligner.Split(s.start, s.end, w0, w1 - 1, [&](int64_t k, double weight) {
      const size_t slot = static_cast<size_t>(k - w0) * kDirectionCount + dir;
      double* out = buffer + slot * buckets;
      if (!touched[slot]) {
        std::fill(out, out + buckets, 0.0);
        touched[slot] = true;
      }
      const uint32_t* index = s.nonzero_index.data();
      const double* in = s.nonzero_count.data();
      const size_t n = s.nonzero;
      if (weight == 1.0) {
        for (size_t j = 0; j < n; ++j) out[index[j]] += in[j];
      } else {
        for (size_t j = 0; j < n; ++j) out[index[j]] += in[j] * weight;
      }
    });
    const int64_t last = aligner.LastQuantum(s.start, s.end);
    s.last_quantum = std::max(s.last_quantum, last);
    if (last >= w1) break;
    s.pending = false;
  }
}

void Merger::Run(const std::function<void(const MergedQuantum&)>& sink) {
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
  std::vector<double> merged(kDirectionCount * buckets);

  // The constructor read each source's first record; make it the pending one.
  for (auto& s : sources_) {
    if (!s->done) s->Take();
  }

  auto next_start = [&]() {
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const auto& s : sources_) {
      if (s->pending) next = std::min(next, aligner.FirstQuantum(s->start, s->end));
    }
    return next;
  };
  int64_t w0 = next_start();
  int64_t emitted = w0;  // next quantum to emit
  MergedQuantum quantum;
  auto emit_through = [&](int64_t last, int64_t w_begin, bool have_window) {
    for (; emitted <= last; ++emitted) {
      const bool in_window = have_window && emitted >= w_begin && emitted < w_begin + window;
      for (int d = 0; d < kDirectionCount; ++d) {
        double* out = merged.data() + static_cast<size_t>(d) * buckets;
        std::fill(out, out + buckets, 0.0);
        if (in_window) {
          const size_t slot = static_cast<size_t>(emitted - w_begin) * kDirectionCount + d;
          for (unsigned t = 0; t < threads_; ++t) {
            if (!touched[t][slot]) continue;
            const double* in = buffers[t].get() + slot * buckets;
            for (size_t i = 0; i < buckets; ++i) out[i] += in[i];
          }
        }
        quantum.counts[d] = std::span<const double>(out, buckets);
      }
      quantum.start_ms = aligner.QuantumStart(emitted);
      quantum.end_ms = aligner.QuantumStart(emitted + 1);
      sink(quantum);
    }
  };

  while (true) {
    bool any = false;
    for (const auto& s : sources_) any = any || !s->done;
    if (!any) break;
    const int64_t w1 = w0 + window;
    for (auto& t : touched) std::fill(t.begin(), t.end(), 0);
    ParallelFor(sources_.size(), threads_, [&](size_t i, unsigned t) {
      ProcessWindow(*sources_[i], w0, w1, buffers[t].get(),
                    reinterpret_cast<bool*>(touched[t].data()));
    });
    int64_t last = kNoQuantum;
    for (const auto& s : sources_) last = std::max(last, s->last_quantum);
    bool remaining = false;
    for (const auto& s : sources_) remaining = remaining || !s->done;
    emit_through(remaining ? w1 - 1 : std::min(last, w1 - 1), w0, true);
    if (!remaining) break;
    // Skip windows in which no source has anything (the empty quanta are still emitted).
    w0 = std::max(w1, next_start());
    emit_through(w0 - 1, w0, false);
  }
  for (const auto& s : sources_) {
    records_ += s->records;
    totals_[DirectionIndex(s->direction)].Merge(s->total);
  }
}

}  // namespace iotail::stats
