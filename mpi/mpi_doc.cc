#include "mpi/mpi_doc.h"

#include "mpi/mpi_options.h"

namespace iotail::mpi {

cli::CommandDoc MpiDoc() {
  cli::CommandDoc doc;
  doc.page = "iotail-mpi";
  doc.summary = "one iotail run over every rank of an MPI job, merged live on rank 0";
  doc.synopsis = {"mpirun -np N [--hostfile FILE] iotail-mpi run [options] [JOBFILE.fio...]",
                  "mpirun -np N [--hostfile FILE] iotail-mpi sweep --sla TARGETS [options] "
                  "[JOBFILE.fio...]",
                  "iotail-mpi --help=man"};
  doc.description =
      "Each rank runs what iotail run would run on its host, with the same options; {rank} and "
      "{host} in any option's value, on the command line and in job files, are replaced per rank "
      "(--filename=/data/{host}/f.{rank}). No two ranks write the same file: a rank's fio "
      "bw/iops/lat logs are PREFIX.rank<R>_..., its own histogram logs (--log_per_rank) "
      "PREFIX.rank<R>_clat_hist.<N>.log, and the target files iotail names (NAME.CLONE.FILE, or "
      "--filename_format) end in .rank<R>; a --filename is used as given. Every rank "
      "first opens and lays out its targets and prepares its workers; when all are ready, rank 0 "
      "picks a common start on the log period and the ranks start together (again at each "
      "stonewall).\n\n"
      "Each rank's intervals go to rank 0, which merges them by time: one live line over the "
      "cluster, --sla checked on the cluster's intervals, the cluster's histogram logs "
      "(PREFIX_clat_hist.1.log, and with --explain PREFIX_explain_STAGE_hist.1.log, each equal to "
      "iotail merge of the per-rank logs), --prometheus serving "
      "the cluster's metrics, and one summary whose totals are the sums of every rank's "
      "(iotail_run.ranks[] in the JSON lists each rank). Every rank exits with the same status.\n\n"
      "--start_at is refused: rank 0 chooses the start. Clock offsets against rank 0 are measured "
      "and reported; synchronise the hosts' clocks (chrony).\n\n"
      "iotail-mpi sweep is iotail sweep over the cluster (its options: iotail sweep --help): the "
      "capacity of all ranks together at the SLA. Rank 0 runs the search and orders each step; "
      "every step's rate is the cluster's, split evenly over the ranks, all ranks start it "
      "together, and its verdict comes from the cluster's histograms (every rank's summed). Each "
      "step's cluster histogram log is PREFIX.stepN_clat_hist.1.log. Rank 0 prints the report; "
      "every rank exits with the sweep's status.";
  return cli::DriverDoc(std::move(doc), MpiOptionGroups());
}

}  // namespace iotail::mpi
