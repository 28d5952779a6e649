// What a replay issues: every event of a TraceReader, read in batches; counted per direction; and
// counted from fio 3.33 replaying the same file (`fio --read_iolog=FILE --replay_redirect=TARGET`,
// its JSON summary). Header-only, for the replay tests that hold iotail's readers against fio.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/replay/trace_event.h"
#include "tests/cli/cli_test_util.h"

namespace iotail::testing {

// Every event `reader` gives, asked for `batch` at a time.
inline std::vector<engine::replay::TraceEvent> AllEvents(engine::replay::TraceReader& reader,
                                                         size_t batch = 16) {
  std::vector<engine::replay::TraceEvent> events;
  std::vector<engine::replay::TraceEvent> buf(batch);
  for (size_t n; (n = reader.Next(buf.data(), buf.size())) > 0;) {
    events.insert(events.end(), buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
  }
  return events;
}

struct ReplayCounts {
  uint64_t reads = 0, read_bytes = 0;
  uint64_t writes = 0, write_bytes = 0;
  uint64_t trims = 0, trim_bytes = 0;
  uint64_t syncs = 0;
  bool operator==(const ReplayCounts&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, const ReplayCounts& c) {
  return out << "reads " << c.reads << " (" << c.read_bytes << " B), writes " << c.writes << " ("
             << c.write_bytes << " B), trims " << c.trims << " (" << c.trim_bytes << " B), syncs "
             << c.syncs;
}

template <typename Events>
ReplayCounts CountEvents(const Events& events) {
  using engine::replay::TraceOp;
  ReplayCounts c;
  for (const engine::replay::TraceEvent& e : events) {
    switch (e.op) {
      case TraceOp::kRead:
        ++c.reads;
        c.read_bytes += e.length;
        break;
      case TraceOp::kWrite:
        ++c.writes;
        c.write_bytes += e.length;
        break;
      case TraceOp::kTrim:
        ++c.trims;
        c.trim_bytes += e.length;
        break;
      case TraceOp::kSync:
      case TraceOp::kDatasync:
        ++c.syncs;
        break;
      default:
        break;
    }
  }
  return c;
}

// fio 3.33 replaying `trace` onto `target` (psync, one job); failures are the test's.
inline ReplayCounts FioReplayCounts(const std::filesystem::path& trace,
                                    const std::filesystem::path& target,
                                    const std::filesystem::path& scratch) {
  const std::filesystem::path json_path = scratch / "fio_replay.json";
  const CommandResult fio =
      RunShell("fio --name=replay --ioengine=psync --read_iolog=" + trace.string() +
                   " --replay_redirect=" + target.string() +
                   " --output-format=json --output=" + json_path.string(),
               scratch);
  EXPECT_EQ(fio.status, 0) << fio.out << fio.err;
  ReplayCounts c;
  std::ifstream in(json_path);
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded() || summary["jobs"].empty()) {
    ADD_FAILURE() << "fio wrote no JSON summary: " << fio.err;
    return c;
  }
  const nlohmann::json& job = summary["jobs"][0];
  EXPECT_EQ(job["error"].get<int>(), 0) << fio.err;
  c.reads = job["read"]["total_ios"].get<uint64_t>();
  c.read_bytes = job["read"]["io_bytes"].get<uint64_t>();
  c.writes = job["write"]["total_ios"].get<uint64_t>();
  c.write_bytes = job["write"]["io_bytes"].get<uint64_t>();
  c.trims = job["trim"]["total_ios"].get<uint64_t>();
  c.trim_bytes = job["trim"]["io_bytes"].get<uint64_t>();
  c.syncs = job["sync"]["total_ios"].get<uint64_t>();
  return c;
}

}  // namespace iotail::testing
