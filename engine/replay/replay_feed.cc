#include "engine/replay/replay_feed.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/replay/open_trace.h"

namespace iotail::engine::replay {

namespace {

bool Skipped(TraceOp op, uint32_t skip) {
  switch (op) {
    case TraceOp::kRead:
      return (skip & kSkipRead) != 0;
    case TraceOp::kWrite:
      return (skip & kSkipWrite) != 0;
    case TraceOp::kTrim:
      return (skip & kSkipTrim) != 0;
    case TraceOp::kSync:
      return (skip & kSkipSync) != 0;
    default:
      return false;
  }
}

uint64_t ScaledTime(uint64_t ns, uint32_t time_scale) {
  if (time_scale == 100 || time_scale == 0) return ns;
  return static_cast<uint64_t>(static_cast<double>(ns) * 100.0 / time_scale);
}

bool IsIo(TraceOp op) {
  return op == TraceOp::kRead || op == TraceOp::kWrite || op == TraceOp::kTrim;
}

}  // namespace

TraceSummary ScanTrace(const ReplaySpec& spec, const std::string& path) {
  std::unique_ptr<TraceReader> reader = OpenTrace(path);
  TraceSummary s;
  std::array<TraceEvent, 1024> ev;
  for (size_t n; (n = reader->Next(ev.data(), ev.size())) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      const TraceEvent& e = ev[i];
      if (Skipped(e.op, spec.skip) || (e.op == TraceOp::kWait && spec.no_stall)) continue;
      if (e.timed) {
        s.timed = true;
        s.span_ns = std::max(s.span_ns, ScaledTime(e.time_ns, spec.time_scale));
      }
      if (IsIo(e.op)) {
        ++s.ios;
        s.reads += e.op == TraceOp::kRead;
        s.writes += e.op == TraceOp::kWrite;
        s.trims += e.op == TraceOp::kTrim;
        s.recorded += e.recorded_ns != 0;
        s.max_length = std::max(s.max_length, e.length);
        uint64_t offset = spec.scale > 1 ? e.offset / spec.scale : e.offset;
        if (spec.align > 1) offset &= ~(spec.align - 1);
        s.max_end = std::max(s.max_end, offset + e.length);
      } else if (e.op == TraceOp::kSync || e.op == TraceOp::kDatasync) {
        ++s.syncs;
      }
    }
  }
  s.devices = reader->devices();
  return s;
}

ReplayFeed::ReplayFeed(std::unique_ptr<TraceReader> reader, const ReplaySpec& spec, uint32_t files,
                       std::string trace_name, std::vector<uint32_t> device_files)
    : reader_(std::move(reader)),
      spec_(spec),
      files_(files),
      name_(std::move(trace_name)),
      device_files_(std::move(device_files)),
      ring_storage_(std::make_unique<std::array<TraceEvent, kRing>>()),
      ring_(ring_storage_->data()) {}

bool ReplayFeed::Transform(TraceEvent& e) const {
  if (Skipped(e.op, spec_.skip)) return false;
  if (e.op == TraceOp::kWait && spec_.no_stall) return false;
  if (!spec_.redirect.empty()) {
    e.device = 0;
  } else if (!device_files_.empty() && e.device < device_files_.size()) {
    e.device = device_files_[e.device];
  } else if (!device_files_.empty() || e.device >= files_) {
    // A file the plan did not meet reading the same trace, or beyond the worker's targets.
    throw TraceFormatError(fmt::format("{}: the trace's file '{}' has no target", name_,
                                       reader_->devices().at(e.device)));
  }
  if (e.op != TraceOp::kWait) {
    e.time_ns = ScaledTime(e.time_ns, spec_.time_scale);
    if (spec_.scale > 1) e.offset /= spec_.scale;
    if (spec_.align > 1) e.offset &= ~(spec_.align - 1);
  }
  return true;
}

bool ReplayFeed::Fill(size_t want) {
  size_t added = 0;
  while (!ended_ && added < want && tail_ - head_ < kRing) {
    const size_t room = std::min({want - added, kRing - (tail_ - head_), scratch_.size()});
    const size_t n = reader_->Next(scratch_.data(), room);
    if (n == 0) {
      ended_ = true;
      break;
    }
    for (size_t i = 0; i < n; ++i) {
      TraceEvent e = scratch_[i];
      if (!Transform(e)) continue;
      ring_[tail_++ % kRing] = e;
      ++added;
    }
  }
  return added > 0;
}

}  // namespace iotail::engine::replay
