// fio's zone options: zonemode and its zones (strided: engine/zone_stride.h; zbd: fio's emulated
// zones, engine/zbd_access.h), their capacity, the open-zone limits, the zone resets, reads past
// the write pointer. Sizes and offsets in zones (size=8z) are parsed with the options they size
// (cli/run_options.cc) and settled by PlanRun.
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "engine/zoned_file.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's FLOAT_LIST options of one value in [0, 1] (zone_reset_threshold, zone_reset_frequency).
double ParseFraction(const std::string& text, std::string_view option) {
  size_t used = 0;
  const double v = ParseNumber(text, option, &used);
  if (used != text.size() || v < 0 || v > 1) {
    throw UsageError(fmt::format("--{}: expected a number from 0 to 1, got '{}'", option, text));
  }
  return v;
}

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& ZoneRows() {
  static const std::vector<OptionDef> table = {
      {"zonemode",
       kChoice,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.zones.mode = static_cast<engine::ZoneMode>(v.number);
       },
       "strided: I/O in one zone (--zonerange) until --zonesize bytes are done there, then "
       "--zoneskip on; zbd: fio's emulated zones of --zonesize on a file or non-zoned block "
       "device (writes at each zone's write pointer; zoned block devices are refused); none: no "
       "zones",
       "none",
       Also(),
       {{"none", engine::ZoneMode::kNone},
        {"strided", engine::ZoneMode::kStrided},
        {"zbd", engine::ZoneMode::kZbd}}},
      Row<kSize, &JobSpec::zones, &ZoneOptions::size>("zonesize",
                                                      "bytes done in a zone before moving on; with "
                                                      "zonemode=zbd the size of a zone",
                                                      "0"),
      Row<kSize, &JobSpec::zones, &ZoneOptions::range>("zonerange", "the size of a zone",
                                                       "--zonesize"),
      Labeled("SIZE|Nz",
              {"zoneskip", kText,
               SizeOrZones<&RunOptions::zoneskip_zones, &JobSpec::zones, &ZoneOptions::skip>,
               "bytes skipped after each zone (or Nz: N zones)", "0"}),
      Row<kSize, &JobSpec::zones, &ZoneOptions::capacity>(
          "zonecapacity", "zonemode=zbd: the bytes of a zone that can be written (0: --zonesize)",
          "0"),
      {"max_open_zones", kCount, JobField<&JobSpec::zones, &ZoneOptions::max_open>,
       "zonemode=zbd: zones of a file open for writing at once, all jobs together (0: no limit)",
       "0", Also(), Choices(), OptionScope::kJob, 0, engine::kZbdMaxOpenZones},
      {"job_max_open_zones", kCount, JobField<&JobSpec::zones, &ZoneOptions::job_max_open>,
       "zonemode=zbd: zones each clone may hold open (0: no limit; needs --max_open_zones)", "0",
       Also(), Choices(), OptionScope::kJob, 0, engine::kZbdMaxOpenZones},
      Labeled("SHARE", {"zone_reset_threshold", kText,
                        [](RunOptions& o, const OptionValue& v) {
                          o.spec.zones.reset_threshold = ParseFraction(v.text, v.option);
                        },
                        "zonemode=zbd: once the file's written bytes reach this share (0..1) of "
                        "the job's range, a "
                        "zone is reset before every 1/--zone_reset_frequency-th write",
                        "0"}),
      Labeled("SHARE", {"zone_reset_frequency", kText,
                        [](RunOptions& o, const OptionValue& v) {
                          o.spec.zones.reset_frequency = ParseFraction(v.text, v.option);
                        },
                        "zonemode=zbd: 0..1, a zone reset every 1/N writes past "
                        "--zone_reset_threshold (0: none)",
                        "0"}),
      Row<kFlag, &JobSpec::zones, &ZoneOptions::read_beyond_wp>(
          "read_beyond_wp", "zonemode=zbd: reads may go past a zone's write pointer"),
      Row<kFlag, &JobSpec::zones, &ZoneOptions::ignore_limits>(
          "ignore_zone_limits",
          "zonemode=zbd: ignore a zoned device's own open-zone limit (emulated zones have none)"),
  };
  return table;
}

}  // namespace

std::span<const OptionDef> ZoneOptionTable() { return ZoneRows(); }

}  // namespace iotail::cli
