// SettleReplay: a job with read_iolog made ready to replay (PlanRun, before its targets are
// named): the trace is read through once (bounded memory) to learn its files, directions, longest
// I/O and furthest byte; the job's targets become the trace's files (or replay_redirect), its
// direction and block size what the trace holds, and its size, unless given, the furthest byte.
// read_iolog's ':' list gives each clone of numjobs a trace (fio's meaning: clone k the (k mod
// n)-th trace; more traces than clones is refused, where fio would leave the rest out): the job's
// targets are every trace's files, and each clone's trace maps onto them
// (ReplaySpec::device_files). Options a replay would not honour (the trace decides the pattern and
// pace) are refused, naming them, rather than accepted with another meaning. Throws UsageError;
// std::system_error and TraceFormatError (damaged trace, file:line) pass through.
#pragma once

#include "cli/run_options.h"

namespace iotail::cli {

void SettleReplay(RunOptions& job);

}  // namespace iotail::cli
