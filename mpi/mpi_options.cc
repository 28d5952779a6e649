#include "mpi/mpi_options.h"

#include <vector>

#include "stats/core/errors.h"

namespace iotail::mpi {
namespace {

using cli::OptionDef;
using cli::OptionScope;
using cli::OptionValue;
using cli::RunSettings;
using enum cli::ValueType;

const std::vector<OptionDef>& MpiRows() {
  static const std::vector<OptionDef> rows = {
      {"log_per_rank", kFlag,
       [](RunSettings& o, const OptionValue& v) { o.driver.cluster.log_per_rank = v.number != 0; },
       "also write each rank's own histogram logs, as PREFIX.rank<R>_clat_hist.<N>.log", "0",
       cli::Also(), cli::Choices(), OptionScope::kRun},
      {"setup_timeout", kTime,
       [](RunSettings& o, const OptionValue& v) {
         if (v.number == 0) throw stats::UsageError("--setup_timeout: expected more than 0");
         o.driver.cluster.setup_timeout_ns = static_cast<uint64_t>(v.number);
       },
       "how long rank 0 waits, once a rank is ready, for the others; then it names the "
       "stragglers and the job ends",
       "10m", cli::Also(), cli::Choices(), OptionScope::kRun},
  };
  return rows;
}

}  // namespace

std::span<const cli::OptionGroup> MpiOptionGroups() {
  static const std::vector<cli::OptionGroup> groups = {{"iotail-mpi's own options", MpiRows()}};
  return groups;
}

}  // namespace iotail::mpi
