// RankPlan: what one rank of an iotail-mpi job runs, as a pure transform of the plan parsed from
// the command line and job files (cli::ParseRunPlan with iotail-mpi's rows and the rank's {rank}
// and {host}: mpi/mpi_options.h), so that settings from job files and from the command line are
// treated alike and no argv is rewritten. Every rank:
//   - refuses --start_at (rank 0 chooses the common start);
//   - writes only files of its own: its fio bw/iops/lat logs as PREFIX.rank<R>, the target files
//     iotail names (fio's NAME.CLONE.FILE, or --filename_format) with .rank<R> after them; its own
//     histogram logs only with --log_per_rank, as PREFIX.rank<R> (the cluster's log, under the
//     first job's write_hist_log, is rank 0's: ClusterSettings::hist_prefix); the default
//     benchmark's logs as iotail.rank<R> (the cluster's as iotail);
//   - keeps each job's log period as given (the cluster's period is the planned jobs').
// Ranks other than 0 show and serve nothing: no live lines, --sla, --prometheus or --output (rank
// 0's run is the cluster's view: cli::RunHooks::cluster_ranks). Throws UsageError naming the
// option (and FILE:LINE for a job file's). Pure; thread-safe.
#pragma once

#include "cli/run_options.h"

namespace iotail::mpi {

cli::RunPlan RankPlan(cli::RunPlan plan, int rank);

}  // namespace iotail::mpi
