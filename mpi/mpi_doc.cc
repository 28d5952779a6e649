#include "mpi/mpi_doc.h"

namespace iotail::mpi {

cli::CommandDoc MpiDoc() {
  cli::CommandDoc doc = cli::RunDoc();
  doc.page = "iotail-mpi";
  doc.summary = "one iotail run over every rank of an MPI job, merged live on rank 0";
  doc.synopsis = {"mpirun -np N [--hostfile FILE] iotail-mpi run [options] [JOBFILE.fio...]",
                  "iotail-mpi --help=man"};
  doc.description =
      "Each rank runs what iotail run would run on its host, with the same options; {rank} and "
      "{host} in any option are replaced per rank (--filename=/data/{host}/f.{rank}). Every rank "
      "first opens and lays out its targets and prepares its workers; when all are ready, rank 0 "
      "picks a common start on the log period and the ranks start together (again at each "
      "stonewall).\n\n"
      "Each rank's intervals go to rank 0, which merges them by time: one live line over the "
      "cluster, --sla checked on the cluster's intervals, the cluster's histogram logs "
      "(PREFIX_clat_hist.1.log, equal to iotail merge of the per-rank logs), --prometheus serving "
      "the cluster's metrics, and one summary whose totals are the sums of every rank's "
      "(iotail_run.ranks[] in the JSON lists each rank). Every rank exits with the same status.\n\n"
      "--start_at is refused: rank 0 chooses the start. Clock offsets against rank 0 are measured "
      "and reported; synchronise the hosts' clocks (chrony).";
  cli::OptionSection own{"iotail-mpi's own options", {}};
  own.options.push_back({{"--log_per_rank"},
                         "",
                         false,
                         {},
                         "also write each rank's own logs as PREFIX.rank<R>_clat_hist.<J>.log"});
  own.options.push_back({{"--setup_timeout"},
                         "TIME",
                         false,
                         {},
                         "how long rank 0 waits, once a rank is ready, for the others; then it "
                         "names the stragglers and the job ends (default 10m)"});
  doc.sections.insert(doc.sections.begin(), std::move(own));
  for (size_t i = 1; i < doc.sections.size(); ++i) {
    doc.sections[i].title = "iotail run: " + doc.sections[i].title;
  }
  return doc;
}

}  // namespace iotail::mpi
