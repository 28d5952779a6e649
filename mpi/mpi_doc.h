// iotail-mpi's documentation (the iotail-mpi(1) page, `iotail-mpi --help=man`): its own options,
// then every option of `iotail run`, from the same option table (cli/command_doc.h). MPI-free.
#pragma once

#include "cli/command_doc.h"

namespace iotail::mpi {

cli::CommandDoc MpiDoc();

}  // namespace iotail::mpi
