// ClusterRun: one run over every rank of an MPI job, `iotail-mpi run`'s, or one step of
// `iotail-mpi sweep` (mpi/main.cc). The run goes on a thread of its own (cli::ExecuteRun, with the
// hooks that feed the exchange); this thread does every MPI call (mpi/exchange.h) until every rank
// is done. Rank 0's run is the cluster's view: its live lines, --sla checks, cluster log, metrics
// and summary are every rank's summed (its summary from every rank's exact totals).
//
// Collective: every rank calls it with the same jobs. A failed exchange or a rank given up on ends
// the MPI job (MPI_Abort: a lost rank cannot take part in a collective). Main thread only.
#pragma once

#include <optional>
#include <ostream>

#include "cli/run_assembly.h"
#include "mpi/exchange.h"
#include "stats/report/run_summary.h"

namespace iotail::mpi {

struct ClusterRunOptions {
  bool print_summary = true;  // rank 0 prints the cluster's summary (a sweep's steps do not)
  // Rank 0, when not null: the cluster's summary, once made (a run stopped during its setup has
  // none).
  std::optional<stats::RunSummary>* summary = nullptr;
};

// Returns this rank's run status (0, 1 for I/O errors or a failed output, 2 for a plan refused,
// 128 + signal when stopped).
int ClusterRun(const Cluster& c, cli::PlannedRun& run, std::ostream& quiet,
               const ClusterRunOptions& options = {});

}  // namespace iotail::mpi
