#include "cli/replay_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

#include "engine/replay/replay_feed.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// What the trace decides, or what the replay does not do yet: refused beside read_iolog.
constexpr std::string_view kNotWithReplay[] = {
    "filename",
    "nrfiles",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bsrange",
    "bssplit",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
    "rate_process",
    "time_based",
    "io_size",
    "io_limit",
    "number_ios",
    "loops",
    "zonemode",
    "verify",
    "do_verify",
    "fsync",
    "fdatasync",
    "thinktime",
    "latency_target",
    "flow",
    "offset",
    "offset_increment",
    "random_distribution",
    "percentage_random",
    "rwmixread",
    "rwmixwrite",
    "serialize_overlap",
    "fill_device",
    "filename_format",
    "directory",
    "file_service_type",
    "iodepth_batch_complete_max",
};

// fio's ':'-separated list of traces ('\\:' a colon inside a name), one for each clone.
std::vector<std::string> SplitTraces(const std::string& text) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      out.back() += ':';
      ++i;
    } else if (text[i] == ':') {
      out.emplace_back();
    } else {
      out.back() += text[i];
    }
  }
  for (const std::string& name : out) {
    if (name.empty()) {
      throw UsageError(fmt::format(
          "--read_iolog: an empty trace name in '{}' (expected TRACE[:TRACE...], one per clone)",
          text));
    }
  }
  return out;
}

// The job's traces read through (each clone its own, ReplaySpec::TraceIndex): their files in order
// of first appearance (the first trace's first), each trace's indices into them, and the sums the
// report gives over the clones.
struct TraceSet {
  engine::replay::TraceSummary all;  // devices, reads/writes, max_end, max_length; ios: of all
  std::vector<std::vector<uint32_t>> device_files;
};

TraceSet ScanTraces(const engine::replay::ReplaySpec& r, uint32_t numjobs) {
  TraceSet set;
  std::vector<engine::replay::TraceSummary> scans;
  for (const std::string& trace : r.traces) {
    engine::replay::TraceSummary s = engine::replay::ScanTrace(r, trace);
    if (s.ios == 0) {
      throw UsageError(fmt::format("--read_iolog: '{}' holds no read, write or trim to replay{}",
                                   trace, r.skip != 0 ? " (after --replay_skip)" : ""));
    }
    std::vector<uint32_t> index;
    for (const std::string& d : s.devices) {
      auto it = std::find(set.all.devices.begin(), set.all.devices.end(), d);
      if (it == set.all.devices.end()) it = set.all.devices.insert(set.all.devices.end(), d);
      index.push_back(static_cast<uint32_t>(it - set.all.devices.begin()));
    }
    set.device_files.push_back(std::move(index));
    set.all.reads += s.reads;
    set.all.writes += s.writes;
    set.all.max_end = std::max(set.all.max_end, s.max_end);
    set.all.max_length = std::max(set.all.max_length, s.max_length);
    set.all.span_ns = std::max(set.all.span_ns, s.span_ns);
    scans.push_back(std::move(s));
  }
  for (uint32_t w = 0; w < numjobs; ++w) {  // what the clones replay in all
    const auto& scan = scans[engine::replay::ReplaySpec::TraceIndex(w, numjobs, scans.size())];
    set.all.ios += scan.ios;
    set.all.recorded += scan.recorded;
  }
  return set;
}

}  // namespace

void SettleReplay(RunOptions& job) {
  engine::JobSpec& spec = job.spec;
  engine::replay::ReplaySpec& r = spec.replay;
  if (!r.write_iolog.empty() && (r.Active() || spec.numjobs > 1)) {
    throw UsageError(r.Active() ? "--write_iolog with --read_iolog: not supported (fio, too, "
                                  "ignores write_iolog when it replays)"
                                : "--write_iolog with --numjobs > 1: the clones' I/Os would be "
                                  "interspersed in one log; give each job its own");
  }
  if (!r.Active()) {
    for (std::string_view o :
         {"replay_redirect", "replay_map", "replay_no_stall", "replay_time_scale", "replay_align",
          "replay_scale", "replay_skip"}) {
      if (job.Given(o)) throw UsageError(fmt::format("--{}: only with --read_iolog", o));
    }
    return;
  }
  r.traces = SplitTraces(r.read_iolog);
  if (r.traces.size() > spec.numjobs) {
    throw UsageError(fmt::format(
        "--read_iolog: {} traces for {} clone(s): each clone replays one trace of the list (as "
        "fio), and fio would leave the rest out; give --numjobs={}",
        r.traces.size(), spec.numjobs, r.traces.size()));
  }
  for (std::string_view o : kNotWithReplay) {
    if (job.Given(o)) {
      throw UsageError(fmt::format(
          "--{} with --read_iolog: not supported (the trace decides the replay's files, "
          "directions, sizes, offsets and times{})",
          o, o == "filename" ? "; --replay_redirect puts every I/O onto one target" : ""));
    }
  }
  TraceSet set = ScanTraces(r, spec.numjobs);
  const engine::replay::TraceSummary& s = set.all;
  r.trace_ios = s.ios;
  r.trace_recorded = s.recorded;
  r.span_ns = r.no_stall ? 0 : s.span_ns;
  // A blktrace dump names its devices "MAJOR,MINOR" (fio opens the /dev node of that number);
  // iotail takes the target from the user instead.
  const bool numbered = std::any_of(s.devices.begin(), s.devices.end(), [](const std::string& d) {
    return !d.empty() && d.find_first_not_of("0123456789,") == std::string::npos &&
           d.find(',') != std::string::npos;
  });
  if (numbered && spec.uri.empty() && r.redirect.empty() && r.map.empty()) {
    throw UsageError(fmt::format(
        "--read_iolog: '{}' names its devices by number ({}): give --replay_redirect=TARGET, or "
        "--replay_map=MAJOR,MINOR=TARGET... (iotail does not pick a device by its number)",
        r.read_iolog, fmt::join(s.devices, " ")));
  }
  if (!spec.uri.empty()) {
    // The export (--uri, the nbd engine) is the one target: every trace file onto it.
    if (!r.map.empty()) throw UsageError("--replay_map with --uri: the export is the one target");
    if (r.redirect.empty()) r.redirect = spec.uri;
  } else {
    spec.filenames = r.redirect.empty() ? s.devices : std::vector<std::string>{r.redirect};
  }
  if (r.redirect.empty()) r.device_files = std::move(set.device_files);
  if (!r.map.empty()) {
    if (!r.redirect.empty()) {
      throw UsageError("--replay_map with --replay_redirect: give one or the other");
    }
    for (std::string& f : spec.filenames) {
      const auto it =
          std::find_if(r.map.begin(), r.map.end(), [&](const auto& m) { return m.first == f; });
      if (it == r.map.end()) {
        throw UsageError(
            fmt::format("--replay_map: the trace's file '{}' has no target (map every one of: {})",
                        f, fmt::join(s.devices, ", ")));
      }
      f = it->second;
    }
  }
  spec.rw = s.reads > 0 && s.writes > 0 ? engine::RwMode::kRandReadWrite
            : s.writes > 0              ? engine::RwMode::kRandWrite
                                        : engine::RwMode::kRandRead;
  spec.blocks.bs = (s.max_length + 511) / 512 * 512;
  if (spec.blocks.bs == 0) spec.blocks.bs = 4096;
  // Each target holds the furthest byte (NameTargets divides a job's size among its files).
  if (!job.Given("size") && !job.Given("filesize")) {
    spec.region.size =
        (s.max_end + 4095) / 4096 * 4096 * std::max<size_t>(1, spec.filenames.size());
  }
}

}  // namespace iotail::cli
