// The engine rows of `iotail run`'s option table (cli/option_table.h): which engine, how deep its
// queue, how it submits and reaps, and the engines' own switches (io_uring, pvsync2, nbd). See
// engine/io/io_engine.h for what each engine does with them.
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& EngineRows() {
  static const std::vector<OptionDef> table = {
      {"iodepth", kCount, JobField<&JobSpec::iodepth>, "I/Os in flight per clone", "1"},
      {"iodepth_batch_submit", kCount, JobField<&JobSpec::iodepth_batch_submit>,
       "at most N I/Os per submit call (0: all that are ready)", "1", Also("iodepth_batch")},
      {"iodepth_batch_complete_min", kCount, JobField<&JobSpec::iodepth_batch_complete_min>,
       "wait for N completions (more stamps the early ones late)", "1",
       Also("iodepth_batch_complete")},
      {"iodepth_batch_complete_max", kCount, JobField<&JobSpec::iodepth_batch_complete_max>,
       "take at most N completions per reap (0: iodepth; fewer stamps the rest late)", "0"},
      {"uri", kText,
       [](RunOptions& o, const OptionValue& v) {
         if (v.text.empty()) throw UsageError(fmt::format("--{}: empty", v.option));
         o.spec.uri = v.text;
       },
       "NBD server for --ioengine=nbd: nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH"},
      {"nbd_timeout", kTime, JobField<&JobSpec::nbd_timeout_ns>,
       "nbd: how long connecting to the server and its handshake may take (0: no limit)", "10s"},
      {"ioengine", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.ioengine = engine::ParseEngineKind(v.text);
       },
       "sync|psync|vsync|pvsync|pvsync2|io_uring|libaio|posixaio|mmap|null|nbd (sync ones at depth "
       "1)",
       "psync, as fio (nbd with --uri; the default benchmark: best available)"},
      {"sqthread_poll", kFlag, JobField<&JobSpec::sqthread_poll>,
       "io_uring: kernel submission thread (SQPOLL)", "0"},
      {"hipri", kFlag, JobField<&JobSpec::hipri>,
       "io_uring: polled completions (IOPOLL; NVMe poll queues); pvsync2: RWF_HIPRI", "0"},
      {"nowait", kFlag, JobField<&JobSpec::nowait>,
       "pvsync2: RWF_NOWAIT (an I/O that would block fails with EAGAIN, an error as in fio)", "0"},
      {"uncached", kCount, JobField<&JobSpec::uncached>,
       "pvsync2: RWF_UNCACHED, refused (Linux never had it; ignored with --direct=1, as fio)", "0"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> EngineOptionTable() { return EngineRows(); }

}  // namespace iotail::cli
