// The engine rows of `iotail run`'s option table (cli/option_table.h): which engine, how deep its
// queue, how it submits and reaps, and the engines' own switches (io_uring, pvsync2, nbd). See
// engine/io/io_engine.h for what each engine does with them. The engine names and which engines
// take an option come from the engine table (engine/io/engine_table.h).
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "engine/io/engine_table.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::JobSpec;
using enum ValueType;

// fio's "N" (both directions) or "R,W" for an engine option between lo and hi.
std::array<uint32_t, 2> ReadWritePair(const OptionValue& v, uint32_t lo, uint32_t hi) {
  auto refuse = [&] {
    return UsageError(
        fmt::format("--{}={}: expected N or R,W, each {} to {}", v.option, v.text, lo, hi));
  };
  auto one = [&](std::string_view s) {
    uint32_t x = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || x < lo || x > hi) {
      throw refuse();
    }
    return x;
  };
  const PerDirectionText parts = SplitPerDirection(v.text, v.option);
  if (!parts.one && !parts.dirs[2].empty()) throw refuse();  // no trims' value
  const uint32_t reads = one(parts.dirs[0]);
  return {reads, parts.one ? reads : one(parts.dirs[1])};
}

// --ioengine's help: the engines of the table, as the a|b|c words a text row's help starts with.
const char* IoengineHelp() {
  static const std::string help = engine::EngineNames("|") +
                                  " (sync ones at depth 1; the file and directory operations time "
                                  "each file's create, stat or delete)";
  return help.c_str();
}

const std::vector<OptionDef>& EngineRows() {
  static const std::vector<OptionDef> table = {
      Row<kCount, &JobSpec::queue, &QueueOptions::iodepth>("iodepth", "I/Os in flight per clone",
                                                           "1"),
      Row<kFlag, &JobSpec::queue, &QueueOptions::serialize_overlap>(
          "serialize_overlap",
          "an I/O that overlaps one of the clone's in flight waits for it to complete", "0"),
      Row<kCount, &JobSpec::queue, &QueueOptions::iodepth_low>(
          "iodepth_low", "once the queue is full, let it drain to N before queueing again",
          "iodepth"),
      {"iodepth_batch_submit", kCount, JobField<&JobSpec::queue, &QueueOptions::batch_submit>,
       "at most N I/Os per submit call (0: all that are ready)", "1", Also("iodepth_batch")},
      {"iodepth_batch_complete_min", kCount,
       JobField<&JobSpec::queue, &QueueOptions::batch_complete_min>,
       "wait for N completions (more stamps the early ones late)", "1",
       Also("iodepth_batch_complete")},
      Row<kCount, &JobSpec::queue, &QueueOptions::batch_complete_max>(
          "iodepth_batch_complete_max",
          "take at most N completions per reap (0: iodepth_batch_complete_min, as fio: each one is "
          "replaced at once)",
          "0"),
      Labeled("URI", Row<kName, &JobSpec::uri>(
                         "uri", EngineOptionHelp(
                                    engine::kNbdOption,
                                    "the NBD server: nbd://HOST[:PORT]/EXPORT, "
                                    "nbd+unix:///EXPORT?socket=PATH (without --ioengine: nbd)"))),
      Row<kTime, &JobSpec::nbd, &NbdOptions::timeout_ns>(
          "nbd_timeout",
          EngineOptionHelp(engine::kNbdOption,
                           "how long connecting to the server and its handshake may take (0: no "
                           "limit)"),
          "10s"),
      Row<kChoice, &JobSpec::nbd, &NbdOptions::path>(
          "nbd_path",
          EngineOptionHelp(engine::kNbdOption,
                           "the data path: direct (iotail's own transmission phase, many requests "
                           "per system call; plain nbd:// and nbd+unix:// without TLS), libnbd, or "
                           "auto (direct where it can serve, else libnbd)"),
          "auto",
          {{"auto", engine::NbdPath::kAuto},
           {"libnbd", engine::NbdPath::kLibnbd},
           {"direct", engine::NbdPath::kDirect}}),
      {"nbd_conns", kCount, JobField<&JobSpec::nbd, &NbdOptions::conns>,
       EngineOptionHelp(engine::kNbdOption,
                        "connections per job clone, I/Os spread over them (at most --iodepth are "
                        "opened; more than one with writes needs a server that advertises "
                        "multi-conn)"),
       "1", Also(), Choices(), OptionScope::kJob, 1, 64},
      Labeled("ENGINE", {"ioengine", kText,
                         [](RunOptions& o, const OptionValue& v) {
                           o.spec.ioengine = engine::ParseEngineKind(v.text);
                         },
                         IoengineHelp(),
                         "psync, as fio (nbd with --uri; the default benchmark: best available)"}),
      Row<kFlag, &JobSpec::engine_options, &EngineOptions::sqthread_poll>(
          "sqthread_poll",
          EngineOptionHelp(engine::kSqthreadPollOption, "kernel submission thread (SQPOLL)")),
      Row<kFlag, &JobSpec::engine_options, &EngineOptions::hipri>(
          "hipri", EngineOptionHelp(engine::kHipriOption,
                                    "polled completions (pvsync2's RWF_HIPRI; io_uring's IOPOLL, "
                                    "on NVMe poll queues)")),
      Row<kFlag, &JobSpec::engine_options, &EngineOptions::nowait>(
          "nowait", EngineOptionHelp(engine::kNowaitOption,
                                     "RWF_NOWAIT (an I/O that would block fails with EAGAIN, an "
                                     "error as in fio)")),
      Labeled("FILE", Row<kName, &JobSpec::engine_options, &EngineOptions::e4defrag_donor>(
                          "donorname",
                          EngineOptionHelp(
                              engine::kDonorOption,
                              "the donor file whose blocks each write moves into the target (in "
                              "--directory; required; other engines ignore it, as fio's)"))),
      Row<kFlag, &JobSpec::engine_options, &EngineOptions::e4defrag_inplace>(
          "inplace", EngineOptionHelp(engine::kDonorOption,
                                      "allocate the donor's blocks before each move and free them "
                                      "after it, instead of once for the whole file")),
      Labeled("PCT[,PCT]",
              {"cmdprio_percentage", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.prio.cmdprio.percentage = ReadWritePair(v, 0, 100);
               },
               EngineOptionHelp(
                   engine::kCmdprioOption,
                   "this percent of the reads,writes at --cmdprio_class/--cmdprio (the others "
                   "at the job's priority); per-priority latencies in the summary"),
               "0"}),
      Labeled("CLASS[,CLASS]",
              {"cmdprio_class", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.prio.cmdprio.cls = ReadWritePair(v, 1, 3);
               },
               EngineOptionHelp(
                   engine::kCmdprioOption,
                   "the class of cmdprio's I/Os (1 real-time, 2 best effort, 3 idle), or R,W"),
               "1"}),
      Labeled("LEVEL[,LEVEL]",
              {"cmdprio", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.prio.cmdprio.level = ReadWritePair(v, 0, 7);
               },
               EngineOptionHelp(engine::kCmdprioOption,
                                "the level of cmdprio's I/Os (0 highest to 7), or R,W"),
               "0"}),
      Labeled("BS/PCT[/CLASS/LEVEL]:...",
              {"cmdprio_bssplit", kText,
               [](RunOptions& o, const OptionValue& v) {
                 engine::ParseCmdPrioBssplit(v.text, o.spec.prio.cmdprio, SizeReader(v.context));
               },
               EngineOptionHelp(
                   engine::kCmdprioOption,
                   "BS/PERC[/CLASS/LEVEL]:... per block size (R,W lists): that percent of its "
                   "I/Os at that priority (without one, --cmdprio_class/--cmdprio's)")}),
      Row<kCount, &JobSpec::engine_options, &EngineOptions::uncached>(
          "uncached",
          EngineOptionHelp(engine::kUncachedOption,
                           "RWF_UNCACHED, refused (Linux never had it; ignored with --direct=1, as "
                           "fio)"),
          "0"),
  };
  return table;
}

}  // namespace

const char* EngineOptionHelp(engine::EngineOption option, std::string_view help) {
  static std::mutex mutex;
  static std::deque<std::string> texts;  // never moved: the pointers stay valid
  const std::lock_guard<std::mutex> lock(mutex);
  texts.push_back(fmt::format("{}: {}", engine::EnginesTaking(option, ", "), help));
  return texts.back().c_str();
}

std::span<const OptionDef> EngineOptionTable() { return EngineRows(); }

}  // namespace iotail::cli
